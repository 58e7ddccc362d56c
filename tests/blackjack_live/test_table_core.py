"""Blackjack on the game-independent table: dealing order, prompts, the exit lock while a
player decides, insurance and the dealer's check, answers that are illegal or late, and the
table as the fold of its inputs.

Expected prompts, totals and results are written out by hand from seed 003 section 2 (and
checked against the independent reference in tests/blackjack/blackjack_reference.py), never
computed by the engine under test.
"""

from __future__ import annotations

from shoe_controller.cards import Card
from shoe_controller.table.irregularities import Irregularity
from shoe_controller.table.machine import rebuild
from tests.blackjack.blackjack_reference import legal_actions, total

from .table_driver import Driver, types


def started(seats: list[int]) -> Driver:
    driver = Driver()
    driver.burn()
    assert driver.view.prompt == "Place your bets" or driver.view.state == "burn"
    driver.round(seats)
    return driver


def test_opening_deal_prompts_every_card_by_seat_then_waits_for_the_first_decision() -> None:
    driver = started([1, 3])
    prompts = []
    for code in ["9D", "5H", "TC", "7S", "6H", "8C"]:  # 1, 3, up, 1, 3, hole
        prompts.append(driver.view.prompt)
        assert not driver.view.exit_locked
        driver.card(code)
    assert prompts == ["No more bets: Deal seat 1", "Deal seat 3", "Deal the dealer's up card",
                       "Deal seat 1", "Deal seat 3", "Deal the dealer's hole card face down"]
    view = driver.view
    # Seat 1 holds 9+7 = hard 16: hit, stand, double (no pair).
    assert view.prompt == "Seat 1: hit, stand, double?"
    assert view.exit_locked
    assert view.awaiting is not None and view.awaiting.seat == 1
    assert set(view.awaiting.options) == legal_actions(["9D", "7S"], False) - {"-"}
    assert view.state == "in_play.dealing.players"


def test_a_card_while_a_decision_is_awaited_is_an_irregularity_and_nothing_is_lost() -> None:
    driver = started([2])
    driver.cards("TD 6C 9S 8H")  # seat 2: T+9 = 19; dealer 6 up, hole 8H
    assert driver.view.awaiting is not None
    events = driver.card("4C")
    assert "card_set_aside" in types(events)
    latched = [event for event in events if event["type"] == "irregularity"]
    assert latched and latched[0]["kind"] == Irregularity.EXTRA_CARD.value
    assert driver.view.exit_locked
    # A decision is refused while the error is latched; the round is unchanged.
    refused = driver.decide(2, 1, "stand")
    assert types(refused) == ["decision_refused"]
    assert "cleared" in refused[0]["reason"]
    assert driver.table.game.cards_in_round()[-1]["card"] is None  # hole still face down


def test_split_double_and_the_dealer_turn_reveal_the_hole_card_only_then() -> None:
    driver = started([4])
    events = driver.cards("8D 6C 8S")  # seat 4: 8, dealer up 6, seat 4: 8
    events += driver.card("QH")  # hole card
    hole = [e for e in events if e["type"] == "card" and e.get("reason") == "hole"]
    assert hole and hole[0]["hold"] and hole[0]["card"] == "QH"
    assert driver.view.prompt == "Seat 4: hit, stand, double, split?"
    driver.decide(4, 1, "split")
    assert driver.view.prompt == "Seat 4 hand 1: second card after the split"
    driver.card("3D")  # hand 1: 8+3 = 11
    assert driver.view.prompt == "Seat 4 hand 1: hit, stand, double?"
    driver.decide(4, 1, "double")
    assert driver.view.prompt == "Seat 4 hand 1: double, one card"
    driver.card("9C")  # hand 1: 20, doubled
    assert driver.view.prompt == "Seat 4 hand 2: second card after the split"
    assert all(c["card"] != "QH" for c in driver.table.game.cards_in_round())
    driver.card("TS")  # hand 2: 18
    late = driver.decide(4, 1, "stand")  # hand 1 is finished: not the awaited hand
    assert types(late) == ["decision_refused"]
    events = driver.decide(4, 2, "stand")
    reveal = [e for e in events if e["type"] == "hole_card_revealed"]
    assert reveal == [{"type": "hole_card_revealed", "round": 1, "reveal": hole[0]["hold"],
                       "card": "QH"}]
    assert driver.view.prompt == "Dealer draws"  # 6 + Q = 16
    events = driver.card("5S")  # 21
    result = next(e for e in events if e["type"] == "round_result")
    assert result["dealer"] == {"cards": ["6C", "QH", "5S"], "total": 21, "blackjack": False,
                                "bust": False}
    assert total(["6C", "QH", "5S"]) == (21, False)
    hands = result["seats"]["4"]
    assert [(h["cards"], h["total"], h["doubled"], h["outcome"], h["payout"]) for h in hands] == [
        (["8D", "3D", "9C"], 20, True, "lose", -2),
        (["8S", "TS"], 18, False, "lose", -1),
    ]
    assert driver.view.state == "in_play.result_shown"
    assert driver.view.prompt.startswith("Dealer stands on 21")


