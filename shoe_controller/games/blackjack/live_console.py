"""The console of a live blackjack table (``shoe demo --game blackjack``): one line per round,
as ``shoe replay`` prints it, the prompt as it changes, and a closing summary.

Fed the controller's :class:`~shoe_controller.table.controller.Update` s, like the baccarat
console; it shows what the table reported, so the hole card appears only once it is turned
over (a held event is skipped until its reveal).
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from decimal import Decimal
from typing import Any, TextIO

from shoe_controller.commands.replay import _blackjack_text as round_line
from shoe_controller.games.blackjack.settlement import settle_behind, settle_seat
from shoe_controller.table.controller import Update

#: What each seat bets in the demo's settlement, and its insurance (half the bet).
SEAT_BET = Decimal(10)


class BlackjackConsole:
    """``table`` and ``players`` (optional): settle each round in money as the demo's players
    bet it -- ``SEAT_BET`` per seat, insurance at half of it, and the players' bets behind."""

    def __init__(self, stream: TextIO | None = None, *, shoe_cards: int = 416,
                 table: Any = None, players: Any = None) -> None:
        self.stream = stream or sys.stdout
        self.shoe_cards = shoe_cards
        self.table = table
        self.players = players
        self.counts: Counter[str] = Counter()
        self.net = Decimal(0)
        self.money: dict[str, Decimal] = defaultdict(Decimal)  # net amounts, and a count
        self.shoe_finished = False

    def __call__(self, update: Update) -> None:
        for event in update.events:
            self._count(event)
            if event["type"] == "round_result":
                self._line(round_line({**event, "type": "round"}))
                self._settle(event["round"])
            elif event["type"] == "irregularity":
                self._line(f"!! {event['prompt']}: {event['detail']}\n   {event['remedy']}")
            elif event["type"] == "shoe_finished":
                self.shoe_finished = True
                self._line("== Shoe finished")

    def _count(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        counts = self.counts
        if kind in ("card", "burn_card"):
            counts["cards"] += 1
        if kind == "burn_card":
            counts["burned"] += 1
        elif kind == "decision":
            counts[f"decision {event['action']}"] += 1
            if event["origin"] == "timeout":
                counts["timeouts"] += 1
        elif kind == "insurance":
            counts["insured"] += len(event["seats"])
            counts["timeouts"] += event["origin"] == "timeout"
        elif kind == "round_void":
            counts["voided"] += 1
        elif kind == "irregularity":
            counts["irregularities"] += 1
        elif kind == "round_result":
            counts["rounds"] += 1
            counts["dealer blackjacks"] += event["dealer"]["blackjack"]
            for hands in event["seats"].values():
                for hand in hands:
                    counts["hands"] += 1
                    counts[hand["outcome"]] += 1
                    counts["blackjacks"] += hand["blackjack"]
                    self.net += Decimal(str(hand["payout"]))

    def _settle(self, round_number: int) -> None:
        if self.table is None or self.players is None:
            return
        result = self.table.game.result_value()
        if result is None:
            return
        rules = self.table.game.profile.rules
        money = self.money
        for seat in result.seats:
            insured = SEAT_BET / 2 if seat in result.insurance_taken else Decimal(0)
            settled = settle_seat(result, seat, SEAT_BET, rules, insured)
            money["seats"] += settled.net
            money["insurance"] += settled.insurance
        for behind in self.players.bets_behind(self.table.shoe_number, round_number,
                                               result.seats):
            settled = settle_behind(result, behind.seat, behind.stake, behind.follows, rules)
            money["behind"] += settled.net
            money["bets behind"] += 1  # (a count, kept with the amounts)

    def summary(self) -> str:
        c = self.counts
        rows = [
            ("Rounds played", f"{c['rounds']}"),
            ("Hands (win / lose / push)",
             f"{c['hands']} ({c['win']} / {c['lose']} / {c['push']})"),
            ("Blackjacks / dealer's", f"{c['blackjacks']} / {c['dealer blackjacks']}"),
            ("Hits / stands / doubles / splits",
             " / ".join(str(c[f"decision {a}"]) for a in ("hit", "stand", "double", "split"))),
            ("Insurance taken", f"{c['insured']}"),
            ("Decisions timed out", f"{c['timeouts']}"),
            ("Players' net (units)", f"{self.net:+}"),
            *([("Seats' net, bet 10 each", f"{self.money['seats']:+}"),
               ("  of which insurance", f"{self.money['insurance']:+}"),
               ("Bets behind: count, net",
                f"{self.money['bets behind']}, {self.money['behind']:+}")]
              if self.players is not None else []),
            ("Cards out of the shoe", f"{c['cards']} ({c['burned']} burned)"),
            ("Voided rounds", f"{c['voided']}"),
            ("Irregularities", f"{c['irregularities']}"),
        ]
        width = max(len(label) for label, _ in rows) + 2
        return "\n".join(f"{label:<{width}}{value}" for label, value in rows)

    def _line(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()
