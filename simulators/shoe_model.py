"""The physical shoe as pure, deterministic state: cards, card stop, lid, cut card, misreads.

This is the part of the software shoe that knows nothing of wires, links or clocks. Every
physical action (the dealer pulls a card, opens the lid, the host locks the exit) is a method
call that returns what the shoe's sensors noticed, as small ``ShoeOutput`` values;
:class:`simulators.shoe.SimulatedShoe` turns those into protocol messages.

Rules it follows (the ones a real card-scanning shoe enforces):

- The exit starts **locked** on power-up: a shoe that lost power or its host must not let cards
  out unseen.
- ``counter`` is the running card counter since the shoe was loaded; the first card drawn is 1.
  It is the end-to-end identity of a physical card (the host de-duplicates on it).
- A pull while the exit is locked is refused (:attr:`Notice.PULL_REFUSED`), unless the dealer
  forces the card past the stop: then the card comes out and is reported ``while_locked``.
- The cut card lies ``cut_card`` cards from the end; :attr:`Notice.CUT_CARD_REACHED` is reported
  once, right before the first card after the cut card (index ``len(cards) - cut_card``).
- After the last card :attr:`Notice.SHOE_EMPTY` is reported once.
- With probability ``misread_rate`` (seeded) a card is drawn but its face was not read: it is
  reported as a misread, while the model keeps the true card (``drawn``) for tests and for a
  camera fallback to check against.
- A jammed shoe lets nothing out until the jam is cleared.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Sequence
from dataclasses import dataclass

from shoe_controller.cards import Card


class Notice(enum.Enum):
    """Sensor notices; the names match ``firmware_protocol.messages.ShoeEvent``."""

    LID_OPENED = "LID_OPENED"
    LID_CLOSED = "LID_CLOSED"
    SHOE_LOADED = "SHOE_LOADED"
    SHOE_EMPTY = "SHOE_EMPTY"
    CUT_CARD_REACHED = "CUT_CARD_REACHED"
    PULL_REFUSED = "PULL_REFUSED"


@dataclass(frozen=True, slots=True)
class CardOut:
    """A card left the shoe. ``misread``: the scanner could not read its face."""

    counter: int
    card: Card
    misread: bool
    while_locked: bool


@dataclass(frozen=True, slots=True)
class StateNotice:
    """A change the shoe's sensors noticed; ``counter`` = cards drawn so far."""

    notice: Notice
    counter: int


@dataclass(frozen=True, slots=True)
class JamNotice:
    """The card path jammed (``cleared=False``) or was cleared again (``cleared=True``)."""

    cleared: bool
    counter: int


ShoeOutput = CardOut | StateNotice | JamNotice


class ShoeModel:
    """State of one physical shoe. Not thread-safe; owned by one :class:`SimulatedShoe`."""

    def __init__(
        self,
        cards: Sequence[Card],
        *,
        cut_card: int | None = None,
        misread_rate: float = 0.0,
        seed: int | None = None,
    ) -> None:
        if not 0.0 <= misread_rate <= 1.0:
            raise ValueError(f"misread rate must be between 0 and 1, got {misread_rate}")
        self._misread_rate = misread_rate
        self._misread_rng = random.Random(seed)
        self.exit_locked = True
        self._relock_after = 0
        self.lid_open = False
        self.jammed = False
        self.indicators = 0
        self.cards: list[Card] = []
        self.drawn: list[CardOut] = []
        self.cut_card: int | None = None
        self._cut_card_reported = False
        self.loads = 0
        """Loads in this shoe's life, the first included (a LOAD_NUMBER shoe reports it)."""
        self.load(cards, cut_card=cut_card)

    # -- loading --------------------------------------------------------------------------

    def load(self, cards: Sequence[Card], *, cut_card: int | None = None) -> list[ShoeOutput]:
        """Load a fresh shoe: counter back to 0, exit locked. Returns the SHOE_LOADED notice,
        whose ``counter`` is the load number (1 for the first load)."""
        if cut_card is not None and not 0 <= cut_card <= len(cards):
            raise ValueError(
                f"cut card position {cut_card} must be between 0 and the {len(cards)} cards loaded"
            )
        self.cards = list(cards)
        self.cut_card = cut_card
        self.drawn = []
        self._cut_card_reported = False
        self.exit_locked = True
        self._relock_after = 0
        self.loads += 1
        return [StateNotice(Notice.SHOE_LOADED, self.loads)]

    # -- what the host commands -----------------------------------------------------------

    def set_exit_locked(self, locked: bool, cards: int = 0, for_card: int = 0) -> bool:
        """``cards`` > 0 with an unlock: the stop re-engages by itself after that many cards.
        ``for_card`` > 0: unlock only if the next card will have that counter; an unlock sent
        before the host saw the latest card is stale and ignored (returns False)."""
        if not locked and for_card and for_card != self.counter + 1:
            return False
        self.exit_locked = locked
        self._relock_after = 0 if locked else cards
        return True

    def set_indicators(self, lights: int) -> None:
        self.indicators = lights

    # -- what the dealer does -------------------------------------------------------------

    def pull(self, *, forced: bool = False) -> list[ShoeOutput]:
        """The dealer pulls the card at the exit; ``forced`` = pushed past a locked stop."""
        if self.jammed or self.is_empty:
            return []
        if self.exit_locked and not forced:
            return [StateNotice(Notice.PULL_REFUSED, self.counter)]
        outputs: list[ShoeOutput] = []
        index = self.counter
        if index == self.cut_card_index and not self._cut_card_reported:
            self._cut_card_reported = True
            outputs.append(StateNotice(Notice.CUT_CARD_REACHED, self.counter))
        misread = self._misread_rate > 0 and self._misread_rng.random() < self._misread_rate
        card_out = CardOut(index + 1, self.cards[index], misread, self.exit_locked)
        self.drawn.append(card_out)
        outputs.append(card_out)
        if not card_out.while_locked and self._relock_after:
            self._relock_after -= 1
            if not self._relock_after:
                self.exit_locked = True
        if self.is_empty:
            outputs.append(StateNotice(Notice.SHOE_EMPTY, self.counter))
        return outputs

    def open_lid(self) -> list[ShoeOutput]:
        if self.lid_open:
            return []
        self.lid_open = True
        return [StateNotice(Notice.LID_OPENED, self.counter)]

    def close_lid(self) -> list[ShoeOutput]:
        if not self.lid_open:
            return []
        self.lid_open = False
        return [StateNotice(Notice.LID_CLOSED, self.counter)]

    def jam(self) -> list[ShoeOutput]:
        if self.jammed:
            return []
        self.jammed = True
        return [JamNotice(False, self.counter)]

    def clear_jam(self) -> list[ShoeOutput]:
        if not self.jammed:
            return []
        self.jammed = False
        return [JamNotice(True, self.counter)]

    # -- views ----------------------------------------------------------------------------

    @property
    def counter(self) -> int:
        """Cards drawn since the shoe was loaded (the last card's counter)."""
        return len(self.drawn)

    @property
    def remaining(self) -> int:
        return len(self.cards) - self.counter

    @property
    def is_empty(self) -> bool:
        return self.counter >= len(self.cards)

    @property
    def cut_card_index(self) -> int | None:
        """Index of the first card after the cut card, or None without a cut card."""
        if self.cut_card is None or self.cut_card == 0:
            return None
        return len(self.cards) - self.cut_card

    @property
    def cut_card_reached(self) -> bool:
        return self._cut_card_reported
