"""A live table in one process: software shoe + virtual dealer <-memory wire-> controller.

Everything is the product's own code (``running_table``, ``ShoeConnection``, ``SimulatedShoe``,
``ShoeRunner``, the journal); only the wire is in memory. The test thread is the controller's
thread: it calls :meth:`LiveTable.step_until` (``controller.step`` in a loop with a deadline),
so every wait is bounded and a failure names what was awaited and what the table showed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from firmware_protocol.link import LinkConfig
from shoe_controller.cards import Card, new_shoe
from shoe_controller.config import MIN_PIN_ITERATIONS, RunConfig, hash_pin, load_run_config
from shoe_controller.device import ShoeConnection
from shoe_controller.games.baccarat.profile import load_profile
from shoe_controller.games.baccarat.replay import replay_shoe
from shoe_controller.games.registry import create_game
from shoe_controller.journal import Journal
from shoe_controller.journal.records import Record
from shoe_controller.table.controller import TableController
from shoe_controller.table.history import export_lines
from shoe_controller.table.inputs import input_from_record
from shoe_controller.table.machine import Table
from shoe_controller.table.runtime import running_table
from shoe_controller.transports.memory import MemoryTransport, MemoryWire, memory_pair
from simulators.dealer import PlannedMistake, VirtualDealer, parse_mistakes
from simulators.shoe import ShoeRunner, SimulatedShoe, simulator_identity
from simulators.shoe_model import CardOut, ShoeModel, ShoeOutput

PROFILE = "punto-banco-1d"
CUT_CARD = 14
SUPERVISOR = "alice"
PIN = "471147"
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


@dataclass(frozen=True)
class ShoePlan:
    """How ``shoe replay`` deals these cards: burn size and each round's card count, so a test
    can plan a mistake at "the 2nd card of round 1" (a card number the shoe counts)."""

    burn: int
    rounds: tuple[int, ...]

    def card(self, round_number: int, position: int) -> int:
        """The shoe's counter of the ``position``-th card (1-based) of round ``round_number``."""
        return self.burn + sum(self.rounds[: round_number - 1]) + position

    def last_card(self, round_number: int) -> int:
        return self.card(round_number, self.rounds[round_number - 1])


def plan_of(cards: list[Card]) -> ShoePlan:
    lines = list(replay_shoe(cards, load_profile(PROFILE), CUT_CARD))
    rounds = tuple(len(line["player"]) + len(line["banker"]) for line in lines
                   if line["type"] == "round")
    return ShoePlan(len(lines[0]["cards"]), rounds)


class TableShoeModel(ShoeModel):
    """The simulator's shoe model with the faults a test plans, all at chosen card numbers.

    - ``misread_at``: these cards' faces are not read (reported as misreads; the true card
      stays in ``drawn`` for the test to check the supervisor's or camera's entry against);
    - ``no_card_stop``: the exit "lock" is only a light (a shoe without a card stop, or one
      whose stop failed open): a pull while locked takes the card out like any other, and
      the shoe cannot tell (not reported as drawn while locked);
    - ``on_pull(counter)``: called as each card leaves (e.g. to pull the cable at that moment).

    It also keeps the first shoe's cards when the dealer loads the next one (``first_shoe``).
    """

    def __init__(
        self, cards: list[Card], *, cut_card: int = CUT_CARD, misread_at: tuple[int, ...] = (),
        no_card_stop: bool = False, on_pull: Callable[[int], None] | None = None,
    ) -> None:
        self.misread_at = set(misread_at)
        self.no_card_stop = no_card_stop
        self.on_pull = on_pull
        self.first_shoe: list[CardOut] | None = None
        super().__init__(cards, cut_card=cut_card)

    def load(self, cards: Sequence[Card], *, cut_card: int | None = None) -> list[ShoeOutput]:
        if getattr(self, "drawn", None) and self.first_shoe is None:
            self.first_shoe = self.drawn
        return super().load(cards, cut_card=cut_card)

    def pull(self, *, forced: bool = False) -> list[ShoeOutput]:
        if self.no_card_stop and self.exit_locked and not forced:
            self.exit_locked = False  # nothing holds the card back
            try:
                outputs = super().pull()
            finally:
                self.exit_locked = True
        else:
            outputs = super().pull(forced=forced)
        for index, output in enumerate(outputs):
            if isinstance(output, CardOut):
                if output.counter in self.misread_at:
                    output = dataclasses.replace(output, misread=True)
                    outputs[index] = self.drawn[-1] = output
                if self.on_pull is not None:
                    self.on_pull(output.counter)
        return outputs

    def dealt(self) -> list[CardOut]:
        return list(self.first_shoe if self.first_shoe is not None else self.drawn)


