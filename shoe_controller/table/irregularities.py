"""Irregularities: what can go wrong at the table, what the dealer is told, who may clear it.

Every irregularity latches: the card exit stays locked and the dealer's prompt stays red until a
supervisor clears it (some clear themselves when their cause is resolved: a misread card read by
the camera or entered by hand). Each one is journalled through the input that caused it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Irregularity(str, enum.Enum):
    CARD_DURING_BETTING = "card_during_betting"
    EXTRA_CARD = "extra_card"
    CARD_WHILE_LOCKED = "card_while_locked"
    TOO_MANY_COPIES = "too_many_copies"
    MISREAD = "misread"
    LID_OPENED = "lid_opened"
    LINK_LOST = "link_lost"
    DEVICE_FAULT = "device_fault"
    SHOE_EMPTY = "shoe_empty"
    CAMERA_DISAGREES = "camera_disagrees"
    UNREADABLE_MESSAGE = "unreadable_message"
    COUNTER_GAP = "counter_gap"
    COUNTER_MISMATCH = "counter_mismatch"
    SHOE_RELOADED = "shoe_reloaded"
    SHOE_SWAPPED = "shoe_swapped"
    SHOE_NOT_RESPONDING = "shoe_not_responding"

    @property
    def prompt(self) -> str:
        return _PROMPTS[self][0]

    @property
    def remedy(self) -> str:
        return _PROMPTS[self][1]


_PROMPTS: dict[Irregularity, tuple[str, str]] = {
    Irregularity.CARD_DURING_BETTING: (
        "Card drawn while betting is open",
        "Set the card aside face down; call a supervisor to clear or void the round.",
    ),
    Irregularity.EXTRA_CARD: (
        "Extra card: no card was due",
        "Set the card aside; call a supervisor to clear or void the round.",
    ),
    Irregularity.CARD_WHILE_LOCKED: (
        "Card forced past the locked exit",
        "Set the card aside; call a supervisor and check the shoe's card stop.",
    ),
    Irregularity.TOO_MANY_COPIES: (
        "More copies of this card than the shoe holds",
        "Hold the card; a supervisor must check it and enter the right card or clear.",
    ),
    Irregularity.MISREAD: (
        "Card not read by the shoe",
        "Leave the card face up and call a supervisor to enter it.",
    ),
    Irregularity.LID_OPENED: (
        "Shoe lid opened during the round",
        "Close the lid; a supervisor must clear before dealing continues.",
    ),
    Irregularity.LINK_LOST: (
        "Shoe link lost during the round",
        "Check the shoe's cable; a supervisor clears once the shoe is back.",
    ),
    Irregularity.DEVICE_FAULT: (
        "Shoe reports a fault",
        "Clear the jam or fault in the shoe; a supervisor clears when it is fixed.",
    ),
    Irregularity.CAMERA_DISAGREES: (
        "Camera and scanner disagree on a card",
        "A supervisor checks the card: clear if the scanner was right, void the round if not.",
    ),
    Irregularity.SHOE_EMPTY: (
        "Shoe ran out of cards during the round",
        "A supervisor voids the round or ends the shoe.",
    ),
    Irregularity.UNREADABLE_MESSAGE: (
        "The shoe sent a message the controller could not read",
        ("The controller asks the shoe for its card count; a supervisor checks the cards on "
         "the table, then clears."),
    ),
    Irregularity.COUNTER_GAP: (
        "A card left the shoe without being reported",
        ("Leave the card where it lies: a supervisor enters it (or voids the round); any "
         "other unreported card is set aside."),
    ),
    Irregularity.COUNTER_MISMATCH: (
        "The shoe's card count disagrees with the table's",
        ("The shoe may have been reset or reloaded: a supervisor checks it, then clears or "
         "ends the shoe."),
    ),
    Irregularity.SHOE_RELOADED: (
        "A new shoe was loaded while a shoe was in play",
        "A supervisor ends the shoe in play; the new shoe is then dealt from the start.",
    ),
    Irregularity.SHOE_SWAPPED: (
        "A different shoe device is connected",
        "Reconnect the shoe this shoe was loaded in, or a supervisor ends the shoe.",
    ),
    Irregularity.SHOE_NOT_RESPONDING: (
        "The shoe does not respond to the controller's commands",
        ("Check the shoe and its cable; restart the shoe if it stays so. A supervisor "
         "clears once it responds."),
    ),
}


@dataclass(frozen=True, slots=True)
class Latched:
    """One latched irregularity: what, which card (if any), and the round it happened in."""

    kind: Irregularity
    detail: str = ""
    card: str | None = None
    counter: int | None = None
    round: int | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind.value,
            "prompt": self.kind.prompt,
            "remedy": self.kind.remedy,
            "detail": self.detail,
            "card": self.card,
            "counter": self.counter,
            "round": self.round,
        }
