"""The shoe-level procedure of a blackjack table: burn, rounds, cut card, last round, error burn.

Pure and fed one event at a time, like baccarat's ``ShoeDealer``, so the live table and the
shoe-file replay cannot disagree: :meth:`BlackjackShoe.start_round` opens a round for the seats
with a bet, :meth:`~BlackjackShoe.feed_card` takes each card out of the shoe (burn cards
first), :meth:`~BlackjackShoe.decide` and :meth:`~BlackjackShoe.insure` pass the players'
answers to the round, :meth:`~BlackjackShoe.cut_card_out` is the cut-card event (replay makes it
before the card at ``len(shoe) - cut_card``).

Seed 003: 6 cards burned after every shuffle (2.3.5 a); 3 after a game error, with the pit
boss's approval (2.3.5 b); the cut card one deck from the back (2.3.3 e); reshuffle at the end of
the hand in which the cut card is reached (2.3.2), so a round that ends just before the cut card
is followed by one more, the round that deals the first card behind it.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from shoe_controller.cards import Card
from shoe_controller.errors import ShoeError
from shoe_controller.games.blackjack.profile import BlackjackProfile
from shoe_controller.games.blackjack.round import BlackjackRound, CardDue, RoundResult
from shoe_controller.games.blackjack.rules import Action


class ProcedureError(ShoeError, ValueError):
    """An event the shoe procedure does not allow now (a card with no round open, ...)."""


class Phase(str, enum.Enum):
    BURNING = "burning"
    BETWEEN_ROUNDS = "between_rounds"
    IN_ROUND = "in_round"
    FINISHED = "finished"


@dataclass(frozen=True, slots=True)
class CardBurned:
    card: Card
    remaining: int


@dataclass(frozen=True, slots=True)
class CardDealt:
    round_number: int
    card: Card
    due: CardDue


@dataclass(frozen=True, slots=True)
class RoundComplete:
    round_number: int
    result: RoundResult


@dataclass(frozen=True, slots=True)
class ShoeFinished:
    rounds: int
    cards_used: int


ShoeEvent = CardBurned | CardDealt | RoundComplete | ShoeFinished


class BlackjackShoe:
    """One shoe from the burn to its last round. Mutating methods return the events caused."""

    def __init__(self, profile: BlackjackProfile) -> None:
        self.profile = profile
        self.burn_remaining = profile.shoe.burn_after_shuffle
        self.burn_cards: list[Card] = []
        self.rounds: list[RoundResult] = []
        self.current: BlackjackRound | None = None
        #: Cards drawn from the shoe: burned, dealt in rounds, and in voided rounds.
        self.cards_used = 0
        self.cut_card_seen = False
        #: After the cut card: rounds still to complete, counting one in progress.
        self.rounds_to_deal: int | None = None
        self.finished = False

    @property
    def phase(self) -> Phase:
        if self.finished:
            return Phase.FINISHED
        if self.burn_remaining:
            return Phase.BURNING
        return Phase.BETWEEN_ROUNDS if self.current is None else Phase.IN_ROUND

    @property
    def round_number(self) -> int:
        """The round in progress or the next one to deal (from 1)."""
        return len(self.rounds) + 1

    @property
    def is_last_round(self) -> bool:
        return not self.finished and self.rounds_to_deal == 1

    def prompt(self) -> str:
        phase = self.phase
        if phase is Phase.FINISHED:
            return "Shoe finished: reshuffle"
        if phase is Phase.BURNING:
            return f"Burn {self.burn_remaining} more card(s)"
        if self.current is None:
            text = "Waiting for bets"
        else:
            text = self.current.prompt()
        return f"{text} (last round)" if self.is_last_round else text

    def start_round(self, seats: Iterable[int]) -> BlackjackRound:
        """Open the next round for the seats with a bet (after "no more bets")."""
        phase = self.phase
        if phase is not Phase.BETWEEN_ROUNDS:
            raise ProcedureError(f"cannot start a round now ({self.prompt()})")
        self.current = BlackjackRound(self.profile.rules, seats)
        return self.current

    def feed_card(self, card: Card) -> list[ShoeEvent]:
        """One card out of the shoe, in order."""
        phase = self.phase
        if phase is Phase.FINISHED:
            raise ProcedureError(f"card {card.code} drawn after the shoe finished "
                                 f"({len(self.rounds)} rounds)")
        if phase is Phase.BURNING:
            self.cards_used += 1
            self.burn_cards.append(card)
            self.burn_remaining -= 1
            return [CardBurned(card, self.burn_remaining)]
        if self.current is None:
            raise ProcedureError(f"card {card.code} drawn with no round open (bets first)")
        due = self.current.deal(card)  # raises before anything changes if no card is due
        self.cards_used += 1
        return [CardDealt(self.round_number, card, due), *self._maybe_complete()]

    def decide(self, seat: int, action: Action | str) -> list[ShoeEvent]:
        self._require_round().decide(seat, action)
        return self._maybe_complete()

    def insure(self, seats: Iterable[int]) -> list[ShoeEvent]:
        self._require_round().insure(seats)
        return self._maybe_complete()

    def cut_card_out(self) -> None:
        """The cut card came out of the shoe (between two cards)."""
        if self.cut_card_seen:
            raise ProcedureError("the cut card has already come out of this shoe")
        if self.finished:
            raise ProcedureError("the cut card came out after the shoe finished")
        self.cut_card_seen = True
        if self.current is None:
            self.rounds_to_deal = 1  # before a round's first card: that round is the last
        else:
            self.rounds_to_deal = 2 if self.profile.shoe.last_round == "finish-and-one-more" else 1

    def error_burn(self, approved_by: str) -> int:
        """Burn the profile's ``after_error`` cards after a game error; the pit boss's approval
        (a name or badge, checked by the caller) is required. Only between rounds: void a
        round in progress first. Returns the number of cards to burn."""
        if not isinstance(approved_by, str) or not approved_by.strip():
            raise ProcedureError("burning cards after a game error needs a supervisor's approval")
        if self.phase is not Phase.BETWEEN_ROUNDS:
            raise ProcedureError(f"cards are burned after an error only between rounds "
                                 f"({self.prompt()})")
        self.burn_remaining = self.profile.shoe.burn_after_error
        return self.burn_remaining

    def void_round(self) -> tuple[Card, ...]:
        """Void the round in progress; its cards stay used; the round number is dealt again."""
        if self.current is None:
            raise ProcedureError("there is no round in progress to void")
        cards = tuple(self.current.cards)
        self.current = None
        return cards

    def _require_round(self) -> BlackjackRound:
        if self.current is None:
            raise ProcedureError("no round is in progress")
        return self.current

    def _maybe_complete(self) -> list[ShoeEvent]:
        assert self.current is not None
        if not self.current.complete:
            return []
        result = self.current.result()
        self.rounds.append(result)
        self.current = None
        events: list[ShoeEvent] = [RoundComplete(len(self.rounds), result)]
        if self.rounds_to_deal is not None:
            self.rounds_to_deal -= 1
            if self.rounds_to_deal == 0:
                self.finished = True
                events.append(ShoeFinished(len(self.rounds), self.cards_used))
        return events
