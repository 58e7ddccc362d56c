"""The blackjack part of the dealer display's State document (``State.blackjack``).

Built on the web thread from what the controller's thread handed over: the round's cards as
the table lets outputs see them (``Game.cards_in_round``: the hole card is ``null`` and
``face_down`` until the dealer turns it over), the view (what is awaited, its options), the
seconds left to answer, and the round's result once there is one.
"""

from __future__ import annotations

from typing import Any

from shoe_controller.cards import Card
from shoe_controller.games.blackjack.rules import card_value, hand_value


def _total(codes: list[str]) -> dict[str, Any]:
    value = hand_value(card_value(Card.from_code(code)) for code in codes)
    return {"total": value.total, "soft": value.soft, "bust": value.bust}


def blackjack_document(cards: list[dict[str, Any]], view: dict[str, Any],
                       result: dict[str, Any] | None, answer_left: float | None,
                       seats: list[int]) -> dict[str, Any]:
    """Seats, their hands with totals, the dealer's hand (hole card face down until
    revealed), the awaited decision with its options and seconds left, the result."""
    dealer = [c for c in cards if c.get("seat") is None]
    dealer_shown = [c["card"] for c in dealer if c.get("card")]
    hands: dict[int, dict[int, list[str]]] = {seat: {} for seat in seats}
    for card in cards:
        seat = card.get("seat")
        if seat is None or not card.get("card"):
            continue
        hands.setdefault(seat, {}).setdefault(int(card.get("hand") or 1), []).append(card["card"])
    if result is not None:  # after a split the result says which cards each hand ended with
        for seat_text, finals in result.get("seats", {}).items():
            hands[int(seat_text)] = {n: list(h["cards"]) for n, h in enumerate(finals, 1)}
    awaiting = view.get("awaiting")
    seat_docs = []
    for seat in sorted(hands):
        outcome = result["seats"].get(str(seat)) if result else None
        seat_docs.append({"seat": seat, "hands": [
            {"hand": number, "cards": codes, **(_total(codes) if codes else
                                                {"total": None, "soft": False, "bust": False}),
             "outcome": outcome[number - 1]["outcome"] if outcome else None,
             "blackjack": bool(outcome and outcome[number - 1]["blackjack"]),
             "doubled": bool(outcome and outcome[number - 1]["doubled"])}
            for number, codes in sorted(hands[seat].items())]})
    return {
        "seats": seat_docs,
        "dealer": {"cards": [{"card": c.get("card"), "face_down": bool(c.get("face_down"))}
                             for c in dealer],
                   **(_total(dealer_shown) if dealer_shown else
                      {"total": None, "soft": False, "bust": False}),
                   "final": result is not None,
                   "blackjack": bool(result and result["dealer"]["blackjack"])},
        "awaiting": None if awaiting is None else {
            **awaiting, "seconds_left": None if answer_left is None else round(answer_left, 1)},
    }