def test_ace_up_insurance_then_dealer_blackjack_ends_the_round_without_play() -> None:
    driver = started([1, 2])
    driver.cards("9H 5D AC 9S TD")  # 1: 9+9, 2: 5+T, dealer A up
    events = driver.card("KH")  # hole: blackjack
    assert types(events) == ["card", "decision_due"]
    view = driver.view
    assert view.prompt == "Insurance: the dealer shows an ace" and view.exit_locked
    key = view.awaiting.key
    # A decision is not what is awaited; insurance for a seat without a bet is refused.
    assert types(driver.decide(1, 1, "stand")) == ["decision_refused"]
    assert types(driver.insure([5], key)) == ["insurance_refused"]
    events = driver.insure([2], key)
    assert types(events) == ["insurance", "dealer_check", "hole_card_revealed", "round_result"]
    assert events[1]["blackjack"] is True and "card" not in events[1]
    result = events[-1]
    assert result["insurance"] == {"offered": True, "dealer_blackjack": True, "taken": [2]}
    assert [h["outcome"] for s in ("1", "2") for h in result["seats"][s]] == ["lose", "lose"]


def test_ace_up_without_blackjack_tells_only_that_and_play_goes_on() -> None:
    driver = started([3])
    driver.cards("TH AS 9D 7C")  # seat 3: T+9; dealer A up, hole 7
    events = driver.insure([], driver.view.awaiting.key)
    assert types(events) == ["insurance", "dealer_check", "decision_due"]
    assert events[1] == {"type": "dealer_check", "round": 1, "blackjack": False}
    assert driver.view.prompt == "Seat 3: hit, stand, double?"
    events = driver.decide(3, 1, "stand", origin="timeout")
    assert types(events)[:3] == ["decision", "hole_card_revealed", "round_result"]
    assert events[0]["origin"] == "timeout"
    result = events[2]
    assert result["dealer"]["total"] == 18 and result["seats"]["3"][0]["outcome"] == "win"


def test_an_answer_for_an_earlier_wait_is_late() -> None:
    driver = started([1])
    driver.cards("5H 9C 6D 7H")  # seat 1: 11
    first = driver.view.awaiting.key
    driver.decide(1, 1, "hit", first)
    driver.card("2C")  # 13: a new wait for the same hand
    assert driver.view.awaiting.key != first
    refused = driver.decide(1, 1, "stand", first)
    assert types(refused) == ["decision_refused"] and "too late" in refused[0]["reason"]
    assert driver.view.awaiting is not None  # still waiting


def test_every_hand_decided_means_the_dealer_draws_nothing() -> None:
    driver = started([5])
    driver.cards("TC 4S 6H 3D")  # seat 5: 16 v 4; hole 3 (dealer 7)
    events = driver.decide(5, 1, "hit")
    events += driver.card("KD")  # bust
    assert "round_result" in types(events)
    result = events[-1]
    assert result["dealer"]["cards"] == ["4S", "3D"]
    assert driver.view.prompt.startswith("Dealer stands on 7: every hand is decided")


