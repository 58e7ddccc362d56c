"""``shoe journal recall``'s text form of blackjack rounds: one block per round.

A block names the round, then one row for the dealer and one per seat's hand (``4.1``, ``4.2``
after a split): the cards in the order dealt (marked with their source unless the shoe read
them, e.g. ``9D(camera)``), the total (``BJ``, ``bust``, ``soft``), ``x2`` for a double, and
once the round is settled its outcome and payout (one unit, as in ``shoe replay``).

It prints only what ``recall()`` gives it, which is what ``--json`` prints: a hole card not
yet turned over is not among the round's cards, so it is in no row and the dealer shows no
total until a second card of theirs is visible.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shoe_controller.cards import Card
from shoe_controller.games.blackjack.rules import card_value, hand_value

_SENSOR_SOURCES = (None, "shoe", "scanner")  # read by the shoe itself: no mark needed

Row = tuple[str, str, str, str, str, str]  # label, cards, total, double, outcome, payout
_COLUMNS = 6


def is_blackjack_round(round_: Mapping[str, Any]) -> bool | None:
    """Whether a recalled round is blackjack's; None when it has nothing that tells."""
    result = round_.get("result")
    if isinstance(result, Mapping) and result:
        return "dealer" in result
    for card in round_.get("cards") or ():
        target = str(card.get("target", ""))
        if target == "dealer" or target.startswith("seat"):
            return True
        if target in ("player", "banker"):
            return False
    return None


def format_blackjack_rounds(rounds: list[Mapping[str, Any]]) -> list[str]:
    """The blocks of ``rounds`` (recall() dicts), their columns aligned together."""
    blocks = [(_heading(round_), _rows(round_), _footer(round_)) for round_ in rounds]
    all_rows = [row for _heading_, rows, _footer_ in blocks for row in rows]
    widths = [max((len(row[i]) for row in all_rows), default=0) for i in range(_COLUMNS)]
    lines: list[str] = []
    for heading, rows, footer in blocks:
        lines.append(heading)
        for row in rows:
            cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=True)]
            lines.append(("  " + "  ".join(cells)).rstrip())
        lines.extend(f"  {line}" for line in footer)
    return lines


def _heading(round_: Mapping[str, Any]) -> str:
    where = f"shoe {round_.get('shoe', '')} round {round_.get('round', '?')}"
    void = round_.get("void")
    if void:
        by = f" by {void['supervisor']}" if void.get("supervisor") else ""
        reason = f": {void['reason']}" if void.get("reason") else ""
        return f"{where}  VOID (voided{by}{reason})"
    return where if round_.get("result") else f"{where}  (in play)"


def _footer(round_: Mapping[str, Any]) -> list[str]:
    lines = []
    insurance = (round_.get("result") or {}).get("insurance") or {}
    if insurance.get("offered"):
        taken = ", ".join(str(seat) for seat in insurance.get("taken") or ()) or "nobody"
        pays = "pays 2:1" if insurance.get("dealer_blackjack") else "lost"
        lines.append(f"insurance: taken by {taken}; {pays}")
    irregularities = [str(kind) for kind in round_.get("irregularities") or ()]
    if irregularities:
        lines.append("irregularities: " + ", ".join(irregularities))
    return lines


