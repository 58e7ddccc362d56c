"""Baccarat scoreboards ("roads"), pure functions of the shoe's results.

The pit and the players read the shoe's history off these boards; they follow fixed, widely
published rules, so a board that places one mark differently from the next table's looks wrong
to everyone. The rules implemented here:

* **Bead plate**: one cell per round (Banker, Player or Tie) in dealing order, filling each
  column top to bottom, ``rows`` (6) cells a column.
* **Big road**: Banker and Player results only. A result equal to the previous one goes one cell
  down the same column; a change of outcome starts a new column at the top. A tie is not a cell:
  it is counted on the cell of the last Banker/Player result; ties before the first Banker/Player
  result are counted on the first cell once there is one (``leading_ties`` until then). A streak
  longer than the column (or one blocked by an earlier tail below it) turns right and runs along
  its row: the "dragon tail". A new streak starts at the top of the column right of where the
  previous streak started (or the first free column after it).
* **Derived roads** (big eye boy, small road, cockroach pig) compare the big road with itself,
  ``k`` = 1, 2, 3 columns back, and record red (the road is "regular") or blue ("choppy"). For a
  big road entry in column ``c`` (streaks counted from 0) at depth ``r`` (0 = top):

  - ``r == 0`` (a new column): red if columns ``c-1`` and ``c-1-k`` are equally long, else blue;
  - ``r >= 1``: look at column ``c-k``: red if it has a cell at depth ``r`` or has no cell at
    depth ``r-1`` either ("a straight fall"); blue if it ends exactly at depth ``r-1``. In short:
    red iff ``len(column c-k) != r``.

  A derived road starts with the big road entry at column ``k`` depth 1, or, if column ``k``
  has only one cell, with the first entry of column ``k+1``: before that there is nothing to
  compare. Its red/blue marks are placed in their own grid by the big road's rules.

Columns here are *streaks* (logical columns); the grid position of each cell is computed
separately (:func:`place`), so a dragon tail changes where a mark is drawn, never what it means.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

ROWS = 6
BANKER, PLAYER, TIE = "B", "P", "T"
RED, BLUE = "red", "blue"
#: Derived road names and how many columns back each one compares.
DERIVED_ROADS: dict[str, int] = {"big_eye_boy": 1, "small_road": 2, "cockroach_pig": 3}


@dataclass(frozen=True, slots=True)
class RoundMark:
    """What the boards need of one completed round."""

    outcome: str  # "B", "P" or "T"
    player_pair: bool = False
    banker_pair: bool = False
    natural: bool = False

    @classmethod
    def from_result(cls, event: dict[str, Any]) -> RoundMark:
        """From a ``round_result`` table event (or a replay ``round`` line)."""
        return cls(
            outcome=str(event["outcome"])[0].upper(),
            player_pair=bool(event.get("player_pair")),
            banker_pair=bool(event.get("banker_pair")),
            natural=bool(event.get("natural")),
        )


@dataclass(frozen=True, slots=True)
class Cell:
    """One mark on a board: where it is drawn (``col``, ``row``) and what it says.

    ``value`` is "B"/"P"/"T" on the bead plate and big road, "red"/"blue" on derived roads;
    ``ties`` counts the ties marked on a big road cell; ``streak`` and ``depth`` are the
    logical column and the position in it (what the derived roads compare).
    """

    col: int
    row: int
    value: str
    streak: int = 0
    depth: int = 0
    ties: int = 0
    player_pair: bool = False
    banker_pair: bool = False
    natural: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "col": self.col, "row": self.row, "value": self.value, "streak": self.streak,
            "depth": self.depth, "ties": self.ties, "player_pair": self.player_pair,
            "banker_pair": self.banker_pair, "natural": self.natural,
        }


@dataclass(frozen=True)
class BigRoad:
    cells: tuple[Cell, ...]
    #: Ties seen before the first Banker/Player result (also counted on the first cell).
    leading_ties: int
    #: Length of each streak (logical column), for the derived roads.
    streaks: tuple[int, ...]


@dataclass
class Roads:
    """Every board for one shoe, as JSON-ready data for the display and the API."""

    bead_plate: list[Cell] = field(default_factory=list)
    big_road: BigRoad = field(default_factory=lambda: BigRoad((), 0, ()))
    derived: dict[str, list[Cell]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": ROWS,
            "bead_plate": [cell.to_dict() for cell in self.bead_plate],
            "big_road": {
                "cells": [cell.to_dict() for cell in self.big_road.cells],
                "leading_ties": self.big_road.leading_ties,
                "streaks": list(self.big_road.streaks),
            },
            **{name: [cell.to_dict() for cell in cells] for name, cells in self.derived.items()},
        }


def bead_plate(marks: Sequence[RoundMark], rows: int = ROWS) -> list[Cell]:
    """One cell per round, column by column, top to bottom."""
    return [
        Cell(index // rows, index % rows, mark.outcome, player_pair=mark.player_pair,
             banker_pair=mark.banker_pair, natural=mark.natural)
        for index, mark in enumerate(marks)
    ]


def streaks_of(values: Iterable[str]) -> list[list[int]]:
    """Group a sequence into streaks of equal values: a list of the indices in each streak."""
    streaks: list[list[int]] = []
    previous: str | None = None
    for index, value in enumerate(values):
        if value == previous:
            streaks[-1].append(index)
        else:
            streaks.append([index])
            previous = value
    return streaks


def place(values: Sequence[str], rows: int = ROWS) -> list[tuple[int, int, int, int]]:
    """Grid positions for a road of ``values`` by the big road's rules.

    Returns, per value, ``(col, row, streak, depth)``. A streak goes down its column until the
    bottom row or an occupied cell, then turns right along the row it reached (dragon tail).
    """
    occupied: set[tuple[int, int]] = set()
    positions: list[tuple[int, int, int, int]] = []
    start_col = -1
    for streak_index, streak in enumerate(streaks_of(values)):
        col = start_col + 1
        while (col, 0) in occupied:  # the top of that column is taken by an earlier tail
            col += 1
        start_col = col
        row = 0
        turned = False
        for depth in range(len(streak)):
            if depth > 0:
                if not turned and row + 1 < rows and (col, row + 1) not in occupied:
                    row += 1
                else:
                    turned = True
                    col += 1
            occupied.add((col, row))
            positions.append((col, row, streak_index, depth))
    return positions


def big_road(marks: Sequence[RoundMark], rows: int = ROWS) -> BigRoad:
    """The big road: Banker/Player streaks, ties counted on the cell before them."""
    decided: list[RoundMark] = []
    ties_after: list[int] = []
    leading_ties = 0
    for mark in marks:
        if mark.outcome == TIE:
            if decided:
                ties_after[-1] += 1
            else:
                leading_ties += 1
        else:
            decided.append(mark)
            ties_after.append(0)
    if decided:
        ties_after[0] += leading_ties
    values = [mark.outcome for mark in decided]
    cells = tuple(
        Cell(col, row, mark.outcome, streak, depth, ties, mark.player_pair, mark.banker_pair,
             mark.natural)
        for (col, row, streak, depth), mark, ties in zip(place(values, rows), decided, ties_after)
    )
    streaks = tuple(len(streak) for streak in streaks_of(values))
    return BigRoad(cells, leading_ties, streaks)


def derived_marks(streaks: Sequence[int], k: int) -> list[str]:
    """The red/blue sequence of the derived road that looks ``k`` columns back."""
    marks: list[str] = []
    for c, length in enumerate(streaks):
        for r in range(length):
            if c < k or (c == k and r == 0):
                continue  # nothing to compare yet: the road starts at (k, 1) or (k + 1, 0)
            if r == 0:
                same = streaks[c - 1] == streaks[c - 1 - k]
            else:
                same = streaks[c - k] != r
            marks.append(RED if same else BLUE)
    return marks


def derived_road(streaks: Sequence[int], k: int, rows: int = ROWS) -> list[Cell]:
    values = derived_marks(streaks, k)
    return [Cell(col, row, value, streak, depth)
            for (col, row, streak, depth), value in zip(place(values, rows), values)]


def roads(marks: Sequence[RoundMark], rows: int = ROWS) -> Roads:
    """Every board for the rounds of one shoe."""
    big = big_road(marks, rows)
    return Roads(
        bead_plate=bead_plate(marks, rows),
        big_road=big,
        derived={name: derived_road(big.streaks, k, rows) for name, k in DERIVED_ROADS.items()},
    )


__all__ = [
    "DERIVED_ROADS",
    "BigRoad",
    "Cell",
    "Roads",
    "RoundMark",
    "bead_plate",
    "big_road",
    "derived_marks",
    "derived_road",
    "place",
    "roads",
    "streaks_of",
]