def test_betting_close_without_seats_is_refused_and_betting_stays_open() -> None:
    driver = Driver()
    driver.burn()
    from shoe_controller.table.inputs import BettingCommand

    driver.give(BettingCommand("open"))
    events = driver.give(BettingCommand("close", "timer"))
    assert types(events) == ["betting_refused"]
    assert driver.view.state == "in_play.betting_open"
    events = driver.give(BettingCommand("close", "table-system", [8]))
    assert types(events) == ["betting_refused"] and "seat 8" in events[0]["reason"]


def test_the_fold_of_any_prefix_is_the_table_then() -> None:
    driver = started([1, 2])
    driver.cards("8H 8C AD 8S 2D 6C")
    driver.insure([1], driver.view.awaiting.key)
    driver.decide(1, 1, "split")
    driver.cards("3S")
    snapshots = [driver.table.snapshot()]
    driver.decide(1, 1, "hit")
    snapshots.append(driver.table.snapshot())
    for n in range(1, len(driver.inputs) + 1):
        again = rebuild(type(driver.table.game)(driver.table.game.profile), driver.inputs[:n])
        if n == len(driver.inputs) - 1:
            assert again.snapshot() == snapshots[0]
    assert again.snapshot() == snapshots[1]


def test_a_supervisor_approves_three_burn_cards_after_a_game_error() -> None:
    from shoe_controller.table.inputs import SupervisorAction

    driver = started([1])
    refused = driver.give(SupervisorAction("error_burn", "pit"))
    assert refused == [] and "only between rounds" in driver.table.refusal
    driver.give(SupervisorAction("void_round", "pit", None, "dealer exposed a card"))
    events = driver.give(SupervisorAction("error_burn", "pit"))
    assert types(events) == ["error_burn_started"] and events[0]["cards"] == 3
    prompts = []
    for code in ["2H", "3H", "4H"]:
        view = driver.view
        assert not view.exit_locked and view.due == "burn"
        prompts.append(view.prompt)
        events = driver.card(code)
        assert events[0]["type"] == "burn_card" and events[0]["error"] is True
    assert prompts == [f"Burn {n} more card{'s' if n > 1 else ''} face down after the game error"
                       for n in (3, 2, 1)]
    assert types(events) == ["burn_card", "error_burn"] and events[1]["cards"] == [
        "2H", "3H", "4H"]
    assert driver.view.exit_locked and driver.table.waiting_for_round()
    driver.round([2])
    assert driver.view.prompt == "No more bets: Deal seat 2"


def test_baccarat_has_no_burn_after_an_error() -> None:
    from shoe_controller.games.registry import create_game
    from shoe_controller.table.inputs import SupervisorAction
    from shoe_controller.table.machine import Table

    table = Table(create_game("punto-banco-8d"))
    table.handle(SupervisorAction("error_burn", "pit"))
    assert table.refusal == "baccarat: no burn after a game error"


def test_a_misread_hole_card_entered_by_a_supervisor_stays_secret() -> None:
    from shoe_controller.table.inputs import CardMisread, SupervisorAction
    from shoe_controller.table.secrecy import Withheld

    driver = started([1])
    driver.cards("TD 6S 7H")
    withheld = Withheld()
    shown = []
    driver.counter += 1
    shown += withheld.visible(driver.give(CardMisread(driver.counter)))  # the hole card
    shown += withheld.visible(driver.give(SupervisorAction("enter_card", "pit", Card.from_code(
        "9C"))))
    assert driver.view.awaiting is not None  # dealt as the hole card
    assert "9C" not in repr(shown) + repr(driver.view.to_dict())
    shown += withheld.visible(driver.decide(1, 1, "stand"))
    assert "9C" in repr(shown)


def test_a_suspect_hole_card_is_not_named_by_the_irregularity() -> None:
    from shoe_controller.table.secrecy import Withheld

    driver = started([1])
    driver.cards("TD 6S 7H")
    for _ in range(8):  # eight decks: eight 9C are fine, a ninth is suspect
        driver.table.seen[Card.from_code("9C")] += 1
    events = driver.card("9C")  # the hole card, a ninth copy
    assert any(e["type"] == "irregularity" for e in events)
    assert "9C" not in repr(Withheld().visible(events)) + repr(driver.view.to_dict())
