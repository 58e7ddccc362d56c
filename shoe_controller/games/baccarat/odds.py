"""Exact baccarat odds for any shoe composition, fast enough to run after every round.

Counting convention (../shared/REFERENCE-NUMBERS.md, Wizard of Odds): every ordered six-card
sequence from the shoe is counted once; a round that uses only k cards stands for all sequences
that start with its k cards. All results are exact integers and :class:`~fractions.Fraction`.

How it is fast (about 1 ms for 8 decks instead of ~600 ms for a direct enumeration):

* Cards are grouped by point value (10 values). The four initial cards are enumerated as unordered
  Player and Banker pairs (55 x 55 = 3025 states), each weighted by its number of orderings times
  the falling factorials of the counts it removes.
* A state's future depends only on its totals (P, B) and on what is left, ``c' = c - m``. So the
  states are summed per (P, B) into the moments ``S0 = sum w``, ``S1[i] = sum w c'_i`` and
  ``S2[i, j] = sum w c'_i c'_j``; every count asked for is then a fixed integer linear
  combination of these moments (the rule tables ``A0``, ``A1``, ``A2`` built once from
  :mod:`.rules`), computed with numpy ``int64`` (or Python ints beyond 2**62).
* Pair bets depend only on the rank counts: P(pair) = sum_r c_r (c_r - 1) / (N (N - 1)).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from shoe_controller.cards import Card
from shoe_controller.errors import ShoeError
from shoe_controller.games.baccarat.rules import banker_draws, player_draws, rank_points

if TYPE_CHECKING:
    from shoe_controller.games.baccarat.profile import Profile

#: Disjoint outcome atoms: every outcome fact a bet may use is a union of these.
ATOMS: tuple[str, ...] = (
    "banker_three_card_7",
    "banker_wins_with_6",
    "banker_other",
    "player_three_card_8",
    "player_other",
    "tie",
)
#: Further per-round facts counted alongside (for checking simulators and dashboards).
ROUND_FACTS: tuple[str, ...] = (
    "player_natural",
    "banker_natural",
    "natural",
    "player_draws",
    "banker_draws",
    "four_cards",
    "five_cards",
    "six_cards",
)
_CATEGORIES = ATOMS + ROUND_FACTS
_INT64_LIMIT = 2**62


class OddsError(ShoeError, ValueError):
    """The composition cannot be evaluated (negative counts, fewer than six cards, ...)."""


@dataclass(frozen=True, slots=True)
class BetOdds:
    """One bet's exact figures per unit staked."""

    house_edge: Fraction
    rtp: Fraction
    win: Fraction
    push: Fraction
    lose: Fraction


@dataclass(frozen=True, slots=True)
class Odds:
    """Exact outcome probabilities (fractions of 1) and, given a profile, every bet's edge."""

    rank_counts: tuple[int, ...]
    cards_left: int
    #: Number of ordered six-card sequences: the common denominator of the counts.
    sequences: int
    #: Exact numbers of six-card sequences per event (outcomes, atoms, pairs, round facts).
    counts: dict[str, int]
    bets: dict[str, BetOdds]

    def probability(self, event: str) -> Fraction:
        return Fraction(self.counts[event], self.sequences)

    @property
    def outcomes(self) -> dict[str, Fraction]:
        return {event: self.probability(event) for event in self.counts}

    @property
    def mean_cards_per_round(self) -> Fraction:
        return (
            4 * self.probability("four_cards")
            + 5 * self.probability("five_cards")
            + 6 * self.probability("six_cards")
        )

    def to_json_dict(
        self, profile_name: str | None = None, decks: int | None = None
    ) -> dict[str, Any]:
        """The ``shoe odds --json`` object; probabilities and edges as floats (fractions of 1)."""
        return {
            "profile": profile_name,
            "decks": decks,
            "cards_left": self.cards_left,
            "outcomes": {event: float(p) for event, p in self.outcomes.items()},
            "bets": {
                name: {"house_edge": float(bet.house_edge), "rtp": float(bet.rtp)}
                for name, bet in self.bets.items()
            },
            "mean_cards_per_round": float(self.mean_cards_per_round),
            "sequences": self.sequences,
        }


def composition_of(cards: Iterable[Card]) -> tuple[int, ...]:
    """Counts per rank (A..K, 13 entries) of the given cards."""
    counts = [0] * 13
    for card in cards:
        counts[card.rank - 1] += 1
    return tuple(counts)


def full_shoe(decks: int) -> tuple[int, ...]:
    """Rank counts of ``decks`` complete decks."""
    return (4 * decks,) * 13


def remaining(decks: int, seen: Iterable[Card]) -> tuple[int, ...]:
    """Rank counts left in a ``decks``-deck shoe after ``seen``; ``OddsError`` if impossible."""
    seen_counts = composition_of(seen)
    left = tuple(4 * decks - n for n in seen_counts)
    for rank, n in enumerate(left, start=1):
        if n < 0:
            raise OddsError(
                f"{seen_counts[rank - 1]} cards of rank {'A23456789TJQK'[rank - 1]} seen, "
                f"but a {decks}-deck shoe holds only {4 * decks}"
            )
    return left


