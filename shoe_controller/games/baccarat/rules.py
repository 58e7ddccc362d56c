"""Punto Banco rules as pure functions of card points (seeds 000, 001, 002, 004).

Everything here works on baccarat *points* (A = 1, 2-9 face value, 10/J/Q/K = 0) so that the
same functions drive the incremental :class:`~.coup.Coup`, the exact-odds enumeration and the
tests. The Banker table is kept as data (:data:`BANKER_DRAWS_ON`) because that is how every rule
sheet states it, and a table is easier to check against a sheet than nested conditions.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

from shoe_controller.cards import Card

#: Banker's two-card total -> the points of the Player's third card on which Banker draws.
#: Seed 000 (table "Regula pentru a treia carte") and seed 001 (grid S/C); totals 8-9 are naturals.
BANKER_DRAWS_ON: dict[int, frozenset[int]] = {
    0: frozenset(range(10)),
    1: frozenset(range(10)),
    2: frozenset(range(10)),
    3: frozenset(range(10)) - {8},
    4: frozenset({2, 3, 4, 5, 6, 7}),
    5: frozenset({4, 5, 6, 7}),
    6: frozenset({6, 7}),
    7: frozenset(),
}


class Outcome(str, enum.Enum):
    """Who won the coup; the value is the word used in JSON and on the road."""

    BANKER = "banker"
    PLAYER = "player"
    TIE = "tie"


def rank_points(rank: int) -> int:
    """Baccarat points of a rank 1..13: ace 1, 2-9 face value, 10/J/Q/K 0."""
    return rank if rank < 10 else 0


def points(card: Card) -> int:
    """Baccarat points of one card."""
    return rank_points(card.rank)


def hand_total(cards: Iterable[Card]) -> int:
    """A hand's total: the sum of its points modulo 10."""
    return sum(points(card) for card in cards) % 10


def is_natural(cards: Iterable[Card]) -> bool:
    """True for a two-card hand totalling 8 or 9 (only a hand's first two cards can be natural)."""
    hand = tuple(cards)
    return len(hand) == 2 and hand_total(hand) >= 8


def is_pair(cards: Iterable[Card]) -> bool:
    """True when a hand's first two cards have the same rank (suit ignored; seed 001)."""
    hand = tuple(cards)
    return len(hand) >= 2 and hand[0].rank == hand[1].rank


def player_draws(player_total: int) -> bool:
    """Player draws a third card on 0-5 and stands on 6-7 (call only when neither hand is natural)."""
    _check_total(player_total, "player_total", upper=7)
    return player_total <= 5


def banker_draws(banker_total: int, player_third_points: int | None) -> bool:
    """Whether Banker draws (call only when neither hand is natural).

    ``player_third_points`` is ``None`` when the Player stood: Banker then draws on 0-5 like the
    Player. Otherwise the Banker table decides from Banker's total and the third card's points.
    """
    _check_total(banker_total, "banker_total", upper=7)
    if player_third_points is None:
        return banker_total <= 5
    if not (isinstance(player_third_points, int) and 0 <= player_third_points <= 9):
        raise ValueError(f"player_third_points must be 0..9 or None, got {player_third_points!r}")
    return player_third_points in BANKER_DRAWS_ON[banker_total]


def outcome(player_total: int, banker_total: int) -> Outcome:
    """Higher total wins; equal totals tie."""
    if player_total > banker_total:
        return Outcome.PLAYER
    if banker_total > player_total:
        return Outcome.BANKER
    return Outcome.TIE


def _check_total(total: int, name: str, upper: int) -> None:
    # A total of 8 or 9 here means the caller forgot the natural rule, which comes first.
    if not (isinstance(total, int) and 0 <= total <= upper):
        raise ValueError(f"{name} must be 0..{upper} when no hand is natural, got {total!r}")
