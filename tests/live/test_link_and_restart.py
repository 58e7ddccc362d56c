"""The shoe link lost mid-round, and the controller restarted mid-round, at a live table.

The wire is the in-process memory wire: cutting it behaves like pulling the serial cable (the
host's port fails, the shoe hears nothing and locks its own exit after the link timeout).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from firmware_protocol.messages import SetExitLock
from shoe_controller.games.registry import create_game
from shoe_controller.table.controller import LINK_GRACE_SECONDS
from shoe_controller.table.inputs import input_from_record
from shoe_controller.table.irregularities import Irregularity
from shoe_controller.table.machine import rebuild

from .rig import (
    LINK,
    PROFILE,
    LiveTable,
    Shoe,
    check_matches_replay,
    check_no_card_lost,
    controller_on,
    live_table,
    one_deck,
    plan_of,
    records_of,
    running_shoe,
)
from .test_irregularities import check_latched, resolve

CARDS = one_deck(3)
PLAN = plan_of(CARDS)


def finish_clean(live: LiveTable) -> None:
    live.play_to_end()
    lines = check_no_card_lost(live)
    assert not live.controller.table.strays
    check_matches_replay(live, lines)


# -- the device link lost mid-round ---------------------------------------------------------

def test_link_lost_mid_round(tmp_path: Path) -> None:
    """The cable is pulled after round 1's 2nd card (nothing in flight); the table latches,
    both ends lock; the cable goes back, the exit stays locked until the supervisor clears."""
    with live_table(tmp_path, CARDS) as live:
        live.shoe.pause_dealer_after(PLAN.card(1, 2))
        live.wait_settled_at(PLAN.card(1, 2), "round 1's 2nd card")
        assert not live.shoe.model.exit_locked  # a card is due: the exit is open
        live.shoe.wire.break_connection("cable pulled")
        live.step_until(lambda: live.controller.table.alarm == "latched", "the link loss",
                        timeout=LINK.link_timeout * 4 + LINK_GRACE_SECONDS)
        (record,) = records_of(live.records(), "link", up=False)
        assert live.view.link_up is False
        check_latched(live, Irregularity.LINK_LOST)  # the shoe locked itself: no host
        # A supervisor cannot clear while the shoe is away (refused, journalled as tried).
        live.supervise("clear")
        assert live.controller.table.alarm == "latched"
        live.shoe.wire.restore()
        live.step_until(lambda: live.view.link_up, "the link to come back",
                        timeout=LINK.link_timeout * 4)
        assert records_of(live.records(), "link", up=True)[-1].seq > record.seq
        check_latched(live, Irregularity.LINK_LOST)  # back, and still locked
        live.shoe.resume_dealer()
        resolve(live, "clear")
        finish_clean(live)


def test_card_in_flight_when_the_link_drops_is_not_lost_to_the_round(tmp_path: Path) -> None:
    """The cable is pulled at the instant round 1's 3rd card leaves the shoe: the shoe keeps
    it (unacknowledged) and sends it once the link is back. It was drawn from an open exit
    when it was due, so it belongs to the round, not to the set-aside pile."""
    with running_shoe(CARDS) as shoe:
        cut_at = PLAN.card(1, 3)

        def on_pull(counter: int) -> None:
            if counter == cut_at:
                shoe.wire.break_connection("cable pulled as the card left")
                assert shoe.sim.dealer is not None
                shoe.sim.dealer.auto_pull = False

        shoe.model.on_pull = on_pull
        with controller_on(shoe, tmp_path / "journal.sqlite", CARDS, host=shoe.first_host) as live:
            live.step_until(lambda: live.controller.table.alarm == "latched", "the link loss")
            assert live.latched_kinds() == ["link_lost"]
            assert live.shoe.sim.unacked_cards() == 1  # the shoe still holds the card
            shoe.wire.restore()
            live.step_until(lambda: live.controller.table.last_counter == cut_at,
                            "the held card to arrive", timeout=LINK.link_timeout * 4)
            shoe.resume_dealer()
            resolve(live, "clear")
            assert live.controller.table.strays == []
            finish_clean(live)


# -- the controller restarted mid-round -----------------------------------------------------

class SimulatedCrash(Exception):
    """The controller process dies here (power cut, kill -9)."""


class CrashingJournal:
    """The controller's journal, dying at one card: ``after`` making it durable (the card is
    journalled but the shoe was never told it arrived) or ``before`` (it is not journalled;
    the shoe still holds it)."""

    def __init__(self, journal: Any, counter: int, when: str) -> None:
        self._journal = journal
        self._counter = counter
        self._when = when

    def append(self, kind: str, data: dict[str, Any], **kwargs: Any) -> Any:
        crash = kind == "card" and data["counter"] == self._counter
        if crash and self._when == "before":
            raise SimulatedCrash(f"controller died as card {self._counter} arrived")
        record = self._journal.append(kind, data, **kwargs)
        if crash:
            raise SimulatedCrash(f"controller died after journalling card {self._counter}")
        return record

    def __getattr__(self, name: str) -> Any:
        return getattr(self._journal, name)


def journal_view(path: Path) -> Any:
    """What the table shows after folding the journal as it stands (a pure rebuild)."""
    from shoe_controller.journal import Journal

    with Journal(path, readonly=True) as journal:
        inputs = [input_from_record(r.kind, r.data) for r in journal.records()]
    return rebuild(create_game(PROFILE), inputs)


def run_until_crash(shoe: Shoe, journal: Path, counter: int, when: str) -> None:
    with (
        pytest.raises(SimulatedCrash),
        controller_on(shoe, journal, CARDS, host=shoe.first_host) as live,
    ):
        crashing = CrashingJournal(live.controller.journal, counter, when)
        live.controller.journal = crashing  # type: ignore[assignment]
        live.step_until(lambda: False, "the crash")
    # The shoe holds the card as unacknowledged (and its dealer waits for it).
    assert shoe.sim.unacked_cards() == 1 and shoe.model.counter == counter


def run_until_shut_down(shoe: Shoe, journal: Path, counter: int) -> None:
    """An orderly shutdown with card ``counter`` applied and acknowledged, nothing in flight."""
    shoe.pause_dealer_after(counter)
    with controller_on(shoe, journal, CARDS, host=shoe.first_host) as live:
        live.wait_settled_at(counter, f"card {counter}")
    shoe.resume_dealer()


def restart(shoe: Shoe, journal: Path) -> Any:
    return controller_on(shoe, journal, CARDS, session_id=0x2002)


@pytest.mark.parametrize("how", ["journalled-not-acknowledged", "shut-down"])
def test_restart_mid_round_loses_and_duplicates_nothing(
    tmp_path: Path, how: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The controller goes away after round 2's 2nd card and a new one (new connection, same
    journal, same running shoe) takes over: same round, same cards; the card the shoe resends
    is recognised by its counter; the shoe finishes exactly as ``shoe replay`` deals it."""
    journal = tmp_path / "journal.sqlite"
    counter = PLAN.card(2, 2)
    with running_shoe(CARDS) as shoe:
        if how == "shut-down":
            run_until_shut_down(shoe, journal, counter)
        else:
            run_until_crash(shoe, journal, counter, "after")
        before = journal_view(journal)
        caplog.set_level(logging.INFO, logger="shoe_controller.table")
        with restart(shoe, journal) as live:
            table = live.controller.table
            assert table.round_number == before.round_number == 2
            assert table.game.cards_in_round() == before.game.cards_in_round()
            assert len(table.game.cards_in_round()) == 2
            assert table.last_counter == before.last_counter == counter
            assert live.view.exit_locked  # nothing is dealt until the shoe is back
            live.step_until(lambda: live.view.link_up, "the shoe to reconnect")
            live.step_until(lambda: live.shoe.sim.unacked_cards() == 0,
                            "the shoe to resend what it held")
            # The restarted table unlocks for the card due at once, so the dealer may already
            # have drawn on; the resent card itself was recognised (checked below).
            assert table.last_counter >= counter
            if how == "journalled-not-acknowledged":
                assert any("already journalled" in r.getMessage() for r in caplog.records)
            if table.alarm == "latched":  # see test_restart_resumes_the_round_as_it_was
                assert live.latched_kinds() == ["link_lost"]
                live.exit_stays_locked(0.1)
                resolve(live, "clear")
            finish_clean(live)
            counters = [r.data["counter"] for r in live.records() if r.kind == "card"]
            assert counters == list(range(1, len(counters) + 1))  # each card journalled once


