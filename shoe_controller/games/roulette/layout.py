"""The single-zero (European) wheel and table layout: pockets in wheel order, colours, rows.

The wheel order is what sectors are made of (neighbouring pockets on the wheel); the table
layout (12 rows of 3, three columns) is what inside bets are made of. Zero is green and sits
above the first row, touching 1, 2 and 3.
"""

from __future__ import annotations

import enum

NUMBERS = tuple(range(37))
"""Every pocket of a single-zero wheel: 0 and 1..36."""

WHEEL_ORDER = (
    0, 32, 15, 19, 4, 21, 2, 25, 17, 34, 6, 27, 13, 36, 11, 30, 8, 23, 10,
    5, 24, 16, 33, 1, 20, 14, 31, 9, 22, 18, 29, 7, 28, 12, 35, 3, 26,
)
"""Pockets clockwise from zero, as on a European (single-zero) wheel head."""

RED = frozenset({1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36})
BLACK = frozenset(set(range(1, 37)) - RED)


class Colour(enum.Enum):
    GREEN = "green"
    RED = "red"
    BLACK = "black"


def colour(number: int) -> Colour:
    check_number(number)
    if number == 0:
        return Colour.GREEN
    return Colour.RED if number in RED else Colour.BLACK


def check_number(number: object) -> int:
    """``number`` if it is a pocket (0..36), else ValueError naming it."""
    if isinstance(number, bool) or not isinstance(number, int) or not 0 <= number <= 36:
        raise ValueError(f"{number!r} is not a pocket of a single-zero wheel (0..36)")
    return number


def row_of(number: int) -> int:
    """The table row (street) 1..12 of a number 1..36."""
    return (number - 1) // 3 + 1


def column_of(number: int) -> int:
    """The table column 1..3 of a number 1..36 (column 1 holds 1, 4, 7, ..., 34)."""
    return (number - 1) % 3 + 1


def row_numbers(row: int) -> frozenset[int]:
    return frozenset(range(3 * row - 2, 3 * row + 1))


def wheel_position(number: int) -> int:
    """Index of ``number`` in :data:`WHEEL_ORDER`."""
    return _POSITION[check_number(number)]


def sectors(size: int, offset: int = 0) -> tuple[tuple[int, ...], ...]:
    """The wheel cut into runs of ``size`` neighbouring pockets, starting ``offset`` pockets
    clockwise from zero; the last run takes the remainder (37 = 4 x 9 + 1: the last has 10)."""
    if not 2 <= size <= 18:
        raise ValueError(f"sector size must be 2..18 pockets, got {size}")
    order = WHEEL_ORDER[offset % 37 :] + WHEEL_ORDER[: offset % 37]
    count = len(order) // size
    runs = [order[i * size : (i + 1) * size] for i in range(count - 1)]
    runs.append(order[(count - 1) * size :])
    return tuple(runs)


_POSITION = {number: index for index, number in enumerate(WHEEL_ORDER)}
