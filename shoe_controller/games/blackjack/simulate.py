"""Play whole shoes with the built-in players, as a table without a table system would.

Used by the benchmark and the tests to make realistic decisions files (``decisions_for_shoe``)
and to estimate a strategy's house edge by simulation (``play_shoe``). Pure: the cards and a
seeded generator go in, rounds come out.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from shoe_controller.cards import Card
from shoe_controller.games.blackjack.profile import BlackjackProfile
from shoe_controller.games.blackjack.round import CardDue, InsuranceDue, RoundResult
from shoe_controller.games.blackjack.settlement import settle_seat
from shoe_controller.games.blackjack.shoe_procedure import BlackjackShoe
from shoe_controller.games.blackjack.strategy import RemotePlayers


@dataclass(frozen=True, slots=True)
class PlayedRound:
    number: int
    #: The round as a decisions-file line (docs/blackjack.md).
    decisions: dict[str, Any]
    result: RoundResult


def play_shoe(cards: Sequence[Card], profile: BlackjackProfile, players: RemotePlayers,
              rng: random.Random, min_seats: int = 1) -> Iterator[PlayedRound]:
    """Deal ``cards`` (burn, cut card ``profile.shoe.cut_card`` from the back) until the shoe
    ends or the cards run out; each round a random set of seats bets."""
    shoe = BlackjackShoe(profile)
    cut_index = max(len(cards) - profile.shoe.cut_card, 0) if profile.shoe.cut_card else None
    position = 0

    def take() -> Card | None:
        nonlocal position
        if position == cut_index and not shoe.cut_card_seen:
            shoe.cut_card_out()
        if position >= len(cards):
            return None
        position += 1
        return cards[position - 1]

    while shoe.burn_remaining:
        card = take()
        if card is None:
            return
        shoe.feed_card(card)
    all_seats = list(range(1, profile.rules.seats + 1))
    while not shoe.finished:
        seats = sorted(rng.sample(all_seats, rng.randint(min_seats, len(all_seats))))
        round_ = shoe.start_round(seats)
        actions: dict[str, list[str]] = {str(seat): [] for seat in seats}
        insured: list[int] = []
        while (due := round_.due()) is not None:
            if isinstance(due, CardDue):
                card = take()
                if card is None:
                    return  # the cards ran out mid-round: that round is not reported
                shoe.feed_card(card)
            elif isinstance(due, InsuranceDue):
                insured = players.insurance(due.seats)
                shoe.insure(insured)
            else:
                hand = round_.hands[due.seat][due.hand - 1]
                action = players.decide(hand.cards, round_.dealer[0], due.options)
                actions[str(due.seat)].append(action.value)
                shoe.decide(due.seat, action)
        decisions = {"round": len(shoe.rounds), "seats": seats, "insurance": insured,
                     "actions": actions}
        yield PlayedRound(len(shoe.rounds), decisions, shoe.rounds[-1])


def decisions_for_shoe(cards: Sequence[Card], profile: BlackjackProfile,
                       seed: int) -> list[dict[str, Any]]:
    """A decisions file's lines for ``cards``: basic strategy, some insurance, random seats."""
    rng = random.Random(seed)
    players = RemotePlayers(profile.rules, rng)
    return [played.decisions for played in play_shoe(cards, profile, players, rng)]


def seat_net(played: PlayedRound, profile: BlackjackProfile, bet: Decimal = Decimal(1)) -> Decimal:
    """Net result of ``bet`` on every seat of a round (insurance not counted)."""
    return sum((settle_seat(played.result, seat, bet, profile.rules).net
                for seat in played.result.seats), Decimal(0))
