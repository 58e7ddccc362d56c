"""The interface between the game-independent table and a game (baccarat, blackjack, ...).

The table owns the shoe's life (loaded, burn, in play, cut card out, finished), the betting
window, the exit lock, the error latch, card accounting and the journal. A game owns what is
particular to it: how many cards are burned, which card is due next and for whom, the round's
sub-states while dealing, the result, and what the cut card means for the last round. A game is
pure and deterministic: it sees cards in order and nothing else.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Protocol, TypeGuard, runtime_checkable

from shoe_controller.cards import Card


@dataclass(frozen=True, slots=True)
class Due:
    """The next card the dealer must draw: for whom (``target``, e.g. "player", "burn") and the
    dealer's prompt ("Deal Player", "Player draws"). ``lights`` names the shoe indicators to
    light (e.g. ("player",))."""

    target: str
    prompt: str
    lights: tuple[str, ...] = ()
    #: Extra fields of the ``card`` event this card causes, as (name, value) pairs: a
    #: blackjack card's seat and hand, and ``("hold", key)`` for a card that must reach no
    #: output before an event carrying ``reveal: key`` (the dealer's hole card).
    details: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True, slots=True)
class Awaiting:
    """A round waits for the players, not for a card (blackjack): the exit stays locked.

    ``kind`` is ``"decision"`` (seat ``seat``'s hand ``hand`` chooses one of ``options``) or
    ``"insurance"`` (the seats in ``seats`` say whether they insure). ``key`` names this one
    wait, so that a timeout or an answer meant for an earlier one is recognised as late."""

    kind: str
    prompt: str
    key: str
    seat: int | None = None
    hand: int = 1
    options: tuple[str, ...] = ()
    seats: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "prompt": self.prompt, "key": self.key, "seat": self.seat,
                "hand": self.hand, "options": list(self.options), "seats": list(self.seats)}


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
        """The current round's cards as ``{"card", "target", "position"}`` dicts, as any
        output may show them: a card still face down (a hole card) has ``card`` None."""

    def void_round(self) -> None:
        """Abandon the current round; its cards stay dealt."""

    def cut_card_out(self, round_in_progress: bool) -> None:
        """The cut card came out; ``round_in_progress`` tells whether a round had begun."""

    def is_last_round(self) -> bool:
        """Whether the round in progress (or the next one to deal) is the shoe's last."""

    def is_shoe_complete(self) -> bool:
        """Whether the shoe's last round has been dealt: no further round may start."""


@runtime_checkable
class InteractiveGame(Protocol):
    """A game whose rounds also wait for players' answers (blackjack). The table journals
    each answer as an input and asks the game what is awaited; a game without answers
    (baccarat) does not implement this."""

    def close_betting(self, seats: list[int] | None) -> None:
        """No more bets: ``seats`` are the seats with a bet. Raises ``ValueError`` (with the
        reason) for a refused list; nothing changes then."""

    def awaiting(self) -> Awaiting | None:
        """The answer the round waits for, or None (a card is due, or the round is over)."""

    def decide(self, seat: int, hand: int, action: str) -> str | None:
        """A seat's decision for the awaited hand; returns the dealing sub-state now in force
        (None: the round's cards are complete). Raises ``ValueError`` with the reason for a
        decision that is not legal now (nothing changes)."""

    def insure(self, seats: list[int]) -> str | None:
        """The answer to the insurance offer; as :meth:`decide`."""

    def take_events(self) -> list[dict[str, Any]]:
        """Game events caused since the last call (a dealer check, a revealed hole card)."""


def is_interactive(game: object) -> TypeGuard[InteractiveGame]:
    """Whether ``game`` waits for players' answers. The same as ``isinstance(game,
    InteractiveGame)``, once per class: the table asks several times a step (20 steps a
    second while idle), and a runtime protocol check walks the protocol's members each time
    (about 35 microseconds, a quarter of an idle table's CPU)."""
    return _interactive_class(type(game))


@functools.cache
def _interactive_class(cls: type) -> bool:
    # A protocol of methods only: issubclass looks at the class, as isinstance would.
    return issubclass(cls, InteractiveGame)
