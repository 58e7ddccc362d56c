"""One baccarat round (coup) built card by card, as the physical shoe delivers them.

A :class:`Coup` is an immutable value: ``add(card)`` returns a new coup, so the live table can
keep the previous state, rebuild state by replaying cards, and never half-apply a card. The coup
itself knows whose card is due next (deal order P, B, P, B, then the third-card rule), which is
what the dealer prompt and the misdeal checks need.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from shoe_controller.cards import Card
from shoe_controller.games.baccarat.rules import (
    Outcome,
    banker_draws,
    hand_total,
    is_natural,
    is_pair,
    outcome,
    player_draws,
    points,
)


class Hand(str, enum.Enum):
    """The two hands of a coup."""

    PLAYER = "player"
    BANKER = "banker"


@dataclass(frozen=True, slots=True)
class CoupResult:
    """Everything a settled round is judged on; the flags are the facts variant bets pay on."""

    player: tuple[Card, ...]
    banker: tuple[Card, ...]
    player_total: int
    banker_total: int
    outcome: Outcome
    natural: bool
    player_natural: bool
    banker_natural: bool
    player_pair: bool
    banker_pair: bool
    #: Banker wins with a three-card 7 (zero-commission push; EZ "Dragon 7").
    banker_three_card_7: bool
    #: Player wins with a three-card 8 (EZ "Panda 8").
    player_three_card_8: bool
    #: Banker wins with a total of 6, two or three cards (no-commission "Super 6").
    banker_wins_with_6: bool

    def facts(self) -> dict[str, bool]:
        """The named facts a profile's bets may win, push or pay specially on."""
        return {
            "banker": self.outcome is Outcome.BANKER,
            "player": self.outcome is Outcome.PLAYER,
            "tie": self.outcome is Outcome.TIE,
            "player_pair": self.player_pair,
            "banker_pair": self.banker_pair,
            "banker_three_card_7": self.banker_three_card_7,
            "player_three_card_8": self.player_three_card_8,
            "banker_wins_with_6": self.banker_wins_with_6,
        }

    def to_json_dict(self, round_number: int) -> dict[str, Any]:
        """The replay ``round`` line (docs/replay-schema.md, version 1), keys in schema order."""
        return {
            "type": "round",
            "round": round_number,
            "player": [card.code for card in self.player],
            "banker": [card.code for card in self.banker],
            "player_total": self.player_total,
            "banker_total": self.banker_total,
            "outcome": self.outcome.value,
            "natural": self.natural,
            "player_pair": self.player_pair,
            "banker_pair": self.banker_pair,
        }

    def describe(self) -> str:
        """Dealer-facing result, e.g. ``Banker wins 7 to 5`` or ``Player wins 8 to 2 (natural)``."""
        if self.outcome is Outcome.TIE:
            text = f"Tie {self.player_total} to {self.banker_total}"
        elif self.outcome is Outcome.PLAYER:
            text = f"Player wins {self.player_total} to {self.banker_total}"
        else:
            text = f"Banker wins {self.banker_total} to {self.player_total}"
        return text + " (natural)" if self.natural else text


@dataclass(frozen=True, slots=True)
class Coup:
    """A round in progress. ``Coup()`` is the empty round; ``add`` returns the next state."""

    player: tuple[Card, ...] = ()
    banker: tuple[Card, ...] = ()
    #: All cards in dealing order (the order the shoe delivered them).
    cards: tuple[Card, ...] = ()

    def next_due(self) -> Hand | None:
        """Whose card comes next, or ``None`` when the round is complete."""
        dealt = len(self.cards)
        if dealt < 4:
            return Hand.PLAYER if dealt % 2 == 0 else Hand.BANKER
        if is_natural(self.player[:2]) or is_natural(self.banker[:2]):
            return None
        if len(self.player) == 2 and len(self.banker) == 2:
            if player_draws(hand_total(self.player)):
                return Hand.PLAYER
            return Hand.BANKER if banker_draws(hand_total(self.banker), None) else None
        if len(self.banker) == 2 and len(self.player) == 3:
            third = points(self.player[2])
            return Hand.BANKER if banker_draws(hand_total(self.banker[:2]), third) else None
        return None

    @property
    def is_complete(self) -> bool:
        return self.next_due() is None

    @property
    def is_empty(self) -> bool:
        return not self.cards

    def add(self, card: Card) -> Coup:
        """The coup with ``card`` given to the hand that is due; ``ValueError`` if complete."""
        due = self.next_due()
        if due is None:
            raise ValueError(f"the round is complete; card {card.code} belongs to no hand")
        if due is Hand.PLAYER:
            return Coup(self.player + (card,), self.banker, self.cards + (card,))
        return Coup(self.player, self.banker + (card,), self.cards + (card,))

    def minimum_cards_missing(self) -> int:
        """The fewest further cards the round needs (0 when complete); for clear error messages."""
        if len(self.cards) < 4:
            return 4 - len(self.cards)
        return 0 if self.is_complete else 1

    def result(self) -> CoupResult:
        """The settled facts of a complete round; ``ValueError`` while cards are still due."""
        if not self.is_complete:
            raise ValueError(
                f"the round is not complete ({len(self.cards)} cards; "
                f"{self.next_due().value} card due)"  # type: ignore[union-attr]
            )
        player_total = hand_total(self.player)
        banker_total = hand_total(self.banker)
        won = outcome(player_total, banker_total)
        player_natural = is_natural(self.player)
        banker_natural = is_natural(self.banker)
        return CoupResult(
            player=self.player,
            banker=self.banker,
            player_total=player_total,
            banker_total=banker_total,
            outcome=won,
            natural=player_natural or banker_natural,
            player_natural=player_natural,
            banker_natural=banker_natural,
            player_pair=is_pair(self.player),
            banker_pair=is_pair(self.banker),
            banker_three_card_7=(
                won is Outcome.BANKER and len(self.banker) == 3 and banker_total == 7
            ),
            player_three_card_8=(
                won is Outcome.PLAYER and len(self.player) == 3 and player_total == 8
            ),
            banker_wins_with_6=won is Outcome.BANKER and banker_total == 6,
        )

    def decision_text(self) -> str:
        """What the dealer does next, or the result once the round is complete.

        ``Deal Player`` / ``Deal Banker`` for the first four cards; then ``Player draws``,
        ``Player stands, Banker draws`` or ``Banker draws``; when complete the result, e.g.
        ``Banker wins 7 to 5``, ``Player wins 8 to 2 (natural)``, ``Tie 6 to 6``.
        """
        due = self.next_due()
        if due is None:
            return self.result().describe()
        if len(self.cards) < 4:
            return "Deal Player" if due is Hand.PLAYER else "Deal Banker"
        if due is Hand.PLAYER:
            return "Player draws"
        if len(self.player) == 2:
            return "Player stands, Banker draws"
        return "Banker draws"


def deal_coup(cards: Iterable[Card]) -> CoupResult:
    """Deal a whole round from ``cards`` (extra cards are left unused); ``ValueError`` if short."""
    coup = Coup()
    for card in cards:
        if coup.is_complete:
            break
        coup = coup.add(card)
    return coup.result()
