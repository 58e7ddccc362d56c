"""Each irregularity at a live table, driven through the software shoe's virtual dealer.

For each one: the dealer (or the shoe) makes the mistake at a planned card; the test checks
(a) the dealer's prompt, (b) the latched error, (c) the journal record of the input that caused
it, (d) the shoe's exit locked and staying locked; then the supervisor ``alice`` resolves it
with her PIN (journalled with her id), the exit opens again when a card is due, the dealer
finishes the shoe and the export accounts for every card the shoe dealt.
"""

from __future__ import annotations

from pathlib import Path

from firmware_protocol.messages import SetExitLock
from shoe_controller.table.inputs import CameraRead
from shoe_controller.table.irregularities import Irregularity
from shoe_controller.table.machine import Level

from .rig import (
    SUPERVISOR,
    LiveTable,
    TableShoeModel,
    accounting,
    check_matches_replay,
    check_no_card_lost,
    live_table,
    one_deck,
    plan_of,
    records_of,
)

CARDS = one_deck(3)
PLAN = plan_of(CARDS)  # burn 2 cards; round 1 has 4 cards, round 2 has 6


def wait_for_latch(live: LiveTable, timeout: float = 10.0) -> None:
    live.step_until(lambda: live.controller.table.alarm == "latched", "an irregularity", timeout)


def check_latched(live: LiveTable, kind: Irregularity) -> None:
    """(a) prompt, (b) latch, (d) exit locked and staying locked."""
    view = live.view
    assert live.controller.table.alarm == "latched"
    assert view.alarm == "latched" and view.level is Level.ERROR
    assert view.prompt == kind.prompt, view
    assert view.detail.startswith(kind.remedy)
    assert live.latched_kinds()[0] == kind.value
    assert view.exit_locked and view.due is None and "stop" in view.lights
    # The controller sent the lock: wait until the shoe has it, then it must hold.
    live.step_until(lambda: live.shoe.model.exit_locked, "the shoe's exit to lock", 3.0)
    mark = live.shoe.mark()
    live.exit_stays_locked(0.3)
    assert not any(isinstance(c, SetExitLock) and not c.locked
                   for c in live.shoe.commands_since(mark))
    assert live.controller.table.alarm == "latched"


def resolve(live: LiveTable, action: str, *, card: str | None = None) -> None:
    """``alice`` resolves the latch; her action is journalled with her id; the exit opens
    again when a card is due and the dealer draws from it."""
    mark = live.shoe.mark()
    out = live.shoe.model.counter
    live.supervise(action, card=card, reason="checked at the table")
    live.step_until(lambda: live.controller.table.alarm == "ok", f"{action} to clear the latch")
    record = records_of(live.records(), "supervisor", action=action)[-1]
    assert record.actor == SUPERVISOR and record.data["supervisor"] == SUPERVISOR
    assert record.data["card"] == card
    live.step_until(
        lambda: live.shoe.model.counter > out and any(
            isinstance(c, SetExitLock) and not c.locked for c in live.shoe.commands_since(mark)),
        "the exit to unlock and the dealer to draw the next card",
    )


def finish(live: LiveTable, *, strays: dict[int, str | None]) -> None:
    """Play the shoe out; every card accounted for, the set-aside ones exactly ``strays``, and
    the export is what ``shoe replay`` makes of the cards that were played."""
    live.play_to_end()
    lines = check_no_card_lost(live)
    assert accounting(live.journal_path).strays == strays
    check_matches_replay(live, lines)


# -- a card drawn while betting is open ---------------------------------------------------

def test_card_drawn_while_betting_is_open(tmp_path: Path) -> None:
    """early-pull: right after confirming round 1 the dealer draws before betting closes. The
    shoe here has no card stop (its lock is only a light), so the card comes out."""
    counter = PLAN.last_card(1) + 1
    model = TableShoeModel(CARDS, no_card_stop=True)
    with live_table(tmp_path, CARDS, model=model, mistakes=f"early-pull@{PLAN.last_card(1)}") as live:
        wait_for_latch(live)
        assert live.view.state == "in_play.betting_open" and live.view.round == 2
        check_latched(live, Irregularity.CARD_DURING_BETTING)
        (record,) = records_of(live.records(), "card", counter=counter)
        assert record.data["card"] == CARDS[counter - 1].code
        assert record.data["drawn_while_locked"] is False
        assert live.view.latched[0]["card"] == CARDS[counter - 1].code
        resolve(live, "clear")
        finish(live, strays={counter: CARDS[counter - 1].code})