def test_card_drawn_as_the_controller_died_is_played_after_restart(tmp_path: Path) -> None:
    """The controller dies as round 2's 2nd card arrives, before journalling it: the shoe
    resends it to the new controller, which must deal it to the round it was drawn for."""
    journal = tmp_path / "journal.sqlite"
    counter = PLAN.card(2, 2)
    with running_shoe(CARDS) as shoe:
        run_until_crash(shoe, journal, counter, "before")
        with restart(shoe, journal) as live:
            live.step_until(lambda: live.controller.table.last_counter == counter,
                            "the resent card")
            assert live.controller.table.strays == []
            assert len(live.controller.table.game.cards_in_round()) == 2
            finish_clean(live)


def test_restart_resumes_the_round_as_it_was(tmp_path: Path) -> None:
    """After a restart mid-round the dealer sees the same prompt and, once the shoe is back,
    the exit opens again for the card that is due, with no supervisor needed."""
    journal = tmp_path / "journal.sqlite"
    counter = PLAN.card(2, 2)
    with running_shoe(CARDS) as shoe:
        shoe.pause_dealer_after(counter)
        with controller_on(shoe, journal, CARDS, host=shoe.first_host) as live:
            live.wait_settled_at(counter, "round 2's 2nd card")
            before = live.view
            assert before.prompt == "Deal Player" and not before.exit_locked
        shoe.resume_dealer()
        with controller_on(shoe, journal, CARDS, session_id=0x2002) as live:
            mark = live.shoe.mark()
            live.step_until(lambda: live.view.link_up, "the shoe to reconnect")
            after = live.view
            assert (after.state, after.round, after.prompt, after.due, after.alarm) == (
                before.state, before.round, before.prompt, before.due, before.alarm)
            live.step_until(
                lambda: any(isinstance(c, SetExitLock) and not c.locked
                            for c in live.shoe.commands_since(mark)),
                "the exit to unlock for the due card", timeout=3.0)
            finish_clean(live)


def test_every_unlock_names_the_card_it_is_for(tmp_path: Path) -> None:
    """The controller unlocks for one card at a time and names it by its counter, so an
    unlock retransmitted over a reconnect and sent again cannot let a second card out."""
    with live_table(tmp_path, CARDS) as live:
        finish_clean(live)
        unlocks = [c for c in live.shoe.commands_since(0)
                   if isinstance(c, SetExitLock) and not c.locked]
        dealt = [card.counter for card in live.shoe.dealt()]
    assert unlocks and all(c.cards == 1 and c.for_card > 0 for c in unlocks)
    assert set(dealt) <= {c.for_card for c in unlocks}  # each card was let out by name
