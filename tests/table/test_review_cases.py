"""The ways to lose a card that a review found, each reproduced as it was reported.

Table-level cases feed inputs to the pure table (``Driver``); the others run the real
controller, journal, host link and software shoe on a simulated clock (``harness``).
"""

from __future__ import annotations

import pytest

from shoe_controller.cards import Card
from shoe_controller.journal import Journal
from shoe_controller.table.fold import replay_records
from shoe_controller.table.inputs import (
    BettingCommand,
    CameraRead,
    CardDrawn,
    CardMisread,
    DeviceFault,
    LinkChanged,
    ShoeEventInput,
    SupervisorAction,
)
from shoe_controller.table.machine import Table

from .driver import Driver
from .harness import SUPERVISOR, Harness

C = Card.from_code
BURN = "TS 2C 3C 4C 5C 6C 7C 8C 9C TC TD"  # a ten turned: ten more burned


def round_one(driver: Driver) -> None:
    for code in BURN.split():
        driver.draw(C(code))
    driver.feed(BettingCommand("open"))
    driver.feed(BettingCommand("close"))


def hands(driver: Driver) -> list[tuple[str, str]]:
    return [(c["target"], c["card"]) for c in driver.table.game.cards_in_round()]


# -- 1. a misread card resolved while another irregularity is latched ---------------------

def test_misread_entered_while_the_lid_latch_is_held_goes_to_the_banker() -> None:
    """Reported: Player's first card dealt, Banker's first misread, lid opened and closed;
    "clear" refused, so the supervisor enters 7H, then clears. The round held only the
    Player's card and the next physical card became Banker 1: every card one place off."""
    driver = Driver()
    round_one(driver)
    driver.draw(C("2S"))  # Player 1
    driver.counter += 1
    driver.feed(CardMisread(driver.counter))  # Banker 1, unread
    driver.feed(ShoeEventInput("lid_opened"))
    driver.feed(ShoeEventInput("lid_closed"))
    driver.feed(SupervisorAction("clear", SUPERVISOR))
    assert "not read" in driver.table.refusal  # an unread card cannot be cleared away
    driver.feed(SupervisorAction("enter_card", SUPERVISOR, C("7H")))
    assert hands(driver) == [("player", "2S"), ("banker", "7H")]
    driver.feed(SupervisorAction("clear", SUPERVISOR))
    view = driver.table.view()
    assert view.alarm == "ok" and view.due == "player"  # the Player's second card is next
    driver.draw(C("4D"))
    assert hands(driver)[-1] == ("player", "4D")


@pytest.mark.parametrize("latch", [
    LinkChanged(False, "cable pulled"),
    DeviceFault("jam", "card stuck"),
    ShoeEventInput("lid_opened"),
])
def test_a_camera_read_while_another_latch_is_held_is_not_lost(latch: object) -> None:
    driver = Driver()
    round_one(driver)
    driver.draw(C("2S"))
    driver.counter += 1
    driver.feed(CardMisread(driver.counter))
    driver.feed(latch)  # type: ignore[arg-type]
    driver.feed(CameraRead(driver.counter, C("8D"), 0.99))
    assert hands(driver) == [("player", "2S"), ("banker", "8D")]
    assert driver.table.pending is None
    assert driver.table.alarm == "latched"  # the other irregularity still holds the exit
    assert driver.table.view().exit_locked


def test_a_refused_entry_leaves_the_counts_alone() -> None:
    """Reported: an enter_card that was refused decremented the suspect card's count anyway
    (and the too-many-copies check and the live odds went wrong from then on)."""
    driver = Driver("punto-banco-1d")
    for code in ["2S", "3S", "4S"]:  # a 2 turned: two more burned
        driver.draw(C(code))
    driver.feed(BettingCommand("open"))
    driver.feed(BettingCommand("close"))
    driver.draw(C("3S"))  # 3S again: too many copies for one deck
    seen = dict(driver.table.seen)
    driver.feed(SupervisorAction("enter_card", SUPERVISOR, C("4S")))  # 4S is out too: refused
    assert "only 1 copies" in driver.table.refusal
    assert dict(driver.table.seen) == seen
    driver.feed(SupervisorAction("enter_card", SUPERVISOR, C("3H")))
    assert driver.table.seen[C("3S")] == 1 and driver.table.seen[C("3H")] == 1
    assert hands(driver) == [("player", "3H")]


# -- 2. gaps in the card counter, refused card frames --------------------------------------

