"""The game-independent table: shoe life, betting window, error latch, card accounting.

A pure, deterministic state machine: :meth:`Table.handle` takes one journalled input and
returns the table events it caused; :meth:`Table.view` says what the dealer must see and
whether the card exit must be locked. No clock, no I/O: replaying the journal's inputs into a
fresh ``Table`` rebuilds exactly the same state, which is how the controller survives a crash.

Two ``transitions`` machines share this model:

* ``state``: the shoe's life and each round's (nested)::

      no_shoe -> shoe_loaded -> burn -> in_play.{betting_open -> betting_closed
          -> dealing.<game's sub-states> -> result_shown -> result_confirmed} ...
          -> cut_card_out.{same round states} -> shoe_finished

* ``alarm``: ``ok`` or ``latched``; a latched irregularity locks the exit until a supervisor
  clears it (or its cause is resolved, for a misread).

The game (baccarat now) decides which card is due and what the round's result is; see
:mod:`shoe_controller.table.game`.
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass
from typing import Any

from transitions import Machine
from transitions.extensions.nesting import HierarchicalMachine, NestedState

from shoe_controller.cards import Card
from shoe_controller.table.game import Awaiting, Due, Game, is_interactive
from shoe_controller.table.identity import ShoeIdentity
from shoe_controller.table.inputs import (
    BettingCommand,
    ButtonPressed,
    CameraCheck,
    CameraDeclined,
    CameraRead,
    CardDrawn,
    CardMisread,
    DeviceConnected,
    DeviceFault,
    InsuranceDecision,
    LinkChanged,
    MessageRefused,
    PlayerDecision,
    SessionStarted,
    ShoeEventInput,
    ShoeStatus,
    ShoeUnresponsive,
    SupervisorAction,
    TableInput,
)
from shoe_controller.table.irregularities import Irregularity, Latched

PHASES = ("in_play", "cut_card_out")
ROUND_STATES_BEFORE_DEALING = ("betting_open", "betting_closed")
ROUND_STATES_AFTER_DEALING = ("result_shown", "result_confirmed")


class TableState(NestedState):
    """Nested states named ``in_play.dealing.player_third``: underscores stay inside names."""

    separator = "."


class TableMachine(HierarchicalMachine):
    state_cls = TableState


class Level(str, enum.Enum):
    """How the dealer's prompt is shown: an instruction, a result, a notice or an error."""

    ACTION = "action"
    WAIT = "wait"
    RESULT = "result"
    ERROR = "error"


@dataclass(frozen=True)
class TableView:
    """What the table shows and does right now (derived from state; nothing stored)."""

    state: str
    alarm: str
    prompt: str
    level: Level
    detail: str
    exit_locked: bool
    lights: tuple[str, ...]
    round: int
    cards_dealt: int
    due: str | None
    latched: tuple[dict[str, Any], ...]
    lid_open: bool
    link_up: bool
    #: What the round waits for when it is the players' turn (blackjack), else None.
    awaiting: Awaiting | None = None

    def to_dict(self) -> dict[str, Any]:
        extra = {} if self.awaiting is None else {"awaiting": self.awaiting.to_dict()}
        return {
            **extra,
            "state": self.state,
            "alarm": self.alarm,
            "prompt": self.prompt,
            "level": self.level.value,
            "detail": self.detail,
            "exit_locked": self.exit_locked,
            "lights": list(self.lights),
            "round": self.round,
            "cards_dealt": self.cards_dealt,
            "due": self.due,
            "latched": list(self.latched),
            "lid_open": self.lid_open,
            "link_up": self.link_up,
        }


@dataclass
class _Pending:
    """A card that left the shoe but cannot be used yet: unread (misread or unreported) or
    suspect (too many copies). ``due`` is what it was dealt as: once its face is known it
    goes there, whatever else has been latched meanwhile."""

    counter: int
    reason: Irregularity
    card: Card | None
    due: Due
    #: Why the camera could not read it ("declined", "no_frame"), once it said so: the
    #: dealer then calls a supervisor instead of waiting for the camera.
    camera: str = ""


@dataclass
class TableSettings:
    """Table rules that are not the game's: e.g. whether the lid may open between rounds."""

    table_id: str = "table-1"
    camera_fallback: bool = False
    """A camera reads misread cards (``--camera``): the misread remedy says so."""


def _round_states(game: Game) -> list[Any]:
    return [
        *ROUND_STATES_BEFORE_DEALING,
        {"name": "dealing", "children": list(game.dealing_states)},
        *ROUND_STATES_AFTER_DEALING,
    ]


