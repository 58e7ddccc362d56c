"""The outgoing event stream: table events -> numbered, identified messages (pure).

The table's state is the fold of its journal, so the events it reports are too: feeding the
journal's records (in order, with the events ``Table.handle`` returned for each) into an
:class:`EventStream` yields the messages to report.

* ``seq``: gap-free from 1 over the journal's whole life, in the order messages are released.
* ``id``: ``<table_id>:<journal record seq>:<index of the event in that record's events>``,
  given once and then stored with the message.

Numbers once given never change. The reporter keeps every numbered message in an
:class:`Archive` (the outbox table in the journal's own file, :mod:`.outbox`) before it is
sent. At start :meth:`EventStream.resume` takes the archive's head and *coverage* (the last
journal record that released an archived message); the replayed records up to the coverage
only rebuild the stream's state (current shoe, hand positions, held events): their messages
are the archived ones, whatever this version of the code would make of those records now.
Records after the coverage are numbered anew, continuing from the archive's head; nothing of
theirs was ever sent, because a message is sent only once it is archived. Without an archive
(tests, benchmarks) the stream numbers the whole journal in memory, as version 1 did.

Secrecy (hole cards): an event carrying ``"hold": KEY`` is kept back, unnumbered, until an
event carrying ``"reveal": KEY`` (or a list of keys); the held events are then released (and
numbered) in their original order just before the revealing event. A held event is never
sent, so a table system cannot show it early. Held events are not archived: after a restart
the replay rebuilds them (one released up to the coverage is archived; one still held is held
again, and numbered when its reveal comes). Baccarat holds nothing; blackjack holds the
dealer's hole card until the dealer's turn (or the round's end).
"""

from __future__ import annotations

import itertools
import logging
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from shoe_controller.errors import ProtocolViolation
from shoe_controller.reporting.protocol import AHEAD, UNAVAILABLE, message

log = logging.getLogger("shoe_controller.reporting")

_SKIPPED = frozenset({"burn_card", "clear_refused", "shoe_event"})
"""Table events the table system does not need: each burn card (``shoe_burn`` lists them),
refused clears (a supervisor's retry), and raw shoe signals other than the lid."""