def test_a_counter_jump_stops_the_table_and_the_missing_card_is_entered() -> None:
    """Reported: a counter jump from 1 to 5 was accepted in silence."""
    driver = Driver()
    round_one(driver)  # cards 1..11 burned
    driver.draw(C("2S"))  # 12: Player 1
    driver.feed(CardDrawn(C("9H"), 16))  # 13, 14, 15 never reported
    view = driver.table.view()
    assert view.exit_locked and view.alarm == "latched"
    kinds = [latch["kind"] for latch in view.latched]
    assert kinds[0] == "counter_gap" and kinds.count("counter_gap") == 3
    assert driver.table.pending is not None and driver.table.pending.counter == 13
    assert [s["counter"] for s in driver.table.strays] == [14, 15, 16]
    driver.feed(SupervisorAction("enter_card", SUPERVISOR, C("5C")))  # card 13 was Banker 1
    assert hands(driver) == [("player", "2S"), ("banker", "5C")]


def test_a_refused_card_frame_stops_the_table_and_its_card_is_found() -> None:
    """Reported: a CRC-valid CardDrawn with an invalid payload was acknowledged (the shoe
    deleted the card) and only logged at debug level; nothing asked the shoe for its status."""
    harness = Harness(seed=5)
    try:
        table = harness.controller.table
        harness.settle()
        harness.shoe.pull(harness.clock())  # burn card 1 (turned): its value burns more
        harness.settle()
        harness.refuse_next = True
        harness.shoe.pull(harness.clock())  # card 2: its frame cannot be read
        harness.run(1.0)  # long enough for the status report
        assert not harness.refuse_next
        kinds = [latch["kind"] for latch in table.view().latched]
        assert kinds[:2] == ["unreadable_message", "counter_gap"]
        assert table.pending is not None and table.pending.counter == 2
        assert harness.shoe.model.exit_locked
        card = harness.shoe.physical[1].card
        harness.controller.supervisor("enter_card", SUPERVISOR, harness_pin(), card=card.code)
        harness.controller.supervisor("clear", SUPERVISOR, harness_pin())
        harness.settle()
        assert table.burn_cards[-1] == card
        assert table.view().alarm == "ok"
        assert not harness.violations
    finally:
        harness.close()


def harness_pin() -> str:
    from .harness import PIN

    return PIN


def test_the_same_counter_with_another_face_is_no_repeat() -> None:
    """A repeat is the same card again; the same counter with another face is journalled and
    stops the table (a reload the table never heard of, or a confused shoe)."""
    driver = Driver()
    round_one(driver)
    driver.draw(C("2S"))
    counter = driver.counter
    assert driver.table.is_duplicate(CardDrawn(C("2S"), counter))
    other = CardDrawn(C("KH"), counter)
    assert not driver.table.is_duplicate(other)
    driver.feed(other)
    view = driver.table.view()
    assert view.latched[-1]["kind"] == "counter_mismatch" and view.exit_locked
    assert hands(driver) == [("player", "2S")]


# -- 3. a shoe loaded mid-shoe ----------------------------------------------------------------

def test_a_shoe_reloaded_mid_shoe_latches_and_its_cards_are_journalled() -> None:
    """Reported: the new shoe's counters restart below the old ``last_counter``, so its
    cards were acknowledged as "resends" and never journalled."""
    driver = Driver()
    round_one(driver)
    driver.draw(C("2S"))
    driver.feed(ShoeEventInput("shoe_loaded"))  # the dealer reloads mid-round
    view = driver.table.view()
    assert view.latched[-1]["kind"] == "shoe_reloaded" and view.exit_locked
    forced = CardDrawn(C("AH"), 1, drawn_while_locked=True)
    assert not driver.table.is_duplicate(forced)  # a new shoe's card 1 is no repeat
    driver.feed(forced)
    assert driver.table.strays[-1]["counter"] == 1
    driver.feed(SupervisorAction("clear", SUPERVISOR))
    assert "end the shoe" in driver.table.refusal
    driver.feed(SupervisorAction("end_shoe", SUPERVISOR))
    assert driver.table.state == "shoe_loaded" and driver.table.shoe_number == 2
    assert driver.table.view().alarm == "ok"


