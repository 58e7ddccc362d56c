"""Roulette bets: what each kind covers, and validation against the table layout.

A bet is a kind and the numbers it covers (outside bets cover fixed sets: a column, a dozen,
red...). :func:`make_bet` refuses a bet the layout does not allow, with the reason: a split
must join two numbers side by side or one above the other, a corner four numbers meeting at
a point, a line two neighbouring rows. Bets touching zero (0-1/0-2/0-3 splits, the 0-1-2 and
0-2-3 streets, the 0-1-2-3 first four) exist only where the profile allows them
(:class:`ZeroBets`); seed 003 allows none of them ("split: any two numbers except zero").
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable
from dataclasses import dataclass

from shoe_controller.errors import ShoeError
from shoe_controller.games.roulette.layout import BLACK, RED, check_number, column_of, row_of


class BetError(ShoeError, ValueError):
    """A bet the layout or the profile does not allow; the message says why."""


class BetKind(enum.Enum):
    STRAIGHT = "straight"
    SPLIT = "split"
    STREET = "street"
    CORNER = "corner"
    LINE = "line"
    COLUMN = "column"
    DOZEN = "dozen"
    RED = "red"
    BLACK = "black"
    ODD = "odd"
    EVEN = "even"
    LOW = "low"  # 1-18
    HIGH = "high"  # 19-36

    @property
    def size(self) -> int:
        """How many numbers a bet of this kind covers."""
        return _SIZES[self]

    @property
    def even_money(self) -> bool:
        return self.size == 18

    @property
    def inside(self) -> bool:
        return self.size <= 6


_SIZES = {
    BetKind.STRAIGHT: 1, BetKind.SPLIT: 2, BetKind.STREET: 3, BetKind.CORNER: 4,
    BetKind.LINE: 6, BetKind.COLUMN: 12, BetKind.DOZEN: 12, BetKind.RED: 18, BetKind.BLACK: 18,
    BetKind.ODD: 18, BetKind.EVEN: 18, BetKind.LOW: 18, BetKind.HIGH: 18,
}

EVEN_MONEY_SETS = {
    BetKind.RED: RED,
    BetKind.BLACK: BLACK,
    BetKind.ODD: frozenset(range(1, 37, 2)),
    BetKind.EVEN: frozenset(range(2, 37, 2)),
    BetKind.LOW: frozenset(range(1, 19)),
    BetKind.HIGH: frozenset(range(19, 37)),
}


@dataclass(frozen=True, slots=True)
class ZeroBets:
    """Which bets touching zero the table offers (all off on seed 003's table)."""

    splits: bool = False  # 0-1, 0-2, 0-3
    streets: bool = False  # 0-1-2, 0-2-3
    first_four: bool = False  # 0-1-2-3, paid as a corner


NO_ZERO_BETS = ZeroBets()


@dataclass(frozen=True, slots=True)
class Bet:
    """One validated bet: its kind and the numbers it covers (build it with :func:`make_bet`)."""

    kind: BetKind
    numbers: frozenset[int]

    def wins_on(self, number: int) -> bool:
        return number in self.numbers

    @property
    def label(self) -> str:
        """``split 17-20``, ``column 2``, ``red``: the text :func:`parse_bet` reads."""
        if self.kind in (BetKind.COLUMN, BetKind.DOZEN):
            first = min(self.numbers)
            which = column_of(first) if self.kind is BetKind.COLUMN else row_of(first) // 4 + 1
            return f"{self.kind.value} {which}"
        if self.kind.even_money:
            return str(self.kind.value)
        return f"{self.kind.value} " + "-".join(map(str, sorted(self.numbers)))


def make_bet(kind: BetKind | str, numbers: Iterable[int] = (), *,
             zero: ZeroBets = NO_ZERO_BETS) -> Bet:
    """A bet of ``kind`` on ``numbers`` (inside bets), or on column/dozen ``numbers=[1..3]``
    (outside bets name which one), or on nothing (red, black, odd, even, low, high)."""
    try:
        kind = BetKind(kind)
    except ValueError:
        known = ", ".join(k.value for k in BetKind)
        raise BetError(f"unknown bet kind {kind!r} (known: {known})") from None
    given = list(numbers)
    if kind.even_money:
        if given:
            raise BetError(f"a {kind.value} bet names no numbers, got {given}")
        return Bet(kind, EVEN_MONEY_SETS[kind])
    if kind in (BetKind.COLUMN, BetKind.DOZEN):
        if len(given) != 1 or given[0] not in (1, 2, 3) or isinstance(given[0], bool):
            raise BetError(f"a {kind.value} bet names which one, 1, 2 or 3; got {given}")
        which = given[0]
        if kind is BetKind.COLUMN:
            return Bet(kind, frozenset(n for n in range(1, 37) if column_of(n) == which))
        return Bet(kind, frozenset(range(12 * which - 11, 12 * which + 1)))
    try:
        covered = frozenset(check_number(n) for n in given)
    except ValueError as exc:
        raise BetError(f"{kind.value}: {exc}") from None
    if len(covered) != len(given) or len(covered) != kind.size:
        raise BetError(f"a {kind.value} bet covers {kind.size} different numbers, got {given}")
    reason = _layout_problem(kind, covered, zero)
    if reason:
        raise BetError(f"{kind.value} {'-'.join(map(str, sorted(covered)))}: {reason}")
    return Bet(kind, covered)


def _layout_problem(kind: BetKind, numbers: frozenset[int], zero: ZeroBets) -> str | None:
    ordered = sorted(numbers)
    if kind is BetKind.STRAIGHT:
        return None
    if 0 in numbers:
        allowed = {
            BetKind.SPLIT: (zero.splits, [{0, 1}, {0, 2}, {0, 3}], "zero splits"),
            BetKind.STREET: (zero.streets, [{0, 1, 2}, {0, 2, 3}], "zero streets"),
            BetKind.CORNER: (zero.first_four, [{0, 1, 2, 3}], "the first four"),
        }.get(kind)
        if allowed is None or numbers not in allowed[1]:
            return "zero is not part of such a bet on the layout"
        if not allowed[0]:
            return f"this table does not offer {allowed[2]}"
        return None
    if kind is BetKind.SPLIT:
        low, high = ordered
        side_by_side = high - low == 1 and row_of(low) == row_of(high)
        if side_by_side or high - low == 3:
            return None
        return "a split joins two numbers side by side or one above the other"
    if kind is BetKind.STREET:
        return None if len({row_of(n) for n in numbers}) == 1 else "a street is one row of three"
    if kind is BetKind.CORNER:
        low = ordered[0]
        if column_of(low) != 3 and ordered == [low, low + 1, low + 3, low + 4]:
            return None
        return "a corner is four numbers meeting at one point"
    if kind is BetKind.LINE:
        low = ordered[0]
        if column_of(low) == 1 and ordered == list(range(low, low + 6)):
            return None
        return "a line is two neighbouring rows"
    return "not an inside bet"  # pragma: no cover - outside kinds return earlier


_TEXT = re.compile(r"\s*([a-z]+)(?:\s+([0-9]+(?:\s*-\s*[0-9]+)*))?\s*")


def parse_bet(text: str, *, zero: ZeroBets = NO_ZERO_BETS) -> Bet:
    """A bet from its label: ``straight 17``, ``split 17-20``, ``corner 1-2-4-5``,
    ``line 1-6`` (two rows, given by the first and last number), ``column 2``, ``red``."""
    match = _TEXT.fullmatch(text.lower())
    if not match:
        raise BetError(f"cannot read bet {text[:40]!r}: expected e.g. 'split 17-20', 'red'")
    kind, numbers = match.group(1), match.group(2)
    given = [int(n) for n in numbers.split("-")] if numbers else []
    if len(given) > 6 or any(len(str(n)) > 2 for n in given):
        raise BetError(f"cannot read bet {text[:40]!r}: too many numbers")
    if kind == "line" and len(given) == 2 and given[1] - given[0] == 5:
        given = list(range(given[0], given[1] + 1))
    return make_bet(kind, given, zero=zero)
