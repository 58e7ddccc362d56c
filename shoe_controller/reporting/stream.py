"""The outgoing event stream: table events -> numbered, identified messages (pure).

The table's state is the fold of its journal, so the events it reports are too: feeding the
journal's records (in order, with the events ``Table.handle`` returned for each) into a fresh
:class:`EventStream` numbers exactly the same messages with exactly the same ids, in this run
or after a crash. That is what makes the table system's effect exactly-once without a second
database: the stream is rebuilt from the journal on start, the table system says which ``seq``
it already has, everything after it is sent again, and a message seen twice is recognised by
its ``id``.

* ``seq``: gap-free from 1 over the journal's whole life, in the order messages are released.
* ``id``: ``<table_id>:<journal record seq>:<index of the event in that record's events>``,
  stable whatever the numbering.

Secrecy (hole cards): an event carrying ``"hold": KEY`` is kept back, unnumbered, until an
event carrying ``"reveal": KEY`` (or a list of keys); the held events are then released (and
numbered) in their original order just before the revealing event. A held event is never
sent, so a table system cannot show it early. Baccarat holds nothing.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from shoe_controller.errors import ProtocolViolation
from shoe_controller.reporting.protocol import AHEAD, message

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
}
_CONTROL_KEYS = ("type", "hold", "reveal")


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One reported event, numbered. ``at`` is the journal record's wall-clock time."""

    seq: int
    id: str
    type: str
    at: float
    shoe: int
    data: Mapping[str, Any]

    def to_message(self, table_id: str, session: str) -> dict[str, Any]:
        return message(self.type, session=session, table_id=table_id, seq=self.seq, id=self.id,
                       at=self.at, shoe=self.shoe, data=dict(self.data))


@dataclass(frozen=True, slots=True)
class _Pending:
    id: str
    type: str
    at: float
    shoe: int
    data: Mapping[str, Any]


class EventStream:
    """Numbers reported events and keeps the ones not yet acknowledged (not thread-safe).

    ``retain``: how many acknowledged messages are kept for a table system that asks for an
    older ``resend``; everything not acknowledged is always kept.
    """

    def __init__(self, table_id: str, *, retain: int = 10_000) -> None:
        self.table_id = table_id
        self.retain = retain
        self.head = 0  # seq of the last message released
        self.acked = 0  # every seq <= acked is acknowledged by the table system
        self.shoe = 0
        self._messages: deque[Outgoing] = deque()
        self._held: dict[str, list[_Pending]] = {}
        self._hand_counts: dict[str, int] = {}

    # ---------------------------------------------------------------- building
    def add(self, record_seq: int, at: float, events: Iterable[Mapping[str, Any]]
            ) -> list[Outgoing]:
        """The messages journal record ``record_seq`` releases (maybe none)."""
        released: list[Outgoing] = []
        for index, event in enumerate(events):
            for key in _keys(event.get("reveal")):
                released.extend(self._number(p) for p in self._held.pop(key, []))
            translated = self._translate(event)
            if translated is None:
                continue
            kind, data = translated
            pending = _Pending(f"{self.table_id}:{record_seq}:{index}", kind, at, self.shoe, data)
            hold = event.get("hold")
            if hold:
                self._held.setdefault(str(hold), []).append(pending)
            else:
                released.append(self._number(pending))
        return released

    @property
    def held(self) -> int:
        return sum(len(items) for items in self._held.values())

    def _number(self, pending: _Pending) -> Outgoing:
        self.head += 1
        out = Outgoing(self.head, pending.id, pending.type, pending.at, pending.shoe, pending.data)
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
        if kind in _SIMPLE:
            return _SIMPLE[kind], data
        return None  # _SKIPPED, or a game's own event the protocol does not carry

    # ---------------------------------------------------------------- delivery
    def ack(self, upto: int) -> int:
        """The table system has every seq <= ``upto``; returns how many became acknowledged."""
        if upto > self.head:
            raise ProtocolViolation(AHEAD, f"acknowledges seq {upto}, but only {self.head} "
                                    "were ever sent from this journal")
        newly = max(0, upto - self.acked)
        self.acked = max(self.acked, upto)
        while self._messages and self._messages[0].seq <= self.acked - self.retain:
            self._messages.popleft()
        return newly

    def since(self, from_seq: int) -> list[Outgoing]:
        """Every kept message with ``seq >= from_seq``, in order."""
        if not self._messages:
            return []
        first = self._messages[0].seq
        start = max(0, from_seq - first)
        return list(itertools.islice(self._messages, start, None))

    @property
    def first_kept(self) -> int:
        return self._messages[0].seq if self._messages else self.head + 1

    @property
    def unacked(self) -> int:
        return self.head - self.acked


def _keys(value: Any) -> list[str]:
    if not value:
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return [str(value)]
