"""The built-in remote players of a live blackjack table without a table system (and of
``shoe demo``): which seats bet, their decisions (basic strategy, :mod:`.strategy`) and some
insurance taken.

Deterministic: every choice comes from a generator seeded by the table's seed, the shoe, the
round and the wait it answers, so a controller restarted mid-round makes the same choices,
and a test can reproduce a demo.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from shoe_controller.cards import Card
from shoe_controller.games.blackjack.rules import Action, TableRules
from shoe_controller.games.blackjack.strategy import BetBehind, RemotePlayers, basic_strategy
from shoe_controller.games.blackjack.table_game import BlackjackTableGame
from shoe_controller.table.game import Awaiting
from shoe_controller.table.inputs import InsuranceDecision, PlayerDecision

ORIGIN = "player"
"""The origin journalled with the built-in players' answers."""


class BuiltInPlayers:
    """Seats, decisions and insurance for a table whose bets are not the table system's."""

    def __init__(self, rules: TableRules, seed: int = 0, *, min_seats: int = 1,
                 insurance_rate: float = 0.3) -> None:
        self.rules = rules
        self.seed = seed
        self.min_seats = max(1, min(min_seats, rules.seats))
        self.insurance_rate = insurance_rate

    def _rng(self, *where: object) -> random.Random:
        return random.Random(f"{self.seed}:" + ":".join(map(str, where)))

    def seats(self, shoe: int, round_number: int) -> list[int]:
        """The seats with a bet in this round (at least ``min_seats``)."""
        rng = self._rng("seats", shoe, round_number)
        every = list(range(1, self.rules.seats + 1))
        return sorted(rng.sample(every, rng.randint(self.min_seats, len(every))))

    def bets_behind(self, shoe: int, round_number: int, seats: Sequence[int],
                    stakes: Sequence[Decimal] = (Decimal(5), Decimal(10))) -> list[BetBehind]:
        """Some bets behind the seats of a round (the demo settles them): about 30 % of seats,
        half of them following the seat's doubles and splits."""
        rng = self._rng("behind", shoe, round_number)
        return RemotePlayers(self.rules, rng).bets_behind(seats, stakes)

    def answer(self, game: BlackjackTableGame, awaiting: Awaiting, shoe: int,
               round_number: int) -> PlayerDecision | InsuranceDecision:
        """The answer to what the round awaits, as the table's input."""
        if awaiting.kind == "insurance":
            seats = self.insured(awaiting.seats, awaiting.key, shoe, round_number)
            return InsuranceDecision(seats, ORIGIN, awaiting.key)
        assert awaiting.seat is not None
        action = self.decide(game.hand_cards(awaiting.seat, awaiting.hand), game.up_card(),
                             awaiting.options)
        return PlayerDecision(awaiting.seat, awaiting.hand, action, ORIGIN, awaiting.key)

    def decide(self, cards: Sequence[Card], up: Card, options: Sequence[str]) -> str:
        """Basic strategy's choice among the legal ``options``."""
        legal = tuple(Action(option) for option in options)
        return basic_strategy(cards, up, legal, self.rules).value

    def insured(self, seats: Sequence[int], key: str, shoe: int, round_number: int) -> list[int]:
        """The seats that take insurance (some do, against basic strategy)."""
        rng = self._rng("insurance", shoe, round_number, key)
        return [seat for seat in seats if rng.random() < self.insurance_rate]

    def answer_event(self, data: Mapping[str, Any], shoe: int) -> tuple[str, dict[str, Any]]:
        """A table system's answer to a ``decision_due`` event's data (docs/table-protocol):
        the command type and its fields."""
        where = {"shoe": shoe, "round": data["round"], "key": data["key"]}
        if data["kind"] == "insurance":
            return "insurance", {**where, "seats": self.insured(data["seats"], data["key"],
                                                                shoe, data["round"])}
        cards = [Card.from_code(code) for code in data["cards"]]
        action = self.decide(cards, Card.from_code(data["up"]), data["options"])
        return "decision", {**where, "seat": data["seat"], "hand": data["hand"],
                            "action": action}


def timeout_answer(awaiting: Awaiting) -> PlayerDecision | InsuranceDecision:
    """No answer within the decision time: the hand stands, nobody insures."""
    if awaiting.kind == "insurance":
        return InsuranceDecision([], "timeout", awaiting.key)
    assert awaiting.seat is not None
    return PlayerDecision(awaiting.seat, awaiting.hand, "stand", "timeout", awaiting.key)
