"""The last result of a table in one line, for its pit tile (pure; any state is shown, none
breaks it: what a broker delivers is not trusted).

* baccarat: ``banker 7-5 (round 12)`` (outcome, player total - banker total);
* blackjack: ``round 12: dealer 24 bust; 1 win, 4.1 win, 4.2 push`` (the dealer's total, ``BJ``
  for a blackjack; each seat's hands, ``4.1`` and ``4.2`` after a split, with their outcome);
* roulette: ``17 black (round 12)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Longest line a tile shows (a made-up state with a thousand seats is cut).
MAX_TEXT = 200


def result_text(result: Any) -> str:
    """The line for a state's ``last_result`` ("" for none, or one not understood)."""
    if not isinstance(result, Mapping):
        return ""
    if isinstance(result.get("dealer"), Mapping):
        text = _blackjack(result)
    elif "number" in result and "colour" in result:
        text = (f"{_plain(result.get('number'))} {_plain(result.get('colour'))} "
                f"(round {_plain(result.get('round'))})")
    elif isinstance(result.get("outcome"), str):
        text = (f"{result['outcome']} {_plain(result.get('player_total'))}-"
                f"{_plain(result.get('banker_total'))} (round {_plain(result.get('round'))})")
    else:
        return ""
    text = " ".join(text.split())  # one line, whatever the strings held
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT - 1] + "…"


def _blackjack(result: Mapping[str, Any]) -> str:
    dealer = result["dealer"]
    if dealer.get("blackjack") is True:
        said = "BJ"
    else:
        said = _plain(dealer.get("total")) + (" bust" if dealer.get("bust") is True else "")
    hands = []
    seats = result.get("seats")
    for seat, seat_hands in (seats.items() if isinstance(seats, Mapping) else ()):
        if not isinstance(seat_hands, list):
            continue
        for number, hand in enumerate(seat_hands, start=1):
            label = f"{seat}.{number}" if len(seat_hands) > 1 else str(seat)
            outcome = hand.get("outcome") if isinstance(hand, Mapping) else None
            hands.append(f"{label} {_plain(outcome)}")
    return f"round {_plain(result.get('round'))}: dealer {said}" + (
        "; " + ", ".join(hands) if hands else "")


def _plain(value: Any) -> str:
    """A scalar as text; "?" for anything else (a nested object is not shown)."""
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        return "?"
    return str(value)[:40]