_SIMPLE = {
    "shoe_loaded": "shoe_new",
    "burn": "shoe_burn",
    "cut_card": "shoe_cut_card",
    "shoe_finished": "shoe_finished",
    "round_opened": "round_opened",
    "betting_closed": "betting_closed",
    "round_result": "round_result",
    "result_confirmed": "round_confirmed",
    "round_void": "round_void",
    "irregularity": "irregularity",
    "irregularity_cleared": "irregularity_cleared",
    # blackjack
    "decision_due": "decision_due",
    "decision": "decision_made",
    "insurance": "insurance_closed",
    "dealer_check": "dealer_check",
    # roulette (a wheel table)
    "winning_number": "winning_number",
}
#: A wheel table's events about the wheel itself, reported as ``device_health`` of the
#: component ``wheel``: the line up or down, a warning that latches nothing, a self-test.
_WHEEL_HEALTH = ("wheel_health", "wheel_warning", "wheel_self_test")
_CONTROL_KEYS = ("type", "hold", "reveal")


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One reported event, numbered. ``at`` is the journal record's wall-clock time;
    ``record_seq`` the journal record whose event it was, ``released_by`` the record whose
    processing numbered it (a later one for a held event)."""

    seq: int
    id: str
    type: str
    at: float
    shoe: int
    data: Mapping[str, Any]
    record_seq: int = 0
    released_by: int = 0

    def to_message(self, table_id: str, session: str) -> dict[str, Any]:
        return message(self.type, session=session, table_id=table_id, seq=self.seq, id=self.id,
                       at=self.at, shoe=self.shoe, data=dict(self.data))


class Archive(Protocol):
    """Where numbered messages are kept for good (:class:`~.outbox.Outbox`)."""

    @property
    def head(self) -> int:
        """The last seq stored when the archive was opened (0: none)."""

    @property
    def covered(self) -> int:
        """The last journal record that released a stored message (0: none)."""

    def read(self, from_seq: int, stop: int) -> list[Outgoing]:
        """The stored messages ``from_seq <= seq < stop``, in order."""

    def has_id(self, id_: str) -> bool:
        """Whether a stored message has this id."""


@dataclass(frozen=True, slots=True)
class _Pending:
    id: str
    type: str
    at: float
    shoe: int
    data: Mapping[str, Any]
    record_seq: int


class EventStream:
    """Numbers reported events and keeps the ones not yet acknowledged (not thread-safe).

    ``retain``: how many acknowledged messages stay in memory for a table system that asks for
    an older ``resend`` (older ones come from the archive; without one they are gone, and
    asking for them is an ``unavailable`` error). Everything not acknowledged, and everything
    not yet archived, stays in memory.
    """

    def __init__(self, table_id: str, *, retain: int = 10_000) -> None:
        self.table_id = table_id
        self.retain = retain
        self.head = 0  # seq of the last message released
        self.acked = 0  # every seq <= acked is acknowledged by the table system
        self.persisted = 0  # every seq <= persisted is archived
        self.covered = 0  # the messages of journal records <= covered are all archived
        self.shoe = 0
        self._archive: Archive | None = None
        self._messages: deque[Outgoing] = deque()  # seqs first_kept..head
        self._held: dict[str, list[_Pending]] = {}
        self._hand_counts: dict[str, int] = {}

    # ---------------------------------------------------------------- building
    def resume(self, archive: Archive) -> None:
        """Continue the numbering kept in ``archive``; called before the first :meth:`add`."""
        if self.head or self._held or self._archive is not None:
            raise RuntimeError("EventStream.resume() comes before any add()")
        self._archive = archive
        self.head = self.persisted = archive.head
        self.covered = archive.covered

    @property
    def archived(self) -> bool:
        """Whether numbered messages go to an archive (and are sent only once they are in it)."""
        return self._archive is not None

    def add(self, record_seq: int, at: float, events: Iterable[Mapping[str, Any]]
            ) -> list[Outgoing]:
        """The messages journal record ``record_seq`` releases (maybe none).

        A record the archive covers releases nothing: its messages were numbered (and maybe
        sent) before, and are read from the archive as they were stored.
        """
        numbering = record_seq > self.covered
        released: list[Outgoing] = []
        for index, event in enumerate(events):
            for key in _keys(event.get("reveal")):
                for held in self._held.pop(key, []):
                    if numbering and (out := self._number(held, record_seq)) is not None:
                        released.append(out)
            translated = self._translate(event)
            if translated is None:
                continue
            kind, data = translated
            pending = _Pending(f"{self.table_id}:{record_seq}:{index}", kind, at, self.shoe, data,
                               record_seq)
            hold = event.get("hold")
            if hold:
                self._held.setdefault(str(hold), []).append(pending)
            elif numbering and (out := self._number(pending, record_seq)) is not None:
                released.append(out)
        return released

    @property
    def held(self) -> int:
        return sum(len(items) for items in self._held.values())

    def _number(self, pending: _Pending, released_by: int) -> Outgoing | None:
        if (self._archive is not None and pending.record_seq <= self.covered
                and self._archive.has_id(pending.id)):
            # Held by this version of the code since a covered record, yet archived under its
            # id: an older version sent it without holding it back. Not sent twice.
            log.warning("held event %s was reported before; not sent again", pending.id)
            return None
        self.head += 1
        out = Outgoing(self.head, pending.id, pending.type, pending.at, pending.shoe,
                       pending.data, pending.record_seq, released_by)
        self._messages.append(out)
        return out

    def _translate(self, event: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
        kind = event.get("type")
        data = {k: v for k, v in event.items() if k not in _CONTROL_KEYS}
        if kind == "shoe_loaded":
            self.shoe = int(event["shoe"])
        if kind == "round_opened":
            self._hand_counts = {}
        if kind == "card":
            hand = data.pop("target")
            self._hand_counts[hand] = self._hand_counts.get(hand, 0) + 1
            return "card", {"hand": hand, "hand_position": self._hand_counts[hand], **data}
        if kind == "device":
            return "device_health", {"component": "shoe_link",
                                     "status": "up" if event.get("link_up") else "down",
                                     "reason": str(event.get("reason") or "")}
        if kind == "shoe_event" and event.get("event") in ("lid_opened", "lid_closed"):
            return "device_health", {"component": "shoe_lid",
                                     "status": "open" if event["event"] == "lid_opened"
                                     else "closed", "reason": ""}
        if kind in _WHEEL_HEALTH:
            return "device_health", _wheel_health(event)
        if kind in _SIMPLE:
            return _SIMPLE[kind], data
        return None  # _SKIPPED, or a game's own event the protocol does not carry

    # ---------------------------------------------------------------- archiving
    def unpersisted(self) -> list[Outgoing]:
        """Numbered messages not yet archived, in order (none without an archive)."""
        if self._archive is None or self.persisted >= self.head:
            return []
        start = self.persisted + 1 - self._messages[0].seq
        return list(itertools.islice(self._messages, start, None))

    def mark_persisted(self, upto: int) -> None:
        """Every seq <= ``upto`` is archived now."""
        self.persisted = max(self.persisted, min(upto, self.head))

    @property
    def sendable(self) -> int:
        """The last seq that may be sent: with an archive only archived ones, so that a number
        that was ever sent is never derived again."""
        return self.head if self._archive is None else self.persisted

    # ---------------------------------------------------------------- delivery
    def ack(self, upto: int) -> int:
        """The table system has every seq <= ``upto``; returns how many became acknowledged."""
        if upto > self.head:
            raise ProtocolViolation(AHEAD, f"acknowledges seq {upto}, but only {self.head} "
                                    "were ever sent from this journal")
        newly = max(0, upto - self.acked)
        self.acked = max(self.acked, upto)
        let_go = self.acked - self.retain
        if self._archive is not None:
            let_go = min(let_go, self.persisted)
        while self._messages and self._messages[0].seq <= let_go:
            self._messages.popleft()
        return newly

    def since(self, from_seq: int, limit: int | None = None) -> list[Outgoing]:
        """Every message with ``seq >= from_seq`` (at most ``limit``), in order: from memory,
        older ones from the archive.

        Raises ``ProtocolViolation(UNAVAILABLE)`` for messages no longer kept anywhere, rather
        than silently starting later than asked.
        """
        from_seq = max(1, from_seq)
        stop = self.head + 1 if limit is None else min(self.head + 1, from_seq + limit)
        if from_seq >= stop:
            return []
        first = self.first_kept
        out: list[Outgoing] = []
        if from_seq < first:
            if self._archive is None:
                raise ProtocolViolation(
                    UNAVAILABLE, f"seq {from_seq}..{first - 1} are no longer kept (no outbox; "
                    f"memory holds seq {first} on)", from_seq)
            upto = min(first, stop)
            out = self._archive.read(from_seq, upto)
            if len(out) != upto - from_seq or (out and out[0].seq != from_seq):
                raise ProtocolViolation(
                    UNAVAILABLE, f"the outbox lacks some of seq {from_seq}..{upto - 1}", from_seq)
            from_seq = upto
        if from_seq < stop:
            start = from_seq - first
            out.extend(itertools.islice(self._messages, start, start + stop - from_seq))
        return out

    @property
    def first_kept(self) -> int:
        """The oldest seq in memory (``head + 1`` when none is)."""
        return self._messages[0].seq if self._messages else self.head + 1

    @property
    def first_available(self) -> int:
        """The oldest seq :meth:`since` can return."""
        return 1 if self._archive is not None else self.first_kept

    @property
    def unacked(self) -> int:
        return self.head - self.acked

    def oldest_unacked_at(self) -> float | None:
        """When the oldest event not yet acknowledged was recorded (None when none waits).

        That event is in memory unless it was numbered before this process started and the
        table system has not said since what it has: the first one in memory is then taken,
        a lower bound of the backlog's age."""
        if self.unacked <= 0 or not self._messages:
            return None
        index = max(0, self.acked + 1 - self._messages[0].seq)
        return self._messages[index].at if index < len(self._messages) else None


def _wheel_health(event: Mapping[str, Any]) -> dict[str, Any]:
    kind = event["type"]
    if kind == "wheel_health":
        return {"component": "wheel", "status": event["status"], "reason": event["reason"]}
    if kind == "wheel_warning":
        return {"component": "wheel", "status": "warning", "reason":
                f"{event['prompt']}: {event['detail']}", "kind": event["kind"],
                "round": event.get("round")}
    code = str(event["code"])
    return {"component": "wheel", "status": "self_test_passed" if not code.strip("0 ")
            else "self_test_failed", "reason": f"*F {code}"}


def _keys(value: Any) -> list[str]:
    if not value:
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return [str(value)]
