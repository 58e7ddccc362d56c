"""The shoe-level dealing procedure, fed one event at a time: burn, rounds, cut card, last round.

One :class:`ShoeDealer` drives both the shoe-file replay and the live table, so a replayed shoe
and a dealt shoe cannot disagree. It is pure (no clock, no I/O): the live table feeds each card
the shoe reports with :meth:`ShoeDealer.feed_card` and the cut-card sensor event with
:meth:`ShoeDealer.cut_card_out`; replay generates the cut-card event itself before dealing the card
at position ``len(shoe) - cut_card``.

Default live procedure (../shared/RULES.md): the first card is turned and as many further cards
as its points are burned (10/J/Q/K count 10); when the cut card comes out during a round, that
round is finished and one more is dealt; when it comes out before a round's first card, that
round is the last.

State is a handful of immutable values (tuples, a frozen :class:`Coup`), so :meth:`copy` is cheap
and the table can keep snapshots or rebuild by replaying its journal.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from shoe_controller.cards import Card
from shoe_controller.errors import ShoeError
from shoe_controller.games.baccarat.coup import Coup, CoupResult, Hand
from shoe_controller.games.baccarat.shoe_rules import ShoeRules


class ProcedureError(ShoeError, ValueError):
    """An event that the shoe procedure does not allow now (card after the shoe ended, ...)."""


class Phase(str, enum.Enum):
    BURN_FIRST = "burn_first"  # waiting for the card to turn (turn-and-burn)
    BURNING = "burning"  # burn cards still due
    IN_PLAY = "in_play"
    LAST_ROUND = "last_round"  # the round being dealt (or the next one) is the shoe's last
    FINISHED = "finished"


@dataclass(frozen=True, slots=True)
class ShoeDealerEvent:
    """Base of everything :class:`ShoeDealer` reports."""


@dataclass(frozen=True, slots=True)
class BurnCardTurned(ShoeDealerEvent):
    card: Card
    to_burn: int  # further cards to burn face down


@dataclass(frozen=True, slots=True)
class CardBurned(ShoeDealerEvent):
    card: Card
    remaining: int


@dataclass(frozen=True, slots=True)
class BurnComplete(ShoeDealerEvent):
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class CardDealt(ShoeDealerEvent):
    round_number: int
    hand: Hand
    card: Card
    coup: Coup
    #: What the dealer does next or the result, from :meth:`Coup.decision_text`.
    decision: str


@dataclass(frozen=True, slots=True)
class RoundComplete(ShoeDealerEvent):
    round_number: int
    result: CoupResult


@dataclass(frozen=True, slots=True)
class CutCardOut(ShoeDealerEvent):
    #: Number of the shoe's last round (already started or still to deal).
    last_round_number: int


@dataclass(frozen=True, slots=True)
class RoundVoided(ShoeDealerEvent):
    round_number: int
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class ShoeFinished(ShoeDealerEvent):
    rounds: int
    cards_used: int


def _dealing_order(result: CoupResult) -> tuple[Card, ...]:
    """A completed round's cards as they left the shoe: P, B, P, B, then third cards."""
    player, banker = result.player, result.banker
    return (player[0], banker[0], player[1], banker[1], *player[2:], *banker[2:])


def turned_card_burns(card: Card) -> int:
    """How many cards the turned card calls for: its points, with 10/J/Q/K counting 10."""
    return card.rank if card.rank <= 9 else 10


