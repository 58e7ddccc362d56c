"""The shoe procedure: burn after the shuffle, the approved error burn, cut card, last round."""

from __future__ import annotations

import pytest

from shoe_controller.games.blackjack.round import RoundError
from shoe_controller.games.blackjack.shoe_procedure import (
    BlackjackShoe,
    CardBurned,
    CardDealt,
    Phase,
    ProcedureError,
    RoundComplete,
    ShoeFinished,
)

from .helpers import S17, cards

# A round for one seat that stands: seat 20, dealer 20 -- four cards, no decision but a stand.
FOUR = "TS TH KD QC"


def _play(shoe: BlackjackShoe, codes: str) -> list:
    shoe.start_round([1])
    events = []
    for card in cards(codes):
        events += shoe.feed_card(card)
    events += shoe.decide(1, "stand")
    return events


def test_six_cards_are_burned_before_the_first_round() -> None:
    shoe = BlackjackShoe(S17)
    assert shoe.prompt() == "Burn 6 more card(s)"
    with pytest.raises(ProcedureError, match="cannot start a round now"):
        shoe.start_round([1])
    events = [e for card in cards("2S 3S 4S 5S 6S 7S") for e in shoe.feed_card(card)]
    assert [e.remaining for e in events if isinstance(e, CardBurned)] == [5, 4, 3, 2, 1, 0]
    assert shoe.phase is Phase.BETWEEN_ROUNDS and shoe.prompt() == "Waiting for bets"
    with pytest.raises(ProcedureError, match="no round open"):
        shoe.feed_card(cards("8S")[0])
    events = _play(shoe, FOUR)
    assert isinstance(events[0], CardDealt) and events[0].round_number == 1
    assert isinstance(events[-1], RoundComplete) and shoe.cards_used == 10


def test_a_card_nobody_waits_for_changes_nothing() -> None:
    shoe = BlackjackShoe(S17)
    for card in cards("2S 3S 4S 5S 6S 7S " + FOUR):
        if shoe.phase is Phase.BETWEEN_ROUNDS:
            shoe.start_round([1])
        shoe.feed_card(card)
    with pytest.raises(RoundError, match="card 9S dealt while waiting for Seat 1"):
        shoe.feed_card(cards("9S")[0])
    assert shoe.cards_used == 10


def test_error_burn_needs_approval_and_is_between_rounds() -> None:
    shoe = BlackjackShoe(S17)
    for card in cards("2S 3S 4S 5S 6S 7S"):
        shoe.feed_card(card)
    with pytest.raises(ProcedureError, match="supervisor's approval"):
        shoe.error_burn(" ")
    shoe.start_round([1])
    with pytest.raises(ProcedureError, match="only between rounds"):
        shoe.error_burn("pit boss 12")
    assert shoe.void_round() == ()
    assert shoe.error_burn("pit boss 12") == 3
    for card in cards("8S 8H 8D"):
        shoe.feed_card(card)
    assert shoe.phase is Phase.BETWEEN_ROUNDS and shoe.cards_used == 9


def test_cut_card_between_rounds_makes_the_next_round_the_last() -> None:
    shoe = BlackjackShoe(S17)
    for card in cards("2S 3S 4S 5S 6S 7S"):
        shoe.feed_card(card)
    _play(shoe, FOUR)
    shoe.cut_card_out()  # the round ended just before the cut card: one more round
    assert shoe.is_last_round and shoe.prompt().endswith("(last round)")
    events = _play(shoe, FOUR)
    assert isinstance(events[-1], ShoeFinished) and events[-1].rounds == 2
    assert shoe.prompt() == "Shoe finished: reshuffle"
    with pytest.raises(ProcedureError, match="after the shoe finished"):
        shoe.feed_card(cards("2S")[0])


def test_cut_card_during_a_round_makes_that_round_the_last() -> None:
    shoe = BlackjackShoe(S17)
    for card in cards("2S 3S 4S 5S 6S 7S"):
        shoe.feed_card(card)
    shoe.start_round([1])
    shoe.feed_card(cards("TS")[0])
    shoe.cut_card_out()
    with pytest.raises(ProcedureError, match="already come out"):
        shoe.cut_card_out()
    for card in cards("TH KD QC"):
        shoe.feed_card(card)
    events = shoe.decide(1, "stand")
    assert isinstance(events[-1], ShoeFinished) and shoe.finished
