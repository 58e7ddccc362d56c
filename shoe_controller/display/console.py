"""The controller's own console output: the dealer prompt as it changes, results, errors.

Listens to :class:`~shoe_controller.table.controller.Update` s. With ``progress`` it keeps one
status line (a progress bar through the shoe) instead of scrolling every prompt, which is what
``shoe demo`` shows; otherwise it prints one line per prompt change, which suits a log.
"""

from __future__ import annotations

import copy
import sys
from typing import TextIO

from shoe_controller.display.summary import ShoeStats
from shoe_controller.table.controller import Update

RED, GREEN, BOLD, RESET = "\033[31m", "\033[32m", "\033[1m", "\033[0m"


class Console:
    def __init__(self, stream: TextIO | None = None, *, progress: bool = False,
                 shoe_cards: int = 416, color: bool | None = None) -> None:
        self.stream = stream or sys.stdout
        self.progress = progress
        self.shoe_cards = shoe_cards
        self.color = self.stream.isatty() if color is None else color
        self.stats = ShoeStats()
        #: The last finished shoe's figures (the next shoe may already be loaded).
        self.finished: ShoeStats | None = None
        self._last_prompt = ""

    def __call__(self, update: Update) -> None:
        for event in update.events:
            if event["type"] == "shoe_loaded":
                self.stats = ShoeStats()
            self.stats.add(event)
            if event["type"] == "round_result":
                self._line(self._result_line(event))
            elif event["type"] == "irregularity":
                self._line(self._paint(f"!! {event['prompt']}: {event['detail']}", RED)
                           + f"\n   {event['remedy']}")
            elif event["type"] == "irregularity_cleared":
                who = event.get("supervisor") or event.get("source") or "resolved"
                entered = f": card {event['card']} entered" if event.get("card") else ""
                self._line(f"   cleared {event['kind']}{entered} ({who})")
            elif event["type"] == "cut_card":
                self._line("-- Cut card out: one more round" if event["during_round"]
                           else "-- Cut card out: this round is the last")
            elif event["type"] == "shoe_finished":
                self.finished = copy.deepcopy(self.stats)
                self._line(self._paint("== Shoe finished", BOLD))
        view = update.view
        prompt = view.prompt + (f"  ({view.detail})" if view.detail else "")
        if self.progress:
            self._status(view.prompt, view.round)
        elif prompt != self._last_prompt:
            self._last_prompt = prompt
            self._line(f"> {prompt}")

    def _result_line(self, event: dict) -> str:
        player = " ".join(event["player"])
        banker = " ".join(event["banker"])
        flags = [name for name in ("natural", "player_pair", "banker_pair") if event[name]]
        text = (f"Round {event['round']:>3}: Player {player:<9} {event['player_total']}  "
                f"Banker {banker:<9} {event['banker_total']}  -> {event['outcome'].upper()}")
        return text + (f"  [{', '.join(flags)}]" if flags else "")

    def _paint(self, text: str, code: str) -> str:
        return f"{code}{text}{RESET}" if self.color else text

    def _status(self, prompt: str, round_number: int) -> None:
        done = self.stats.cards_dealt  # every card out, the burn included
        width = 30
        filled = min(width, width * done // max(1, self.shoe_cards))
        bar = "#" * filled + "." * (width - filled)
        # The table's own round number: the round being dealt (not the rounds finished).
        where = f"round {round_number:>3}" if round_number else "burn     "
        text = f"[{bar}] {done:>3}/{self.shoe_cards} cards  {where}  {prompt}"
        if self.stream.isatty():
            self.stream.write("\r\033[K" + text)
            self.stream.flush()

    def _line(self, text: str) -> None:
        if self.progress and self.stream.isatty():
            self.stream.write("\r\033[K")
        self.stream.write(text + "\n")
        self.stream.flush()

    def summary(self) -> str:
        stats = self.finished or self.stats
        return "\n".join(["", self._paint("Shoe summary", BOLD), *stats.lines()])
