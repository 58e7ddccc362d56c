"""The shoe procedure shared by replay and the live table: burn, cut card, last round, void."""

from __future__ import annotations

import copy

import pytest

from shoe_controller.cards import Card
from shoe_controller.games.baccarat.coup import Hand
from shoe_controller.games.baccarat.shoe_procedure import (
    BurnCardTurned,
    BurnComplete,
    CardBurned,
    CardDealt,
    CutCardOut,
    Phase,
    ProcedureError,
    RoundComplete,
    RoundVoided,
    ShoeDealer,
    ShoeFinished,
    turned_card_burns,
)
from shoe_controller.games.baccarat.shoe_rules import ShoeRules


def cards(codes: str) -> list[Card]:
    return [Card.from_code(c) for c in codes.split()]


NATURAL_ROUND = "9S KH KD KC"  # Player 9 natural: four cards
SIX_CARD_ROUND = "2S 3H KD 2C 7H 9S"


def feed(dealer: ShoeDealer, codes: str) -> list[object]:
    events: list[object] = []
    for card in cards(codes):
        events += dealer.feed_card(card)
    return events


def burned(dealer: ShoeDealer) -> ShoeDealer:
    feed(dealer, "2S 5H 5D")  # turn a 2, burn two
    return dealer


@pytest.mark.parametrize(
    "code,count", [("AS", 1), ("5H", 5), ("9D", 9), ("TC", 10), ("JS", 10), ("QH", 10), ("KD", 10)]
)
def test_turned_card_burns_its_points_with_tens_as_ten(code: str, count: int) -> None:
    assert turned_card_burns(Card.from_code(code)) == count


def test_burn_phase_events() -> None:
    dealer = ShoeDealer(ShoeRules())
    assert dealer.phase is Phase.BURN_FIRST and dealer.prompt() == "Turn the first card"
    assert dealer.feed_card(Card.from_code("3S")) == [BurnCardTurned(Card.from_code("3S"), 3)]
    assert dealer.phase is Phase.BURNING and dealer.burn_remaining == 3
    assert dealer.prompt() == "Burn 3 more card(s)"
    feed(dealer, "4H 5H")
    events = dealer.feed_card(Card.from_code("6H"))
    assert events == [
        CardBurned(Card.from_code("6H"), 0),
        BurnComplete(tuple(cards("3S 4H 5H 6H"))),
    ]
    assert dealer.phase is Phase.IN_PLAY and dealer.burn_cards == tuple(cards("3S 4H 5H 6H"))
    assert dealer.prompt() == "Deal Player"


def test_rounds_and_events() -> None:
    dealer = burned(ShoeDealer(ShoeRules()))
    events = feed(dealer, SIX_CARD_ROUND)
    dealt = [e for e in events if isinstance(e, CardDealt)]
    assert [e.hand for e in dealt] == [Hand.PLAYER, Hand.BANKER] * 2 + [Hand.PLAYER, Hand.BANKER]
    assert dealt[3].decision == "Player draws" and dealt[-1].decision == "Player wins 9 to 4"
    (complete,) = [e for e in events if isinstance(e, RoundComplete)]
    assert complete.round_number == 1 and len(dealer.rounds) == 1
    assert dealer.cards_used == 9 and dealer.current.is_empty and dealer.round_number == 2


def test_cut_card_during_a_round_finishes_it_and_deals_one_more() -> None:
    dealer = burned(ShoeDealer(ShoeRules()))
    feed(dealer, NATURAL_ROUND + " 2S 3H")  # round 1 done, round 2 started
    assert dealer.cut_card_out() == [CutCardOut(last_round_number=3)]
    assert dealer.phase is Phase.IN_PLAY and not dealer.is_last_round
    feed(dealer, "KD 2C 7H 9S")  # finishes round 2
    assert dealer.phase is Phase.LAST_ROUND and dealer.is_last_round
    assert dealer.prompt() == "Deal Player (last round)"
    events = feed(dealer, NATURAL_ROUND)
    assert events[-1] == ShoeFinished(rounds=3, cards_used=3 + 4 + 6 + 4)
    assert dealer.phase is Phase.FINISHED and dealer.finished and dealer.prompt() == "Shoe finished"
    with pytest.raises(ProcedureError, match="after the shoe finished"):
        dealer.feed_card(Card.from_code("AS"))


def test_cut_card_before_a_rounds_first_card_makes_it_the_last() -> None:
    dealer = burned(ShoeDealer(ShoeRules()))
    feed(dealer, NATURAL_ROUND)
    assert dealer.cut_card_out() == [CutCardOut(last_round_number=2)]
    assert dealer.phase is Phase.LAST_ROUND
    assert isinstance(feed(dealer, NATURAL_ROUND)[-1], ShoeFinished)
    assert len(dealer.rounds) == 2


