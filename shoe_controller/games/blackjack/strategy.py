"""Basic strategy for the built-in remote players (demo, and tables without a table system).

The chart is the published multi-deck basic strategy for 3:2 blackjack, double any two cards,
double after split, no surrender, dealer peeks on an ace (Wizard of Odds' 4-8 deck charts), for
a dealer who stands on soft 17 and, with the few cells that differ, one who hits it. It is data
(:data:`CHARTS`), printed in docs/blackjack.md by :func:`chart_markdown`.

Codes: ``H`` hit, ``S`` stand, ``D`` double (hit if doubling is not allowed), ``Ds`` double
(stand if not allowed), ``P`` split, ``Ph`` split if doubling after a split is allowed, else hit.
Insurance is never part of basic strategy; :class:`RemotePlayers` takes some anyway, and places
some bets behind, as real players do.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from shoe_controller.cards import Card
from shoe_controller.games.blackjack.rules import ACE, Action, TableRules, card_value, hand_value

UP_CARDS = ("2", "3", "4", "5", "6", "7", "8", "9", "T", "A")

_S17 = """
hard
 8   H  H  H  H  H  H  H  H  H  H
 9   H  D  D  D  D  H  H  H  H  H
10   D  D  D  D  D  D  D  D  H  H
11   D  D  D  D  D  D  D  D  D  H
12   H  H  S  S  S  H  H  H  H  H
13   S  S  S  S  S  H  H  H  H  H
14   S  S  S  S  S  H  H  H  H  H
15   S  S  S  S  S  H  H  H  H  H
16   S  S  S  S  S  H  H  H  H  H
17   S  S  S  S  S  S  S  S  S  S
soft
12   H  H  H  H  H  H  H  H  H  H
13   H  H  H  D  D  H  H  H  H  H
14   H  H  H  D  D  H  H  H  H  H
15   H  H  D  D  D  H  H  H  H  H
16   H  H  D  D  D  H  H  H  H  H
17   H  D  D  D  D  H  H  H  H  H
18   S  Ds Ds Ds Ds S  S  H  H  H
19   S  S  S  S  S  S  S  S  S  S
20   S  S  S  S  S  S  S  S  S  S
pair
 2   Ph Ph P  P  P  P  H  H  H  H
 3   Ph Ph P  P  P  P  H  H  H  H
 4   H  H  H  Ph Ph H  H  H  H  H
 5   D  D  D  D  D  D  D  D  H  H
 6   Ph P  P  P  P  H  H  H  H  H
 7   P  P  P  P  P  P  H  H  H  H
 8   P  P  P  P  P  P  P  P  P  P
 9   P  P  P  P  P  S  P  P  S  S
10   S  S  S  S  S  S  S  S  S  S
 A   P  P  P  P  P  P  P  P  P  P
"""

#: Cells where a dealer who hits soft 17 changes the play: (section, row, up) -> code.
_H17_CHANGES = {
    ("hard", "11", "A"): "D",
    ("soft", "18", "2"): "Ds",
    ("soft", "19", "6"): "Ds",
}

Chart = dict[tuple[str, str, str], str]


def _parse(text: str) -> Chart:
    chart: Chart = {}
    section = ""
    for line in text.strip().splitlines():
        words = line.split()
        if len(words) == 1:
            section = words[0]
            continue
        row, *codes = words
        if len(codes) != len(UP_CARDS):
            raise ValueError(f"chart row {section} {row} has {len(codes)} cells")
        for up, code in zip(UP_CARDS, codes, strict=True):
            chart[section, row, up] = code
    return chart


CHARTS: dict[str, Chart] = {"S17": _parse(_S17)}
CHARTS["H17"] = {**CHARTS["S17"], **_H17_CHANGES}


def chart_for(rules: TableRules) -> Chart:
    return CHARTS["H17" if rules.hits_soft_17 else "S17"]


def _up_label(up: Card) -> str:
    value = card_value(up)
    return "A" if value == ACE else "T" if value == 10 else str(value)


def chart_code(chart: Chart, cards: Sequence[Card], up: Card, can_split: bool) -> str:
    """The chart's code for a hand against an up card."""
    values = [card_value(card) for card in cards]
    upl = _up_label(up)
    if can_split and len(values) == 2 and values[0] == values[1]:
        row = "A" if values[0] == ACE else str(values[0])
        return chart["pair", row, upl]
    value = hand_value(values)
    if value.soft and value.total <= 20:
        return chart["soft", str(value.total), upl]  # soft 12 (A+A unsplit) is the lowest
    return chart["hard", str(min(max(value.total, 8), 17)), upl]


def basic_strategy(cards: Sequence[Card], up: Card, options: Sequence[Action],
                   rules: TableRules) -> Action:
    """The chart's decision for a hand whose legal ``options`` are given (hit and stand are
    always among them)."""
    code = chart_code(chart_for(rules), cards, up, Action.SPLIT in options)
    if code == "P" or (code == "Ph" and rules.double_after_split):
        return Action.SPLIT
    if code in ("D", "Ds"):
        if Action.DOUBLE in options:
            return Action.DOUBLE
        return Action.STAND if code == "Ds" else Action.HIT
    return Action.STAND if code == "S" else Action.HIT


@dataclass(frozen=True, slots=True)
class BetBehind:
    seat: int
    stake: Decimal
    follows: bool


class RemotePlayers:
    """Built-in players: basic strategy for the seats, plus some insurance and bets behind,
    drawn from a seeded generator so a demo is reproducible."""

    def __init__(self, rules: TableRules, rng: random.Random,
                 insurance_rate: float = 0.2, behind_rate: float = 0.3) -> None:
        self.rules = rules
        self.rng = rng
        self.insurance_rate = insurance_rate
        self.behind_rate = behind_rate

    def decide(self, cards: Sequence[Card], up: Card, options: Sequence[Action]) -> Action:
        return basic_strategy(cards, up, options, self.rules)

    def insurance(self, seats: Sequence[int]) -> list[int]:
        """The seats that take insurance (against basic strategy, as some players do)."""
        return [seat for seat in seats if self.rng.random() < self.insurance_rate]

    def bets_behind(self, seats: Sequence[int], stakes: Sequence[Decimal]) -> list[BetBehind]:
        """Some bets behind the occupied seats, each following the seat's doubles and splits
        or not."""
        return [
            BetBehind(seat, self.rng.choice(list(stakes)), self.rng.random() < 0.5)
            for seat in seats
            if self.rng.random() < self.behind_rate
        ]


def chart_markdown(name: str) -> str:
    """One chart as Markdown tables (docs/blackjack.md shows both)."""
    chart = CHARTS[name]
    lines = []
    for section, title in (("hard", "Hard total"), ("soft", "Soft total"), ("pair", "Pair")):
        lines.append(f"| {title} | " + " | ".join(UP_CARDS) + " |")
        lines.append("|---" * (len(UP_CARDS) + 1) + "|")
        rows = dict.fromkeys(row for (sec, row, _up) in chart if sec == section)
        for row in rows:
            label = {"8": "8 or less", "17": "17 or more"}.get(row, row) if section == "hard" \
                else row
            cells = " | ".join(chart[section, row, up] for up in UP_CARDS)
            lines.append(f"| {label} | {cells} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    for chart_name in CHARTS:
        print(f"### {chart_name}\n\n{chart_markdown(chart_name)}")