def test_a_shoe_reloaded_over_a_shown_result_keeps_the_result() -> None:
    driver = Driver()
    round_one(driver)
    for code in ["2S", "3H", "4D", "5C"]:  # 2+4 = 6 against 3+5 = 8: Banker natural
        driver.draw(C(code))
    assert driver.table.state.endswith("result_shown")
    driver.feed(ShoeEventInput("shoe_loaded"))
    assert driver.table.view().latched[-1]["kind"] == "shoe_reloaded"
    driver.feed(SupervisorAction("end_shoe", SUPERVISOR))
    types = [event["type"] for event in driver.events]
    assert "result_confirmed" in types and "round_void" not in types


def test_a_live_reload_mid_shoe_is_latched_and_nothing_is_acknowledged_unjournalled() -> None:
    harness = Harness(seed=9)
    try:
        harness.settle()
        for _ in range(3):
            harness.shoe.pull(harness.clock())
            harness.settle()
        harness.shoe.load_new(harness.clock())
        harness.settle()
        table = harness.controller.table
        assert [latch["kind"] for latch in table.view().latched] == ["shoe_reloaded"]
        assert harness.shoe.model.exit_locked
        harness.shoe.pull(harness.clock(), forced=True)  # the new shoe's card 1, forced
        harness.settle()
        assert (2, 1) in harness.journalled and not harness.violations
    finally:
        harness.close()


# -- 4. a shoe that restarts while the link stays up ------------------------------------------

def test_a_shoe_restarted_while_the_link_stays_up_gets_its_state_again() -> None:
    """Reported: a shoe restarting within the link timeout got no lock or lights again (only
    a LinkUp re-sent them) and its DeviceInfo was never journalled."""
    harness = Harness(seed=3)
    try:
        harness.settle()
        harness.shoe.pull(harness.clock())
        harness.settle()
        table = harness.controller.table
        assert table.view().due == "burn" and not harness.shoe.model.exit_locked
        resyncs = harness.controller.liveness.resyncs
        harness.shoe.reboot(harness.clock())  # powers up locked, lights off
        harness.settle()
        assert not harness.shoe.model.exit_locked  # the unlock was sent again
        # ... at once, on the restart itself: not by the liveness guard finding out later
        assert harness.controller.liveness.resyncs == resyncs
        assert harness.shoe.model.indicators == 0 or table.view().lights
        with Journal(harness.journal_path, readonly=True) as journal:
            devices = [r.data for r in journal.records() if r.kind == "device"]
        assert [d["restarted"] for d in devices] == [False, True]
        assert devices[0]["serial"] == devices[1]["serial"] == "SIM-0001"
    finally:
        harness.close()


# -- 7. a replay depends only on what the journal holds ---------------------------------------

def test_an_edited_profile_file_does_not_change_the_replay(tmp_path) -> None:
    """Reported: the session stored only the profile's name; an edited profile TOML
    re-attributed old cards after a restart."""
    from shoe_controller.games.registry import read_profile
    from shoe_controller.table.controller import TableController

    profile_file = tmp_path / "house.toml"
    original = read_profile("punto-banco-8d").text.replace(
        'name = "punto-banco-8d"', 'name = "house"')
    original = original.replace('procedure = "turn-and-burn"', 'procedure = "fixed"\ncount = 1')
    profile_file.write_text(original, encoding="utf-8")
    journal_path = tmp_path / "table.sqlite"

    class Silent:
        def get(self, timeout=None):
            from shoe_controller.errors import ShoeTimeoutError
            raise ShoeTimeoutError("nothing")

        def send(self, message) -> None:
            pass

        def commit(self) -> None:
            pass

    def controller(journal: Journal) -> TableController:
        from shoe_controller.games.registry import game_from_toml

        source = read_profile(str(profile_file))
        return TableController(journal=journal, table=Table(game_from_toml(source.text)),
                               profile=str(profile_file), profile_toml=source.text,
                               connection=Silent(), auto_betting=False)

    with Journal(journal_path) as journal:
        live = controller(journal)
        live.start()
        for item in (LinkChanged(True), ShoeEventInput("shoe_loaded"),
                     CardDrawn(C("5S"), 1), BettingCommand("open"), BettingCommand("close"),
                     CardDrawn(C("2H"), 2)):
            live._apply(item)
        before = live.table.snapshot()
    assert before["burn"] == ["5S"]  # one card burned, then the round
    profile_file.write_text(original.replace("count = 1", "count = 3"), encoding="utf-8")
    with Journal(journal_path, readonly=True) as journal:
        rebuilt, _ = replay_records(journal)
    assert rebuilt is not None and rebuilt.snapshot() == before