@dataclass
class Shoe:
    """The running software shoe and the device end of its wire (outlives controllers)."""

    sim: SimulatedShoe
    runner: ShoeRunner
    wire: MemoryWire
    first_host: MemoryTransport

    @property
    def model(self) -> TableShoeModel:
        model = self.sim.model
        assert isinstance(model, TableShoeModel)
        return model

    def dealt(self) -> list[CardOut]:
        """Every card of the first shoe that physically left it, in order (read or not)."""
        with self.sim._lock:  # the runner thread appends to it
            return self.model.dealt()

    def pause_dealer_after(self, counter: int) -> None:
        """The dealer stops drawing as card ``counter`` leaves the shoe, so a test can act at an
        exact point of a round with no card in flight once that one is acknowledged. Set it
        before the table starts stepping (nothing is dealt before)."""
        sim = self.sim

        def on_pull(drawn: int) -> None:  # in the shoe's thread, under its lock
            if drawn == counter and sim.dealer is not None:
                sim.dealer.auto_pull = False

        self.model.on_pull = on_pull

    def resume_dealer(self) -> None:
        with self.sim._lock:
            assert self.sim.dealer is not None
            self.sim.dealer.auto_pull = True

    def commands_since(self, mark: int) -> list[Any]:
        """Host commands the shoe received after the first ``mark`` (``len(sim.received)``)."""
        with self.sim._lock:
            return list(self.sim.received[mark:])

    def mark(self) -> int:
        with self.sim._lock:
            return len(self.sim.received)


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

    def wait_settled_at(self, counter: int, what: str) -> None:
        """Step until card ``counter`` is the shoe's last and is journalled and acknowledged."""
        self.step_until(
            lambda: self.controller.table.last_counter == counter
            and self.shoe.model.counter == counter and self.shoe.sim.unacked_cards() == 0,
            what,
        )

    def records(self) -> list[Record]:
        """The journal as another process would read it."""
        with Journal(self.journal_path, readonly=True) as journal:
            return list(journal.records())

    def exit_stays_locked(self, seconds: float = 0.3) -> None:
        """The shoe's exit is locked now and stays so while the table keeps running, and no
        card leaves the shoe meanwhile."""
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
    model: TableShoeModel | None = None,
    seed: int = 7,
) -> Iterator[Shoe]:
    """A software shoe with a pace-0 virtual dealer, running in its thread on a memory wire."""
    plan = parse_mistakes(mistakes) if isinstance(mistakes, str) else mistakes
    sim = SimulatedShoe(
        model if model is not None else TableShoeModel(cards),
        dealer=VirtualDealer(pace=0, mistakes=plan, button_delay=0.01, lid_open_seconds=0.2),
        link_config=LINK,
        # These tests watch the lock and the lights as separate commands (the revision 1.0
        # way, which the controller still speaks); SetState is tested in tests/table.
        identity=simulator_identity(state_command=False),
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
    model: TableShoeModel | None = None,
) -> Iterator[LiveTable]:
    cards = one_deck(3) if cards is None else cards
    journal = tmp_path / "journal.sqlite"
    with (
        running_shoe(cards, mistakes=mistakes, model=model) as shoe,
        controller_on(shoe, journal, cards, host=shoe.first_host) as live,
    ):
        yield live


# -- checks on the outcome -----------------------------------------------------------------

