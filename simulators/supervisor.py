"""The virtual pit supervisor of ``shoe demo``: enters a card the software shoe could not read.

A misread card latches the table until the camera reads it or a supervisor enters it by hand.
The demo has neither a camera nor a person at a terminal, so without this it stopped at the
first misread for good. The virtual supervisor plays the person: ``delay`` seconds after the
table asks, it enters the card through the same door a person uses
(:meth:`TableController.supervisor`, with its id and PIN), so the journal records a supervisor
action under the demo supervisor's id: honest about who entered the card. It knows the card
because the software shoe dealt it (the cards in dealing order, by the shoe's card counter).

It only ever enters a card that is due by counter (a misread, or a card that left the shoe
unreported); anything else latched waits for a person (the panel, with the demo's id and PIN).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

from shoe_controller.cards import Card
from shoe_controller.errors import ShoeError

log = logging.getLogger("shoe.demo.supervisor")

#: Latches this supervisor resolves: a card is due by its counter and the shoe knows it.
ENTERS = ("misread", "counter_gap")
#: The client the access guard counts this supervisor's tries under.
CLIENT = "demo"


class VirtualSupervisor:
    """A table listener (``controller.listeners.append``) that enters pending cards."""

    def __init__(self, controller: Any, supervisor: str, pin: str, cards: Sequence[Card],
                 *, delay: float = 2.0) -> None:
        self.controller = controller
        self.supervisor = supervisor
        self.pin = pin
        self.cards = list(cards)  # in dealing order: counter N is cards[N - 1]
        self.delay = delay
        self.entered: list[tuple[int, str]] = []
        self._timers: list[threading.Timer] = []
        self._lock = threading.Lock()
        self._closed = False

    def __call__(self, update: Any) -> None:
        for event in update.events:
            if (event["type"] == "irregularity" and event.get("kind") in ENTERS
                    and event.get("counter")):
                self._later(int(event["counter"]))

    def _later(self, counter: int) -> None:
        with self._lock:
            if self._closed:
                return
            timer = threading.Timer(self.delay, self._enter, args=(counter,))
            timer.daemon = True
            self._timers.append(timer)
            timer.start()

    def _enter(self, counter: int) -> None:
        if self._closed or not 1 <= counter <= len(self.cards):
            return
        code = self.cards[counter - 1].code
        try:
            self.controller.supervisor("enter_card", self.supervisor, self.pin, card=code,
                                       reason="demo supervisor: the card the software shoe "
                                       "dealt", client=CLIENT)
        except ShoeError as exc:  # refused: the latch stays for a person to resolve
            log.warning("demo supervisor could not enter card %d: %s", counter, exc)
            return
        self.entered.append((counter, code))

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for timer in self._timers:
                timer.cancel()
