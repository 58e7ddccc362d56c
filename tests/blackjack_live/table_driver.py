"""Drive a pure blackjack :class:`Table` by hand: shoe loaded, burn, rounds, answers.

Inputs are kept in order, so a test can rebuild the table from any prefix (the journal's fold).
"""

from __future__ import annotations

from typing import Any

from shoe_controller.cards import Card
from shoe_controller.games.registry import create_game
from shoe_controller.table.inputs import (
    BettingCommand,
    ButtonPressed,
    CardDrawn,
    DeviceConnected,
    InsuranceDecision,
    LinkChanged,
    PlayerDecision,
    SessionStarted,
    ShoeEventInput,
    TableInput,
)
from shoe_controller.table.machine import Table


class Driver:
    def __init__(self, profile: str = "blackjack-8d") -> None:
        self.profile = profile
        self.table = Table(create_game(profile))
        self.inputs: list[TableInput] = []
        self.events: list[list[dict[str, Any]]] = []
        self.counter = 0
        for item in (SessionStarted(profile, "blackjack"), DeviceConnected("SIM-1"),
                     LinkChanged(True), ShoeEventInput("shoe_loaded", 1)):
            self.give(item)

    def give(self, item: TableInput) -> list[dict[str, Any]]:
        self.inputs.append(item)
        events = self.table.handle(item)
        self.events.append(events)
        return events

    def card(self, code: str) -> list[dict[str, Any]]:
        self.counter += 1
        return self.give(CardDrawn(Card.from_code(code), self.counter))

    def cards(self, codes: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for code in codes.split():
            out += self.card(code)
        return out

    def burn(self) -> None:
        self.cards("2S 3S 4S 5S 6S 7S")

    def round(self, seats: list[int]) -> list[dict[str, Any]]:
        self.give(BettingCommand("open"))
        return self.give(BettingCommand("close", "table-system", seats))

    def decide(self, seat: int, hand: int, action: str, key: str = "",
               origin: str = "table-system") -> list[dict[str, Any]]:
        return self.give(PlayerDecision(seat, hand, action, origin, key))

    def insure(self, seats: list[int], key: str = "") -> list[dict[str, Any]]:
        return self.give(InsuranceDecision(seats, "table-system", key))

    def confirm(self) -> list[dict[str, Any]]:
        return self.give(ButtonPressed())

    @property
    def view(self) -> Any:
        return self.table.view()

    def all_events(self) -> list[dict[str, Any]]:
        return [event for events in self.events for event in events]


def types(events: list[dict[str, Any]]) -> list[str]:
    return [event["type"] for event in events]
