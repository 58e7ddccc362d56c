"""The pure table state machine: prompts, exit lock, irregularities, supervisor actions."""

from __future__ import annotations

import random

import pytest

from shoe_controller.cards import Card, new_shoe, parse_shoe
from shoe_controller.games.baccarat.profile import load_profile
from shoe_controller.games.baccarat.replay import replay_shoe
from shoe_controller.games.registry import create_game
from shoe_controller.table.inputs import (
    BettingCommand,
    ButtonPressed,
    CameraCheck,
    CameraRead,
    CardMisread,
    LinkChanged,
    ShoeEventInput,
    SupervisorAction,
)
from shoe_controller.table.machine import Table, machine_definition, rebuild

from .driver import Driver

C = Card.from_code


def burn_and_open(driver: Driver, burn: str = "TS 2C 3C 4C 5C 6C 7C 8C 9C TC TD") -> None:
    """Burn with a ten turned (10 more burned), then open and close betting for round 1."""
    for card in parse_shoe(burn):
        driver.draw(card)
    driver.feed(BettingCommand("open"))


def rounds_of(events: list[dict]) -> list[dict]:
    return [e for e in events if e["type"] == "round_result"]


@pytest.mark.parametrize("profile,decks", [("punto-banco-8d", 8), ("baccarat-6d", 6),
                                           ("punto-banco-1d", 1)])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_whole_shoe_matches_replay(profile: str, decks: int, seed: int) -> None:
    cards = new_shoe(decks, seed)
    driver = Driver(profile)
    driver.play(cards)
    replay = list(replay_shoe(cards, load_profile(profile)))
    live = rounds_of(driver.events)
    assert driver.table.state == "shoe_finished"
    assert len(live) == len(replay) - 2
    for event, line in zip(live, replay[1:-1]):
        assert {k: event[k] for k in line if k not in ("type", "round")} == {
            k: v for k, v in line.items() if k not in ("type", "round")
        }
    finished = next(e for e in driver.events if e["type"] == "shoe_finished")
    assert finished["cards_used"] == replay[-1]["cards_used"]


def test_round_prompts_and_exit_lock() -> None:
    driver = Driver()
    view = driver.table.view()
    assert view.prompt == "Burn: turn the first card face up" and not view.exit_locked
    burn_and_open(driver)
    view = driver.table.view()
    assert view.state == "in_play.betting_open"
    assert view.prompt == "Place your bets" and view.exit_locked
    driver.feed(BettingCommand("close"))
    view = driver.table.view()
    assert view.prompt == "No more bets: Deal Player" and not view.exit_locked
    assert view.lights == ("player",)
    # Player 2+3 = 5 draws; Banker 7+K = 7; Player's third a 9 -> Banker stands on 7.
    prompts = []
    for code in ["2S", "7H", "3D", "KC", "9S"]:
        driver.draw(C(code))
        prompts.append((driver.table.view().prompt, driver.table.state))
    assert prompts == [
        ("Deal Banker", "in_play.dealing.initial_deal"),
        ("Deal Player", "in_play.dealing.initial_deal"),
        ("Deal Banker", "in_play.dealing.initial_deal"),
        ("Player draws", "in_play.dealing.player_third"),
        ("Banker wins 7 to 4", "in_play.result_shown"),
    ]
    view = driver.table.view()
    assert view.exit_locked and view.detail.startswith("Banker stands")
    driver.feed(ButtonPressed())
    assert driver.table.state == "in_play.result_confirmed"
    assert driver.table.view().exit_locked


@pytest.mark.parametrize(
    "make_mistake,kind",
    [
        (lambda d: d.draw(C("AS")), "card_during_betting"),
        (lambda d: d.draw(C("AS"), drawn_while_locked=True), "card_while_locked"),
    ],
)
def test_card_while_betting_open(make_mistake, kind) -> None:
    driver = Driver()
    burn_and_open(driver)
    make_mistake(driver)
    view = driver.table.view()
    assert view.alarm == "latched" and view.exit_locked and view.level.value == "error"
    assert view.latched[0]["kind"] == kind
    assert any(e["type"] == "irregularity" and e["kind"] == kind for e in driver.events)
    # Clearing sets the card aside (still counted as dealt) and the round carries on.
    driver.feed(SupervisorAction("clear", "alice"))
    view = driver.table.view()
    assert view.alarm == "ok" and view.state == "in_play.betting_open"
    assert driver.table.cards_dealt == 12 and driver.table.strays[0]["card"] == "AS"


