"""Blackjack rules as pure functions of card values, and a table's rule options as one value.

Card *values* here are 1..10: an ace is 1 (counted 11 when that does not bust the hand), 2-9
face value, 10/J/Q/K 10. Seed 003 section 2 and ../shared/RULES.md are the source; every option
a table may vary (decks, soft 17, peek, payouts, double and split restrictions) is a field of
:class:`TableRules`, filled from a profile (``profile.py``), never a constant in code.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from shoe_controller.cards import Card

ACE = 1
TEN = 10


class Action(str, enum.Enum):
    """A player's decision on one hand; the value is the word used in files and messages."""

    HIT = "hit"
    STAND = "stand"
    DOUBLE = "double"
    SPLIT = "split"


class Outcome(str, enum.Enum):
    """How one hand ends against the dealer."""

    WIN = "win"
    LOSE = "lose"
    PUSH = "push"


def card_value(card: Card) -> int:
    """A card's blackjack value 1..10 (ace 1; its 11 is decided by :func:`hand_value`)."""
    return card.rank if card.rank < 10 else TEN


@dataclass(frozen=True, slots=True)
class HandValue:
    """``total`` counts one ace as 11 when that keeps the hand at 21 or less (then ``soft``)."""

    total: int
    soft: bool

    @property
    def bust(self) -> bool:
        return self.total > 21


def hand_value(values: Iterable[int]) -> HandValue:
    """Best total of card values: at most one ace can count 11 (two would make 22)."""
    hard = 0
    has_ace = False
    for value in values:
        hard += value
        has_ace = has_ace or value == ACE
    if has_ace and hard + 10 <= 21:
        return HandValue(hard + 10, True)
    return HandValue(hard, False)


def is_blackjack(values: Iterable[int], from_split: bool) -> bool:
    """An ace and a ten-value card as the first two cards of an unsplit hand (seed 003 2.2.7:
    after a split it is 21, not blackjack)."""
    pair = tuple(values)
    return not from_split and len(pair) == 2 and sorted(pair) == [ACE, TEN]


def dealer_hits(value: HandValue, hits_soft_17: bool) -> bool:
    """The dealer draws below 17, and on a soft 17 only where the table hits soft 17."""
    return value.total < 17 or (value.total == 17 and value.soft and hits_soft_17)


@dataclass(frozen=True, slots=True)
class TableRules:
    """Everything about play and payouts that a table profile chooses."""

    decks: int = 8
    seats: int = 7
    hits_soft_17: bool = False
    #: Up-card values (1 = ace, 10 = ten-value) on which the dealer checks the hole card for
    #: blackjack before the players act (seed 003: ace only, after insurance).
    peeks_on: frozenset[int] = frozenset({ACE})
    #: Win of a unit bet: ordinary win, blackjack, insurance (all "to 1").
    win_pays: Decimal = Decimal(1)
    blackjack_pays: Decimal = Decimal("1.5")
    insurance_pays: Decimal = Decimal(2)
    #: Largest insurance as a fraction of the hand's bet.
    insurance_max: Decimal = Decimal("0.5")
    #: Two-card totals that may be doubled (a soft hand at its high total, A+8 = 19);
    #: ``None`` = any two cards.
    double_totals: frozenset[int] | None = None
    double_after_split: bool = True
    #: True: a doubled hand that meets a dealer blackjack loses only its original bet.
    double_loses_original_only: bool = True
    #: "value": any two cards of equal value split (K+Q); "rank": only identical ranks.
    split_by: str = "value"
    split_aces: bool = True
    split_aces_one_card: bool = True
    #: True: the second hand of a split is returned when the dealer has blackjack (the extension
    #: of the double rule that seed 003 does not make; off in the packaged profiles).
    split_loses_original_only: bool = False

    def can_split(self, first: Card, second: Card) -> bool:
        """Whether two cards form a pair this table lets a player split."""
        if self.split_by == "rank":
            pair = first.rank == second.rank
        else:
            pair = card_value(first) == card_value(second)
        return pair and (self.split_aces or card_value(first) != ACE)

    def can_double_total(self, value: HandValue) -> bool:
        return self.double_totals is None or value.total in self.double_totals