def machine_definition(game: Game) -> tuple[list[Any], list[dict[str, Any]]]:
    """States and transitions of the ``state`` machine, as data (also used for the diagram)."""
    states: list[Any] = [
        "no_shoe",
        "shoe_loaded",
        "burn",
        *({"name": phase, "children": _round_states(game)} for phase in PHASES),
        "shoe_finished",
    ]
    t: list[dict[str, Any]] = [
        {"trigger": "load_shoe", "source": ["no_shoe", "shoe_finished"], "dest": "shoe_loaded"},
        {"trigger": "start_burn", "source": "shoe_loaded", "dest": "burn"},
        {"trigger": "open_betting", "source": "burn", "dest": "in_play.betting_open"},
    ]
    dealing = [f"dealing.{sub}" for sub in game.dealing_states]
    round_states = [*ROUND_STATES_BEFORE_DEALING, *dealing, *ROUND_STATES_AFTER_DEALING]
    for phase in PHASES:
        p = f"{phase}."
        t += [
            {"trigger": "open_betting", "source": p + "result_confirmed", "dest": p + "betting_open"},
            {"trigger": "close_betting", "source": p + "betting_open", "dest": p + "betting_closed"},
            {
                "trigger": "cards_complete",
                "source": [p + s for s in dealing],
                "dest": p + "result_shown",
            },
            {"trigger": "confirm", "source": p + "result_shown", "dest": p + "result_confirmed"},
            {
                "trigger": "void",
                "source": [p + s for s in ("betting_closed", *dealing, "result_shown")],
                "dest": p + "result_confirmed",
            },
            {
                "trigger": "finish_shoe",
                "source": [p + s for s in round_states],
                "dest": "shoe_finished",
            },
        ]
        # Dealing only moves forward through the game's sub-states (in the order it lists them).
        for index, sub in enumerate(game.dealing_states):
            sources = [p + "betting_closed"] if index == 0 else []
            sources += [p + s for s in dealing[:index]]
            t.append({"trigger": f"deal_{sub}", "source": sources, "dest": p + f"dealing.{sub}"})
    t += [
        {"trigger": "cut_card", "source": f"in_play.{s}", "dest": f"cut_card_out.{s}"}
        for s in round_states
    ]
    t.append({"trigger": "finish_shoe", "source": ["shoe_loaded", "burn"], "dest": "shoe_finished"})
    return states, t


ALARM_STATES = ["ok", "latched"]
ALARM_TRANSITIONS = [
    {"trigger": "latch", "source": ["ok", "latched"], "dest": "latched"},
    {"trigger": "unlatch", "source": "latched", "dest": "ok"},
]


class AlarmLatch:
    """The error latch: its own model, so its triggers never clash with the table's."""

    state: str

    def __init__(self, options: dict[str, Any]) -> None:
        self.machine = Machine(model=self, states=ALARM_STATES, transitions=ALARM_TRANSITIONS,
                               initial="ok", **options)


#: Latches that say nothing against a card already drawn through an unlocked exit: the shoe
#: locks itself when it loses the host, and these say only that the controller cannot trust
#: its view of the shoe until a supervisor looked. A card the shoe let out for the counter the
#: host unlocked was due when the host unlocked it, so it is dealt.
_IN_FLIGHT_TOLERATED = frozenset(
    {Irregularity.LINK_LOST, Irregularity.UNREADABLE_MESSAGE, Irregularity.SHOE_NOT_RESPONDING}
)
#: Irregularities a resolved pending card clears (the card they are about is now known).
_PENDING_KINDS = frozenset(
    {Irregularity.MISREAD, Irregularity.TOO_MANY_COPIES, Irregularity.COUNTER_GAP}
)
#: Pending cards whose face is unknown: a supervisor must enter them (or void the round).
_UNREAD = frozenset({Irregularity.MISREAD, Irregularity.COUNTER_GAP})


