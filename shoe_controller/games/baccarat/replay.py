"""Deal a whole shoe file through :class:`~.shoe_procedure.ShoeDealer` (the live table's engine).

Produces the JSON-lines records of docs/replay-schema.md (version 1): one ``burn`` line, one
``round`` line per round, one ``shoe_end`` line.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from shoe_controller.cards import Card
from shoe_controller.errors import ShoeError
from shoe_controller.games.baccarat.profile import Profile
from shoe_controller.games.baccarat.shoe_procedure import (
    BurnComplete,
    Phase,
    RoundComplete,
    ShoeDealer,
)
from shoe_controller.games.baccarat.shoe_rules import ShoeRules

SCHEMA_VERSION = 1


class ShoeTooShortError(ShoeError, ValueError):
    """The shoe file ran out before the burn or a round was complete."""


def replay_shoe(
    cards: Sequence[Card], profile: Profile | ShoeRules, cut_card: int | None = None
) -> Iterator[dict[str, Any]]:
    """Yield the replay records for ``cards`` dealt in order under ``profile``'s shoe rules.

    ``cut_card`` (cards behind the cut card) overrides the profile's; 0 means no cut card (deal
    until the cards run out). Raises :class:`ShoeTooShortError` if the file ends mid-burn or
    mid-round.
    """
    rules = profile if isinstance(profile, ShoeRules) else profile.shoe_rules
    offset = rules.cut_card if cut_card is None else cut_card
    if offset < 0:
        raise ShoeError(f"the cut card position must be >= 0 cards from the end, got {offset}")
    dealer = ShoeDealer(rules)
    # The cut card comes out just before the card at this index (index 0 if it lies beyond).
    cut_index = max(len(cards) - offset, 0) if offset > 0 else None
    if dealer.phase is not Phase.BURN_FIRST and dealer.burn_remaining == 0:
        yield {"type": "burn", "cards": []}
    for index, card in enumerate(cards):
        if index == cut_index:
            dealer.cut_card_out()
        for event in dealer.feed_card(card):
            if isinstance(event, BurnComplete):
                yield {"type": "burn", "cards": [c.code for c in event.cards]}
            elif isinstance(event, RoundComplete):
                yield event.result.to_json_dict(event.round_number)
        if dealer.finished:
            break
    else:
        _check_complete(dealer, len(cards))
    yield {"type": "shoe_end", "rounds": len(dealer.rounds), "cards_used": dealer.cards_used}


def _check_complete(dealer: ShoeDealer, total: int) -> None:
    phase = dealer.phase
    if phase is Phase.BURN_FIRST:
        raise ShoeTooShortError("the shoe file holds no cards (the first card is turned to burn)")
    if phase is Phase.BURNING:
        raise ShoeTooShortError(
            f"the shoe file ended during the burn after {total} cards: "
            f"{dealer.burn_remaining} more burn card(s) needed"
        )
    if dealer.cut_card_seen and not dealer.finished and dealer.current.is_empty:
        raise ShoeTooShortError(
            f"the shoe file ended after {total} cards, before round {dealer.round_number}, "
            "which the cut-card rule requires: at least 4 more cards needed"
        )
    if not dealer.current.is_empty:
        coup = dealer.current
        due = coup.next_due()
        assert due is not None
        raise ShoeTooShortError(
            f"the shoe file ended after {total} cards in the middle of round "
            f"{dealer.round_number} ({len(coup.cards)} card(s) dealt, {due.value} card due): "
            f"at least {coup.minimum_cards_missing()} more card(s) needed"
        )