def exact_odds(composition: Sequence[int] | Iterable[Card], profile: Profile | None = None) -> Odds:
    """Exact odds for a shoe holding ``composition``: 13 rank counts (A..K) or the cards left."""
    counts = _rank_counts(composition)
    total = sum(counts)
    if total < 6:
        raise OddsError(f"a round can need six cards; the composition holds only {total}")
    event_counts = _event_counts(counts)
    sequences = _falling(total, 6)
    bets = {} if profile is None else _bet_odds(profile, event_counts, sequences)
    return Odds(counts, total, sequences, event_counts, bets)


def _rank_counts(composition: Sequence[int] | Iterable[Card]) -> tuple[int, ...]:
    items: list[Any] = list(composition)
    if items and all(isinstance(item, Card) for item in items):
        return composition_of(items)
    if len(items) != 13 or not all(
        isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in items
    ):
        raise OddsError("a composition is 13 rank counts (A..K) or a list of Cards")
    counts = tuple(int(n) for n in items)
    if any(n < 0 for n in counts):
        raise OddsError(f"rank counts must not be negative: {list(counts)}")
    return counts


def _falling(n: int, k: int) -> int:
    result = 1
    for i in range(k):
        result *= n - i
    return result


def _event_counts(rank_counts: tuple[int, ...]) -> dict[str, int]:
    values = [0] * 10
    for rank, n in enumerate(rank_counts, start=1):
        values[rank_points(rank)] += n
    total = sum(values)
    dtype: Any = np.int64 if total**6 < _INT64_LIMIT else object
    tables = _rule_tables()
    c = np.array(values, dtype=dtype)

    # Falling factorials ff[v, k] = c_v (c_v - 1) ... (c_v - k + 1), k = 0..4.
    ff = np.ones((10, 5), dtype=dtype)
    for k in range(1, 5):
        ff[:, k] = ff[:, k - 1] * (c - (k - 1))
    removed = tables.removed
    weight = tables.orderings.astype(dtype) * np.prod(ff[tables.value_index, removed], axis=1)
    left = c[None, :] - removed.astype(dtype)
    first = weight[:, None] * left
    s0 = np.add.reduceat(weight, tables.group_starts)
    s1 = np.add.reduceat(first, tables.group_starts, axis=0).reshape(-1)
    s2 = np.add.reduceat(first[:, :, None] * left[:, None, :], tables.group_starts, axis=0)
    s2 = s2.reshape(-1)

    tail4 = (total - 4) * (total - 5)
    tail5 = total - 5
    a0, a1, a2, a2_diag = (tables.a0, tables.a1, tables.a2, tables.a2_diag)
    if dtype is object:
        a0, a1, a2, a2_diag = (a.astype(object) for a in (a0, a1, a2, a2_diag))
    raw = tail4 * (a0 @ s0) + tail5 * (a1 @ s1) + (a2 @ s2) - (a2_diag @ s1)
    result = {name: int(n) for name, n in zip(_CATEGORIES, raw)}

    result["banker"] = sum(result[a] for a in ATOMS[:3])
    result["player"] = sum(result[a] for a in ATOMS[3:5])
    pairs = sum(n * (n - 1) for n in rank_counts) * _falling(total - 2, 4)
    result["player_pair"] = pairs
    result["banker_pair"] = pairs
    ordered = (
        "banker",
        "player",
        "tie",
        "banker_three_card_7",
        "player_three_card_8",
        "banker_wins_with_6",
        "player_pair",
        "banker_pair",
    ) + ROUND_FACTS
    return {name: result[name] for name in ordered}


@dataclass(frozen=True)
class _RuleTables:
    removed: np.ndarray  # (states, 10) counts of each value among the first four cards
    value_index: np.ndarray  # (states, 10) = arange(10), for fancy indexing ff
    orderings: np.ndarray  # (states,) orderings of the Player pair times the Banker pair
    group_starts: np.ndarray  # (100,) first state of each (P, B) group (states sorted by group)
    a0: np.ndarray  # (K, 100): four-card rounds
    a1: np.ndarray  # (K, 1000): five-card rounds, by the drawn card's value
    a2: np.ndarray  # (K, 10000): six-card rounds, by (Player third, Banker third)
    a2_diag: np.ndarray  # (K, 1000): a2 on i == j, removing the card the Player took


