"""Exact blackjack figures from a shoe's composition: the dealer's final totals, insurance.

Computed by recursion over the finite shoe (every card drawn is removed), with the engine's own
:func:`~.rules.hand_value` and :func:`~.rules.dealer_hits`, so matching the published tables
(../shared/REFERENCE-NUMBERS.md, the Wizard of Odds' dealer tables) checks the dealer rule the
round engine plays by. Probabilities are :class:`~fractions.Fraction`, exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from shoe_controller.games.blackjack.rules import ACE, TEN, dealer_hits, hand_value, is_blackjack

#: The dealer's final results, in table order.
FINALS = ("17", "18", "19", "20", "21", "blackjack", "bust")

Composition = tuple[int, ...]  # index v = number of cards of value v (1..10); index 0 unused


def full_shoe(decks: int) -> Composition:
    """A full shoe by value: four of each of A-9 per deck, sixteen ten-value cards."""
    if decks < 1:
        raise ValueError(f"a shoe needs at least one deck, got {decks}")
    return (0, *([4 * decks] * 9), 16 * decks)


def without(shoe: Composition, *values: int) -> Composition:
    counts = list(shoe)
    for value in values:
        if counts[value] <= 0:
            raise ValueError(f"no card of value {value} left in the shoe")
        counts[value] -= 1
    return tuple(counts)


def dealer_finals(shoe: Composition, up: int, hits_soft_17: bool,
                  peeked: bool = False) -> dict[str, Fraction]:
    """P(each final result) for a dealer showing ``up`` (value 1..10), ``shoe`` holding every
    unseen card (the up card already removed). ``peeked``: given that the dealer checked the
    hole card and has no blackjack (the figures after the peek)."""
    if not 1 <= up <= 10:
        raise ValueError(f"up card value must be 1..10, got {up}")
    memo: dict[tuple[int, ...], dict[str, Fraction]] = {}
    finals = _finals((up,), shoe, hits_soft_17, memo)
    if peeked:
        no_blackjack = 1 - finals["blackjack"]
        finals = {name: (Fraction(0) if name == "blackjack" else p / no_blackjack)
                  for name, p in finals.items()}
    return {name: Fraction(finals.get(name, 0)) for name in FINALS}


def _finals(hand: tuple[int, ...], shoe: Composition, hits_soft_17: bool,
            memo: dict[tuple[int, ...], dict[str, Fraction]]) -> dict[str, Fraction]:
    # The shoe left is the starting shoe less the hand's draws, so the sorted hand is the state.
    key = tuple(sorted(hand))
    known = memo.get(key)
    if known is not None:
        return known
    value = hand_value(hand)
    if is_blackjack(hand, from_split=False):
        result = {"blackjack": Fraction(1)}
    elif value.bust:
        result = {"bust": Fraction(1)}
    elif not dealer_hits(value, hits_soft_17):
        result = {str(value.total): Fraction(1)}
    else:
        result = {}
        remaining = sum(shoe)
        for card in range(1, 11):
            if shoe[card]:
                chance = Fraction(shoe[card], remaining)
                for name, p in _finals((*hand, card), without(shoe, card), hits_soft_17,
                                       memo).items():
                    result[name] = result.get(name, Fraction(0)) + chance * p
    memo[key] = result
    return result


def insurance_edge(shoe: Composition, pays: Fraction = Fraction(2)) -> Fraction:
    """House edge of insurance at ``pays`` to 1 with an ace up: ``shoe`` holds the unseen
    cards (the up ace removed, hole card unseen): it wins when the hole card is ten-valued."""
    p_ten = Fraction(shoe[TEN], sum(shoe))
    return -(p_ten * pays - (1 - p_ten))


def dealer_blackjack_probability(shoe: Composition) -> Fraction:
    """P(the dealer's first two cards are a blackjack), dealt from ``shoe`` (before the peek)."""
    total = sum(shoe)
    ace_then_ten = Fraction(shoe[ACE], total) * Fraction(shoe[TEN], total - 1)
    ten_then_ace = Fraction(shoe[TEN], total) * Fraction(shoe[ACE], total - 1)
    return ace_then_ten + ten_then_ace


def dealer_table(decks: int, hits_soft_17: bool,
                 ups: Sequence[int] = (2, 3, 4, 5, 6, 7, 8, 9, 10, 1)) -> dict[int, dict[str, Fraction]]:
    """The dealer's final-total table by up card, only the up card removed (before the peek)."""
    shoe = full_shoe(decks)
    return {up: dealer_finals(without(shoe, up), up, hits_soft_17) for up in ups}
