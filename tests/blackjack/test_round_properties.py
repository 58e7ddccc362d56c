"""Hypothesis plays random rounds with random (and some illegal) decisions and checks the
invariants against the independent reference: cards conserved and dealt in order, every hand
settled once, the dealer plays only when needed and by the draw table, payouts as the reference
computes them."""

from __future__ import annotations

import itertools
from collections import Counter
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_controller.cards import Card
from shoe_controller.games.blackjack.round import (
    BlackjackRound,
    CardDue,
    DecisionDue,
    IllegalActionError,
    InsuranceDue,
)
from shoe_controller.games.blackjack.settlement import settle_seat

from . import blackjack_reference as ref
from .helpers import PROFILES, RANKS

# Cards are drawn with replacement (the engine never counts them): small ranks and aces are
# weighted up so that splits, soft hands and long dealer hands are common.
CODES = [rank + suit for rank in RANKS for suit in "SHDC"]
card_codes = st.one_of(st.sampled_from(CODES), st.sampled_from(["AS", "8D", "2C", "TS", "6H"]))


@settings(max_examples=300, deadline=None)
@given(
    rule=st.sampled_from(["S17", "H17"]),
    seats=st.lists(st.integers(1, 7), min_size=1, max_size=7, unique=True),
    shoe=st.lists(card_codes, min_size=10, max_size=40),
    data=st.data(),
)
def test_random_rounds_keep_the_invariants(rule: str, seats: list[int], shoe: list[str],
                                           data: st.DataObject) -> None:
    profile = PROFILES[rule]
    round_ = BlackjackRound(profile.rules, seats)
    source = itertools.cycle(shoe)
    dealt: list[str] = []
    insured: list[int] = []
    splits = Counter[int]()
    while (due := round_.due()) is not None:
        if isinstance(due, CardDue):
            code = next(source)
            dealt.append(code)
            round_.deal(Card.from_code(code))
        elif isinstance(due, InsuranceDue):
            insured = data.draw(st.lists(st.sampled_from(sorted(seats)), unique=True))
            round_.insure(insured)
        else:
            assert isinstance(due, DecisionDue)
            hand = round_.hands[due.seat][due.hand - 1]
            hand_codes = [card.code for card in hand.cards]
            legal = ref.legal_actions(hand_codes, hand.from_split)
            assert {a.value for a in due.options} == legal, (hand_codes, hand.from_split)
            attempt = data.draw(st.sampled_from(["hit", "stand", "double", "split"]))
            if attempt not in legal:
                try:
                    round_.decide(due.seat, attempt)
                except IllegalActionError:
                    assert round_.due() == due  # refused and nothing changed
                    continue
                raise AssertionError(f"{attempt} accepted on {hand_codes}")
            splits[due.seat] += attempt == "split"
            round_.decide(due.seat, attempt)
    result = round_.result()

    # Cards: the round's cards are exactly those dealt, each in exactly one hand.
    assert [card.code for card in result.cards] == dealt
    held = [c.code for c in result.dealer] + [
        c.code for hands in result.hands.values() for h in hands for c in h.cards]
    assert Counter(held) == Counter(dealt)
    # The opening deal: seat first cards, the up card, seat second cards, the hole card.
    order = sorted(seats)
    n = len(order)
    assert dealt[n] == result.dealer[0].code and dealt[2 * n + 1] == result.dealer[1].code
    # Every hand settled once: one hand per seat plus one per split.
    assert set(result.hands) == set(seats)
    for seat in seats:
        assert [h.hand for h in result.hands[seat]] == list(range(1, 2 + splits[seat]))
    # The dealer plays only when needed, by the table, and last.
    dealer = [c.code for c in result.dealer]
    undecided = [h for hs in result.hands.values() for h in hs
                 if not (ref.total([c.code for c in h.cards])[0] > 21
                         or ref.natural([c.code for c in h.cards], h.from_split))]
    peeked_blackjack = result.dealer[0].rank == 1 and ref.natural(dealer, False)
    if not undecided or peeked_blackjack:
        assert len(dealer) == 2
    else:
        assert dealer == ref.dealer_play(dealer[:2], dealer[2:], rule)
        assert dealt[len(dealt) - len(dealer) + 2:] == dealer[2:]
    # Payouts as the reference settles them, and the seat's money with it.
    for seat, hands in result.hands.items():
        expected = Decimal(0)
        for h in hands:
            units = ref.hand_units([c.code for c in h.cards], h.from_split, h.doubled, dealer)
            assert h.payout == Decimal(str(units))
            assert (h.total, h.soft) == ref.total([c.code for c in h.cards])
            expected += 10 * Decimal(str(units))
        insurance = Decimal(5) if seat in insured else Decimal(0)
        if insurance:
            expected += insurance * Decimal(str(ref.insurance_units(dealer)))
        assert settle_seat(result, seat, Decimal(10), profile.rules, insurance).net == expected
