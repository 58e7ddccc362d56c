"""Card conservation under every interleaving of faults (hypothesis stateful testing).

The world (a dealer, a flaky wire, a shoe that restarts or is reloaded, supervisors who type
the wrong PIN, a controller that is killed and restarted) acts in any order; after every step
the invariants that make the product trustworthy must hold:

1. **Every card that left the shoe is accounted for exactly once**: burned, in a hand, set
   aside or pending. Counted from the events of the journal's replay, attributed to the shoe
   load each card came from, against the cards that physically left the shoe. A card the shoe
   never reported (it left silently, or its frame could not be read) is accounted once the
   table learns of it, and never twice.
2. **No card is acknowledged to the shoe before its journal record is durable** (checked by
   the harness at every delivery of bytes to the shoe).
3. **The exit is locked whenever no card is due or anything is latched**: the shoe's own card
   stop, once the wire is quiet, agrees with the table.
4. **The table rebuilt from the journal equals the live table.**
4b. **A table shoe is dealt from one physical load** (a reload in play is stopped, not mixed in).
5. **Each round's cards and result agree with an independent statement of the rules**
   (``tests/baccarat/baccarat_reference.py``, which does not import the engine).

CI runs a fixed budget; set ``CARD_CONSERVATION_EXAMPLES`` (and ``..._STEPS``) for a long run.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from baccarat.baccarat_reference import reference_deal, reference_winner
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from shoe_controller.cards import Card, Suit
from shoe_controller.errors import ShoeError
from shoe_controller.journal import Journal
from shoe_controller.live.supervision import SupervisorAuthError
from shoe_controller.table.fold import replay_records
from shoe_controller.table.inputs import BettingCommand, CameraDeclined, CameraRead

from .harness import PIN, SUPERVISOR, Harness

EXAMPLES = int(os.environ.get("CARD_CONSERVATION_EXAMPLES", "120"))
STEPS = int(os.environ.get("CARD_CONSERVATION_STEPS", "40"))
REPORT = os.environ.get("CARD_CONSERVATION_REPORT")
"""A file to which a long run writes how many examples and steps it has run so far."""
TOTALS: Counter[str] = Counter()

POINTS = {1: 1, **{rank: rank % 10 for rank in range(2, 14)}}


def points(code: str) -> int:
    return POINTS[Card.from_code(code).rank] if Card.from_code(code).rank < 10 else 0


class CardConservation(RuleBasedStateMachine):
    harness: Harness

    # ------------------------------------------------------------------ the world
    @initialize(seed=st.integers(0, 2**16))
    def start(self, seed: int) -> None:
        self.harness = Harness(seed=seed)
        self.harness.settle()
        self.steps = 0

    def teardown(self) -> None:
        harness = getattr(self, "harness", None)
        if harness is not None:
            harness.close()
            TOTALS["examples"] += 1
            TOTALS["steps"] += self.steps
            TOTALS["cards"] += len(harness.shoe.physical)
            if REPORT:
                Path(REPORT).write_text(json.dumps(dict(TOTALS)), encoding="utf-8")

    @property
    def h(self) -> Harness:
        return self.harness

    def _pull(self, **kwargs: Any) -> None:
        if not self.h.shoe.model.is_empty:
            self.h.shoe.pull(self.h.clock(), **kwargs)
        self.h.settle()

    @rule()
    def pull(self) -> None:
        self._pull()

    @rule()
    def pull_twice_quickly(self) -> None:
        if not self.h.shoe.model.is_empty:
            self.h.shoe.pull(self.h.clock())
        self._pull()

    @rule()
    def forced_pull(self) -> None:
        self._pull(forced=True)

    @rule()
    def misread_pull(self) -> None:
        self.h.shoe.misread_next = True
        self._pull()

    @rule()
    def silent_pull(self) -> None:
        """A card leaves the shoe and the shoe reports nothing (a counter gap)."""
        self.h.shoe.silent_next = True
        self._pull()

    @rule()
    def unreadable_pull(self) -> None:
        """The card's frame arrives CRC-valid but unreadable: the host refuses it."""
        self.h.refuse_next = True
        self._pull()

    @rule(close=st.booleans())
    def lid(self, close: bool) -> None:
        self.h.shoe.open_lid(self.h.clock())
        self.h.settle()
        if close:
            self.h.shoe.close_lid(self.h.clock())
            self.h.settle()

    @rule()
    def close_lid(self) -> None:
        self.h.shoe.close_lid(self.h.clock())
        self.h.settle()

    @rule()
    def press_button(self) -> None:
        self.h.shoe.press_button(self.h.clock())
        self.h.settle()

    @rule()
    def jam_and_clear(self) -> None:
        from firmware_protocol.messages import ResetKind

        self.h.shoe.jam(self.h.clock())
        self.h.settle()
        self.h.shoe._reset(ResetKind.CLEAR_FAULTS, self.h.clock())

    @rule(seconds=st.sampled_from([0.2, 0.7, 1.6]))
    def cut_wire(self, seconds: float) -> None:
        self.h.wire_up = False
        self.h.run(seconds)
        self.h.wire_up = True
        self.h.settle()

    @rule()
    def reload_shoe(self) -> None:
        self.h.shoe.load_new(self.h.clock())
        self.h.settle()

    @rule()
    def restart_shoe(self) -> None:
        self.h.shoe.reboot(self.h.clock())
        self.h.settle()

    @rule(action=st.sampled_from(["open", "close"]))
    def betting(self, action: str) -> None:
        self.h.controller.submit(BettingCommand(action, "table-system"))
        self.h.settle()

    @rule()
    def camera_reads_the_pending_card(self) -> None:
        pending = self.h.controller.table.pending
        if pending is not None:
            card = self.h.physical_card(pending.counter)
            if card is not None:
                self.h.controller.submit(CameraRead(pending.counter, card, 0.99))
        self.h.settle()

    @rule(outcome=st.sampled_from(["declined", "no_frame"]), stale=st.booleans())
    def camera_cannot_read_a_card(self, outcome: str, stale: bool) -> None:
        """The camera gives up on the pending card (or, late, on one resolved before)."""
        pending = self.h.controller.table.pending
        counter = self.h.controller.table.cards_dealt if pending is None else pending.counter
        self.h.controller.submit(CameraDeclined(counter - stale, outcome, "in the test"))
        self.h.settle()

    @rule(action=st.sampled_from(["clear", "void_round", "end_shoe", "enter_card"]),
          right_pin=st.booleans(), true_card=st.booleans(),
          rank=st.integers(1, 13), suit=st.sampled_from(list(Suit)))
    def supervisor(self, action: str, right_pin: bool, true_card: bool, rank: int,
                   suit: Suit) -> None:
        card = None
        if action == "enter_card":
            pending = self.h.controller.table.pending
            found = None if pending is None else self.h.physical_card(pending.counter)
            card = (found if true_card and found is not None else Card(rank, suit)).code
        try:
            self.h.controller.supervisor(action, SUPERVISOR, PIN if right_pin else "000000",
                                         card=card,
                                         reason="voided in the test" if action == "void_round"
                                         else "")
        except SupervisorAuthError:
            assert not right_pin or self.h.controller_refuses_logins()
        except ShoeError:
            pass  # e.g. the limiter after too many wrong PINs
        self.h.settle()

    @rule()
    def restart_controller(self) -> None:
        self.h.restart()
        self.h.settle()

    @rule(seconds=st.sampled_from([0.5, 2.0]))
    def wait(self, seconds: float) -> None:
        self.h.run(seconds)

    @precondition(lambda self: hasattr(self, "harness"))
    @rule()
    def deal_on(self) -> None:
        """A careful dealer: move the round on (betting, cards, confirmation) for a while."""
        table = self.h.controller.table
        for _ in range(12):
            view = table.view()
            if view.alarm == "latched" or not view.link_up:
                break
            if view.due is not None and not self.h.shoe.model.is_empty:
                self.h.shoe.pull(self.h.clock())
            elif view.state.endswith("betting_open"):
                self.h.controller.submit(BettingCommand("close", "table-system"))
            elif view.state.endswith("result_shown"):
                self.h.shoe.press_button(self.h.clock())
            elif table.waiting_for_round():
                self.h.controller.submit(BettingCommand("open", "table-system"))
            else:
                break
            self.h.settle()

    # ------------------------------------------------------------------ invariants
    @invariant()
    def nothing_acknowledged_before_it_is_journalled(self) -> None:
        self.steps += 1  # invariants run after every step (and once after the start)
        assert not self.h.violations, self.h.violations[:3]

    @invariant()
    def every_card_is_accounted_for_exactly_once(self) -> None:
        ledger, _ = self.h.ledger()
        pending = self.h.controller.table.pending
        if pending is not None:
            ledger[self.h.pending_key(pending.counter)] += 1
        physical = {(card.load, card.counter): card for card in self.h.shoe.physical}
        invented = [key for key in ledger if key not in physical]
        assert not invented, f"accounted cards that never left the shoe: {invented}"
        twice = {key: n for key, n in ledger.items() if n > 1}
        assert not twice, f"cards accounted more than once: {twice}"
        unacked = self.h.shoe.unacked()
        for key, card in physical.items():
            reported = card.message is not None and key not in self.h.refused
            if reported and id(card.message) not in unacked:
                assert ledger[key] == 1, f"card {key} acknowledged but accounted {ledger[key]}x"

    @invariant()
    def a_shoe_is_dealt_from_one_load(self) -> None:
        """Cards of two physical loads never meet in one table shoe (a shoe reloaded in play
        must not go on as if nothing happened)."""
        self.h.ledger()
        mixed = {shoe: loads for shoe, loads in self.h.shoe_loads.items() if len(loads) > 1}
        assert not mixed, f"table shoes dealt from several loads: {mixed}"

    @invariant()
    def the_exit_is_locked_unless_a_card_is_due(self) -> None:
        if not (self.h.wire_up and self.h.connection.endpoint.link.is_up):
            return
        view = self.h.controller.table.view()
        if not self.h.shoe.model.exit_locked:
            assert view.due is not None and view.alarm == "ok" and not view.lid_open, (
                f"shoe exit open while the table shows {view.state} {view.alarm} "
                f"due={view.due} latched={[latch['kind'] for latch in view.latched]}")

    @invariant()
    def the_journal_rebuilds_the_live_table(self) -> None:
        with Journal(self.h.journal_path, readonly=True) as journal:
            rebuilt, _ = replay_records(journal)
        assert rebuilt is not None
        assert rebuilt.snapshot() == self.h.controller.table.snapshot()

    @invariant()
    def every_round_follows_the_rules(self) -> None:
        _, rounds = self.h.ledger()
        for (shoe, number), (cards, result) in rounds.items():
            if result is None:
                continue
            values = tuple(points(code) for _target, code in cards)
            player, banker = reference_deal(values + (0,) * (6 - len(values)))
            assert len(player) + len(banker) == len(cards), (shoe, number, cards)
            expected = ["player", "banker", "player", "banker"] + (
                ["player"] if len(player) == 3 else []) + (["banker"] if len(banker) == 3 else [])
            assert [target for target, _code in cards] == expected, (shoe, number, cards)
            assert result["outcome"] == reference_winner(player, banker), (shoe, number)


CardConservation.TestCase = pytest.mark.slow(pytest.mark.timeout(0 if EXAMPLES > 200 else 900)(
    CardConservation.TestCase))
CardConservation.TestCase.settings = settings(
    max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TestCardConservation = CardConservation.TestCase
