"""A pure test driver: plays a card list through a Table the way a well-behaved dealer would."""

from __future__ import annotations

from shoe_controller.cards import Card
from shoe_controller.games.registry import create_game
from shoe_controller.table.inputs import (
    BettingCommand,
    ButtonPressed,
    CardDrawn,
    LinkChanged,
    SessionStarted,
    ShoeEventInput,
    TableInput,
)
from shoe_controller.table.machine import Table


class Driver:
    def __init__(self, profile: str = "punto-banco-8d") -> None:
        self.table = Table(create_game(profile))
        self.inputs: list[TableInput] = []
        self.events: list[dict] = []
        self.counter = 0
        for item in (SessionStarted(profile), LinkChanged(True), ShoeEventInput("shoe_loaded")):
            self.feed(item)

    def feed(self, item: TableInput) -> list[dict]:
        self.inputs.append(item)
        events = self.table.handle(item)
        self.events.extend(events)
        return events

    def draw(self, card: Card, **kwargs) -> list[dict]:
        self.counter += 1
        return self.feed(CardDrawn(card, self.counter, **kwargs))

    def step_to_card(self) -> None:
        """Advance (open/close betting, confirm) until a card is due or the shoe is finished."""
        for _ in range(5):
            view = self.table.view()
            if view.due or view.state == "shoe_finished" or view.alarm == "latched":
                return
            if view.state.endswith("betting_open"):
                self.feed(BettingCommand("close"))
            elif view.state.endswith("result_shown"):
                self.feed(ButtonPressed())
            elif view.state == "burn" or view.state.endswith("result_confirmed"):
                self.feed(BettingCommand("open"))

    def play(self, cards: list[Card], cut_card: int = 14) -> None:
        cut_index = len(cards) - cut_card
        for index, card in enumerate(cards):
            self.step_to_card()
            if self.table.state == "shoe_finished":
                return
            if index == cut_index:
                self.feed(ShoeEventInput("cut_card"))
                self.step_to_card()
            self.draw(card)
        self.step_to_card()
