"""Blackjack as a table game: the live table's view of :class:`~.shoe_procedure.BlackjackShoe`.

The table (shoe_controller.table) knows nothing of blackjack; this adaptor answers its
questions from the very same ``BlackjackShoe`` and ``BlackjackRound`` that ``shoe replay``
uses, so the live table and a replay cannot disagree. What the live table adds:

* the players' answers (decisions, insurance) come in as journalled inputs; while one is
  awaited no card is due, so the exit stays locked and a card scanned then is an irregularity;
* hole-card secrecy: the hole card's ``card`` event carries ``hold: KEY`` and every output
  that honours holds (the table-system stream, the MQTT feed, the dealer display) keeps it
  back until the ``hole_card_revealed`` event (``reveal: KEY``) -- when the dealer's turn
  starts, or the round ends (a dealer blackjack, every hand decided, a void). With an ace
  up, after insurance closes, the controller checks the hole card itself and says only
  whether the dealer has blackjack (``dealer_check``).
"""

from __future__ import annotations

from typing import Any

from shoe_controller.cards import Card
from shoe_controller.games.blackjack.profile import BlackjackProfile
from shoe_controller.games.blackjack.round import (
    BlackjackRound,
    CardDue,
    CardReason,
    DecisionDue,
    InsuranceDue,
    RoundError,
    RoundResult,
)
from shoe_controller.games.blackjack.rules import card_value, is_blackjack
from shoe_controller.games.blackjack.shoe_procedure import (
    BlackjackShoe,
    Phase,
    ProcedureError,
    RoundComplete,
    ShoeEvent,
)
from shoe_controller.table.game import Awaiting, Due

#: The round's dealing sub-states, in the order a round goes through them (some are skipped).
DEALING_STATES = ("initial_deal", "insurance", "players", "dealer")


def target_name(seat: int | None, hand: int, split: bool) -> str:
    """Who a card is for, as the dealer says it: "dealer", "seat 3", "seat 3 hand 2"."""
    if seat is None:
        return "dealer"
    return f"seat {seat} hand {hand}" if split else f"seat {seat}"