def test_cut_card_during_the_burn_makes_the_first_round_the_last() -> None:
    dealer = ShoeDealer(ShoeRules())
    feed(dealer, "2S")
    dealer.cut_card_out()
    feed(dealer, "5H 5D")
    assert dealer.phase is Phase.LAST_ROUND
    assert isinstance(feed(dealer, NATURAL_ROUND)[-1], ShoeFinished)


def test_finish_current_rule() -> None:
    dealer = burned(ShoeDealer(ShoeRules(last_round="finish-current")))
    feed(dealer, "2S 3H")
    assert dealer.cut_card_out() == [CutCardOut(last_round_number=1)]
    assert isinstance(feed(dealer, "KD 2C 7H 9S")[-1], ShoeFinished)


def test_cut_card_twice_is_an_error() -> None:
    dealer = burned(ShoeDealer(ShoeRules()))
    dealer.cut_card_out()
    with pytest.raises(ProcedureError, match="already"):
        dealer.cut_card_out()


def test_void_round_keeps_cards_counted_and_redeals() -> None:
    dealer = burned(ShoeDealer(ShoeRules()))
    with pytest.raises(ProcedureError, match="no round in progress"):
        dealer.void_round()
    feed(dealer, "2S 3H KD")
    assert dealer.void_round() == [RoundVoided(1, tuple(cards("2S 3H KD")))]
    assert (
        dealer.cards_used == 6
        and dealer.current.is_empty
        and dealer.voided == (tuple(cards("2S 3H KD")),)
    )
    feed(dealer, NATURAL_ROUND)
    assert len(dealer.rounds) == 1 and dealer.cards_used == 10


def test_void_of_the_last_round_still_deals_a_last_round() -> None:
    dealer = burned(ShoeDealer(ShoeRules()))
    dealer.cut_card_out()
    feed(dealer, "2S 3H")
    dealer.void_round()
    assert dealer.is_last_round
    assert isinstance(feed(dealer, NATURAL_ROUND)[-1], ShoeFinished)


def test_void_of_a_completed_round_undoes_it_and_keeps_its_cards_used() -> None:
    dealer = burned(ShoeDealer(ShoeRules()))
    with pytest.raises(ProcedureError, match="no completed round"):
        dealer.void_completed_round()
    feed(dealer, SIX_CARD_ROUND)
    # Cards come back in the order they left the shoe: P, B, P, B, P3, B3.
    assert dealer.void_completed_round() == [RoundVoided(1, tuple(cards(SIX_CARD_ROUND)))]
    assert dealer.rounds == () and dealer.cards_used == 9 and dealer.round_number == 1
    feed(dealer, NATURAL_ROUND)
    assert len(dealer.rounds) == 1 and dealer.cards_used == 13


def test_void_of_a_completed_last_round_redeals_it_as_the_last() -> None:
    dealer = burned(ShoeDealer(ShoeRules()))
    dealer.cut_card_out()  # before the round's first card: this round is the last
    assert isinstance(feed(dealer, NATURAL_ROUND)[-1], ShoeFinished)
    dealer.void_completed_round()
    assert not dealer.finished and dealer.is_last_round
    assert isinstance(feed(dealer, NATURAL_ROUND)[-1], ShoeFinished)


def test_fixed_burn_and_no_burn() -> None:
    dealer = ShoeDealer(ShoeRules(burn_procedure="fixed", burn_count=2))
    assert dealer.phase is Phase.BURNING
    assert isinstance(feed(dealer, "AS KS")[-1], BurnComplete)
    assert ShoeDealer(ShoeRules(burn_procedure="fixed", burn_count=0)).phase is Phase.IN_PLAY


def test_copy_is_independent() -> None:
    dealer = burned(ShoeDealer(ShoeRules()))
    feed(dealer, "2S 3H")
    snapshot = dealer.copy()
    feed(dealer, "KD 2C 7H 9S")
    assert len(dealer.rounds) == 1 and len(snapshot.rounds) == 0
    assert snapshot.current.cards == tuple(cards("2S 3H"))
    assert copy.copy(snapshot).current == snapshot.current


def test_accepts_a_profile_and_rejects_other_things() -> None:
    from shoe_controller.games.baccarat.profile import load_profile

    assert ShoeDealer(load_profile("baccarat-6d")).rules.decks == 6
    with pytest.raises(TypeError):
        ShoeDealer("punto-banco-8d")
