"""Legal actions and dealer play against the independent tables of blackjack_reference.py."""

from __future__ import annotations

import pytest

from shoe_controller.games.blackjack.round import (
    BlackjackRound,
    DecisionDue,
    IllegalActionError,
    InsuranceDue,
    RoundError,
)
from shoe_controller.games.blackjack.rules import Action

from . import blackjack_reference as ref
from .helpers import PROFILES, RANKS, cards, codes, play_script


def _opening(profile_name: str, first: str, up: str, second: str) -> BlackjackRound:
    """One seat dealt ``first``/``second`` against ``up``; the hole card never makes a
    blackjack (5), so the players always get to act."""
    round_ = BlackjackRound(PROFILES[profile_name].rules, [3])
    for card in cards([first, up, second, "5C"]):
        round_.deal(card)
    return round_


@pytest.mark.parametrize("profile_name", ["S17", "H17"])
@pytest.mark.parametrize("up", list(RANKS))
def test_first_decision_of_every_two_card_hand_against_every_up_card(
    profile_name: str, up: str
) -> None:
    for first in RANKS:
        for second in RANKS:
            round_ = _opening(profile_name, first + "S", up + "H", second + "D")
            due = round_.due()
            offered = isinstance(due, InsuranceDue)
            assert offered == (up in ref.INSURANCE_ON), (first, second, up)
            if offered:
                round_.insure([])
                due = round_.due()
            expected = ref.first_decision(first + "S", second + "D")
            if expected:
                assert isinstance(due, DecisionDue) and due.seat == 3 and due.hand == 1
                assert {a.value for a in due.options} == expected, (first, second, up)
            else:  # blackjack: no decision, and nothing left to play against it
                assert due is None, (first, second, up, due)


@pytest.mark.parametrize("split_rank", list(RANKS))
def test_first_decision_of_a_split_hand_for_every_card_received(split_rank: str) -> None:
    for partner in (r for r in RANKS if ref.value(r + "S") == ref.value(split_rank + "S")):
        for received in RANKS:
            round_ = _opening("S17", split_rank + "S", "9H", partner + "D")
            round_.decide(3, "split")
            round_.deal(cards(received + "C")[0])
            due = round_.due()
            expected = ref.after_split_decision(split_rank + "S", received + "C")
            if expected:
                assert isinstance(due, DecisionDue) and (due.seat, due.hand) == (3, 1)
                assert {a.value for a in due.options} == expected, (split_rank, received)
                assert due.prompt.startswith("Seat 3 hand 1:")
            else:  # 21 or a split ace: on to the second hand's second card
                assert due is not None and not isinstance(due, DecisionDue)
                assert (due.seat, due.hand) == (3, 2)


def test_illegal_actions_are_refused_with_the_reason_and_change_nothing() -> None:
    round_ = _opening("S17", "9S", "7H", "5D")
    with pytest.raises(IllegalActionError, match=r"Seat 3: cannot split: not a pair.*legal: "
                       r"hit, stand, double"):
        round_.decide(3, "split")
    with pytest.raises(IllegalActionError, match="unknown action 'surrender'"):
        round_.decide(3, "surrender")
    with pytest.raises(RoundError, match="seat 4 decided 'hit' while waiting for Seat 3"):
        round_.decide(4, "hit")
    round_.decide(3, "hit")
    assert round_.prompt() == "Seat 3: hit"
    with pytest.raises(RoundError, match="seat 3 decided 'stand' while waiting for Seat 3: hit"):
        round_.decide(3, "stand")
    round_.deal(cards("2C")[0])  # 16, three cards: no double any more
    due = round_.due()
    assert isinstance(due, DecisionDue) and due.options == (Action.HIT, Action.STAND)
    with pytest.raises(IllegalActionError, match="double only on the first two cards"):
        round_.decide(3, "double")
    # After a split: no resplit of a second pair.
    round_ = _opening("S17", "8S", "7H", "8D")
    round_.decide(3, "split")
    round_.deal(cards("8C")[0])
    with pytest.raises(IllegalActionError, match="split only once"):
        round_.decide(3, "split")