def test_early_pull_against_a_working_card_stop_is_refused(tmp_path: Path) -> None:
    """The same mistake on a shoe whose card stop holds: nothing comes out, nothing latches;
    the refusal is journalled and the dealer is told why."""
    with live_table(tmp_path, CARDS, mistakes=f"early-pull@{PLAN.last_card(1)}") as live:
        live.step_until(lambda: bool(records_of(live.records(), "shoe_event",
                                                event="pull_refused")), "the refused pull")
        notices = [u for u in live.updates if u.input_kind == "shoe_event"
                   and u.view.detail.startswith("The exit is locked")]
        assert notices and live.controller.table.alarm == "ok"
        finish(live, strays={})


# -- a card drawn when none is due ----------------------------------------------------------

def test_extra_card_when_none_is_due(tmp_path: Path) -> None:
    """extra-card: with round 1's result shown the dealer draws one card too many."""
    counter = PLAN.last_card(1) + 1
    model = TableShoeModel(CARDS, no_card_stop=True)
    with live_table(tmp_path, CARDS, model=model, mistakes=f"extra-card@{PLAN.last_card(1)}") as live:
        wait_for_latch(live)
        assert live.view.state == "in_play.result_shown"
        check_latched(live, Irregularity.EXTRA_CARD)
        (record,) = records_of(live.records(), "card", counter=counter)
        assert record.data["card"] == CARDS[counter - 1].code
        assert record.data["drawn_while_locked"] is False
        # The button cannot confirm the result over a latched error.
        assert live.view.state == "in_play.result_shown"
        resolve(live, "clear")
        finish(live, strays={counter: CARDS[counter - 1].code})


# -- a card forced past the locked exit -----------------------------------------------------

def test_card_forced_past_the_locked_exit(tmp_path: Path) -> None:
    """forced-pull: armed at round 1's 2nd card, it fires when the exit next locks, which is
    at once: the shoe re-engages its stop after every card until the host unlocks it for the
    next one. The shoe reports the card as drawn while locked."""
    counter = PLAN.card(1, 2) + 1
    with live_table(tmp_path, CARDS, mistakes=f"forced-pull@{PLAN.card(1, 2)}") as live:
        wait_for_latch(live)
        check_latched(live, Irregularity.CARD_WHILE_LOCKED)
        (record,) = records_of(live.records(), "card", counter=counter)
        assert record.data["drawn_while_locked"] is True
        assert record.data["card"] == CARDS[counter - 1].code
        resolve(live, "clear")
        finish(live, strays={counter: CARDS[counter - 1].code})


# -- more copies of a card than the shoe holds ------------------------------------------------

def test_more_copies_of_a_card_than_the_shoe_holds(tmp_path: Path) -> None:
    """A one-deck shoe with a second copy of the turned burn card as round 1's first card."""
    counter = PLAN.card(1, 1)
    twin = CARDS[0]
    cards = [*CARDS[: counter - 1], twin, *CARDS[counter - 1:]]
    with live_table(tmp_path, cards) as live:
        wait_for_latch(live)
        check_latched(live, Irregularity.TOO_MANY_COPIES)
        assert live.view.latched[0]["card"] == twin.code
        copies = records_of(live.records(), "card", card=twin.code)
        assert [r.data["counter"] for r in copies] == [1, counter]
        # Entering a card the shoe has already given out in full is refused: still latched.
        live.supervise("enter_card", card=twin.code)
        live.step_for(0.05)
        assert live.controller.table.alarm == "latched"
        resolve(live, "clear")  # the supervisor takes the foreign card out of play
        finish(live, strays={counter: twin.code})


# -- a misread card -------------------------------------------------------------------------

