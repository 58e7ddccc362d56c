"""A live table in one process: software shoe + virtual dealer <-memory wire-> controller.

Everything is the product's own code (``running_table``, ``ShoeConnection``, ``SimulatedShoe``,
``ShoeRunner``, the journal); only the wire is in memory. The test thread is the controller's
thread: it calls :meth:`LiveTable.step_until` (``controller.step`` in a loop with a deadline),
so every wait is bounded and a failure names what was awaited and what the table showed.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from firmware_protocol.link import LinkConfig
from shoe_controller.cards import Card, new_shoe
from shoe_controller.config import MIN_PIN_ITERATIONS, RunConfig, hash_pin, load_run_config
from shoe_controller.device import ShoeConnection
from shoe_controller.journal import Journal
from shoe_controller.journal.records import Record
from shoe_controller.table.controller import TableController
from shoe_controller.table.history import export_lines, replay_journal
from shoe_controller.table.runtime import running_table
from shoe_controller.transports.memory import MemoryTransport, MemoryWire, memory_pair
from simulators.dealer import PlannedMistake, VirtualDealer, parse_mistakes
from simulators.shoe import ShoeRunner, SimulatedShoe
from simulators.shoe_model import ShoeModel

PROFILE = "punto-banco-1d"
CUT_CARD = 14
SUPERVISOR = "alice"
PIN = "4711"
PIN_HASH = hash_pin(PIN, salt=b"live-table-tests", iterations=MIN_PIN_ITERATIONS)
"""Hashed once per test session: the weakest PBKDF2 the config accepts keeps each check fast."""

LINK = LinkConfig(
    retransmit_timeout=0.03,
    retransmit_timeout_max=0.3,
    heartbeat_interval=0.1,
    link_timeout=1.0,
    hello_interval=0.05,
)
"""Loopback timings: quick retransmissions; a watchdog loose enough for a noisy 2-core box
(a spurious link loss would latch an irregularity the test did not ask for)."""

BETTING_SECONDS = 0.05
STEP = 0.01


def one_deck(seed: int) -> list[Card]:
    return new_shoe(1, seed)


@dataclass
class Shoe:
    """The running software shoe and the device end of its wire (outlives controllers)."""

    sim: SimulatedShoe
    runner: ShoeRunner
    wire: MemoryWire
    first_host: MemoryTransport

    @property
    def model(self) -> ShoeModel:
        return self.sim.model

    def dealt(self) -> list[Card]:
        """Every card that physically left the shoe, in order (read or not)."""
        with self.sim._lock:  # the runner thread appends to it
            return [out.card for out in self.model.drawn]


@dataclass
class LiveTable:
    shoe: Shoe
    controller: TableController
    conn: ShoeConnection
    journal_path: Path
    cards: list[Card]
    updates: list[Any] = field(default_factory=list)

    # -- driving --------------------------------------------------------------------------
    def step_until(self, condition: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
        """Run the controller until ``condition()`` holds; fail after ``timeout`` seconds."""
        end = time.monotonic() + timeout
        while not condition():
            self.shoe.runner.check()
            if time.monotonic() > end:
                view = self.controller.table.view()
                raise AssertionError(
                    f"timed out after {timeout} s waiting for {what}; table: {view.state}, "
                    f"{view.alarm}, prompt {view.prompt!r}, latched {view.latched}, "
                    f"shoe: {self.shoe.model.counter} cards out, exit locked "
                    f"{self.shoe.model.exit_locked}"
                )
            self.controller.step(STEP)

    def step_for(self, seconds: float) -> None:
        """Keep the table running for a while (to show that something does *not* happen)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.shoe.runner.check()
            self.controller.step(STEP)

    def play_to_end(self, timeout: float = 20.0) -> None:
        """Let the dealer finish the shoe; fail on a latch (none is expected any more)."""
        table = self.controller.table

        def done() -> bool:
            assert table.alarm == "ok", f"unexpected irregularity: {table.view().latched}"
            return self.controller.shoes_finished >= 1

        self.step_until(done, "the shoe to finish", timeout)

    def supervise(self, action: str, *, card: str | None = None, reason: str = "") -> None:
        """``alice`` does ``action`` with her PIN; the table applies it at the next step."""
        self.controller.supervisor(action, SUPERVISOR, PIN, card=card, reason=reason)
        self.controller.step(0)

    # -- looking --------------------------------------------------------------------------
    @property
    def view(self) -> Any:
        return self.controller.table.view()

    def latched_kinds(self) -> list[str]:
        return [item["kind"] for item in self.view.latched]

    def round_cards(self) -> int:
        return len(self.controller.table.game.cards_in_round())

    def records(self) -> list[Record]:
        """The journal as another process would read it."""
        with Journal(self.journal_path, readonly=True) as journal:
            return list(journal.records())

    def exit_stays_locked(self, seconds: float = 0.3) -> None:
        """The shoe's exit is locked now and stays so while the table keeps running, and the
        shoe lets no card out (the dealer keeps trying: a locked exit refuses the pull)."""
        out = self.shoe.model.counter
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            assert self.shoe.model.exit_locked, "the shoe's exit opened while latched"
            self.controller.step(STEP)
        assert self.shoe.model.exit_locked
        assert self.shoe.model.counter == out, "a card left the shoe while latched"


