"""Deal a shoe file through :class:`~.shoe_procedure.BlackjackShoe` with a decisions file.

Yields the JSON-lines records of docs/blackjack.md (replay output, version 1): one ``burn`` line,
one ``round`` line per round of the decisions file, one ``shoe_end`` line. The replay stops after
the decisions file's last round, or earlier where the cut card ends the shoe -- then decisions
for rounds that cannot be dealt are an error, never silently dropped.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from shoe_controller.cards import Card
from shoe_controller.errors import ShoeError
from shoe_controller.games.blackjack.decisions import DecisionsError, RoundDecisions
from shoe_controller.games.blackjack.profile import BlackjackProfile
from shoe_controller.games.blackjack.round import (
    BlackjackRound,
    CardDue,
    CardReason,
    DecisionDue,
    InsuranceDue,
    RoundError,
)
from shoe_controller.games.blackjack.rules import Action
from shoe_controller.games.blackjack.shoe_procedure import BlackjackShoe

SCHEMA_VERSION = 1


class ShoeTooShortError(ShoeError, ValueError):
    """The shoe file ran out during the burn or a round."""


class _Cards:
    """The shoe file as the dealer meets it: cards in order, the cut card before one of them."""

    def __init__(self, cards: Sequence[Card], shoe: BlackjackShoe, cut_card: int) -> None:
        self.cards = cards
        self.shoe = shoe
        self.next = 0
        self.cut_index = max(len(cards) - cut_card, 0) if cut_card > 0 else None

    def take(self, waiting_for: str) -> Card:
        if self.next == self.cut_index:
            self.shoe.cut_card_out()
        if self.next >= len(self.cards):
            raise ShoeTooShortError(f"the shoe file ended after {len(self.cards)} cards, "
                                    f"{waiting_for}")
        card = self.cards[self.next]
        self.next += 1
        return card


def replay_blackjack(
    cards: Sequence[Card],
    profile: BlackjackProfile,
    decisions: Sequence[RoundDecisions],
    cut_card: int | None = None,
) -> Iterator[dict[str, Any]]:
    """The replay records for ``cards`` dealt in order with ``decisions`` under ``profile``.

    ``cut_card`` (cards behind the cut card) overrides the profile's; 0 means none.
    """
    offset = profile.shoe.cut_card if cut_card is None else cut_card
    if offset < 0:
        raise ShoeError(f"the cut card position must be >= 0 cards from the end, got {offset}")
    shoe = BlackjackShoe(profile)
    source = _Cards(cards, shoe, offset)
    while shoe.burn_remaining:
        shoe.feed_card(source.take(f"during the burn: {shoe.burn_remaining} more burn "
                                   "card(s) needed"))
    yield {"type": "burn", "cards": [card.code for card in shoe.burn_cards]}
    for plan in decisions:
        if shoe.finished:
            raise DecisionsError(
                f"{plan.where}: the shoe finished after round {len(shoe.rounds)} (cut card), "
                f"so the decisions for rounds {plan.round} to {decisions[-1].round} cannot be "
                "dealt")
        yield _play(shoe, source, plan)
    yield {"type": "shoe_end", "rounds": len(shoe.rounds), "cards_used": shoe.cards_used}


def _play(shoe: BlackjackShoe, source: _Cards, plan: RoundDecisions) -> dict[str, Any]:
    """Deal one round of the decisions file; its ``round`` line."""
    try:
        round_ = shoe.start_round(plan.seats)
    except RoundError as exc:
        raise DecisionsError(f"{plan.where}: {exc}") from None
    queues = {seat: list(reversed(plan.actions.get(seat, ()))) for seat in plan.seats}
    while (due := round_.due()) is not None:
        if isinstance(due, CardDue):
            card = source.take(f"in the middle of round {plan.round} ({due.prompt})")
            shoe.feed_card(card)
            if due.reason is CardReason.HOLE and plan.insurance and not round_.insurance_offered:
                seat = min(plan.insurance)
                raise DecisionsError(f"{plan.where}, seat {seat}: insurance listed, but the up "
                                     f"card {round_.dealer[0].code} is not an ace")
        elif isinstance(due, InsuranceDue):
            shoe.insure(plan.insurance)
        else:
            _decide(shoe, due, queues, plan)
    for seat, queue in queues.items():
        if queue:
            raise DecisionsError(
                f"{plan.where}, seat {seat}: action {queue[-1].value!r} left over: "
                f"{_why_finished(round_)}")
    return shoe.rounds[-1].to_json_dict(plan.round)


def _decide(shoe: BlackjackShoe, due: DecisionDue, queues: dict[int, list[Action]],
            plan: RoundDecisions) -> None:
    queue = queues[due.seat]
    action = queue.pop() if queue else Action.STAND  # listed actions ran out: the hand stands
    try:
        shoe.decide(due.seat, action)
    except RoundError as exc:  # names the seat, hand, action and why it is not allowed
        raise DecisionsError(f"{plan.where}: {exc}") from None


def _why_finished(round_: BlackjackRound) -> str:
    result = round_.result()
    if result.peeked and result.dealer_blackjack:
        return "the dealer's blackjack ended the round before play"
    return "the seat's hands were finished (21, bust, blackjack, split aces, a double or stand)"