class ShoeDealer:
    """Incremental shoe procedure. Mutating methods return the events they caused, in order."""

    __slots__ = (
        "burn_cards",
        "burn_remaining",
        "cards_used",
        "current",
        "cut_card_seen",
        "finished",
        "rounds",
        "rounds_to_deal",
        "rules",
        "voided",
    )

    def __init__(self, rules: ShoeRules | object) -> None:
        # Accept ShoeRules or anything carrying them (a Profile has .shoe_rules).
        shoe_rules = rules if isinstance(rules, ShoeRules) else getattr(rules, "shoe_rules", None)
        if not isinstance(shoe_rules, ShoeRules):
            raise TypeError(f"ShoeDealer needs ShoeRules or a Profile, got {rules!r}")
        self.rules: ShoeRules = shoe_rules
        self.burn_cards: tuple[Card, ...] = ()
        #: Burn cards still due; ``None`` until the first card is turned (turn-and-burn).
        self.burn_remaining: int | None = (
            None if shoe_rules.burn_procedure == "turn-and-burn" else shoe_rules.burn_count
        )
        self.rounds: tuple[CoupResult, ...] = ()
        self.current = Coup()
        #: Every card drawn from the shoe: burn cards, rounds and voided rounds.
        self.cards_used = 0
        self.cut_card_seen = False
        #: After the cut card: rounds still to complete, counting the one in progress.
        self.rounds_to_deal: int | None = None
        self.voided: tuple[tuple[Card, ...], ...] = ()
        self.finished = False

    def copy(self) -> ShoeDealer:
        """An independent copy (all state is immutable values, so this is shallow and cheap)."""
        clone = ShoeDealer.__new__(ShoeDealer)
        for name in ShoeDealer.__slots__:
            setattr(clone, name, getattr(self, name))
        return clone

    __copy__ = copy

    @property
    def phase(self) -> Phase:
        if self.finished:
            return Phase.FINISHED
        if self.burn_remaining is None:
            return Phase.BURN_FIRST
        if self.burn_remaining > 0:
            return Phase.BURNING
        return Phase.LAST_ROUND if self.is_last_round else Phase.IN_PLAY

    @property
    def is_last_round(self) -> bool:
        """True when the round in progress (or the next one to deal) is the shoe's last."""
        return not self.finished and self.rounds_to_deal == 1

    @property
    def round_number(self) -> int:
        """Number of the round in progress or next to deal (from 1; voided rounds not counted)."""
        return len(self.rounds) + 1

    def prompt(self) -> str:
        """Dealer-facing instruction for the next card."""
        phase = self.phase
        if phase is Phase.FINISHED:
            return "Shoe finished"
        if phase is Phase.BURN_FIRST:
            return "Turn the first card"
        if phase is Phase.BURNING:
            return f"Burn {self.burn_remaining} more card(s)"
        text = self.current.decision_text()
        return f"{text} (last round)" if phase is Phase.LAST_ROUND else text

    def feed_card(self, card: Card) -> list[ShoeDealerEvent]:
        """One card out of the shoe, in dealing order."""
        phase = self.phase
        if phase is Phase.FINISHED:
            raise ProcedureError(
                f"card {card.code} drawn after the shoe finished ({len(self.rounds)} rounds)"
            )
        self.cards_used += 1
        if phase is Phase.BURN_FIRST:
            to_burn = turned_card_burns(card)
            self.burn_cards = (card,)
            self.burn_remaining = to_burn
            return [BurnCardTurned(card, to_burn)]
        if phase is Phase.BURNING:
            assert self.burn_remaining is not None
            self.burn_cards += (card,)
            self.burn_remaining -= 1
            events: list[ShoeDealerEvent] = [CardBurned(card, self.burn_remaining)]
            if self.burn_remaining == 0:
                events.append(BurnComplete(self.burn_cards))
            return events
        return self._deal(card)

    def _deal(self, card: Card) -> list[ShoeDealerEvent]:
        hand = self.current.next_due()
        assert hand is not None  # current is never left complete
        number = self.round_number
        self.current = self.current.add(card)
        events: list[ShoeDealerEvent] = [
            CardDealt(number, hand, card, self.current, self.current.decision_text())
        ]
        if self.current.is_complete:
            result = self.current.result()
            self.rounds += (result,)
            self.current = Coup()
            events.append(RoundComplete(number, result))
            if self.rounds_to_deal is not None:
                self.rounds_to_deal -= 1
                if self.rounds_to_deal == 0:
                    self.finished = True
                    events.append(ShoeFinished(len(self.rounds), self.cards_used))
        return events

    def cut_card_out(self) -> list[ShoeDealerEvent]:
        """The cut card came out of the shoe (between two cards)."""
        if self.cut_card_seen:
            raise ProcedureError("the cut card has already come out of this shoe")
        if self.finished:
            raise ProcedureError("the cut card came out after the shoe finished")
        self.cut_card_seen = True
        if self.current.is_empty:
            self.rounds_to_deal = 1  # before a round's first card: that round is the last
        elif self.rules.last_round == "finish-and-one-more":
            self.rounds_to_deal = 2
        else:
            self.rounds_to_deal = 1
        return [CutCardOut(len(self.rounds) + self.rounds_to_deal)]

    def void_round(self) -> list[ShoeDealerEvent]:
        """Void the round in progress: its cards stay counted as used; the round is redealt."""
        if self.phase not in (Phase.IN_PLAY, Phase.LAST_ROUND) or self.current.is_empty:
            raise ProcedureError("there is no round in progress to void")
        cards = self.current.cards
        self.voided += (cards,)
        self.current = Coup()
        return [RoundVoided(self.round_number, cards)]

    def void_completed_round(self) -> list[ShoeDealerEvent]:
        """Void the round that just completed (its result shown, not yet settled): undo it as
        if it had been voided before its last card. Its cards stay counted as used, the round
        is redealt, and the last-round count is what it was while the round was in progress
        (the same as :meth:`void_round`)."""
        if not self.rounds or not self.current.is_empty:
            raise ProcedureError("there is no completed round to void")
        number = len(self.rounds)
        cards = _dealing_order(self.rounds[-1])
        self.rounds = self.rounds[:-1]
        self.voided += (cards,)
        self.finished = False
        if self.rounds_to_deal is not None:
            self.rounds_to_deal += 1
        return [RoundVoided(number, cards)]