def make_config(journal: Path, **overrides: Any) -> RunConfig:
    return load_run_config(None, {
        "device": "memory://live-test",  # not opened: the tests pass their own connection
        "profile": PROFILE,
        "journal": journal,
        "betting_seconds": BETTING_SECONDS,
        "heartbeat_seconds": LINK.heartbeat_interval,
        "link_timeout_seconds": LINK.link_timeout,
        "durability": "normal",
        "supervisors": {SUPERVISOR: PIN_HASH},
        **overrides,
    })


@contextlib.contextmanager
def running_shoe(
    cards: list[Card],
    *,
    mistakes: str | list[PlannedMistake] = "",
    model: ShoeModel | None = None,
    seed: int = 7,
) -> Iterator[Shoe]:
    """A software shoe with a pace-0 virtual dealer, running in its thread on a memory wire."""
    plan = parse_mistakes(mistakes) if isinstance(mistakes, str) else mistakes
    sim = SimulatedShoe(
        model if model is not None else ShoeModel(cards, cut_card=CUT_CARD),
        dealer=VirtualDealer(pace=0, mistakes=plan, button_delay=0.01, lid_open_seconds=0.2),
        link_config=LINK,
        rng=random.Random(seed),
        announce_loaded=True,
    )
    host, device = memory_pair()
    with ShoeRunner(sim, device) as runner:
        try:
            yield Shoe(sim, runner, host.wire, host)
        finally:
            host.close()


@contextlib.contextmanager
def controller_on(
    shoe: Shoe, journal: Path, cards: list[Card], host: MemoryTransport | None = None,
    session_id: int = 0x1001,
) -> Iterator[LiveTable]:
    """A started controller (journal replayed) on a new host connection to ``shoe``."""
    if host is None:
        host = shoe.wire.end("host")
    conn = ShoeConnection(host, link_config=LINK, session_id=session_id)
    with running_table(make_config(journal), connection=conn) as controller:
        live = LiveTable(shoe, controller, conn, journal, cards)
        controller.listeners.append(live.updates.append)
        yield live


@contextlib.contextmanager
def live_table(
    tmp_path: Path,
    cards: list[Card] | None = None,
    *,
    mistakes: str | list[PlannedMistake] = "",
    model: ShoeModel | None = None,
) -> Iterator[LiveTable]:
    cards = one_deck(3) if cards is None else cards
    with running_shoe(cards, mistakes=mistakes, model=model) as shoe:
        with controller_on(shoe, tmp_path / "journal.sqlite", cards, host=shoe.first_host) as live:
            yield live


# -- checks on the outcome -----------------------------------------------------------------

def export(journal: Path) -> list[dict[str, Any]]:
    return list(export_lines(journal))


def exported_cards(lines: list[dict[str, Any]]) -> list[str]:
    cards: list[str] = []
    for line in lines:
        if line["type"] == "burn":
            cards += line["cards"]
        elif line["type"] == "round":
            cards += line["player"] + line["banker"]
    return cards


def check_no_card_lost(live: LiveTable) -> list[dict[str, Any]]:
    """Every card the shoe dealt is in the export (burn, rounds) or among the table's strays
    or a voided round, exactly once; returns the export lines."""
    lines = export(live.journal_path)
    table = live.controller.table
    dealt = [card.code for card in live.shoe.dealt()]
    accounted = exported_cards(lines) + [s["card"] for s in table.strays]
    voided = voided_cards(live)
    accounted += voided
    assert sorted(c for c in accounted if c) == sorted(dealt) or _unread_ok(
        accounted, dealt, table.strays
    ), f"dealt {dealt}\naccounted {accounted}"
    assert table.cards_dealt == len(dealt)
    ends = [line for line in lines if line["type"] == "shoe_end"]
    assert len(ends) == 1
    rounds = [line for line in lines if line["type"] == "round"]
    assert ends[0]["rounds"] == len(rounds)
    return lines


def _unread_ok(accounted: list[str | None], dealt: list[str], strays: list[dict]) -> bool:
    """An unread card set aside is accounted for as ``None``: match the rest exactly."""
    known = sorted(c for c in accounted if c)
    unread = sum(1 for c in accounted if c is None)
    missing = list(dealt)
    for code in known:
        if code not in missing:
            return False
        missing.remove(code)
    return len(missing) == unread


def voided_cards(live: LiveTable) -> list[str]:
    """Cards of voided rounds (they stay dealt), from the journal's replayed events."""
    cards: dict[int, list[str]] = {}
    voided: list[str] = []
    for event in replay_journal(live.journal_path).events:
        if event["type"] == "card":
            cards.setdefault(event["round"], []).append(event["card"])
        elif event["type"] == "round_void":
            voided += cards.get(event["round"], [])
    return voided


def records_of(records: list[Record], kind: str, **data: Any) -> list[Record]:
    return [r for r in records if r.kind == kind and all(r.data.get(k) == v for k, v in data.items())]