@functools.cache
def _rule_tables() -> _RuleTables:
    """Build the composition-independent tables from the rule functions (once, on first use)."""
    pairs = [(a, b) for a in range(10) for b in range(a, 10)]
    states = []
    for pa, pb in pairs:
        for ba, bb in pairs:
            group = ((pa + pb) % 10) * 10 + (ba + bb) % 10
            states.append((group, pa, pb, ba, bb))
    states.sort()
    removed = np.zeros((len(states), 10), dtype=np.int64)
    orderings = np.zeros(len(states), dtype=np.int64)
    starts: list[int] = []
    for index, (group, pa, pb, ba, bb) in enumerate(states):
        for value in (pa, pb, ba, bb):
            removed[index, value] += 1
        orderings[index] = (1 if pa == pb else 2) * (1 if ba == bb else 2)
        if not starts or states[starts[-1]][0] != group:
            starts.append(index)

    k = len(_CATEGORIES)
    a0 = np.zeros((k, 10, 10), dtype=np.int64)
    a1 = np.zeros((k, 10, 10, 10), dtype=np.int64)
    a2 = np.zeros((k, 10, 10, 10, 10), dtype=np.int64)
    slot = {name: i for i, name in enumerate(_CATEGORIES)}

    def mark(table: np.ndarray, index: tuple[int, ...], names: Iterable[str]) -> None:
        for name in names:
            table[(slot[name],) + index] = 1

    for p in range(10):
        for b in range(10):
            if p >= 8 or b >= 8:
                facts = ["natural", "four_cards"]
                facts += ["player_natural"] if p >= 8 else []
                facts += ["banker_natural"] if b >= 8 else []
                mark(a0, (p, b), [_atom(p, b, 2, 2), *facts])
            elif not player_draws(p):
                if banker_draws(b, None):
                    for j in range(10):
                        facts = ["banker_draws", "five_cards"]
                        mark(a1, (p, b, j), [_atom(p, (b + j) % 10, 2, 3), *facts])
                else:
                    mark(a0, (p, b), [_atom(p, b, 2, 2), "four_cards"])
            else:
                for i in range(10):
                    p3 = (p + i) % 10
                    if banker_draws(b, i):
                        for j in range(10):
                            facts = ["player_draws", "banker_draws", "six_cards"]
                            mark(a2, (p, b, i, j), [_atom(p3, (b + j) % 10, 3, 3), *facts])
                    else:
                        mark(a1, (p, b, i), [_atom(p3, b, 3, 2), "player_draws", "five_cards"])
    diag = np.arange(10)
    a2_diag = a2[:, :, :, diag, diag]
    return _RuleTables(
        removed=removed,
        value_index=np.broadcast_to(np.arange(10), removed.shape).copy(),
        orderings=orderings,
        group_starts=np.array(starts, dtype=np.intp),
        a0=a0.reshape(k, -1),
        a1=a1.reshape(k, -1),
        a2=a2.reshape(k, -1),
        a2_diag=np.ascontiguousarray(a2_diag).reshape(k, -1),
    )


def _atom(player_total: int, banker_total: int, player_cards: int, banker_cards: int) -> str:
    if banker_total > player_total:
        if banker_total == 7 and banker_cards == 3:
            return "banker_three_card_7"
        return "banker_wins_with_6" if banker_total == 6 else "banker_other"
    if player_total > banker_total:
        return "player_three_card_8" if player_total == 8 and player_cards == 3 else "player_other"
    return "tie"


#: The outcome facts (as in CoupResult.facts) that hold in each atom.
_ATOM_FACTS: dict[str, dict[str, bool]] = {
    atom: {
        "banker": atom.startswith("banker"),
        "player": atom.startswith("player"),
        "tie": atom == "tie",
        "banker_three_card_7": atom == "banker_three_card_7",
        "player_three_card_8": atom == "player_three_card_8",
        "banker_wins_with_6": atom == "banker_wins_with_6",
    }
    for atom in ATOMS
}


def _bet_odds(profile: Profile, counts: Mapping[str, int], sequences: int) -> dict[str, BetOdds]:
    """Each bet's expectation, resolving the bet on every atom it can tell apart."""
    result: dict[str, BetOdds] = {}
    for name, bet in profile.bets.items():
        pair_fact = bet.pair_fact()
        if pair_fact is not None:
            cases = [
                ({pair_fact: True}, counts[pair_fact]),
                ({pair_fact: False}, sequences - counts[pair_fact]),
            ]
        else:
            cases = [(_ATOM_FACTS[atom], counts_atom) for atom, counts_atom in _atoms(counts)]
        expected = Fraction(0)
        win = push = lose = Fraction(0)
        for facts, n in cases:
            p = Fraction(n, sequences)
            resolution = bet.resolve(facts)
            if resolution.kind == "win":
                win += p
                expected += p * Fraction(resolution.net_odds)
            elif resolution.kind == "push":
                push += p
            else:
                lose += p
                expected -= p
        result[name] = BetOdds(
            house_edge=-expected, rtp=1 + expected, win=win, push=push, lose=lose
        )
    return result


def _atoms(counts: Mapping[str, int]) -> list[tuple[str, int]]:
    banker_other = counts["banker"] - counts["banker_three_card_7"] - counts["banker_wins_with_6"]
    player_other = counts["player"] - counts["player_three_card_8"]
    return [
        ("banker_three_card_7", counts["banker_three_card_7"]),
        ("banker_wins_with_6", counts["banker_wins_with_6"]),
        ("banker_other", banker_other),
        ("player_three_card_8", counts["player_three_card_8"]),
        ("player_other", player_other),
        ("tie", counts["tie"]),
    ]
