"""Settle a round's bets exactly, with Decimal and the profile's rounding rule.

Only the win is rounded (by the bet's rule, e.g. down to the cent for seed 002's "1.95 x stake
rounded down"); the stake is always returned whole on a win or a push.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from shoe_controller.errors import ShoeError
from shoe_controller.games.baccarat.coup import CoupResult
from shoe_controller.games.baccarat.profile import Profile, round_amount


class SettlementError(ShoeError, ValueError):
    """A bet cannot be settled: unknown bet name, negative or non-Decimal stake."""


@dataclass(frozen=True, slots=True)
class BetPayout:
    """``returned`` is what goes back to the player: stake + win, the stake on a push, 0 on a loss."""

    bet: str
    stake: Decimal
    result: str  # "win" | "push" | "lose"
    returned: Decimal

    @property
    def net(self) -> Decimal:
        return self.returned - self.stake


@dataclass(frozen=True, slots=True)
class Settlement:
    payouts: dict[str, BetPayout]

    @property
    def total_stake(self) -> Decimal:
        return sum((p.stake for p in self.payouts.values()), Decimal(0))

    @property
    def total_returned(self) -> Decimal:
        return sum((p.returned for p in self.payouts.values()), Decimal(0))

    @property
    def net(self) -> Decimal:
        return self.total_returned - self.total_stake

    def to_json_dict(self) -> dict[str, Any]:
        """Amounts as strings, so no float ever touches money."""
        return {
            name: {
                "stake": str(p.stake),
                "result": p.result,
                "returned": str(p.returned),
                "net": str(p.net),
            }
            for name, p in self.payouts.items()
        }


def settle(result: CoupResult, bets: Mapping[str, Decimal], profile: Profile) -> Settlement:
    """Exact payouts for ``bets`` (bet name -> stake) on a complete round under ``profile``."""
    facts = result.facts()
    payouts: dict[str, BetPayout] = {}
    for name, stake in bets.items():
        bet = profile.bets.get(name)
        if bet is None:
            raise SettlementError(
                f"profile {profile.name} has no bet {name!r} (bets: {', '.join(profile.bets)})"
            )
        if isinstance(stake, bool) or not isinstance(stake, (Decimal, int)):
            raise SettlementError(f"stake on {name} must be a Decimal, got {stake!r}")
        stake = Decimal(stake)
        if not stake.is_finite() or stake < 0:
            raise SettlementError(f"stake on {name} must be a finite amount >= 0, got {stake}")
        resolution = bet.resolve(facts)
        if resolution.kind == "win":
            returned = stake + round_amount(stake * resolution.net_odds, bet.rounding)
        elif resolution.kind == "push":
            returned = stake
        else:
            returned = Decimal(0)
        payouts[name] = BetPayout(name, stake, resolution.kind, returned)
    return Settlement(payouts)
