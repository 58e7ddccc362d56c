"""The interface between the game-independent table and a game (baccarat, blackjack, ...).

The table owns the shoe's life (loaded, burn, in play, cut card out, finished), the betting
window, the exit lock, the error latch, card accounting and the journal. A game owns what is
particular to it: how many cards are burned, which card is due next and for whom, the round's
sub-states while dealing, the result, and what the cut card means for the last round. A game is
pure and deterministic: it sees cards in order and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from shoe_controller.cards import Card


@dataclass(frozen=True, slots=True)
class Due:
    """The next card the dealer must draw: for whom (``target``, e.g. "player", "burn") and the
    dealer's prompt ("Deal Player", "Player draws"). ``lights`` names the shoe indicators to
    light (e.g. ("player",))."""

    target: str
    prompt: str
    lights: tuple[str, ...] = ()


class Game(Protocol):
    """What a game provides to :class:`shoe_controller.table.machine.Table`."""

    name: str
    #: Sub-states of the round's ``dealing`` state, first one entered when betting closes.
    dealing_states: tuple[str, ...]
    #: Copies of each card in a full shoe (decks), for the too-many-copies check.
    copies_per_card: int

    def new_shoe(self) -> None:
        """Forget the previous shoe (a freshly shuffled shoe was loaded)."""

    def burn_due(self) -> Due | None:
        """The burn card due next, or None when the burn is complete."""

    def burn(self, card: Card) -> None:
        """Account one burn card."""

    def start_round(self, number: int) -> None:
        """A new round begins (betting opens)."""

    def card_due(self) -> Due | None:
        """The card due next in the current round, or None when the round's cards are complete."""

    def deal(self, card: Card) -> str | None:
        """Add the due card; return the dealing sub-state now in force, or None when the
        round's cards are complete."""

    def decision(self) -> str:
        """What the last card decided, for the dealer ("Player draws", "Banker stands")."""

    def result_text(self) -> str:
        """The result banner once the round's cards are complete ("Banker wins 7 to 5")."""

    def result(self) -> dict[str, Any]:
        """The completed round as a JSON-ready dict (the replay/export schema's round line)."""

    def cards_in_round(self) -> list[dict[str, Any]]:
        """The current round's cards as ``{"card", "target", "position"}`` dicts."""

    def void_round(self) -> None:
        """Abandon the current round; its cards stay dealt."""

    def cut_card_out(self, round_in_progress: bool) -> None:
        """The cut card came out; ``round_in_progress`` tells whether a round had begun."""

    def is_last_round(self) -> bool:
        """Whether the round in progress (or the next one to deal) is the shoe's last."""

    def is_shoe_complete(self) -> bool:
        """Whether the shoe's last round has been dealt: no further round may start."""
