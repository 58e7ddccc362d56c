"""Published blackjack figures reproduced exactly from the shoe's composition, and the round
engine's dealer checked against them by simulation."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from shoe_controller.cards import Card, Suit, deck
from shoe_controller.games.blackjack.odds import (
    FINALS,
    dealer_blackjack_probability,
    dealer_finals,
    dealer_table,
    full_shoe,
    insurance_edge,
    without,
)
from shoe_controller.games.blackjack.round import BlackjackRound, DecisionDue, InsuranceDue

from .helpers import S17

# ../shared/REFERENCE-NUMBERS.md, "Dealer's final total, 8 decks, S17, only the up card removed
# (before the peek; agrees with the Wizard of Odds' dealer tables)": 17 18 19 20 21 BJ bust.
PUBLISHED_8D_S17 = """
2  .139694 .134518 .129929 .124021 .118308 0       .353530
3  .134482 .130524 .125313 .120695 .114871 0       .374115
4  .130539 .124534 .121300 .116451 .111707 0       .395469
5  .121946 .122390 .117607 .112134 .108021 0       .417902
6  .165640 .106208 .106390 .101592 .097247 0       .422922
7  .369048 .137898 .078478 .078668 .073878 0       .262031
8  .128846 .359800 .128684 .069263 .069452 0       .243954
9  .120231 .118011 .351581 .120275 .060864 0       .229037
10 .111791 .111608 .111814 .340560 .034738 .077108 .212381
A  .130210 .130813 .130643 .130879 .053595 .308434 .115426
"""


def _published() -> dict[int, dict[str, float]]:
    table = {}
    for line in PUBLISHED_8D_S17.strip().splitlines():
        up, *figures = line.split()
        table[1 if up == "A" else int(up)] = dict(zip(FINALS, map(float, figures), strict=True))
    return table


PUBLISHED = _published()


def test_dealer_final_totals_8_decks_s17_match_the_published_table() -> None:
    computed = dealer_table(8, hits_soft_17=False)
    for up, figures in PUBLISHED.items():
        assert sum(computed[up].values()) == 1
        for name, published in figures.items():
            assert abs(float(computed[up][name]) - published) <= 0.5e-6, (up, name)


def test_hitting_soft_17_moves_only_the_soft_17_hands() -> None:
    stand = dealer_table(8, hits_soft_17=False)
    hit = dealer_table(8, hits_soft_17=True)
    assert hit[10] == stand[10] and hit[9] == stand[9]  # no soft 17 without an ace or a 6
    assert hit[6]["17"] < stand[6]["17"] and hit[6]["bust"] > stand[6]["bust"]
    assert hit[1]["17"] < stand[1]["17"]


def test_insurance_edge_and_dealer_blackjack() -> None:
    # Only the up ace removed: the hole card is any of the other 52 * decks - 1 cards.
    assert insurance_edge(without(full_shoe(8), 1)) == Fraction(31, 415)
    assert round(float(insurance_edge(without(full_shoe(8), 1))) * 100, 6) == 7.469880
    assert round(float(insurance_edge(without(full_shoe(6), 1))) * 100, 6) == 7.395498
    assert round(float(dealer_blackjack_probability(full_shoe(8))), 7) == 0.0474513
    assert round(float(dealer_blackjack_probability(full_shoe(6))), 7) == 0.0474895
    # The published blackjack figure is the same event seen from the table's A and 10 rows.
    table = dealer_table(8, hits_soft_17=False)
    from_rows = Fraction(32, 416) * table[1]["blackjack"] + Fraction(128, 416) * table[10][
        "blackjack"]
    assert from_rows == dealer_blackjack_probability(full_shoe(8))


def test_after_the_peek_the_blackjack_share_is_spread_over_the_rest() -> None:
    peeked = dealer_finals(without(full_shoe(8), 1), 1, hits_soft_17=False, peeked=True)
    assert peeked["blackjack"] == 0 and sum(peeked.values()) == 1
    with pytest.raises(ValueError, match="no card of value 1"):
        without((0, *([0] * 10)), 1)


def test_the_round_engine_deals_the_published_dealer_figures() -> None:
    """Rounds dealt from shuffled 8-deck shoes through BlackjackRound (one seat standing on a
    20 dealt aside, so the dealer always plays): the bust rate by up card is within 4 standard
    errors of the published one, and every final total's rate too."""
    rng = random.Random(1717)
    counts: dict[int, dict[str, int]] = {up: dict.fromkeys(FINALS, 0) for up in PUBLISHED}
    rounds = 0
    king, ten = Card(13, Suit.SPADES), Card(10, Suit.HEARTS)
    full = deck() * 8
    while rounds < 12_000:
        # A random prefix of a shuffled 8-deck shoe. Only the up card is removed before the
        # dealer's draws, as the published table assumes: the seat's 20 comes from elsewhere.
        up, hole, *rest = rng.sample(full, 16)
        round_ = BlackjackRound(S17.rules, [1])
        for card in (king, up, ten, hole):
            round_.deal(card)
        draws = iter(rest)
        while (due := round_.due()) is not None:
            if isinstance(due, InsuranceDue):
                round_.insure([])
            elif isinstance(due, DecisionDue):
                round_.decide(1, "stand")
            else:
                round_.deal(next(draws))
        result = round_.result()
        final = ("blackjack" if result.dealer_blackjack else "bust" if result.dealer_bust
                 else str(result.dealer_total))
        value = min(up.rank, 10)
        counts[value][final] += 1
        rounds += 1
    for up, figures in PUBLISHED.items():
        n = sum(counts[up].values())
        for name, p in figures.items():
            if p == 0:
                assert counts[up][name] == 0
                continue
            se = math.sqrt(p * (1 - p) / n)
            assert abs(counts[up][name] / n - p) <= 4 * se, (up, name, counts[up][name], n)
