"""Running statistics of a shoe, fed from table events (for the demo summary and displays)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ShoeStats:
    rounds: int = 0
    banker: int = 0
    player: int = 0
    tie: int = 0
    naturals: int = 0
    player_pairs: int = 0
    banker_pairs: int = 0
    voided: int = 0
    irregularities: int = 0
    cards_burned: int = 0
    cards_dealt: int = 0  # every card out of the shoe, the burned ones included
    road: list[str] = field(default_factory=list)

    def add(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind in ("burn_card", "card"):
            self.cards_dealt += 1
            if kind == "burn_card":
                self.cards_burned += 1
        elif kind == "round_result":
            self.rounds += 1
            outcome = event["outcome"]
            setattr(self, outcome, getattr(self, outcome) + 1)
            self.naturals += bool(event["natural"])
            self.player_pairs += bool(event["player_pair"])
            self.banker_pairs += bool(event["banker_pair"])
            self.road.append(outcome[0].upper())
        elif kind == "round_void":
            self.voided += 1
        elif kind == "irregularity":
            self.irregularities += 1

    def lines(self) -> list[str]:
        """The closing summary: one label column, Banker before Player throughout, and the
        cards out of the shoe split into burned and dealt to the hands (``cards_dealt``
        counts both: it is what the shoe gave out)."""
        rows = [
            ("Rounds played", f"{self.rounds}"),
            ("Banker / Player / Tie", f"{self.banker} / {self.player} / {self.tie}"),
            ("Naturals", f"{self.naturals}"),
            ("Banker / Player pairs", f"{self.banker_pairs} / {self.player_pairs}"),
            ("Cards out of the shoe", f"{self.cards_dealt}"),
            ("  burned", f"{self.cards_burned}"),
            ("  dealt to the hands", f"{self.cards_dealt - self.cards_burned}"),
            ("Voided rounds", f"{self.voided}"),
            ("Irregularities", f"{self.irregularities}"),
        ]
        width = max(len(label) for label, _ in rows) + 2
        return [f"{label:<{width}}{value}" for label, value in rows]

    def to_dict(self) -> dict[str, Any]:
        return {key: value for key, value in self.__dict__.items() if key != "road"}