def first_shoe(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The export lines of the first shoe (the dealer may already have loaded the next)."""
    end = next((i for i, line in enumerate(lines) if line["type"] == "shoe_end"), None)
    assert end is not None, f"the export has no shoe_end: {lines[-3:]}"
    return lines[: end + 1]


def export(journal: Path) -> list[dict[str, Any]]:
    return first_shoe(list(export_lines(journal)))


def exported_cards(lines: list[dict[str, Any]]) -> list[str]:
    cards: list[str] = []
    for line in lines:
        if line["type"] == "burn":
            cards += line["cards"]
        elif line["type"] == "round":
            cards += line["player"] + line["banker"]
    return cards


@dataclass
class Accounting:
    """Where every card of the first shoe went, by the shoe's card counter."""

    played: dict[int, str]  # burn and rounds: counter -> card as the table took it
    strays: dict[int, str | None]  # set aside (None: never read)
    voided: dict[int, str]  # in voided rounds (dealt, not played)
    cards_used: int  # the shoe_finished event's count


def accounting(journal: Path) -> Accounting:
    """Replay the journal (as ``shoe journal export`` does) up to the first shoe's end."""
    table = Table(create_game(PROFILE))
    played: dict[int, str] = {}
    round_of: dict[int, int] = {}
    voided: dict[int, str] = {}
    with Journal(journal, readonly=True) as opened:
        for record in opened.records():
            for event in table.handle(input_from_record(record.kind, record.data)):
                kind = event["type"]
                if kind in ("burn_card", "card"):
                    assert event["counter"] not in played, f"card {event['counter']} played twice"
                    played[event["counter"]] = event["card"]
                    round_of[event["counter"]] = event.get("round", 0)
                elif kind == "round_void":
                    for counter in [c for c, r in round_of.items() if r == event["round"]]:
                        voided[counter] = played.pop(counter)
                elif kind == "shoe_finished":
                    strays: dict[int, str | None] = {}
                    for stray in table.strays:
                        assert stray["counter"] not in strays, "a card set aside twice"
                        strays[stray["counter"]] = stray["card"]
                    return Accounting(played, strays, voided, event["cards_used"])
    raise AssertionError("the journal holds no finished shoe")


def check_no_card_lost(live: LiveTable) -> list[dict[str, Any]]:
    """Every card the shoe dealt is, exactly once, played (burn or a round), set aside or in a
    voided round, as the very card the shoe held; the export's counts agree. Returns the
    first shoe's export lines."""
    lines = export(live.journal_path)
    books = accounting(live.journal_path)
    dealt = live.shoe.dealt()
    assert books.cards_used == len(dealt), (books.cards_used, len(dealt))
    assert not set(books.played) & set(books.strays)
    assert not set(books.voided) & (set(books.played) | set(books.strays))
    everything = {**books.played, **books.strays, **books.voided}
    assert sorted(everything) == list(range(1, len(dealt) + 1)), "a card is missing"
    for out in dealt:
        taken = everything[out.counter]
        # A card a supervisor set aside unread is None; anything named must be the true card.
        assert taken is None or taken == out.card.code, (out, taken)
    assert sorted(exported_cards(lines)) == sorted(books.played.values())
    rounds = [line for line in lines if line["type"] == "round"]
    assert lines[-1]["type"] == "shoe_end" and lines[-1]["rounds"] == len(rounds)
    # Cards used: every card that left the shoe, set aside or voided ones included.
    assert lines[-1]["cards_used"] == len(dealt), (lines[-1], len(dealt))
    return lines


def check_matches_replay(live: LiveTable, lines: list[dict[str, Any]]) -> None:
    """The export is what ``shoe replay`` makes of the cards the table played, in the order the
    shoe dealt them, with the cut card where it physically lay."""
    books = accounting(live.journal_path)
    cards = live.cards
    cut_index = len(cards) - CUT_CARD
    set_aside = set(books.strays) | set(books.voided)
    kept = [(i, card) for i, card in enumerate(cards) if i + 1 not in set_aside]
    behind_cut = sum(1 for i, _ in kept if i >= cut_index)
    replay = list(replay_shoe([card for _, card in kept], load_profile(PROFILE), behind_cut))
    replay[-1]["cards_used"] += len(set_aside)  # the export counts them as used
    # A voided round keeps its round number: the rounds after it are numbered one higher.
    played = [line for line in lines if line["type"] != "round_void"]
    renumbered = len(played) != len(lines)
    assert len(played) == len(replay), (lines, replay)
    for got, want in zip(played, replay):
        keys = [key for key in got if not (renumbered and key == "round")]
        assert {k: got[k] for k in keys} == {k: want[k] for k in keys}, (got, want)


def records_of(records: list[Record], kind: str, **data: Any) -> list[Record]:
    return [r for r in records
            if r.kind == kind and all(r.data.get(k) == v for k, v in data.items())]
