"""A whole table in one thread, on a simulated clock: deterministic enough for hypothesis.

The real :class:`TableController`, journal and table, the real host end of the link
(:class:`~shoe_controller.device.HostEndpoint`, the same commit rule as ``ShoeConnection``) and
the real software shoe (:class:`~simulators.shoe.SimulatedShoe`), joined by a wire that the
test drives: nothing runs in a thread, time moves only when the test moves it, and the wire can
be cut or made to deliver a CRC-valid but unreadable card frame.

What it records, to check invariants from outside the table:

* ``shoe.physical``: every card that physically left the shoe (load, counter, card, read or
  not, and the message object the shoe sent for it, or None for a card that left unreported);
* ``journalled``: the (load, counter) of every card or misread record appended, as soon as
  the append returns (durable);
* ``violations``: a card the shoe saw acknowledged before its record was journalled.
"""

from __future__ import annotations

import dataclasses
import random
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from firmware_protocol.cobs import cobs_encode
from firmware_protocol.codec import HEADER, FrameDecoder
from firmware_protocol.crc import crc32
from firmware_protocol.link import Link, LinkConfig, Role
from firmware_protocol.messages import (
    CardDrawn,
    CardMisread,
    MessageType,
    ResetKind,
)
from shoe_controller.cards import Card, new_shoe
from shoe_controller.config import MIN_PIN_ITERATIONS, hash_pin
from shoe_controller.device import HostEndpoint
from shoe_controller.errors import ShoeTimeoutError
from shoe_controller.games.registry import game_from_toml, read_profile
from shoe_controller.journal import Journal
from shoe_controller.table.controller import TableController
from shoe_controller.table.fold import replay_records
from shoe_controller.table.liveness import LivenessGuard
from shoe_controller.table.machine import Table
from simulators.shoe import SimulatedShoe, simulator_identity
from simulators.shoe_model import CardOut, ShoeModel, ShoeOutput, StateNotice

PROFILE = "punto-banco-1d"
SUPERVISOR = "alice"
PIN = "271828"
PIN_HASH = hash_pin(PIN, salt=b"harness-tests-01", iterations=MIN_PIN_ITERATIONS)
DT = 0.01
LINK = LinkConfig(
    retransmit_timeout=0.03, retransmit_timeout_max=0.3, heartbeat_interval=0.1,
    link_timeout=0.5, hello_interval=0.05,
)
LINK_GRACE = 1.0
STATUS_INTERVAL = 0.5
PATIENCE = 1.0


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Physical:
    """A card that left the shoe. ``message`` is what the shoe sent for it (None: nothing)."""

    load: int
    counter: int
    card: Card
    misread: bool
    message: Any