def test_extra_card_after_the_round() -> None:
    driver = Driver()
    burn_and_open(driver)
    driver.feed(BettingCommand("close"))
    for code in ["9S", "7H", "3D", "KC"]:  # Player 9+3 = 2, Banker 7+K = 7
        driver.draw(C(code))
    driver.draw(C("5C"))  # Player draws to 7; Banker stands on 7
    assert driver.table.state == "in_play.result_shown"
    driver.draw(C("4C"))
    view = driver.table.view()
    assert view.latched[0]["kind"] == "extra_card" and view.exit_locked
    driver.feed(ButtonPressed())  # ignored while latched
    assert driver.table.state == "in_play.result_shown"


def test_too_many_copies_with_one_deck() -> None:
    driver = Driver("punto-banco-1d")
    burn_and_open(driver, "2S 3S 4S")  # a 2 turned: burn two more
    driver.feed(BettingCommand("close"))
    driver.draw(C("3S"))  # the shoe already gave 3S in the burn
    view = driver.table.view()
    assert view.latched[0]["kind"] == "too_many_copies" and view.exit_locked
    # The supervisor looks at the card: it is really the 3 of hearts.
    driver.feed(SupervisorAction("enter_card", "bob", C("3H")))
    view = driver.table.view()
    assert view.alarm == "ok" and view.prompt == "Deal Banker"
    assert driver.table.game.cards_in_round()[0]["card"] == "3H"


def test_misread_resolved_by_camera_then_supervisor() -> None:
    driver = Driver()
    burn_and_open(driver)
    driver.feed(BettingCommand("close"))
    driver.counter += 1
    driver.feed(CardMisread(driver.counter))
    view = driver.table.view()
    assert view.latched[0]["kind"] == "misread" and view.exit_locked
    # "clear" cannot make an unread card disappear: it must be entered.
    driver.feed(SupervisorAction("clear", "alice"))
    assert driver.table.view().alarm == "latched"
    driver.feed(CameraRead(driver.counter, C("8D"), 0.99))
    view = driver.table.view()
    assert view.alarm == "ok" and view.prompt == "Deal Banker"
    card_events = [e for e in driver.events if e["type"] == "card"]
    assert card_events[-1]["source"] == "camera" and card_events[-1]["card"] == "8D"
    driver.counter += 1
    driver.feed(CardMisread(driver.counter))
    driver.feed(SupervisorAction("enter_card", "alice", C("KD")))
    assert [c["card"] for c in driver.table.game.cards_in_round()] == ["8D", "KD"]


def test_lid_opened_mid_round_needs_closing_and_a_supervisor() -> None:
    driver = Driver()
    burn_and_open(driver)
    driver.feed(BettingCommand("close"))
    driver.draw(C("2S"))
    driver.feed(ShoeEventInput("lid_opened"))
    view = driver.table.view()
    assert view.latched[0]["kind"] == "lid_opened" and view.exit_locked
    driver.feed(SupervisorAction("clear", "alice"))
    assert driver.table.alarm == "latched"  # refused: the lid is still open
    driver.feed(ShoeEventInput("lid_closed"))
    driver.feed(SupervisorAction("clear", "alice"))
    view = driver.table.view()
    assert view.alarm == "ok" and view.prompt == "Deal Banker" and not view.exit_locked


def test_lid_opened_between_rounds_is_no_irregularity() -> None:
    driver = Driver()
    burn_and_open(driver)
    driver.feed(ShoeEventInput("lid_opened"))
    assert driver.table.alarm == "ok"


def test_link_lost_mid_round() -> None:
    driver = Driver()
    burn_and_open(driver)
    driver.feed(BettingCommand("close"))
    driver.draw(C("2S"))
    driver.feed(LinkChanged(False, "serial port vanished"))
    view = driver.table.view()
    assert view.latched[0]["kind"] == "link_lost" and view.exit_locked
    driver.feed(LinkChanged(True))
    driver.feed(SupervisorAction("clear", "alice"))
    assert driver.table.view().prompt == "Deal Banker"


def test_void_round_keeps_cards_dealt_and_redeals() -> None:
    driver = Driver()
    burn_and_open(driver)
    driver.feed(BettingCommand("close"))
    driver.draw(C("2S"))
    driver.draw(C("3S"))
    driver.feed(SupervisorAction("void_round", "alice", reason="dealer error"))
    assert driver.table.state == "in_play.result_confirmed"
    assert any(e["type"] == "round_void" and e["supervisor"] == "alice" for e in driver.events)
    assert driver.table.cards_dealt == 13
    driver.feed(BettingCommand("open"))
    assert driver.table.round_number == 2


