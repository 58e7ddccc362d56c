"""An independent statement of seed 003's roulette, written from the rule text alone.

Shares no code with ``shoe_controller.games.roulette``: the felt is drawn below as data (three
rows of twelve, as a player standing at the table sees it, zero at the left end), bets are
found by walking that drawing, and payouts come from the sheet's table 1.4 by how many numbers
a bet covers ("1 Numar 35 la 1 ... 18 Numere 1 la 1").
"""

from __future__ import annotations

from decimal import Decimal
from itertools import combinations

#       the felt, zero at the left; the "2 to 1" column boxes at the right end of each row
FELT = (
    (3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36),  # top row: column 3
    (2, 5, 8, 11, 14, 17, 20, 23, 26, 29, 32, 35),  # column 2
    (1, 4, 7, 10, 13, 16, 19, 22, 25, 28, 31, 34),  # bottom row: column 1
)
RED_ON_FELT = (1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36)

# Sheet 003, 1.4 "Castiguri": how many numbers a bet covers -> what it pays, to 1.
PAYS_BY_COVER = {1: 35, 2: 17, 3: 11, 4: 8, 6: 5, 12: 2, 18: 1}


def _cell(r: int, c: int) -> int:
    return FELT[r][c]


def straights() -> list[frozenset[int]]:
    return [frozenset({0})] + [frozenset({_cell(r, c)}) for r in range(3) for c in range(12)]


def splits(with_zero: bool = False) -> list[frozenset[int]]:
    found = []
    for r in range(3):
        for c in range(12):
            if c + 1 < 12:
                found.append(frozenset({_cell(r, c), _cell(r, c + 1)}))
            if r + 1 < 3:
                found.append(frozenset({_cell(r, c), _cell(r + 1, c)}))
    if with_zero:  # zero touches the first street: 1, 2 and 3
        found += [frozenset({0, _cell(r, 0)}) for r in range(3)]
    return found


def streets(with_zero: bool = False) -> list[frozenset[int]]:
    found = [frozenset(FELT[r][c] for r in range(3)) for c in range(12)]
    if with_zero:  # the two trios where zero meets two numbers of the first street
        found += [frozenset({0, _cell(r, 0), _cell(r + 1, 0)}) for r in range(2)]
    return found


def corners(first_four: bool = False) -> list[frozenset[int]]:
    found = [frozenset({_cell(r, c), _cell(r, c + 1), _cell(r + 1, c), _cell(r + 1, c + 1)})
             for r in range(2) for c in range(11)]
    if first_four:
        found.append(frozenset({0, *(FELT[r][0] for r in range(3))}))
    return found


def lines() -> list[frozenset[int]]:
    return [frozenset(FELT[r][c + k] for r in range(3) for k in (0, 1)) for c in range(11)]


def columns() -> list[frozenset[int]]:
    return [frozenset(FELT[r]) for r in (2, 1, 0)]  # column 1, 2, 3


def dozens() -> list[frozenset[int]]:
    everything = sorted(n for row in FELT for n in row)
    return [frozenset(everything[:12]), frozenset(everything[12:24]), frozenset(everything[24:])]


def even_money() -> dict[str, frozenset[int]]:
    everything = {n for row in FELT for n in row}
    red = frozenset(RED_ON_FELT)
    return {
        "red": red,
        "black": frozenset(everything - red),
        "odd": frozenset(n for n in everything if n % 2),
        "even": frozenset(n for n in everything if not n % 2),
        "low": frozenset(n for n in everything if n <= 18),
        "high": frozenset(n for n in everything if n > 18),
    }


def every_bet(zero_bets: bool = False) -> list[tuple[str, frozenset[int]]]:
    """Every bet the felt allows, as (kind, numbers)."""
    bets: list[tuple[str, frozenset[int]]] = []
    bets += [("straight", b) for b in straights()]
    bets += [("split", b) for b in splits(zero_bets)]
    bets += [("street", b) for b in streets(zero_bets)]
    bets += [("corner", b) for b in corners(zero_bets)]
    bets += [("line", b) for b in lines()]
    bets += [("column", b) for b in columns()]
    bets += [("dozen", b) for b in dozens()]
    bets += list(even_money().items())
    return bets


def returned(numbers: frozenset[int], stake: Decimal, winning: int) -> Decimal:
    """What goes back to the player: stake plus win, or nothing (seed 003: zero loses every
    outside bet, since no outside bet covers it)."""
    if winning not in numbers:
        return Decimal(0)
    return stake + stake * PAYS_BY_COVER[len(numbers)]


def subsets_of_size(size: int) -> list[frozenset[int]]:
    return [frozenset(s) for s in combinations(range(37), size)]
