"""One blackjack round, built card by card and decision by decision, as the table delivers them.

:class:`BlackjackRound` is pure (no clock, no I/O, no randomness): the live table and the shoe
file replay feed it the same events, and it always says what it is waiting for --
:meth:`~BlackjackRound.due` is a :class:`CardDue` (for a seat's hand or the dealer, with the
dealer-facing prompt), a :class:`DecisionDue` (a seat's hand and its legal options), an
:class:`InsuranceDue` (an ace is up), or ``None`` once the round is complete and
:meth:`~BlackjackRound.result` holds every hand's outcome.

Order (seat 1 is the dealer's left; seed 003 2.3.4, 2.2.7, 2.3.8): a card to each seat with a
bet, the dealer's up card, a second card to each seat, the hole card face down; with an ace up,
insurance, then the dealer checks the hole card (profile ``peeks_on``) and a blackjack ends the
round; then each seat plays its hands in turn (a split's first hand is completed before the
second hand gets its second card); then the dealer, who draws nothing when every hand is
already decided (busted or blackjack).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from shoe_controller.cards import Card
from shoe_controller.errors import ShoeError
from shoe_controller.games.blackjack.rules import (
    ACE,
    Action,
    HandValue,
    Outcome,
    TableRules,
    card_value,
    dealer_hits,
    hand_value,
    is_blackjack,
)


class RoundError(ShoeError, ValueError):
    """A card, decision or insurance answer that the round is not waiting for."""


class IllegalActionError(RoundError):
    """A decision the hand may not take now; the message names seat, hand, action and why."""


class CardReason(str, enum.Enum):
    FIRST = "first"  # a seat's first card
    UP = "up"  # the dealer's up card
    SECOND = "second"  # a seat's second card
    HOLE = "hole"  # the dealer's hole card, face down
    SPLIT = "split"  # a split hand's second card
    HIT = "hit"
    DOUBLE = "double"  # the one card of a double
    DEALER = "dealer"  # the dealer draws


@dataclass(frozen=True, slots=True)
class CardDue:
    """The next card: for ``seat``'s hand ``hand`` (1, or 2 after a split), or the dealer
    (``seat is None``)."""

    seat: int | None
    hand: int
    reason: CardReason
    prompt: str

    @property
    def face_down(self) -> bool:
        return self.reason is CardReason.HOLE


@dataclass(frozen=True, slots=True)
class DecisionDue:
    """Seat ``seat``'s hand ``hand`` must choose one of ``options``."""

    seat: int
    hand: int
    options: tuple[Action, ...]
    prompt: str


@dataclass(frozen=True, slots=True)
class InsuranceDue:
    """The dealer shows an ace: the seats say who insures before the dealer checks."""

    seats: tuple[int, ...]
    prompt: str


Due = CardDue | DecisionDue | InsuranceDue
#: Marks :meth:`BlackjackRound.due`'s cached answer as out of date.
_STALE = object()


@dataclass(frozen=True, slots=True)
class HandResult:
    """One settled hand. ``payout`` is the net result of one unit on the hand's original bet
    (1.5 for a 3:2 blackjack, -2 for a lost double, -1 for a double lost to a dealer blackjack
    where the table takes only the original bet)."""

    seat: int
    hand: int
    cards: tuple[Card, ...]
    total: int
    soft: bool
    blackjack: bool
    bust: bool
    doubled: bool
    from_split: bool
    outcome: Outcome
    payout: Decimal

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "cards": [card.code for card in self.cards],
            "total": self.total,
            "soft": self.soft,
            "blackjack": self.blackjack,
            "bust": self.bust,
            "doubled": self.doubled,
            "from_split": self.from_split,
            "outcome": self.outcome.value,
            "payout": json_number(self.payout),
        }


@dataclass(frozen=True, slots=True)
class RoundResult:
    """Everything settlement needs: the dealer's hand, every seat's hands, insurance."""

    seats: tuple[int, ...]
    dealer: tuple[Card, ...]
    dealer_total: int
    dealer_soft: bool
    dealer_blackjack: bool
    dealer_bust: bool
    #: The dealer checked the hole card before play (and, with a blackjack, ended the round).
    peeked: bool
    #: False when every hand was decided (busted or blackjack) and the dealer drew nothing.
    dealer_played: bool
    insurance_offered: bool
    insurance_taken: frozenset[int]
    hands: dict[int, tuple[HandResult, ...]]
    #: Every card of the round in the order it left the shoe.
    cards: tuple[Card, ...]

    def to_json_dict(self, round_number: int) -> dict[str, Any]:
        """The ``round`` line of docs/blackjack.md (replay output, version 1)."""
        return {
            "type": "round",
            "round": round_number,
            "dealer": {
                "cards": [card.code for card in self.dealer],
                "total": self.dealer_total,
                "blackjack": self.dealer_blackjack,
                "bust": self.dealer_bust,
            },
            "seats": {
                str(seat): [hand.to_json_dict() for hand in self.hands[seat]]
                for seat in self.seats
            },
            "insurance": {
                "offered": self.insurance_offered,
                "dealer_blackjack": self.dealer_blackjack,
                "taken": sorted(self.insurance_taken),
            },
        }