def test_end_shoe_early() -> None:
    driver = Driver()
    burn_and_open(driver)
    driver.feed(SupervisorAction("end_shoe", "alice"))
    view = driver.table.view()
    assert view.state == "shoe_finished" and view.prompt == "Shoe finished" and view.exit_locked


def test_cut_card_prompt_then_last_round() -> None:
    driver = Driver()
    burn_and_open(driver)
    driver.feed(BettingCommand("close"))
    driver.draw(C("2S"))
    driver.feed(ShoeEventInput("cut_card"))
    assert driver.table.state.startswith("cut_card_out.")
    assert "Cut card out: one more round" in driver.table.view().detail


def test_rebuilding_from_inputs_gives_the_same_view() -> None:
    driver = Driver()
    rng = random.Random(5)
    driver.play(new_shoe(8, 11)[:150], cut_card=0)
    for cut in sorted(rng.sample(range(1, len(driver.inputs)), 15)):
        live = Driver()
        for item in driver.inputs[3:cut]:
            live.feed(item)
        rebuilt = rebuild(create_game("punto-banco-8d"), driver.inputs[:cut])
        assert rebuilt.view() == live.table.view()


def test_every_state_is_reachable_and_every_trigger_exists() -> None:
    game = create_game("punto-banco-8d")
    states, transitions = machine_definition(game)
    table = Table(game)
    destinations = {t["dest"] for t in transitions}
    leaves = set()

    def walk(items, prefix=""):
        for state in items:
            if isinstance(state, str):
                leaves.add(prefix + state)
            else:
                walk(state["children"], prefix + state["name"] + ".")

    walk(states)
    assert leaves - destinations == {"no_shoe"}
    for transition in transitions:
        assert callable(getattr(table, transition["trigger"]))


def test_shoe_running_out_between_rounds_finishes_the_shoe() -> None:
    driver = Driver("punto-banco-1d")
    burn_and_open(driver, "2S 3S 4S")
    driver.feed(BettingCommand("close"))
    for code in ["9H", "9D", "8C", "8S"]:  # two naturals: the round is complete
        driver.draw(C(code))
    driver.feed(ShoeEventInput("shoe_empty"))
    assert driver.table.state == "in_play.result_shown"  # the result is still confirmed first
    driver.feed(ButtonPressed())
    view = driver.table.view()
    assert view.state == "shoe_finished" and view.exit_locked


def test_shoe_running_out_mid_round_latches_until_voided() -> None:
    driver = Driver("punto-banco-1d")
    burn_and_open(driver, "2S 3S 4S")
    driver.feed(BettingCommand("close"))
    driver.draw(C("9H"))
    driver.feed(ShoeEventInput("shoe_empty"))
    assert driver.table.view().latched[0]["kind"] == "shoe_empty"
    driver.feed(SupervisorAction("void_round", "alice", reason="shoe empty"))
    assert driver.table.state == "shoe_finished"


def test_camera_disagreeing_with_the_scanner_latches() -> None:
    driver = Driver()
    burn_and_open(driver)
    driver.feed(BettingCommand("close"))
    driver.draw(C("2S"))
    driver.feed(CameraCheck(driver.counter, C("2S"), "2H", 0.98))
    view = driver.table.view()
    assert view.latched[0]["kind"] == "camera_disagrees" and view.exit_locked
    assert "scanner 2S, camera 2H" in view.detail
    driver.feed(SupervisorAction("clear", "alice"))
    assert driver.table.view().prompt == "Deal Banker"


def test_void_after_the_result_is_shown_redeals_the_round() -> None:
    driver = Driver()
    burn_and_open(driver)
    driver.feed(BettingCommand("close"))
    for code in ["9S", "7H", "KD", "KC"]:  # Player natural 9: complete after four cards
        driver.draw(C(code))
    assert driver.table.state == "in_play.result_shown"
    driver.feed(SupervisorAction("void_round", "alice", reason="wrong table limits"))
    assert driver.table.state == "in_play.result_confirmed"
    assert driver.table.game.dealer.rounds == () and driver.table.cards_dealt == 15
    driver.feed(BettingCommand("open"))
    driver.feed(BettingCommand("close"))
    assert driver.table.view().prompt == "No more bets: Deal Player"