def _rows(round_: Mapping[str, Any]) -> list[Row]:
    """The dealer's row, then each seat's hands in seat order."""
    dealt = sorted(round_.get("cards") or (), key=lambda c: c.get("position") or 0)
    dealer_cards = [c for c in dealt if c.get("target") == "dealer"]
    seats = _seat_hands(dealt)
    result: Mapping[str, Any] = round_.get("result") or {}
    rows: list[Row] = []

    dealer = result.get("dealer")
    if dealer:
        rows.append(("dealer", _marked(dealer_cards, dealer.get("cards")),
                     _settled_total(dealer), "", "", ""))
    else:
        # In play: the total only once a second card of the dealer's is visible (before
        # the hole card is turned over only the up card is: a total would be the up card's).
        total = _live_total(dealer_cards) if len(dealer_cards) >= 2 else ""
        rows.append(("dealer", _marked(dealer_cards, None), total, "", "", ""))

    settled: Mapping[str, Any] = result.get("seats") or {}
    for seat in sorted({*seats, *(int(s) for s in settled if str(s).isdigit())}):
        live = seats.get(seat, [])
        hands = settled.get(str(seat))
        if hands:
            for number, hand in enumerate(hands, start=1):
                cards = live[number - 1] if number <= len(live) else []
                rows.append((_label(seat, number, len(hands)),
                             _marked(cards, hand.get("cards")), _settled_total(hand),
                             "x2" if hand.get("doubled") else "", str(hand.get("outcome", "")),
                             _payout(hand.get("payout"))))
        else:
            for number, cards in enumerate(live, start=1):
                rows.append((_label(seat, number, len(live)), _marked(cards, None),
                             _live_total(cards), "", "", ""))
    return rows


def _seat_hands(dealt: list[Mapping[str, Any]]) -> dict[int, list[list[Mapping[str, Any]]]]:
    """Seat -> its hands' cards. Before a split a seat's cards go to "seat 4"; after it to
    "seat 4 hand 1" and "seat 4 hand 2", and the pair's first card stays with hand 1, its
    second goes to hand 2."""
    before: dict[int, list[Mapping[str, Any]]] = {}
    after: dict[int, dict[int, list[Mapping[str, Any]]]] = {}
    for card in dealt:
        words = str(card.get("target", "")).split()
        if len(words) < 2 or words[0] != "seat" or not words[1].isdigit():
            continue
        seat = int(words[1])
        if len(words) == 4 and words[2] == "hand" and words[3].isdigit():
            after.setdefault(seat, {}).setdefault(int(words[3]), []).append(card)
        else:
            before.setdefault(seat, []).append(card)
    hands: dict[int, list[list[Mapping[str, Any]]]] = {}
    for seat in {*before, *after}:
        first = before.get(seat, [])
        split = after.get(seat)
        if not split:
            hands[seat] = [first]
            continue
        count = max(len(first), max(split))
        hands[seat] = [first[number - 1:number] + split.get(number, [])
                       for number in range(1, count + 1)]
    return hands


def _label(seat: int, number: int, hands: int) -> str:
    return f"seat {seat}.{number}" if hands > 1 else f"seat {seat}"


def _marked(cards: list[Mapping[str, Any]], settled: list[str] | None) -> str:
    """The cards with their source marks; a settled hand's own codes if the dealt cards do
    not match them (a journal that recall could not place card by card)."""
    codes = [str(card.get("card") or "??") for card in cards]
    if settled is not None and codes != list(settled):
        return " ".join(str(code) for code in settled) or "-"
    return " ".join(code if card.get("source") in _SENSOR_SOURCES else f"{code}({card['source']})"
                    for code, card in zip(codes, cards, strict=True)) or "-"


def _settled_total(hand: Mapping[str, Any]) -> str:
    if hand.get("blackjack"):
        return "BJ"
    total = str(hand.get("total", "?"))
    if hand.get("bust"):
        return f"{total} bust"
    return f"soft {total}" if hand.get("soft") else total


def _live_total(cards: list[Mapping[str, Any]]) -> str:
    if not cards:
        return ""
    try:
        value = hand_value(card_value(Card.from_code(str(card.get("card")))) for card in cards)
    except (ValueError, KeyError, TypeError):
        return "?"  # a card the journal has no code for
    if value.bust:
        return f"{value.total} bust"
    return f"soft {value.total}" if value.soft else str(value.total)


def _payout(payout: Any) -> str:
    if isinstance(payout, (int, float)) and not isinstance(payout, bool):
        return f"{payout:+g}"
    return ""