def json_number(amount: Decimal) -> int | float:
    """A unit payout for JSON: an integer when whole, else the float whose shortest repr is the
    decimal (payouts have at most 6 decimal places, so the text is exact)."""
    return int(amount) if amount == amount.to_integral_value() else float(amount)


class _Hand:
    """A seat's hand while it is played (mutable; frozen into a :class:`HandResult`)."""

    __slots__ = ("cards", "doubled", "from_split", "number", "seat", "stood", "values", "wants")

    def __init__(self, seat: int, number: int, from_split: bool = False) -> None:
        self.seat = seat
        self.number = number
        self.cards: list[Card] = []
        self.values: list[int] = []
        self.from_split = from_split
        self.doubled = False
        self.stood = False
        #: The reason of a card asked for by hit or double, not yet dealt.
        self.wants: CardReason | None = None

    def add(self, card: Card) -> None:
        self.cards.append(card)
        self.values.append(card_value(card))
        self.wants = None

    @property
    def value(self) -> HandValue:
        return hand_value(self.values)

    @property
    def blackjack(self) -> bool:
        return is_blackjack(self.values, self.from_split)

    def needs_card(self) -> CardReason | None:
        if self.wants is not None:
            return self.wants
        return CardReason.SPLIT if self.from_split and len(self.cards) < 2 else None

    def finished(self, rules: TableRules) -> bool:
        if self.needs_card() is not None:
            return False
        if self.stood or self.doubled or self.value.total >= 21:
            return True
        # Split aces get one card each (seed 003 2.2.7).
        return self.from_split and self.values[0] == ACE and rules.split_aces_one_card