class Table:
    """The live table. Feed it inputs with :meth:`handle`; read :meth:`view`."""

    state: str

    @property
    def alarm(self) -> str:
        """``ok`` or ``latched``."""
        return self._alarm.state

    def latch(self) -> None:
        self._alarm.latch()  # type: ignore[attr-defined]

    def unlatch(self) -> None:
        self._alarm.unlatch()  # type: ignore[attr-defined]

    def __init__(self, game: Game, settings: TableSettings | None = None) -> None:
        self.game = game
        self.settings = settings or TableSettings()
        states, transitions = machine_definition(game)
        common = {"auto_transitions": False, "queued": True, "send_event": False}
        self._machine = TableMachine(
            model=self, states=states, transitions=transitions, initial="no_shoe",
            model_attribute="state", **common,
        )
        self._alarm = AlarmLatch(common)
        self.round_number = 0
        self.shoe_number = 0
        self.latched: list[Latched] = []
        self.pending: _Pending | None = None
        self.lid_open = False
        self.link_up = False
        self.cards_dealt = 0
        self.burn_cards: list[Card] = []
        self.error_burn: list[Card] = []
        """The cards of the last burn after a game error (blackjack)."""
        self.strays: list[dict[str, Any]] = []
        self.seen: Counter[Card] = Counter()
        self.notice = ""
        self.refusal = ""
        """Why the last input, a supervisor action, was not carried out ("" when it was)."""
        self.cut_card_seen = False
        self.shoe_empty = False
        self.reloaded = False
        """A new shoe was loaded while this one was in play: it is dealt once this one ends."""
        self.profile = ""
        self.profile_sha256 = ""
        self._next_game: Game | None = None
        self.identity = ShoeIdentity()
        self.shoe_device: str | None = None
        """Serial of the shoe device the shoe in play was loaded in (None: no shoe yet)."""
        self._events: list[dict[str, Any]] = []

    # ------------------------------------------------------------------ card identity
    @property
    def last_counter(self) -> int:
        """The highest card counter the connected shoe has reported since its last load."""
        return self.identity.counters.last_counter

    @property
    def device_serial(self) -> str:
        return self.identity.serial

    def is_duplicate(self, item: TableInput) -> bool:
        """Whether the shoe resent something the journal already holds (after a restart of
        either side), so it must be acknowledged but not applied again.

        A card is a repeat when the connected shoe, in its current load, already reported
        that counter with that face; the same counter with another face is no repeat (it is
        journalled and latched). A SHOE_LOADED is a repeat when the shoe numbers its loads and
        names the load in play; without load numbers a reload is always taken as new.
        """
        if isinstance(item, CardDrawn):
            return self.identity.is_repeat_card(item.counter, item.card.code)
        if isinstance(item, CardMisread):
            return self.identity.is_repeat_card(item.counter, None)
        if isinstance(item, ShoeEventInput) and item.event == "shoe_loaded":
            return self.identity.is_repeat_load(item.counter)
        return False

    def status_news(self, counter: int, lid_open: bool) -> bool:
        """Whether a shoe status report with this counter and lid state tells the table
        something it does not know (then it is journalled as a :class:`ShoeStatus`)."""
        counters = self.identity.counters
        return (counter != counters.last_counter or not counters.known
                or lid_open != self.lid_open)

    # ------------------------------------------------------------------ inputs
    def handle(self, item: TableInput) -> list[dict[str, Any]]:
        """Apply one (already journalled) input; return the table events it caused."""
        self._events = []
        self.notice = ""
        self.refusal = ""
        handler = getattr(self, f"_on_{item.KIND}")
        handler(item)
        return self._events

    def _on_session(self, item: SessionStarted) -> None:
        # A new controller session has no shoe link until the shoe answers. Not an
        # irregularity: the shoe locked its own exit when the old session went silent, and
        # the round resumes exactly where it was once the link is back.
        self.profile = item.profile
        self.link_up = False
        if not item.profile_toml or item.profile_sha256 == self.profile_sha256:
            return  # the same profile (or a journal from before profiles were journalled)
        from shoe_controller.games.registry import game_from_toml

        game = game_from_toml(item.profile_toml, item.profile)
        self.profile_sha256 = item.profile_sha256
        if game.dealing_states != self.game.dealing_states:
            self.notice = f"profile {item.profile!r} is for another game: not taken"
        elif self.state in ("no_shoe", "shoe_finished"):
            self.game, self._next_game = game, None
        else:
            self._next_game = game
            self.notice = f"profile {item.profile!r} applies from the next shoe"

    def _on_device(self, item: DeviceConnected) -> None:
        anonymous = self.shoe_device == "" and bool(item.serial)
        if anonymous:
            # The shoe in play was loaded before devices were identified: it is this one.
            self.shoe_device = item.serial
        self.identity.connect(item.serial, item.capabilities, adopt_anonymous=anonymous)
        self._emit("device_connected", serial=item.serial, model=item.model,
                   firmware=item.firmware, restarted=item.restarted)
        if (self._shoe_in_play() and self.shoe_device is not None
                and item.serial != self.shoe_device
                and not any(l.kind is Irregularity.SHOE_SWAPPED for l in self.latched)):
            self._latch(Irregularity.SHOE_SWAPPED,
                        f"shoe {item.serial or '?'} connected; this shoe was loaded in "
                        f"{self.shoe_device or '?'}")

    def _on_card(self, item: CardDrawn) -> None:
        due = self._card_out(item.card, item.counter, item.drawn_while_locked)
        if due is None:
            return
        if self.seen[item.card] > self.game.copies_per_card:
            self._hold(_Pending(item.counter, Irregularity.TOO_MANY_COPIES, item.card, due))
            # A face-down card (the hole card) is named by no output before it is turned.
            name = "the face-down card" if _secret(due) else item.card.code
            self._latch(
                Irregularity.TOO_MANY_COPIES,
                f"{name} seen {self.seen[item.card]} times; the shoe holds "
                f"{self.game.copies_per_card}",
                card=None if _secret(due) else item.card.code,
                counter=item.counter,
            )
            return
        self._apply(item.card, due, source=item.source, counter=item.counter)

    def _on_misread(self, item: CardMisread) -> None:
        due = self._card_out(None, item.counter, item.drawn_while_locked)
        if due is None:
            return
        self._hold(_Pending(item.counter, Irregularity.MISREAD, None, due))
        # Named as the dealer knows it ("Player's 2nd card"): the shoe's counter also counts
        # burn cards and earlier rounds, so "card 17" means nothing at the table.
        self._latch(Irregularity.MISREAD, self._due_name(due), counter=item.counter)

    def _card_out(self, card: Card | None, counter: int, while_locked: bool) -> Due | None:
        """Account a card (``None``: unread) that left the shoe; the card it is due as, or
        None when it was set aside as an irregularity (or is no new card at all)."""
        counters = self.identity.counters
        code = None if card is None else card.code
        if counter in counters.missing:
            self._late_report(card, counter)
            return None
        if counter in counters.faces:  # the same counter again, with another face
            self._latch(Irregularity.COUNTER_MISMATCH,
                        f"the shoe reports card {counter} as {code or 'unread'}, after "
                        f"{counters.faces[counter] or 'unread'}", card=code, counter=counter)
            return None
        if counters.known and counter <= counters.last_counter:
            self._latch(Irregularity.COUNTER_MISMATCH,
                        f"the shoe reports card {counter} after card {counters.last_counter}",
                        card=code, counter=counter)
            return None
        if counters.known and counter > counters.last_counter + 1:
            self._gap(counters.last_counter + 1, counter - 1)
        counters.known = True
        counters.last_counter = counter
        counters.faces[counter] = code
        unread = "" if card is not None else "unread card"
        if not self._shoe_in_play():
            self._stray(card, counter, Irregularity.EXTRA_CARD, "no shoe in play")
            return None
        self.cards_dealt += 1
        if card is not None:
            self.seen[card] += 1
        if while_locked:
            self._stray(card, counter, Irregularity.CARD_WHILE_LOCKED, unread)
            return None
        due = self._due(in_flight=True)
        if due is None:
            self._stray(card, counter, self._misplaced(), unread)
        return due

    def _gap(self, first: int, last: int) -> None:
        """Cards ``first``..``last`` left the shoe without a report (a refused frame, a lost
        message): the first one took the place of the card due then, the others are set
        aside. A gap longer than a shoe is no gap but a confused counter."""
        counters = self.identity.counters
        counters.last_counter = max(counters.last_counter, last)
        if last - first + 1 > 52 * self.game.copies_per_card:
            self._latch(Irregularity.COUNTER_MISMATCH,
                        f"the shoe's counter jumped from {first - 1} to {last}")
            return
        counters.missing.update(range(first, last + 1))
        in_play = self._shoe_in_play()
        due = self._due(in_flight=True) if in_play else None
        for counter in range(first, last + 1):
            detail = f"card {counter} left the shoe unreported"
            if not in_play:
                self._stray(None, counter, Irregularity.EXTRA_CARD, detail + "; no shoe in play")
                continue
            self.cards_dealt += 1
            if counter == first and due is not None and self.pending is None:
                self._hold(_Pending(counter, Irregularity.COUNTER_GAP, None, due))
                self._latch(Irregularity.COUNTER_GAP,
                            f"a card left the shoe unreported: {self._due_name(due)}",
                            counter=counter)
            else:
                self._stray(None, counter, Irregularity.COUNTER_GAP, detail)

    def _late_report(self, card: Card | None, counter: int) -> None:
        """A card counted as unreported is reported after all (e.g. resent by a shoe after a
        restart): if it is the pending one its face resolves it, else it stays set aside."""
        counters = self.identity.counters
        counters.missing.discard(counter)
        counters.faces[counter] = None if card is None else card.code
        pending = self.pending
        if card is not None and pending is not None and pending.counter == counter:
            self._resolve_pending(card, source="scanner", actor=None)
        else:
            self.notice = f"card {counter} reported late: it stays set aside"

    def _on_camera_read(self, item: CameraRead) -> None:
        pending = self.pending
        if pending is None or pending.reason not in _UNREAD:
            self.notice = "camera read ignored: no unread card is pending"
            return
        if pending.counter != item.counter:
            self.notice = f"camera read for card {item.counter} ignored: card {pending.counter} is pending"
            return
        self._resolve_pending(item.card, source="camera", actor=None)

    def _on_camera_declined(self, item: CameraDeclined) -> None:
        pending = self.pending
        if pending is None or pending.reason not in _UNREAD or pending.counter != item.counter:
            return  # (entered by a supervisor meanwhile: nobody waits for the camera now)
        pending.camera = item.outcome

    def _on_camera_check(self, item: CameraCheck) -> None:
        self._latch(
            Irregularity.CAMERA_DISAGREES,
            f"card {item.counter}: scanner {item.card.code}, camera {item.camera} "
            f"({item.confidence:.0%})",
            card=item.card.code,
            counter=item.counter,
        )

    def _on_shoe_event(self, item: ShoeEventInput) -> None:
        event = item.event
        if event == "shoe_loaded":
            self._on_shoe_loaded(item.counter)
        elif event == "cut_card":
            self._on_cut_card()
        elif event == "lid_opened":
            self._lid(True)
        elif event == "lid_closed":
            self._lid(False)
        elif event == "shoe_empty":
            self.shoe_empty = True
            if self._due() is not None:
                self._latch(Irregularity.SHOE_EMPTY, "no cards left to finish the round")
            elif self.state.endswith(("betting_open", "result_confirmed")) or self.state == "burn":
                # Between rounds with nothing left to deal: the shoe is over (only possible
                # without a cut card; with one the last round comes first).
                if self.state.endswith("betting_open"):
                    self._emit("round_void", round=self.round_number, supervisor=None,
                               reason="shoe empty before the round's first card")
                self._finish_shoe(early=True)
        elif event == "pull_refused":
            self.notice = "The exit is locked: no card is due"
        self._emit("shoe_event", event=event)

    def _on_shoe_loaded(self, load: int) -> None:
        """A freshly shuffled shoe was loaded into the device: its counters start again."""
        self.identity.new_load(load)
        if self.state in ("no_shoe", "shoe_finished"):
            self._new_shoe()
        elif self.state == "shoe_loaded" and self.cards_dealt == 0:
            self.notice = "the shoe was loaded again before its first card"
        elif not self.reloaded:
            self.reloaded = True
            self._latch(Irregularity.SHOE_RELOADED,
                        f"shoe {self.shoe_number} was in play ({self.cards_dealt} cards dealt)")

    def _lid(self, open_: bool) -> None:
        if open_ == self.lid_open:
            return  # reported again (a resend after a restart, or a status report)
        self.lid_open = open_
        if open_ and (self._round_in_progress() or self.state in ("shoe_loaded", "burn")):
            self._latch(Irregularity.LID_OPENED, "lid opened mid-round")

    def _on_shoe_status(self, item: ShoeStatus) -> None:
        counters = self.identity.counters
        if not counters.known:
            counters.known, counters.last_counter = True, item.counter
        elif item.counter > counters.last_counter:
            self._gap(counters.last_counter + 1, item.counter)
        elif item.counter < counters.last_counter:
            self._latch(Irregularity.COUNTER_MISMATCH,
                        f"the shoe reports {item.counter} cards drawn; the table has "
                        f"{counters.last_counter}")
        self._lid(item.lid_open)

    def _on_message_refused(self, item: MessageRefused) -> None:
        self._latch(Irregularity.UNREADABLE_MESSAGE, f"{item.code}: {item.detail}".rstrip(": "))

    def _on_shoe_unresponsive(self, item: ShoeUnresponsive) -> None:
        self._latch(Irregularity.SHOE_NOT_RESPONDING, item.detail)

    def _on_button(self, item: ButtonPressed) -> None:
        if self.alarm == "latched":
            self.notice = "button ignored: an error must be cleared first"
        elif self.state.endswith("result_shown"):
            self.confirm()
            self._emit("result_confirmed", round=self.round_number)
            self._after_round()
        else:
            self.notice = "button ignored: no result to confirm"

    def _on_link(self, item: LinkChanged) -> None:
        self.link_up = item.up
        if not item.up and self._round_in_progress():
            self._latch(Irregularity.LINK_LOST, item.reason or "shoe link lost mid-round")
        self._emit("device", link_up=item.up, reason=item.reason)

    def _on_fault(self, item: DeviceFault) -> None:
        self._latch(Irregularity.DEVICE_FAULT, f"{item.code}: {item.detail}".rstrip(": "))

    def _on_betting(self, item: BettingCommand) -> None:
        if item.action == "open":
            if self.alarm == "latched":
                self.notice = "betting not opened: an error must be cleared first"
            elif self.waiting_for_round():
                self._start_round()
            else:
                self.notice = "open betting ignored: a round is in progress"
        elif item.action == "close":
            if not self.state.endswith("betting_open"):
                self.notice = "close betting ignored: betting is not open"
            elif is_interactive(self.game):
                try:
                    self.game.close_betting(item.seats)
                except ValueError as exc:
                    self._refuse(f"betting not closed: {exc}")
                    self._emit("betting_refused", round=self.round_number, origin=item.origin,
                               reason=str(exc))
                    return
                self.close_betting()
                self._emit("betting_closed", round=self.round_number, origin=item.origin,
                           seats=sorted(item.seats or ()))
            else:
                self.close_betting()
                self._emit("betting_closed", round=self.round_number, origin=item.origin)
        else:
            self.notice = f"unknown betting action {item.action!r} ignored"

    def _on_supervisor(self, item: SupervisorAction) -> None:
        action = item.action
        if action == "clear":
            self._supervisor_clear(item)
        elif action == "void_round":
            if not item.reason.strip():
                # A voided round is a dispute waiting to happen: the journal must say why.
                self._refuse("a void needs a reason")
                return
            if not self._round_in_progress():
                self._refuse("no round in progress to void")
                return
            self._set_aside_pending()
            self.game.void_round()
            self._game_events()
            self.void()
            self._emit("round_void", round=self.round_number, supervisor=item.supervisor,
                       reason=item.reason)
            self._clear_latches(item.supervisor, keep_conditions=True)
            self._after_round()
        elif action == "enter_card":
            if item.card is None:
                self._refuse("enter_card needs a card")
            elif self.pending is None:
                self._refuse("no unread or suspect card is pending")
            else:
                self._resolve_pending(item.card, source="supervisor", actor=item.supervisor)
        elif action == "error_burn":
            burn = getattr(self.game, "error_burn", None)
            if burn is None:
                self._refuse(f"{self.game.name}: no burn after a game error")
            elif not self.state.endswith("result_confirmed") or self.alarm == "latched":
                self._refuse("cards are burned after a game error only between rounds, with "
                             "nothing latched (void the round or clear the error first)")
            else:
                try:
                    count = burn(item.supervisor)
                except ValueError as exc:
                    self._refuse(str(exc))
                    return
                self.error_burn = []
                self._emit("error_burn_started", round=self.round_number, cards=count,
                           supervisor=item.supervisor)
        elif action == "end_shoe":
            if not self._shoe_in_play():
                self._refuse("no shoe in play to end")
                return
            if self.state.endswith("result_shown") and self.pending is None:
                # The round's cards are complete and its result is shown: it stands.
                self.confirm()
                self._emit("result_confirmed", round=self.round_number)
            elif self._round_in_progress():
                self.game.void_round()
                self._game_events()
                self._emit("round_void", round=self.round_number, supervisor=item.supervisor,
                           reason="shoe ended early")
            self._set_aside_pending()
            self._clear_latches(item.supervisor, keep_conditions=False)
            self._finish_shoe(early=True, supervisor=item.supervisor)
            if self.reloaded:  # the shoe loaded meanwhile is dealt now
                self.reloaded = False
                self._new_shoe()
        else:
            self._refuse(f"unknown supervisor action {action!r}")

    def _on_decision(self, item: PlayerDecision) -> None:
        self._answer(item, lambda game: game.decide(item.seat, item.hand, item.action),
                     seat=item.seat, hand=item.hand, action=item.action)

    def _on_insurance(self, item: InsuranceDecision) -> None:
        self._answer(item, lambda game: game.insure(list(item.seats)),
                     seats=sorted(item.seats))

    def _answer(self, item: PlayerDecision | InsuranceDecision,
                apply: Any, **fields: Any) -> None:
        """A player's answer (journalled already): applied if it is the one awaited now, else
        refused with the reason (a ``decision_refused`` event: the table system is told)."""
        game = self.game
        kind = "decision" if isinstance(item, PlayerDecision) else "insurance"
        awaiting = game.awaiting() if (is_interactive(game)
                                       and ".dealing." in self.state) else None
        reason = ""
        if awaiting is None or awaiting.kind != kind:
            reason = f"no {kind} is awaited now" + (
                f" (awaiting: {awaiting.prompt})" if awaiting is not None else "")
        elif item.key and item.key != awaiting.key:
            reason = f"too late: {awaiting.prompt} is awaited now"
        elif self.alarm == "latched":
            reason = "an error must be cleared first"
        if not reason:
            assert is_interactive(game)
            try:
                sub_state = apply(game)
            except ValueError as exc:
                reason = str(exc)
            else:
                self._emit(kind, round=self.round_number, origin=item.origin,
                           key=awaiting.key if awaiting else "", **fields)
                self._advance(sub_state)
                return
        self._refuse(reason)
        self._emit(f"{kind}_refused", round=self.round_number, origin=item.origin,
                   key=item.key, reason=reason, **fields)

    def _game_events(self) -> None:
        if is_interactive(self.game):
            for event in self.game.take_events():
                self._emit(event.pop("type"), round=self.round_number, **event)

    def _refuse(self, reason: str) -> None:
        self.refusal = self.notice = reason

    # ------------------------------------------------------------------ view
    def view(self, *, connecting: bool = False, link_detail: str = "") -> TableView:
        """What the dealer sees now. While the shoe link is down the caller (who has the
        clock and the transport) says whether the table is still ``connecting`` (just
        started: no alarm yet) and why the shoe is not there (``link_detail``)."""
        due = self._due()
        awaiting = self.awaiting()
        locked = due is None or self.alarm == "latched" or self.lid_open or not self.link_up
        lights: tuple[str, ...] = ()
        detail = self.notice
        if self.alarm == "latched":
            first = self.latched[0]
            prompt, level = first.kind.prompt, Level.ERROR
            detail = self._remedy(first) + (f" ({first.detail})" if first.detail else "")
            lights = ("stop",)
        elif not self.link_up and connecting:
            prompt, level = "Connecting to the shoe...", Level.WAIT
            detail = "The exit stays locked until the shoe answers"
        elif not self.link_up:
            # Also with no shoe loaded: "Load a shuffled shoe" would send the dealer to a
            # shoe that cannot report its cards.
            prompt, level = "Shoe not connected: check its cable", Level.ERROR
            detail = "The exit stays locked until the shoe is back"
            if link_detail:
                detail = f"{link_detail[:1].upper()}{link_detail[1:]}. {detail}"
        elif self.lid_open and due is not None:
            prompt, level, lights = "Close the shoe lid", Level.ERROR, ("stop",)
        elif due is not None:
            prompt, level, lights = due.prompt, Level.ACTION, due.lights
            if self.state.endswith("betting_closed"):
                prompt = f"No more bets: {prompt}"
            decided = self.game.decision() if ".dealing." in self.state else ""
            if decided and decided != due.prompt:
                detail = decided
        elif awaiting is not None:
            # The players' turn: nothing to deal, the exit stays locked until they answer.
            prompt, level = awaiting.prompt, Level.WAIT
            detail = detail or ("Waiting for the seat's decision" if awaiting.kind == "decision"
                                else "Waiting for the players' insurance")
        elif self.state.endswith("result_shown"):
            prompt, level, lights = self.game.result_text(), Level.RESULT, ("confirm",)
            detail = f"{self.game.decision()}. Press the shoe button to confirm"
        elif self.state.endswith("betting_open"):
            prompt, level = "Place your bets", Level.WAIT
        elif self.state == "no_shoe":
            prompt, level, lights = "Load a shuffled shoe", Level.WAIT, ("shuffle",)
        elif self.state == "shoe_finished":
            prompt, level, lights = "Shoe finished", Level.RESULT, ("shuffle",)
            detail = detail or "Shuffle and load the next shoe"
        else:
            prompt, level = "Waiting for betting to open", Level.WAIT
        if self.cut_card_seen and self.state.startswith("cut_card_out") and level is not Level.ERROR:
            detail = (detail + " - " if detail else "") + (
                "Last round"
                if self.game.is_last_round() or self.game.is_shoe_complete()
                else "Cut card out: one more round"
            )
        return TableView(
            state=self.state,
            alarm=self.alarm,
            prompt=prompt,
            level=level,
            detail=detail,
            exit_locked=locked,
            lights=lights,
            round=self.round_number,
            cards_dealt=self.cards_dealt,
            due=None if due is None else due.target,
            latched=tuple(self._latched_dict(latch) for latch in self.latched),
            lid_open=self.lid_open,
            link_up=self.link_up,
            awaiting=awaiting,
        )

    def awaiting(self) -> Awaiting | None:
        """The players' answer the round waits for (blackjack), or None."""
        if is_interactive(self.game) and ".dealing." in self.state:
            return self.game.awaiting()
        return None

    def _remedy(self, latched: Latched) -> str:
        """What the dealer does about ``latched`` at this table: a misread is read by the
        camera only where there is one, and once the camera has said it cannot read the
        card, the dealer calls a supervisor."""
        pending = self.pending
        if (latched.kind in _UNREAD and pending is not None and pending.camera
                and pending.counter == latched.counter):
            return CAMERA_COULD_NOT_READ.get(pending.camera, CAMERA_COULD_NOT_READ["declined"])
        if latched.kind is Irregularity.MISREAD and self.settings.camera_fallback:
            return MISREAD_REMEDY_WITH_CAMERA
        return latched.kind.remedy

    def _latched_dict(self, latched: Latched) -> dict[str, Any]:
        return {**latched.to_dict(), "remedy": self._remedy(latched)}

    def _due_name(self, due: Due) -> str:
        """The due card as the dealer counts: "Player's 2nd card", "the 3rd burn card"."""
        if due.target == "burn":
            return f"the {_ordinal(len(self.burn_cards) + 1)} burn card"
        held = sum(1 for card in self.game.cards_in_round() if card.get("target") == due.target)
        return f"{due.target.capitalize()}'s {_ordinal(held + 1)} card"

    def snapshot(self) -> dict[str, Any]:
        """Everything the table holds, as plain values: two tables fed the same inputs have
        equal snapshots (how a test checks that the journal rebuilds the live table)."""
        return {
            "state": self.state, "alarm": self.alarm, "round": self.round_number,
            "shoe": self.shoe_number, "latched": [latch.to_dict() for latch in self.latched],
            "pending": None if self.pending is None else (
                self.pending.counter, self.pending.reason.value,
                None if self.pending.card is None else self.pending.card.code,
                self.pending.due.target, self.pending.camera),
            "lid_open": self.lid_open, "link_up": self.link_up, "cards_dealt": self.cards_dealt,
            "burn": [card.code for card in self.burn_cards], "strays": list(self.strays),
            "error_burn": [card.code for card in self.error_burn],
            "seen": sorted((card.code, n) for card, n in self.seen.items() if n),
            "cut_card_seen": self.cut_card_seen, "shoe_empty": self.shoe_empty,
            "reloaded": self.reloaded, "profile_sha256": self.profile_sha256,
            "identity": self.identity.snapshot(), "shoe_device": self.shoe_device,
            "round_cards": self.game.cards_in_round(),
            "view": self.view().to_dict(),
        }

    # ------------------------------------------------------------------ internals
    def _misplaced(self) -> Irregularity:
        """Which irregularity a card is when none is due."""
        if self.state.endswith("betting_open"):
            return Irregularity.CARD_DURING_BETTING
        return Irregularity.EXTRA_CARD

    def _due(self, *, in_flight: bool = False) -> Due | None:
        """The card due now. ``in_flight``: for a card the shoe let out of an unlocked exit;
        latches that say nothing against such a card (``_IN_FLIGHT_TOLERATED``) do not stop
        it being dealt."""
        if self.pending is not None:
            return None
        if self.alarm == "latched" and not (
            in_flight and all(l.kind in _IN_FLIGHT_TOLERATED for l in self.latched)
        ):
            return None
        if self.state in ("shoe_loaded", "burn"):
            return self.game.burn_due()
        if self.state.endswith("betting_closed") or ".dealing." in self.state:
            return self.game.card_due()
        if self.state.endswith("result_confirmed"):
            return self.game.burn_due()  # a burn after a game error (blackjack), else None
        return None

    def _shoe_in_play(self) -> bool:
        return self.state not in ("no_shoe", "shoe_finished")

    def _round_in_progress(self) -> bool:
        return any(
            self.state.endswith(s) for s in ("betting_closed", "result_shown")
        ) or ".dealing." in self.state

    def waiting_for_round(self) -> bool:
        """Whether the table waits for betting to open (burn done, or last result confirmed)."""
        if self.state == "burn" or self.state.endswith("result_confirmed"):
            return self.game.burn_due() is None
        return False

    def _new_shoe(self) -> None:
        if self._next_game is not None:
            self.game, self._next_game = self._next_game, None
        self.shoe_number += 1
        self.round_number = 0
        self.cards_dealt = 0
        self.burn_cards = []
        self.error_burn = []
        self.strays = []
        self.seen = Counter()
        self.cut_card_seen = False
        self.shoe_empty = False
        self.pending = None
        self.shoe_device = self.device_serial
        self.game.new_shoe()
        self.load_shoe()
        self._emit("shoe_loaded", shoe=self.shoe_number)

    def _start_round(self) -> None:
        if self.state == "burn":
            self._emit("burn", cards=[card.code for card in self.burn_cards])
        self.round_number += 1
        self.game.start_round(self.round_number)
        self.open_betting()
        self._emit("round_opened", round=self.round_number)

    def _apply(self, card: Card, due: Due, *, source: str, counter: int | None) -> None:
        """Give the due card to its target: the burn or the round's hand."""
        if self.state in ("shoe_loaded", "burn"):
            if self.state == "shoe_loaded":
                self.start_burn()
            self.game.burn(card)
            self.burn_cards.append(card)
            self._emit("burn_card", card=card.code, source=source, counter=counter)
            return
        if due.target == "burn":  # between rounds: the burn after a game error
            self.game.burn(card)
            self.error_burn.append(card)
            self._emit("burn_card", card=card.code, source=source, counter=counter,
                       error=True)
            if self.game.burn_due() is None:
                self._emit("error_burn", round=self.round_number,
                           cards=[c.code for c in self.error_burn])
            return
        position = len(self.game.cards_in_round())
        sub_state = self.game.deal(card)
        self._emit(
            "card", round=self.round_number, target=due.target, position=position + 1,
            card=card.code, source=source, counter=counter, **dict(due.details),
        )
        self._advance(sub_state)

    def _advance(self, sub_state: str | None) -> None:
        """The round moved on (a card, a decision): enter the dealing sub-state the game is
        in now, or complete the round (``sub_state`` None)."""
        self._game_events()
        if sub_state is None:
            if self.state.endswith("betting_closed"):
                # A game whose round needs a single card: enter dealing before completing.
                self.trigger(f"deal_{self.game.dealing_states[0]}")
            self.cards_complete()
            self._emit("round_result", round=self.round_number, **self.game.result())
        elif not self.state.endswith(f"dealing.{sub_state}"):
            self.trigger(f"deal_{sub_state}")

    def _after_round(self) -> None:
        if self.game.is_shoe_complete() or self.shoe_empty:
            self._finish_shoe(early=False)

    def _finish_shoe(self, *, early: bool, supervisor: str | None = None) -> None:
        self.finish_shoe()
        self._emit(
            "shoe_finished", shoe=self.shoe_number, rounds=self.round_number,
            cards_used=self.cards_dealt, early=early, supervisor=supervisor,
        )

    def _on_cut_card(self) -> None:
        if self.cut_card_seen:
            return
        self.cut_card_seen = True
        in_progress = self._round_in_progress()
        if self.state.startswith("in_play."):
            self.game.cut_card_out(round_in_progress=in_progress)
            self.cut_card()
        elif self.state in ("shoe_loaded", "burn"):
            # The cut card before the first round: that round is the last.
            self.game.cut_card_out(round_in_progress=False)
        self._emit("cut_card", round=self.round_number, during_round=in_progress)

    def _stray(
        self, card: Card | None, counter: int | None, kind: Irregularity, detail: str = ""
    ) -> None:
        code = None if card is None else card.code
        self._set_aside(code, counter, kind)
        text = detail or (f"{code} set aside" if code else "unread card set aside")
        self._latch(kind, text, card=code, counter=counter)

    def _set_aside(self, code: str | None, counter: int | None, kind: Irregularity) -> None:
        """A card that left the shoe is not played: it is set aside (every card that left the
        shoe is burned, dealt, set aside or pending, and each of these says so by an event)."""
        self.strays.append({"card": code, "counter": counter, "round": self.round_number,
                            "kind": kind.value})
        self._emit("card_set_aside", card=code, counter=counter, kind=kind.value,
                   round=self.round_number)

    def _hold(self, pending: _Pending) -> None:
        """A card left the shoe for ``pending.due`` but cannot be played yet."""
        self.pending = pending
        self._emit("card_pending", counter=pending.counter, reason=pending.reason.value,
                   card=None if pending.card is None or _secret(pending.due)
                   else pending.card.code,
                   target=pending.due.target, round=self.round_number)

    def _set_aside_pending(self) -> None:
        pending, self.pending = self.pending, None
        if pending is not None:
            self._set_aside(None if pending.card is None else pending.card.code,
                            pending.counter, pending.reason)

    def _latch(
        self, kind: Irregularity, detail: str = "", *, card: str | None = None,
        counter: int | None = None,
    ) -> None:
        latched = Latched(kind, detail, card, counter, self.round_number)
        self.latched.append(latched)
        self.latch()
        self._emit("irregularity", **self._latched_dict(latched))

    def _supervisor_clear(self, item: SupervisorAction) -> None:
        if not self.latched:
            self._refuse("nothing to clear")
            return
        blocking = self._blocking_conditions()
        if blocking:
            self._refuse(f"cannot clear yet: {blocking}")
            self._emit("clear_refused", supervisor=item.supervisor, reason=blocking)
            return
        # A suspect card is accepted as read: it is set aside, not played.
        self._set_aside_pending()
        self._clear_latches(item.supervisor, keep_conditions=False)

    def _blocking_conditions(self) -> str:
        if self.lid_open:
            return "the shoe lid is open"
        if not self.link_up:
            return "the shoe is not connected"
        if self.reloaded:
            return "a new shoe was loaded: end the shoe in play"
        if (self._shoe_in_play() and self.shoe_device is not None
                and self.device_serial != self.shoe_device):
            return (f"shoe {self.device_serial or '?'} is connected, not "
                    f"{self.shoe_device or '?'}: reconnect it or end the shoe")
        if self.pending is not None and self.pending.reason in _UNREAD:
            # named as the dealer counts (the display's remedy says the same), counter too
            return (f"{self._due_name(self.pending.due)} (card {self.pending.counter} out of "
                    "the shoe) was not read: enter it, or void the round")
        return ""

    def _clear_latches(self, supervisor: str, *, keep_conditions: bool) -> None:
        cleared = []
        kept = []
        for latched in self.latched:
            if keep_conditions and (
                (latched.kind is Irregularity.LID_OPENED and self.lid_open)
                or (latched.kind is Irregularity.LINK_LOST and not self.link_up)
                or (latched.kind is Irregularity.SHOE_RELOADED and self.reloaded)
                or (latched.kind is Irregularity.SHOE_SWAPPED
                    and self.device_serial != self.shoe_device)
            ):
                kept.append(latched)
            else:
                cleared.append(latched)
        self.latched = kept
        for latched in cleared:
            self._emit("irregularity_cleared", kind=latched.kind.value, supervisor=supervisor,
                       round=latched.round)
        if not self.latched and self.alarm == "latched":
            self.unlatch()

    def _resolve_pending(self, card: Card, *, source: str, actor: str | None) -> None:
        """The pending card's face is now known (camera, supervisor, a late report): it
        goes where it was due when it left the shoe, whatever else is latched meanwhile."""
        pending = self.pending
        assert pending is not None
        copies = self.seen[card] + (0 if pending.card == card else 1)
        if copies > self.game.copies_per_card:
            self._refuse(f"{card.code}: the shoe holds only {self.game.copies_per_card} copies")
            return
        if pending.card is not None:
            # A suspect card replaced by what the supervisor says it really is.
            self.seen[pending.card] -= 1
        self.seen[card] += 1
        self.pending = None
        resolved = [l for l in self.latched
                    if l.kind in _PENDING_KINDS and l.counter == pending.counter]
        self.latched = [l for l in self.latched if l not in resolved]
        for latched in resolved:
            self._emit("irregularity_cleared", kind=latched.kind.value, supervisor=actor,
                       round=latched.round, card=None if _secret(pending.due) else card.code,
                       source=source)
        if not self.latched and self.alarm == "latched":
            self.unlatch()
        self._apply(card, pending.due, source=source, counter=pending.counter)

    def _emit(self, event_type: str, /, **data: Any) -> None:
        self._events.append({"type": event_type, **data})


MISREAD_REMEDY_WITH_CAMERA = ("Leave the card face up under the camera: it reads the card; "
                              "if it cannot, a supervisor enters it.")
#: The remedy once the camera has said it cannot read the card (``CameraDeclined.outcome``).
CAMERA_COULD_NOT_READ = {
    "declined": "The camera could not read it: call a supervisor to enter the card.",
    "no_frame": "The camera gave no picture (check it): call a supervisor to enter the card.",
}


def _secret(due: Due) -> bool:
    """Whether the card due is held from every output until its reveal (a hole card)."""
    return any(name == "hold" for name, _ in due.details)


def _ordinal(n: int) -> str:
    if n % 100 in (11, 12, 13):
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def rebuild(game: Game, inputs: list[TableInput], settings: TableSettings | None = None) -> Table:
    """A table with every input applied, as after replaying a journal."""
    table = Table(game, settings)
    for item in inputs:
        table.handle(item)
    return table


__all__ = ["Level", "Table", "TableSettings", "TableView", "machine_definition", "rebuild"]