class BlackjackTableGame:
    """Implements :class:`shoe_controller.table.game.Game` and ``InteractiveGame``."""

    name = "blackjack"
    dealing_states: tuple[str, ...] = DEALING_STATES

    def __init__(self, profile: BlackjackProfile) -> None:
        self.profile = profile
        self.copies_per_card = profile.rules.decks
        self.decision_seconds = profile.decision_seconds
        self.shoe = BlackjackShoe(profile)
        self._round: BlackjackRound | None = None  # kept after it completes, for the result
        self._result: RoundResult | None = None
        self._round_number = 0
        self._targets: list[tuple[str, int | None, int]] = []  # per card: target, seat, hand
        self._hole_revealed = True
        self._checked = False  # the dealer's check for blackjack was reported this round
        self._decision = ""
        self._events: list[dict[str, Any]] = []
        self._shoe_count = 0

    # -- shoe ------------------------------------------------------------------------------
    def new_shoe(self) -> None:
        self._shoe_count += 1
        self.shoe = BlackjackShoe(self.profile)
        self._round, self._result, self._round_number = None, None, 0
        self._targets, self._hole_revealed, self._decision = [], True, ""
        self._events = []

    def burn_due(self) -> Due | None:
        if self.shoe.phase is not Phase.BURNING:
            return None
        left = self.shoe.burn_remaining
        after_error = " after the game error" if self.shoe.rounds or self._round_number else ""
        return Due("burn", f"Burn {left} more card{'s' if left != 1 else ''} face down"
                   + after_error)

    def burn(self, card: Card) -> None:
        self.shoe.feed_card(card)

    def error_burn(self, approved_by: str) -> int:
        """A supervisor approved the burn after a game error (seed 003 2.3.5 b): the
        profile's ``after_error`` cards are burned before the next round. Only between
        rounds (``ValueError`` otherwise); returns how many."""
        try:
            return self.shoe.error_burn(approved_by)
        except ProcedureError as exc:
            raise ValueError(str(exc)) from None

    # -- rounds ----------------------------------------------------------------------------
    def start_round(self, number: int) -> None:
        self._round, self._result, self._round_number = None, None, number
        self._targets, self._hole_revealed, self._decision = [], True, ""
        self._checked = False

    def close_betting(self, seats: list[int] | None) -> None:
        """Open the engine's round for the seats with a bet (``ValueError`` if refused)."""
        if seats is None:
            raise ValueError("blackjack needs the seats with a bet when betting closes")
        if not isinstance(seats, list) or not all(
                isinstance(s, int) and not isinstance(s, bool) for s in seats):
            raise ValueError(f"seats must be a list of seat numbers, got {seats!r}")
        try:
            self._round = self.shoe.start_round(seats)
        except (RoundError, ProcedureError) as exc:
            raise ValueError(str(exc)) from None

    def card_due(self) -> Due | None:
        due = self._round.due() if self._round is not None and self._result is None else None
        if not isinstance(due, CardDue):
            return None
        assert self._round is not None
        split = due.seat is not None and len(self._round.hands[due.seat]) > 1
        target = target_name(due.seat, due.hand, split)
        details: list[tuple[str, Any]] = [("seat", due.seat), ("seat_hand", due.hand),
                                          ("reason", due.reason.value)]
        if due.face_down:
            details.append(("hold", self.hole_key))
        return Due(target, due.prompt, (), tuple(details))

    @property
    def hole_key(self) -> str:
        """The hold key of this round's hole card (unique in the table's journal)."""
        return f"hole-card:shoe-{self._shoe_count}:round-{self._round_number}"

    def awaiting(self) -> Awaiting | None:
        if self._round is None or self._result is not None:
            return None
        due = self._round.due()
        key = f"{self._round_number}.{len(self._round.cards)}"
        if isinstance(due, DecisionDue):
            return Awaiting("decision", due.prompt, f"{key}.{due.seat}.{due.hand}", due.seat,
                            due.hand, tuple(action.value for action in due.options))
        if isinstance(due, InsuranceDue):
            return Awaiting("insurance", due.prompt, f"{key}.insurance", seats=due.seats)
        return None

    def deal(self, card: Card) -> str | None:
        assert self._round is not None
        due = self._round.due()
        assert isinstance(due, CardDue)
        split = due.seat is not None and len(self._round.hands[due.seat]) > 1
        self._targets.append((target_name(due.seat, due.hand, split), due.seat, due.hand))
        if due.face_down:
            self._hole_revealed = False
        events = self.shoe.feed_card(card)
        self._decision = ""
        return self._after(events)

    def decide(self, seat: int, hand: int, action: str) -> str | None:
        due = self._round.due() if self._round is not None else None
        if not isinstance(due, DecisionDue) or (due.seat, due.hand) != (seat, hand):
            raise ValueError(f"seat {seat} hand {hand} is not the hand to decide")
        try:
            events = self.shoe.decide(seat, action)
        except (RoundError, ProcedureError) as exc:
            raise ValueError(str(exc)) from None
        label = due.prompt.split(":")[0]
        self._decision = f"{label}: {action}"
        return self._after(events)

    def insure(self, seats: list[int]) -> str | None:
        if not isinstance(seats, list) or not all(
                isinstance(s, int) and not isinstance(s, bool) for s in seats):
            raise ValueError(f"seats must be a list of seat numbers, got {seats!r}")
        try:
            events = self.shoe.insure(seats)
        except (RoundError, ProcedureError) as exc:
            raise ValueError(str(exc)) from None
        self._decision = ("Insurance: " + ", ".join(f"seat {s}" for s in sorted(seats))
                          if seats else "Insurance: nobody")
        return self._after(events)

    def _after(self, events: list[ShoeEvent]) -> str | None:
        """Note what the engine's events mean for the table; the sub-state now in force."""
        round_ = self._round
        assert round_ is not None
        for event in events:
            if isinstance(event, RoundComplete):
                self._result = event.result
        due = round_.due() if self._result is None else None
        if round_.peeked and not self._checked:
            # The dealer checked the hole card (an ace up, after insurance): only whether it
            # makes a blackjack is told, not the card.
            self._checked = True
            self._events.append({"type": "dealer_check", "blackjack": self._dealer_bj()})
        if not self._hole_revealed and (
                self._result is not None
                or (isinstance(due, CardDue) and due.reason is CardReason.DEALER)):
            self._reveal()  # the dealer's turn (or the round's end): the hole card is turned
        awaiting = self.awaiting()
        if awaiting is not None:
            # What a player needs to decide: the hand's cards and the dealer's up card.
            cards = [] if awaiting.seat is None else [
                card.code for card in self.hand_cards(awaiting.seat, awaiting.hand)]
            self._events.append({"type": "decision_due", **awaiting.to_dict(),
                                 "seconds": self.decision_seconds, "cards": cards,
                                 "up": self.up_card().code})
        if self._result is not None:
            self._decision = self._result_words()
            return None
        if isinstance(due, InsuranceDue):
            return "insurance"
        if isinstance(due, DecisionDue):
            return "players"
        assert isinstance(due, CardDue)
        if due.reason in (CardReason.FIRST, CardReason.UP, CardReason.SECOND, CardReason.HOLE):
            return "initial_deal"
        return "dealer" if due.reason is CardReason.DEALER else "players"

    def _dealer_bj(self) -> bool:
        round_ = self._round
        assert round_ is not None
        return len(round_.dealer) == 2 and is_blackjack(
            (card_value(card) for card in round_.dealer), False)

    def _reveal(self) -> None:
        round_ = self._round
        assert round_ is not None
        self._hole_revealed = True
        self._events.append({"type": "hole_card_revealed", "reveal": self.hole_key,
                             "card": round_.dealer[1].code})

    def hand_cards(self, seat: int, hand: int) -> tuple[Card, ...]:
        """The cards of seat ``seat``'s hand ``hand`` in the round in progress."""
        assert self._round is not None
        return tuple(self._round.hands[seat][hand - 1].cards)

    def up_card(self) -> Card:
        assert self._round is not None and self._round.dealer
        return self._round.dealer[0]

    def take_events(self) -> list[dict[str, Any]]:
        events, self._events = self._events, []
        return events

    def decision(self) -> str:
        return self._decision

    def _result_words(self) -> str:
        assert self._round is not None
        return self._round.prompt()

    def result_text(self) -> str:
        if self._result is None:
            return ""
        result = self._result
        parts = []
        for seat in result.seats:
            for hand in result.hands[seat]:
                label = f"{seat}.{hand.hand}" if len(result.hands[seat]) > 1 else str(seat)
                parts.append(f"{label} {hand.outcome.value}")
        return f"{self._result_words()} - " + ", ".join(parts)

    def result(self) -> dict[str, Any]:
        if self._result is None:
            raise ValueError("the round has no result yet")
        line = self._result.to_json_dict(self._round_number)
        line.pop("type")
        line.pop("round")
        return line

    def result_value(self) -> RoundResult | None:
        return self._result

    def cards_in_round(self) -> list[dict[str, Any]]:
        round_ = self._round
        if round_ is None:
            return []
        counts: dict[str, int] = {}
        cards: list[dict[str, Any]] = []
        for card, (target, seat, hand) in zip(round_.cards, self._targets):
            counts[target] = counts.get(target, 0) + 1
            hidden = target == "dealer" and counts[target] == 2 and not self._hole_revealed
            cards.append({"card": None if hidden else card.code, "target": target,
                          "position": counts[target], "seat": seat, "hand": hand,
                          "face_down": hidden})
        return cards

    def void_round(self) -> None:
        if self._round is not None and not self._hole_revealed:
            self._reveal()  # the round is over: nothing of it is secret any more
        if self._result is not None:
            # A completed round voided before its confirmation is not counted.
            self.shoe.rounds.pop()
            if self.shoe.rounds_to_deal is not None:
                self.shoe.rounds_to_deal += 1
                self.shoe.finished = False
        elif self.shoe.current is not None:
            self.shoe.void_round()
        self._round, self._result, self._decision = None, None, ""
        self._targets = []

    def cut_card_out(self, round_in_progress: bool) -> None:
        if self.shoe.cut_card_seen or self.shoe.finished:
            return
        self.shoe.cut_card_out()

    def is_last_round(self) -> bool:
        return self.shoe.is_last_round

    def is_shoe_complete(self) -> bool:
        return self.shoe.finished