class BlackjackRound:
    """A round for ``seats`` (the seats with a bet) under ``rules``; see the module docstring."""

    __slots__ = (
        "_due",
        "_initial",
        "_initial_next",
        "cards",
        "dealer",
        "hands",
        "insurance_offered",
        "insurance_taken",
        "peeked",
        "rules",
        "seats",
    )

    def __init__(self, rules: TableRules, seats: Iterable[int]) -> None:
        chosen = tuple(seats)
        if not chosen:
            raise RoundError("a round needs at least one seat with a bet")
        for seat in chosen:
            if isinstance(seat, bool) or not isinstance(seat, int) or not 1 <= seat <= rules.seats:
                raise RoundError(f"seat {seat!r} does not exist (seats 1 to {rules.seats})")
        if len(set(chosen)) != len(chosen):
            raise RoundError(f"a seat is listed twice: {list(chosen)}")
        self.rules = rules
        self.seats = tuple(sorted(chosen))
        self.hands: dict[int, list[_Hand]] = {seat: [_Hand(seat, 1)] for seat in self.seats}
        self.dealer: list[Card] = []
        self.cards: list[Card] = []
        # The opening deal as (seat or None for the dealer, reason), in the order of 2.3.4.
        self._initial: tuple[tuple[int | None, CardReason], ...] = (
            *((seat, CardReason.FIRST) for seat in self.seats),
            (None, CardReason.UP),
            *((seat, CardReason.SECOND) for seat in self.seats),
            (None, CardReason.HOLE),
        )
        self._initial_next = 0
        self.insurance_offered = False
        #: ``None`` while insurance is offered and not yet answered.
        self.insurance_taken: frozenset[int] | None = frozenset()
        self.peeked = False
        #: :meth:`due`'s answer until the next event (the table and replay ask it often).
        self._due: object = _STALE

    # -- what is due -----------------------------------------------------------------------

    def due(self) -> Due | None:
        """What the round waits for next, or ``None`` when it is complete."""
        if self._due is _STALE:
            self._due = self._find_due()
        return self._due  # type: ignore[return-value]

    def _find_due(self) -> Due | None:
        if self._initial_next < len(self._initial):
            seat, reason = self._initial[self._initial_next]
            return CardDue(seat, 1, reason, _initial_prompt(seat, reason))
        if self.insurance_taken is None:
            return InsuranceDue(self.seats, "Insurance: the dealer shows an ace")
        if self.peeked and self._dealer_blackjack():
            return None
        hand = self._current_hand()
        if hand is not None:
            label = self._label(hand)
            wanted = hand.needs_card()
            if wanted is not None:
                return CardDue(hand.seat, hand.number, wanted, _hand_prompt(label, wanted))
            options = self.options(hand)
            words = ", ".join(action.value for action in options)
            return DecisionDue(hand.seat, hand.number, options, f"{label}: {words}?")
        if self._dealer_draws():
            return CardDue(None, 1, CardReason.DEALER, "Dealer draws")
        return None

    @property
    def complete(self) -> bool:
        return self.due() is None

    def prompt(self) -> str:
        """Dealer-facing text: what to do next, or how the dealer's hand ended."""
        due = self.due()
        if due is not None:
            return due.prompt
        value = hand_value(card_value(card) for card in self.dealer)
        if self._dealer_blackjack():
            return "Dealer has blackjack"
        if not self._dealer_needed():
            return f"Dealer stands on {value.total}: every hand is decided"
        if value.bust:
            return f"Dealer busts with {value.total}"
        return f"Dealer stands on {value.total}"

    def options(self, hand: _Hand) -> tuple[Action, ...]:
        """The legal decisions of an unfinished hand, in a fixed order."""
        options = [Action.HIT, Action.STAND]
        if self._double_refusal(hand) is None:
            options.append(Action.DOUBLE)
        if self._split_refusal(hand) is None:
            options.append(Action.SPLIT)
        return tuple(options)

    # -- events ----------------------------------------------------------------------------

    def deal(self, card: Card) -> CardDue:
        """The next card out of the shoe; returns the :class:`CardDue` it answered."""
        due = self.due()
        if not isinstance(due, CardDue):
            waiting = "nothing: the round is complete" if due is None else due.prompt
            raise RoundError(f"card {card.code} dealt while waiting for {waiting}")
        self.cards.append(card)
        self._due = _STALE
        if self._initial_next < len(self._initial):
            self._initial_next += 1
            if due.seat is None:
                self.dealer.append(card)
            else:
                self.hands[due.seat][0].add(card)
            if due.reason is CardReason.HOLE:
                self._after_hole_card()
        elif due.seat is None:
            self.dealer.append(card)
        else:
            self.hands[due.seat][due.hand - 1].add(card)
        return due

    def insure(self, seats: Iterable[int]) -> None:
        """Answer the insurance offer: the seats that take insurance (maybe none)."""
        if self.insurance_taken is not None:
            raise RoundError("insurance is not being offered now")
        taken = frozenset(seats)
        strangers = sorted(taken - set(self.seats), key=repr)
        if strangers:
            raise RoundError(f"insurance for seat(s) without a bet this round: {strangers}")
        self.insurance_taken = taken
        self._due = _STALE
        self._peek()

    def decide(self, seat: int, action: Action | str) -> None:
        """Seat ``seat``'s decision for the hand whose turn it is."""
        due = self.due()
        if not isinstance(due, DecisionDue) or due.seat != seat:
            waiting = "nothing: the round is complete" if due is None else due.prompt
            raise RoundError(f"seat {seat} decided {_word(action)} while waiting for {waiting}")
        hand = self.hands[seat][due.hand - 1]
        label = self._label(hand)
        try:
            chosen = Action(action)
        except ValueError:
            known = ", ".join(a.value for a in Action)
            raise IllegalActionError(f"{label}: unknown action {action!r} (known: {known})") \
                from None
        if chosen not in due.options:
            refusal = (
                self._double_refusal(hand) if chosen is Action.DOUBLE
                else self._split_refusal(hand)
            )
            legal = ", ".join(a.value for a in due.options)
            raise IllegalActionError(f"{label}: cannot {chosen.value}: {refusal} (legal: {legal})")
        self._due = _STALE
        if chosen is Action.HIT:
            hand.wants = CardReason.HIT
        elif chosen is Action.STAND:
            hand.stood = True
        elif chosen is Action.DOUBLE:
            hand.doubled = True
            hand.wants = CardReason.DOUBLE
        else:
            second = _Hand(seat, 2, from_split=True)
            second.add(hand.cards.pop())
            hand.values.pop()
            hand.from_split = True
            self.hands[seat].append(second)

    # -- the result ------------------------------------------------------------------------

    def result(self) -> RoundResult:
        """The settled round; only once :meth:`due` is ``None``."""
        due = self.due()
        if due is not None:
            raise RoundError(f"the round is not complete: waiting for {due.prompt}")
        dealer = hand_value(card_value(card) for card in self.dealer)
        dealer_bj = self._dealer_blackjack()
        hands = {
            seat: tuple(self._hand_result(hand, dealer, dealer_bj) for hand in self.hands[seat])
            for seat in self.seats
        }
        assert self.insurance_taken is not None
        return RoundResult(
            seats=self.seats,
            dealer=tuple(self.dealer),
            dealer_total=dealer.total,
            dealer_soft=dealer.soft,
            dealer_blackjack=dealer_bj,
            dealer_bust=dealer.bust,
            peeked=self.peeked,
            dealer_played=self._dealer_needed() and not (self.peeked and dealer_bj),
            insurance_offered=self.insurance_offered,
            insurance_taken=self.insurance_taken,
            hands=hands,
            cards=tuple(self.cards),
        )

    # -- internals -------------------------------------------------------------------------

    def _after_hole_card(self) -> None:
        if card_value(self.dealer[0]) == ACE:
            self.insurance_offered = True
            self.insurance_taken = None  # insure() then peeks
        else:
            self._peek()

    def _peek(self) -> None:
        self.peeked = card_value(self.dealer[0]) in self.rules.peeks_on

    def _dealer_blackjack(self) -> bool:
        return len(self.dealer) == 2 and is_blackjack(
            (card_value(card) for card in self.dealer), False
        )

    def _current_hand(self) -> _Hand | None:
        for seat in self.seats:
            for hand in self.hands[seat]:
                if not hand.finished(self.rules):
                    return hand
        return None

    def _dealer_needed(self) -> bool:
        """Some hand still depends on the dealer's total (not busted, not blackjack)."""
        return any(
            not hand.value.bust and not hand.blackjack
            for hands in self.hands.values()
            for hand in hands
        )

    def _dealer_draws(self) -> bool:
        if not self._dealer_needed():
            return False
        value = hand_value(card_value(card) for card in self.dealer)
        return dealer_hits(value, self.rules.hits_soft_17)

    def _label(self, hand: _Hand) -> str:
        split = len(self.hands[hand.seat]) > 1
        return f"Seat {hand.seat} hand {hand.number}" if split else f"Seat {hand.seat}"

    def _double_refusal(self, hand: _Hand) -> str | None:
        """Why ``hand`` may not double now, or ``None`` if it may."""
        rules = self.rules
        if len(hand.cards) != 2:
            return "double only on the first two cards"
        if hand.from_split and not rules.double_after_split:
            return "no double after a split at this table"
        if not rules.can_double_total(hand.value):
            allowed = ", ".join(map(str, sorted(rules.double_totals or ())))
            return f"this table doubles only on {allowed}"
        return None

    def _split_refusal(self, hand: _Hand) -> str | None:
        """Why ``hand`` may not split now, or ``None`` if it may."""
        if hand.from_split:
            return "a hand may be split only once"
        if len(hand.cards) != 2:
            return "split only the first two cards"
        if not self.rules.can_split(*hand.cards):
            if hand.values[0] == hand.values[1] == ACE:
                return "aces may not be split at this table"
            kind = "rank" if self.rules.split_by == "rank" else "value"
            return f"not a pair (two cards of the same {kind})"
        return None

    def _hand_result(self, hand: _Hand, dealer: HandValue, dealer_bj: bool) -> HandResult:
        value = hand.value
        blackjack = hand.blackjack
        stake = 2 if hand.doubled else 1
        rules = self.rules
        if value.bust:
            outcome, payout = Outcome.LOSE, Decimal(-stake)
        elif blackjack:
            if dealer_bj:
                outcome, payout = Outcome.PUSH, Decimal(0)
            else:
                outcome, payout = Outcome.WIN, rules.blackjack_pays
        elif dealer_bj:
            # A dealer blackjack after the players acted (ten up, no peek): seed 003 2.2.6.
            outcome = Outcome.LOSE
            lost = 1 if hand.doubled and rules.double_loses_original_only else stake
            if hand.from_split and hand.number == 2 and rules.split_loses_original_only:
                lost = 0
            payout = Decimal(-lost)
        elif dealer.bust or value.total > dealer.total:
            outcome, payout = Outcome.WIN, rules.win_pays * stake
        elif value.total < dealer.total:
            outcome, payout = Outcome.LOSE, Decimal(-stake)
        else:
            outcome, payout = Outcome.PUSH, Decimal(0)
        return HandResult(
            seat=hand.seat,
            hand=hand.number,
            cards=tuple(hand.cards),
            total=value.total,
            soft=value.soft,
            blackjack=blackjack,
            bust=value.bust,
            doubled=hand.doubled,
            from_split=hand.from_split,
            outcome=outcome,
            payout=payout,
        )


def _initial_prompt(seat: int | None, reason: CardReason) -> str:
    if reason is CardReason.UP:
        return "Deal the dealer's up card"
    if reason is CardReason.HOLE:
        return "Deal the dealer's hole card face down"
    return f"Deal seat {seat}"


def _hand_prompt(label: str, reason: CardReason) -> str:
    if reason is CardReason.DOUBLE:
        return f"{label}: double, one card"
    if reason is CardReason.SPLIT:
        return f"{label}: second card after the split"
    return f"{label}: hit"


def _word(action: object) -> str:
    return action.value if isinstance(action, Action) else repr(action)