def test_misread_card_pending_until_the_supervisor_enters_it(tmp_path: Path) -> None:
    counter = PLAN.card(1, 2)
    true_card = CARDS[counter - 1].code
    model = TableShoeModel(CARDS, misread_at=(counter,))
    with live_table(tmp_path, CARDS, model=model) as live:
        wait_for_latch(live)
        check_latched(live, Irregularity.MISREAD)
        assert live.view.latched[0]["counter"] == counter
        (record,) = records_of(live.records(), "misread", counter=counter)
        assert record.data["drawn_while_locked"] is False
        # "clear" cannot make an unread card vanish: refused (and journalled as tried).
        live.supervise("clear")
        live.step_for(0.05)
        assert live.controller.table.alarm == "latched"
        assert records_of(live.records(), "supervisor", action="clear")[0].actor == SUPERVISOR
        resolve(live, "enter_card", card=true_card)
        (entered,) = [e for u in live.updates for e in u.events
                      if e["type"] == "card" and e["counter"] == counter]
        assert (entered["card"], entered["source"], entered["position"]) == (
            true_card, "supervisor", 2)
        finish(live, strays={})


def test_misread_card_read_by_the_camera(tmp_path: Path) -> None:
    """The camera fallback submits its read from another thread; no supervisor is needed."""
    counter = PLAN.card(1, 3)
    true_card = CARDS[counter - 1]
    model = TableShoeModel(CARDS, misread_at=(counter,))
    with live_table(tmp_path, CARDS, model=model) as live:
        wait_for_latch(live)
        check_latched(live, Irregularity.MISREAD)
        # A read for another card is ignored: the latch holds.
        live.controller.submit(CameraRead(counter - 1, true_card, 0.99))
        live.step_for(0.05)
        assert live.controller.table.alarm == "latched"
        mark, out = live.shoe.mark(), live.shoe.model.counter
        live.controller.submit(CameraRead(counter, true_card, 0.97))
        live.step_until(lambda: live.controller.table.alarm == "ok", "the camera read")
        (record,) = records_of(live.records(), "camera_read", counter=counter)
        assert record.actor is None and record.data["card"] == true_card.code
        assert not records_of(live.records(), "supervisor")
        live.step_until(
            lambda: live.shoe.model.counter > out and any(
                isinstance(c, SetExitLock) and not c.locked
                for c in live.shoe.commands_since(mark)),
            "the exit to unlock after the camera read",
        )
        finish(live, strays={})


# -- the lid opened mid-round ---------------------------------------------------------------

def test_lid_opened_mid_round(tmp_path: Path) -> None:
    """lid-open: with the result of round 1 shown (the round is not over until confirmed)
    the dealer opens the lid and closes it again a moment later."""
    with live_table(tmp_path, CARDS, mistakes=f"lid-open@{PLAN.last_card(1)}") as live:
        wait_for_latch(live)
        check_latched(live, Irregularity.LID_OPENED)
        (record,) = records_of(live.records(), "shoe_event", event="lid_opened")
        assert record.data["counter"] == PLAN.last_card(1)
        live.step_until(lambda: not live.view.lid_open, "the dealer to close the lid")
        assert records_of(live.records(), "shoe_event", event="lid_closed")
        live.exit_stays_locked(0.1)  # closing the lid does not clear the error
        resolve(live, "clear")
        finish(live, strays={})


def test_lid_opened_while_dealing(tmp_path: Path) -> None:
    """lid-open right after round 2's 2nd card. A clear while the lid is open is refused."""
    with live_table(tmp_path, CARDS, mistakes=f"lid-open@{PLAN.card(2, 2)}") as live:
        live.shoe.sim.dealer.lid_open_seconds = 1.0  # type: ignore[union-attr]
        wait_for_latch(live)
        check_latched(live, Irregularity.LID_OPENED)
        assert live.view.lid_open and live.view.round == 2
        live.supervise("clear")  # applied before the shoe's next message: the lid is open
        assert live.updates[-1].events == [
            {"type": "clear_refused", "supervisor": SUPERVISOR, "reason": "the shoe lid is open"}]
        assert live.controller.table.alarm == "latched"
        live.step_until(lambda: not live.view.lid_open, "the dealer to close the lid")
        # A card drawn in the very instant the lid opened would be latched and set aside too
        # (the pace-0 dealer waits for each acknowledgement, so in practice it is not).
        assert set(live.latched_kinds()) <= {"lid_opened", "extra_card"}
        resolve(live, "clear")
        finish(live, strays=dict(_strays_now(live)))


def _strays_now(live: LiveTable) -> dict[int, str | None]:
    return {s["counter"]: s["card"] for s in live.controller.table.strays}
