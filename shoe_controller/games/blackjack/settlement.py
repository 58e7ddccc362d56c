"""Settle a blackjack round's money exactly, with Decimal: seat bets, insurance, bets behind.

A :class:`~.round.RoundResult` carries each hand's net result per unit of its bet
(:attr:`~.round.HandResult.payout`); here those become amounts. Amounts are exact (a 3:2
blackjack on 5 wins 7.5); a table that pays only whole chips rounds at its cash desk, not here.

Bet behind (seed 003, RULES.md): players may bet on an occupied seat; the seated player decides.
A bet-behind player who *follows* doubles and splits puts up the same multiples as the seat and
shares every hand's result; one who does not is settled on the seat's first hand only, at its
original (undoubled) stake. Insurance is each bettor's own choice, up to the profile's
``insurance_max`` of their own stake.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from shoe_controller.errors import ShoeError
from shoe_controller.games.blackjack.round import HandResult, RoundResult
from shoe_controller.games.blackjack.rules import Outcome, TableRules


class SettlementError(ShoeError, ValueError):
    """A bet that cannot be settled: not a Decimal, negative, insurance not offered or too big."""


@dataclass(frozen=True, slots=True)
class BetSettlement:
    """What one bettor (seated or behind) risked and gets back on one seat."""

    #: Every amount put on the table: the bet, doubles, split bets, insurance.
    staked: Decimal
    #: Net result of each hand counted for this bettor, in play order.
    hands: tuple[Decimal, ...]
    insurance: Decimal

    @property
    def net(self) -> Decimal:
        return sum(self.hands, Decimal(0)) + self.insurance

    @property
    def returned(self) -> Decimal:
        """What goes back to the bettor: stakes of won and pushed bets plus wins."""
        return self.staked + self.net


def _amount(value: object, what: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (Decimal, int)):
        raise SettlementError(f"{what} must be a Decimal amount, got {value!r}")
    amount = Decimal(value)
    if not amount.is_finite() or amount < 0:
        raise SettlementError(f"{what} must be a finite amount >= 0, got {amount}")
    return amount


def insurance_net(result: RoundResult, bet: Decimal, insurance: Decimal,
                  rules: TableRules) -> Decimal:
    """Net of an insurance bet: wins ``insurance_pays`` to 1 on a dealer blackjack, else lost."""
    bet = _amount(bet, "the bet")
    insurance = _amount(insurance, "insurance")
    if not insurance:
        return Decimal(0)
    if not result.insurance_offered:
        raise SettlementError("insurance was not offered this round (the up card is not an ace)")
    limit = bet * rules.insurance_max
    if insurance > limit:
        raise SettlementError(f"insurance {insurance} is more than {rules.insurance_max} of "
                              f"the bet {bet} (at most {limit})")
    return insurance * rules.insurance_pays if result.dealer_blackjack else -insurance


def _hand_stake(hand: HandResult) -> int:
    return 2 if hand.doubled else 1


def settle_seat(result: RoundResult, seat: int, bet: Decimal, rules: TableRules,
                insurance: Decimal = Decimal(0)) -> BetSettlement:
    """The seated player's bet (and its doubles and split) plus their insurance."""
    hands = _hands(result, seat)
    bet = _amount(bet, f"the bet on seat {seat}")
    staked = bet * sum(_hand_stake(hand) for hand in hands) + _amount(insurance, "insurance")
    return BetSettlement(
        staked=staked,
        hands=tuple(bet * hand.payout for hand in hands),
        insurance=insurance_net(result, bet, insurance, rules),
    )


def settle_behind(result: RoundResult, seat: int, stake: Decimal, follows: bool,
                  rules: TableRules, insurance: Decimal = Decimal(0)) -> BetSettlement:
    """A bet behind ``seat``: following the seat's doubles and splits, or not."""
    if follows:
        return settle_seat(result, seat, stake, rules, insurance)
    first = _hands(result, seat)[0]
    stake = _amount(stake, f"the bet behind seat {seat}")
    return BetSettlement(
        staked=stake + _amount(insurance, "insurance"),
        hands=(stake * undoubled_payout(first, rules),),
        insurance=insurance_net(result, stake, insurance, rules),
    )


def undoubled_payout(hand: HandResult, rules: TableRules) -> Decimal:
    """A hand's unit result for someone who did not follow its double: one unit at stake."""
    if not hand.doubled:
        return hand.payout
    if hand.outcome is Outcome.WIN:
        return rules.win_pays  # a doubled hand has three cards: never a blackjack
    return Decimal(-1) if hand.outcome is Outcome.LOSE else Decimal(0)


def _hands(result: RoundResult, seat: int) -> tuple[HandResult, ...]:
    hands = result.hands.get(seat)
    if hands is None:
        raise SettlementError(f"seat {seat} had no bet this round (seats: "
                              f"{', '.join(map(str, result.seats))})")
    return hands
