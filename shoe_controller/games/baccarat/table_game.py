"""Baccarat as a table game: the live table's view of :class:`~.shoe_procedure.ShoeDealer`.

The table (shoe_controller.table) knows nothing of baccarat; this adaptor answers its
questions (which card is due, for which hand, what the round's result is) from the very same
``ShoeDealer`` that ``shoe replay`` uses, so the live table and a replay cannot disagree.
"""

from __future__ import annotations

from typing import Any

from shoe_controller.cards import Card
from shoe_controller.games.baccarat.coup import Coup, CoupResult, Hand
from shoe_controller.games.baccarat.profile import Profile
from shoe_controller.games.baccarat.rules import is_natural
from shoe_controller.games.baccarat.shoe_procedure import (
    CardDealt,
    Phase,
    RoundComplete,
    ShoeDealer,
)
from shoe_controller.table.game import Due

_RESULT_KEYS_NOT_IN_EVENT = ("type", "round")


class BaccaratTableGame:
    """Implements :class:`shoe_controller.table.game.Game` for every baccarat profile."""

    name = "baccarat"
    dealing_states = ("initial_deal", "player_third", "banker_third")

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.copies_per_card = profile.decks
        self.dealer = ShoeDealer(profile)
        self._coup = Coup()  # the round's cards, kept after the dealer starts the next coup
        self._result: CoupResult | None = None
        self._decision = ""

    def new_shoe(self) -> None:
        self.dealer = ShoeDealer(self.profile)
        self._coup = Coup()
        self._result = None
        self._decision = ""

    # -- burn ------------------------------------------------------------------------------
    def burn_due(self) -> Due | None:
        phase = self.dealer.phase
        if phase is Phase.BURN_FIRST:
            return Due("burn", "Burn: turn the first card face up", ("stop",))
        if phase is Phase.BURNING:
            left = self.dealer.burn_remaining
            return Due("burn", f"Burn {left} more card{'s' if left != 1 else ''} face down")
        return None

    def burn(self, card: Card) -> None:
        self.dealer.feed_card(card)

    # -- rounds ----------------------------------------------------------------------------
    def start_round(self, number: int) -> None:
        self._coup = Coup()
        self._result = None
        self._decision = ""

    def card_due(self) -> Due | None:
        if self._result is not None or self.dealer.finished:
            return None
        hand = self._coup.next_due()
        if hand is None:
            return None
        if len(self._coup.cards) < 4:
            text = "Deal Player" if hand is Hand.PLAYER else "Deal Banker"
        else:
            text = "Player draws" if hand is Hand.PLAYER else "Banker draws"
        return Due(hand.value, text, (hand.value,))

    def deal(self, card: Card) -> str | None:
        events = self.dealer.feed_card(card)
        for event in events:
            if isinstance(event, CardDealt):
                self._coup = event.coup
                self._decision = event.decision
            elif isinstance(event, RoundComplete):
                self._result = event.result
                self._decision = _stands_text(self._coup)
        if self._result is not None:
            return None
        if len(self._coup.cards) < 4:
            return "initial_deal"
        return "player_third" if self._coup.next_due() is Hand.PLAYER else "banker_third"

    def decision(self) -> str:
        return self._decision

    def result_text(self) -> str:
        return "" if self._result is None else self._result.describe()

    def result(self) -> dict[str, Any]:
        if self._result is None:
            raise ValueError("the round has no result yet")
        line = self._result.to_json_dict(0)
        for key in _RESULT_KEYS_NOT_IN_EVENT:
            line.pop(key)
        result = self._result
        line.update(
            player_natural=result.player_natural,
            banker_natural=result.banker_natural,
            banker_three_card_7=result.banker_three_card_7,
            player_three_card_8=result.player_three_card_8,
            banker_wins_with_6=result.banker_wins_with_6,
        )
        return line

    def result_value(self) -> CoupResult | None:
        """The completed round's result (for settlement and statistics)."""
        return self._result

    def cards_in_round(self) -> list[dict[str, Any]]:
        # Deal order is P, B, P, B, then the Player's third card (if drawn), then the Banker's.
        coup = self._coup
        targets = ["player", "banker", "player", "banker"]
        if len(coup.player) == 3:
            targets.append("player")
        targets += ["banker"] * (len(coup.cards) - len(targets))
        counts = {"player": 0, "banker": 0}
        cards: list[dict[str, Any]] = []
        for card, target in zip(coup.cards, targets):
            counts[target] += 1
            cards.append({"card": card.code, "target": target, "position": counts[target]})
        return cards

    def void_round(self) -> None:
        if self._result is not None:
            self.dealer.void_completed_round()
        elif self._coup.cards:
            self.dealer.void_round()
        self._coup = Coup()
        self._result = None
        self._decision = ""

    def cut_card_out(self, round_in_progress: bool) -> None:
        if self.dealer.cut_card_seen or self.dealer.finished:
            return
        self.dealer.cut_card_out()

    def is_last_round(self) -> bool:
        return self.dealer.is_last_round

    def is_shoe_complete(self) -> bool:
        return self.dealer.finished


def _stands_text(coup: Coup) -> str:
    """What the last decision was once the round is complete ("Banker stands")."""
    if len(coup.player) == 2 and len(coup.banker) == 2 and len(coup.cards) == 4:
        if is_natural(coup.player) or is_natural(coup.banker):
            return "Natural: both hands stand"
        return "Player stands, Banker stands"
    if len(coup.banker) == 2:
        return "Banker stands"
    return "Banker draws"