def test_insurance_only_while_offered_and_only_for_seats_with_a_bet() -> None:
    round_ = BlackjackRound(PROFILES["S17"].rules, [1, 2])
    for card in cards("9S 9D AH 7S 7D 5C"):
        round_.deal(card)
    assert round_.prompt() == "Insurance: the dealer shows an ace"
    with pytest.raises(RoundError, match="card 2S dealt while waiting for Insurance"):
        round_.deal(cards("2S")[0])
    with pytest.raises(RoundError, match=r"without a bet this round: \[5\]"):
        round_.insure([5])
    round_.insure([2])
    with pytest.raises(RoundError, match="not being offered"):
        round_.insure([1])


DRAWS = [
    "2C 2D 2H 2S 3C 3D 3H 3S 4C",
    "AC AD AH AS AC AD AH AS AC AD AH",
    "5C 6D TD 9H 3S",
    "6C AD 4H TS",
    "TC TD TH",
    "3C AD 2H AS 9C",
]


@pytest.mark.parametrize("rule", ["S17", "H17"])
def test_dealer_play_for_every_starting_pair(rule: str) -> None:
    """Every up/hole pair (by value) and several sequences of following cards: the dealer's
    final hand is the reference table's. The seat stands on 18, so the dealer plays."""
    checked = 0
    for up in "A23456789T":
        for hole in "A23456789TJQK":
            for draws in DRAWS:
                shoe = cards(["TS", up + "H", "8D", hole + "C", *draws.split()])
                round_, used = play_script(PROFILES[rule], [1], shoe)
                result = round_.result()
                expected = ref.dealer_play([up + "H", hole + "C"], draws.split(), rule)
                assert codes(result.dealer) == expected, (up, hole, draws)
                assert used == 4 + len(expected) - 2
                total, _soft = ref.total(expected)
                assert (result.dealer_total, result.dealer_bust) == (total, total > 21)
                checked += 1
    assert checked == 10 * 13 * len(DRAWS)


def test_soft_17_is_where_the_profiles_differ() -> None:
    shoe = cards("TS 6H 8D AC 3D")
    stands, _ = play_script(PROFILES["S17"], [1], shoe)
    hits, _ = play_script(PROFILES["H17"], [1], shoe)
    assert codes(stands.result().dealer) == ["6H", "AC"]
    assert stands.prompt() == "Dealer stands on 17"
    assert codes(hits.result().dealer) == ["6H", "AC", "3D"]


def test_dealer_draws_nothing_when_every_hand_is_decided() -> None:
    # Seat 1 busts, seat 2 has blackjack: the dealer turns the hole card (16) and stops.
    shoe = cards("TS AD 6H 6C KD TC 9S")
    round_, used = play_script(PROFILES["S17"], [1, 2], shoe, {1: ["hit"]})
    result = round_.result()
    assert used == 7 and codes(result.dealer) == ["6H", "TC"] and not result.dealer_played
    assert round_.prompt() == "Dealer stands on 16: every hand is decided"


def test_peeked_blackjack_ends_the_round_before_play() -> None:
    round_ = BlackjackRound(PROFILES["S17"].rules, [1])
    for card in cards("9S AH 7D KC"):
        round_.deal(card)
    round_.insure([1])
    assert round_.due() is None and round_.prompt() == "Dealer has blackjack"
    result = round_.result()
    assert result.peeked and result.dealer_blackjack and result.insurance_taken == {1}


def test_prompts_follow_the_dealing_order() -> None:
    round_ = BlackjackRound(PROFILES["S17"].rules, [5, 3])
    prompts = []
    for card in cards("8S 8D 9H 8C 8H 7C"):
        prompts.append(round_.prompt())
        round_.deal(card)
    assert prompts == ["Deal seat 3", "Deal seat 5", "Deal the dealer's up card", "Deal seat 3",
                       "Deal seat 5", "Deal the dealer's hole card face down"]
    assert round_.prompt() == "Seat 3: hit, stand, double, split?"
    round_.decide(3, "stand")
    round_.decide(5, "split")
    assert round_.prompt() == "Seat 5 hand 1: second card after the split"
    round_.deal(cards("3S")[0])
    round_.decide(5, "stand")
    assert round_.prompt() == "Seat 5 hand 2: second card after the split"
    round_.deal(cards("2S")[0])
    round_.decide(5, "double")
    assert round_.prompt() == "Seat 5 hand 2: double, one card"
    round_.deal(cards("9S")[0])
    assert round_.prompt() == "Dealer draws"  # 9 + 7 = 16
    round_.deal(cards("KS")[0])
    assert round_.prompt() == "Dealer busts with 26"
