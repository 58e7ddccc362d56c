"""Small helpers shared by the blackjack tests (building cards and profiles, playing scripts)."""

from __future__ import annotations

from collections.abc import Sequence

from shoe_controller.cards import Card
from shoe_controller.games.blackjack.profile import BlackjackProfile, load_profile
from shoe_controller.games.blackjack.round import (
    BlackjackRound,
    CardDue,
    DecisionDue,
    InsuranceDue,
)

S17 = load_profile("blackjack-8d")
H17 = load_profile("blackjack-6d-h17")
PROFILES = {"S17": S17, "H17": H17}
RANKS = "A23456789TJQK"


def cards(text: str | Sequence[str]) -> list[Card]:
    codes = text.split() if isinstance(text, str) else text
    return [Card.from_code(code) for code in codes]


def codes(items: Sequence[Card]) -> list[str]:
    return [card.code for card in items]


def play_script(profile: BlackjackProfile, seats: Sequence[int], shoe: Sequence[Card],
                actions: dict[int, list[str]] | None = None,
                insurance: Sequence[int] = ()) -> tuple[BlackjackRound, int]:
    """Play a round: actions per seat in play order (then stand), the given insurance.
    Returns the round and the number of cards it used."""
    round_ = BlackjackRound(profile.rules, seats)
    queues = {seat: list((actions or {}).get(seat, [])) for seat in seats}
    used = 0
    while (due := round_.due()) is not None:
        if isinstance(due, CardDue):
            round_.deal(shoe[used])
            used += 1
        elif isinstance(due, InsuranceDue):
            round_.insure(insurance)
        else:
            assert isinstance(due, DecisionDue)
            queue = queues[due.seat]
            round_.decide(due.seat, queue.pop(0) if queue else "stand")
    assert all(not q for q in queues.values()), f"actions left over: {queues}"
    return round_, used