class RecordingShoe(SimulatedShoe):
    """The software shoe, noting every card that leaves it and the message it sent for it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.physical: list[Physical] = []
        self.loads = 0
        self.silent_next = False  # the next card leaves without any report (a counter gap)
        self.misread_next = False  # the next card's face is not read
        super().__init__(*args, **kwargs)

    def _report(self, outputs: list[ShoeOutput], now: float) -> None:
        for output in outputs:
            if isinstance(output, StateNotice) and output.notice.name == "SHOE_LOADED":
                self.loads = output.counter or self.loads + 1
            if not isinstance(output, CardOut):
                super()._report([output], now)
                continue
            if self.misread_next:
                output = dataclasses.replace(output, misread=True)
                self.misread_next = False
            message = None
            if self.silent_next:
                self.silent_next = False
            else:
                super()._report([output], now)
                message = self.link.pending_messages()[-1]  # the message just queued for it
            self.physical.append(Physical(self.loads, output.counter, output.card,
                                          output.misread, message))

    def unacked(self) -> set[int]:
        """ids of the card messages the host has not acknowledged (kept by the shoe)."""
        return {id(m) for m in self.link.pending_messages() if isinstance(m, CardDrawn | CardMisread)}

    def load_new(self, now: float) -> None:
        self._reset(ResetKind.NEW_SHOE, now)

    def reboot(self, now: float) -> None:
        self._reset(ResetKind.REBOOT, now)


def unreadable(data: bytes) -> tuple[bytes, CardDrawn | None]:
    """``data`` with its first reliable CardDrawn frame made unreadable (confidence 101) but
    CRC-valid, as a shoe with a firmware bug would send it; and the card it was."""
    out = bytearray()
    done: CardDrawn | None = None
    for chunk in data.split(b"\x00"):
        if not chunk:
            continue
        decoder = FrameDecoder()
        frames = decoder.feed_all(chunk + b"\x00")
        frame = frames[0] if frames else None
        if (not done and frame is not None and hasattr(frame, "message")
                and isinstance(frame.message, CardDrawn) and frame.reliable):
            payload = bytearray(frame.message.encode_payload())
            payload[7] = 101  # confidence 0..100
            body = HEADER.pack(frame.version, MessageType.CARD_DRAWN, frame.flags, frame.seq,
                               frame.ack, len(payload)) + bytes(payload)
            out += b"\x00" + cobs_encode(body + crc32(body).to_bytes(4, "little")) + b"\x00"
            done = frame.message
        else:
            out += b"\x00" + chunk + b"\x00"
    return bytes(out), done


class SyncConnection:
    """The controller's shoe connection, in the test's thread: a HostEndpoint and the shoe
    exchange bytes whenever the controller asks for input."""

    def __init__(self, harness: Harness, session_id: int) -> None:
        self.harness = harness
        self.endpoint = HostEndpoint(Link(Role.HOST, LINK, session_id))
        self.closed = False

    # DeviceConnection protocol
    def get(self, timeout: float | None = None) -> object:
        self.endpoint.commit()  # like ShoeConnection.get(): the owner is done with the last
        self.harness.pump()
        item = self.endpoint.take()
        if item is None:
            raise ShoeTimeoutError("nothing from the shoe")
        return item

    def send(self, message: Any) -> None:
        self.endpoint.send(message, self.harness.clock())

    def commit(self) -> None:
        self.endpoint.commit()


@dataclass
class Harness:
    """One table: shoe, wire, controller, journal. ``restart()`` replaces the controller."""

    seed: int = 1
    load_numbers: bool = True
    state_command: bool = True
    directory: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="harness-")))

    def __post_init__(self) -> None:
        self.clock = Clock()
        self.rng = random.Random(self.seed)
        self.profile = read_profile(PROFILE)
        self.wire_up = True
        self.refuse_next = False
        self.journalled: set[tuple[int, int]] = set()
        self.refused: set[tuple[int, int]] = set()  # card frames made unreadable on the wire
        self.violations: list[str] = []
        identity = simulator_identity(load_numbers=self.load_numbers,
                                      state_command=self.state_command)
        self.shoe = RecordingShoe(
            ShoeModel(new_shoe(1, self.seed), cut_card=14), link_config=LINK, identity=identity,
            rng=random.Random(self.seed), announce_loaded=True,
            next_shoe=lambda n: new_shoe(1, self.seed + n),
        )
        self.journal_path = self.directory / "table.sqlite"
        self.controller: TableController | None = None
        self.journal: Journal | None = None
        self.updates: list[Any] = []
        self.start_controller()

    # -------------------------------------------------------------- controller life
    def start_controller(self) -> None:
        self.journal = Journal(self.journal_path, durability="normal")
        self._watch_appends(self.journal)
        self.connection = SyncConnection(self, self.rng.getrandbits(32))
        self.controller = TableController(
            journal=self.journal, table=Table(game_from_toml(self.profile.text, PROFILE)),
            profile=PROFILE, profile_toml=self.profile.text, connection=self.connection,
            betting_seconds=0, auto_betting=False, supervisors={SUPERVISOR: PIN_HASH},
            clock=self.clock, link_grace=LINK_GRACE,
            liveness=LivenessGuard(interval=STATUS_INTERVAL, patience=PATIENCE),
        )
        self.controller.listeners.append(self.updates.append)
        self.controller.start()

    def restart(self) -> None:
        """The controller process dies (nothing more is sent) and a new one starts on the
        same journal; the shoe keeps everything it has not seen acknowledged."""
        assert self.journal is not None
        self.connection.closed = True
        self.journal.close()
        self.start_controller()

    def close(self) -> None:
        if self.journal is not None:
            self.journal.close()

    def _watch_appends(self, journal: Journal) -> None:
        append = journal.append
        loads = {"current": self._journalled_load()}

        def watched(kind: str, data: Any, **kwargs: Any) -> Any:
            record = append(kind, data, **kwargs)
            if kind == "shoe_event" and data.get("event") == "shoe_loaded":
                loads["current"] = int(data.get("counter") or 0) or loads["current"] + 1
            elif kind in ("card", "misread"):
                self.journalled.add((loads["current"], int(data["counter"])))
            elif kind == "message_refused":  # what the refused frames were is journalled
                self.journalled |= self.refused
            return record

        journal.append = watched  # type: ignore[method-assign]

    def _journalled_load(self) -> int:
        """The load the journal's last shoe_loaded record names (for a restarted controller)."""
        current = 0
        if self.journal is None:
            return 0
        for record in self.journal.records():
            if record.kind == "shoe_event" and record.data.get("event") == "shoe_loaded":
                current = int(record.data.get("counter") or 0) or current + 1
        return current

    # -------------------------------------------------------------- the wire
    def pump(self) -> None:
        """Move bytes both ways until the wire is quiet (or cut)."""
        now = self.clock()
        endpoint = self.connection.endpoint
        for _ in range(20):
            endpoint.poll(now)
            to_shoe = endpoint.data_to_send(now)
            moved = False
            if to_shoe and self.wire_up and not self.connection.closed:
                self.shoe.receive(to_shoe, now)
                self._check_acknowledged()
                moved = True
            self.shoe.step(now)
            to_host = self.shoe.data_to_send(now)
            if to_host and self.wire_up:
                if self.refuse_next:
                    to_host, found = unreadable(to_host)
                    if found is not None:
                        self.refuse_next = False
                        self.refused.add((self.shoe.loads, found.counter))
                endpoint.receive(to_host, now)
                moved = True
            if not moved:
                return

    def _check_acknowledged(self) -> None:
        unacked = self.shoe.unacked()
        for card in self.shoe.physical:
            if card.message is None or id(card.message) in unacked:
                continue
            if (card.load, card.counter) not in self.journalled:
                self.violations.append(
                    f"card {card.counter} of load {card.load} acknowledged, not journalled")

    # -------------------------------------------------------------- time
    def run(self, seconds: float) -> None:
        """Let the controller run for ``seconds`` of simulated time."""
        assert self.controller is not None
        steps = max(1, round(seconds / DT))
        for _ in range(steps):
            self.clock.now += DT
            self.controller.step(0)

    def settle(self) -> None:
        self.run(0.3)

    # -------------------------------------------------------------- looking
    def ledger(self) -> tuple[Counter[tuple[int, int]], dict[tuple[int, int], list[Any]]]:
        """Where the journal's replay put each card, by (shoe load, counter), and each round's
        cards and result by (shoe, round): computed from events, not from the table's state.

        A card event belongs to the load the shoe was in when its card (or misread, or the
        status report that found it missing) was journalled; a card resolved later (camera,
        supervisor) belongs to the load its pending record came from."""
        counts: Counter[tuple[int, int]] = Counter()
        rounds: dict[tuple[int, int], list[Any]] = {}
        self._origin: dict[int, int] = {}
        self.shoe_loads: dict[int, set[int]] = {}  # table shoe -> the loads its cards came from
        state = {"load": 0, "shoe": 0}

        def on_record(record: Any, _item: Any, events: list[dict[str, Any]]) -> None:
            if record.kind == "shoe_event" and record.data.get("event") == "shoe_loaded":
                state["load"] = int(record.data.get("counter") or 0) or state["load"] + 1
            own = record.kind in ("card", "misread", "shoe_status")
            for event in events:
                kind = event["type"]
                counter = event.get("counter")
                if kind == "shoe_loaded":
                    state["shoe"] = event["shoe"]
                elif kind == "card_pending":
                    self._origin[counter] = state["load"]
                if kind in ("burn_card", "card", "card_set_aside") and counter is not None:
                    load = state["load"] if own else self._origin.get(counter, state["load"])
                    counts[(load, counter)] += 1
                    if kind != "card_set_aside":
                        self.shoe_loads.setdefault(state["shoe"], set()).add(load)
                if kind == "card":
                    rounds.setdefault((state["shoe"], event["round"]), [[], None])[0].append(
                        (event["target"], event["card"]))
                elif kind == "round_result":
                    rounds.setdefault((state["shoe"], event["round"]), [[], None])[1] = event

        with Journal(self.journal_path, readonly=True) as journal:
            replay_records(journal, on_record=on_record)
        return counts, rounds

    def pending_key(self, counter: int) -> tuple[int, int]:
        self.ledger()
        return (self._origin.get(counter, self.shoe.loads), counter)

    def physical_card(self, counter: int) -> Card | None:
        load, _ = self.pending_key(counter)
        for card in self.shoe.physical:
            if (card.load, card.counter) == (load, counter):
                return card.card
        return None

    def controller_refuses_logins(self) -> bool:
        """Whether the access guard is holding off even the right PIN (too many wrong ones)."""
        assert self.controller is not None
        return self.controller.access.is_held_off(SUPERVISOR, "local")
