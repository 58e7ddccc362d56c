"""Check a bet slip against the profile, and settle it exactly with ``Decimal``.

Only what the player wins is rounded (the profile's rule, e.g. down to the cent); the stake
goes back whole with a win. Even-money bets when zero wins follow the profile: lost, half
returned (La Partage, the half rounded by the same rule) or imprisoned (En Prison: nothing
returned now; the table places it again with ``imprisoned=True`` for the next spin, where a win
returns the stake without a win, and anything else, zero included, loses it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from shoe_controller.games.baccarat.profile import round_amount
from shoe_controller.games.roulette.bets import Bet, BetError, BetKind
from shoe_controller.games.roulette.layout import check_number
from shoe_controller.games.roulette.profile import RouletteProfile

_CENT = Decimal("0.01")


@dataclass(frozen=True, slots=True)
class PlacedBet:
    bet: Bet
    stake: Decimal
    imprisoned: bool = False  # an even-money bet kept from a zero (En Prison)


@dataclass(frozen=True, slots=True)
class BetOutcome:
    """``result``: win, lose, half (La Partage), imprisoned (En Prison, stake held), released
    (an imprisoned bet that won: stake back), void (game voided: stake back)."""

    bet: Bet
    stake: Decimal
    result: str
    returned: Decimal

    @property
    def net(self) -> Decimal:
        """What the player is up (down) on this bet; an imprisoned stake counts as held."""
        return Decimal(0) if self.result == "imprisoned" else self.returned - self.stake


@dataclass(frozen=True, slots=True)
class RouletteSettlement:
    number: int | None  # None: the game was void
    outcomes: tuple[BetOutcome, ...]

    @property
    def total_stake(self) -> Decimal:
        return sum((o.stake for o in self.outcomes), Decimal(0))

    @property
    def total_returned(self) -> Decimal:
        return sum((o.returned for o in self.outcomes), Decimal(0))

    @property
    def imprisoned(self) -> tuple[PlacedBet, ...]:
        """Bets to place again, imprisoned, on the next spin."""
        return tuple(PlacedBet(o.bet, o.stake, True) for o in self.outcomes
                     if o.result == "imprisoned")

    def to_json_dict(self) -> dict[str, Any]:
        """Amounts as strings: no float ever touches money."""
        return {
            "number": self.number,
            "bets": [{"bet": o.bet.label, "stake": str(o.stake), "result": o.result,
                      "returned": str(o.returned)} for o in self.outcomes],
            "total_stake": str(self.total_stake),
            "total_returned": str(self.total_returned),
        }


def check_slip(bets: Sequence[PlacedBet], profile: RouletteProfile) -> None:
    """Refuse a slip (one player's bets on one game) that breaks the profile, naming every
    problem: stakes (whole cents, within the bet's limits), zero bets the table does not
    offer, an imprisoned bet that is not even money, and the table's total limits."""
    problems = []
    total = Decimal(0)
    for index, placed in enumerate(bets):
        label = f"bet {index + 1} ({placed.bet.label})"
        stake = placed.stake
        if isinstance(stake, bool) or not isinstance(stake, Decimal) or not stake.is_finite():
            problems.append(f"{label}: stake must be a finite Decimal, got {stake!r}")
            continue
        if stake <= 0 or stake != stake.quantize(_CENT):
            problems.append(f"{label}: stake must be a positive amount in whole cents, "
                            f"got {stake}")
            continue
        total += stake
        limit = profile.limit_for(placed.bet.kind)
        if not placed.imprisoned and not limit.min <= stake <= limit.max:
            problems.append(f"{label}: stake {stake} outside the table's limits for "
                            f"{placed.bet.kind.value} bets ({limit.min} to {limit.max})")
        if placed.imprisoned and not placed.bet.kind.even_money:
            problems.append(f"{label}: only even-money bets go to prison")
        if placed.imprisoned and profile.even_money_on_zero != "en-prison":
            problems.append(f"{label}: this table does not play En Prison")
        zero_problem = _zero_problem(placed.bet, profile)
        if zero_problem:
            problems.append(f"{label}: {zero_problem}")
    if bets and profile.table_min is not None and total < profile.table_min:
        problems.append(f"total stake {total} is below the table minimum {profile.table_min}")
    if profile.table_max is not None and total > profile.table_max:
        problems.append(f"total stake {total} is above the table maximum {profile.table_max}")
    if problems:
        raise BetError("; ".join(problems))


def _zero_problem(bet: Bet, profile: RouletteProfile) -> str | None:
    if 0 not in bet.numbers or bet.kind is BetKind.STRAIGHT:
        return None
    offered = {BetKind.SPLIT: profile.zero.splits, BetKind.STREET: profile.zero.streets,
               BetKind.CORNER: profile.zero.first_four}
    return None if offered.get(bet.kind) else "this table does not offer bets joining zero"


def settle(number: int, bets: Sequence[PlacedBet], profile: RouletteProfile) -> RouletteSettlement:
    """Every bet's outcome when ``number`` wins (check the slip first with :func:`check_slip`;
    settling does not re-check limits, so a slip accepted under old limits still settles)."""
    try:
        check_number(number)
    except ValueError as exc:
        raise BetError(str(exc)) from None
    outcomes = []
    for placed in bets:
        bet, stake = placed.bet, placed.stake
        if isinstance(stake, bool) or not isinstance(stake, Decimal) or not stake.is_finite() \
                or stake < 0:
            raise BetError(f"{bet.label}: stake must be a finite Decimal >= 0, got {stake!r}")
        wins = number in bet.numbers
        if placed.imprisoned:
            outcome = BetOutcome(bet, stake, "released", stake) if wins \
                else BetOutcome(bet, stake, "lose", Decimal(0))
        elif wins:
            win = round_amount(stake * profile.pays_for(bet.kind), profile.rounding)
            outcome = BetOutcome(bet, stake, "win", stake + win)
        elif number == 0 and bet.kind.even_money and profile.even_money_on_zero != "lose":
            if profile.even_money_on_zero == "la-partage":
                half = round_amount(stake / 2, profile.rounding)
                outcome = BetOutcome(bet, stake, "half", half)
            else:
                outcome = BetOutcome(bet, stake, "imprisoned", Decimal(0))
        else:
            outcome = BetOutcome(bet, stake, "lose", Decimal(0))
        outcomes.append(outcome)
    return RouletteSettlement(number, tuple(outcomes))


def refund(bets: Sequence[PlacedBet]) -> RouletteSettlement:
    """A void game: every stake goes back (imprisoned bets too)."""
    return RouletteSettlement(None, tuple(BetOutcome(p.bet, p.stake, "void", p.stake)
                                          for p in bets))
