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
from shoe_controller.table.game import Due, Game
from shoe_controller.table.inputs import (
    BettingCommand,
    ButtonPressed,
    CameraCheck,
    CameraRead,
    CardDrawn,
    CardMisread,
    DeviceFault,
    LinkChanged,
    SessionStarted,
    ShoeEventInput,
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

    def to_dict(self) -> dict[str, Any]:
        return {
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
    """A card that left the shoe but cannot be used yet: unread (misread) or suspect."""

    counter: int
    reason: Irregularity
    card: Card | None = None


@dataclass
class TableSettings:
    """Table rules that are not the game's: e.g. whether the lid may open between rounds."""

    table_id: str = "table-1"


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
        self.last_counter = 0
        self.cards_dealt = 0
        self.burn_cards: list[Card] = []
        self.strays: list[dict[str, Any]] = []
        self.seen: Counter[Card] = Counter()
        self.notice = ""
        self.cut_card_seen = False
        self.shoe_empty = False
        self.profile = ""
        self._events: list[dict[str, Any]] = []

    # ------------------------------------------------------------------ inputs
    def handle(self, item: TableInput) -> list[dict[str, Any]]:
        """Apply one (already journalled) input; return the table events it caused."""
        self._events = []
        self.notice = ""
        handler = getattr(self, f"_on_{item.KIND}")
        handler(item)
        return self._events

    def is_duplicate(self, item: TableInput) -> bool:
        """Whether a card the shoe resent (after a restart of either side) is already here.

        The shoe numbers every card it deals since it was loaded; that counter is the card's
        identity end to end, so a repeat is recognised whatever the link did.
        """
        if isinstance(item, (CardDrawn, CardMisread)):
            return 0 < item.counter <= self.last_counter
        return False

    def _on_session(self, item: SessionStarted) -> None:
        # A new controller session has no shoe link until the shoe answers. Not an
        # irregularity: the shoe locked its own exit when the old session went silent, and
        # the round resumes exactly where it was once the link is back.
        self.profile = item.profile
        self.link_up = False

    def _on_card(self, item: CardDrawn) -> None:
        due = self._card_out(item.card, item.counter, item.drawn_while_locked)
        if due is None:
            return
        if self.seen[item.card] > self.game.copies_per_card:
            self.pending = _Pending(item.counter, Irregularity.TOO_MANY_COPIES, item.card)
            self._latch(
                Irregularity.TOO_MANY_COPIES,
                f"{item.card.code} seen {self.seen[item.card]} times; the shoe holds "
                f"{self.game.copies_per_card}",
                card=item.card.code,
                counter=item.counter,
            )
            return
        self._apply(item.card, due, source=item.source, counter=item.counter)

    def _on_misread(self, item: CardMisread) -> None:
        due = self._card_out(None, item.counter, item.drawn_while_locked)
        if due is None:
            return
        self.pending = _Pending(item.counter, Irregularity.MISREAD)
        self._latch(
            Irregularity.MISREAD, f"card {item.counter} for {due.target}", counter=item.counter
        )

    def _card_out(self, card: Card | None, counter: int, while_locked: bool) -> Due | None:
        """Account a card (``None``: unread) that left the shoe; the card it is due as, or
        None when it was set aside as an irregularity."""
        self.last_counter = max(self.last_counter, counter)
        unread = "" if card is not None else "unread card"
        if self.state in ("no_shoe", "shoe_finished"):
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

    def _on_camera_read(self, item: CameraRead) -> None:
        pending = self.pending
        if pending is None or pending.reason is not Irregularity.MISREAD:
            self.notice = "camera read ignored: no unread card is pending"
            return
        if pending.counter != item.counter:
            self.notice = f"camera read for card {item.counter} ignored: card {pending.counter} is pending"
            return
        self._resolve_pending(item.card, source="camera", actor=None)

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
            if self.state in ("no_shoe", "shoe_finished"):
                self._new_shoe()
            else:
                self.notice = "shoe reports a new shoe while one is in play: ignored"
        elif event == "cut_card":
            self._on_cut_card()
        elif event == "lid_opened":
            self.lid_open = True
            if self._round_in_progress() or self.state in ("shoe_loaded", "burn"):
                self._latch(Irregularity.LID_OPENED, "lid opened mid-round")
        elif event == "lid_closed":
            self.lid_open = False
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
            if self.state.endswith("betting_open"):
                self.close_betting()
                self._emit("betting_closed", round=self.round_number, origin=item.origin)
            else:
                self.notice = "close betting ignored: betting is not open"
        else:
            self.notice = f"unknown betting action {item.action!r} ignored"

    def _on_supervisor(self, item: SupervisorAction) -> None:
        action = item.action
        if action == "clear":
            self._supervisor_clear(item)
        elif action == "void_round":
            if not self._round_in_progress():
                self.notice = "no round in progress to void"
                return
            self.pending = None
            self.game.void_round()
            self.void()
            self._emit("round_void", round=self.round_number, supervisor=item.supervisor,
                       reason=item.reason)
            self._clear_latches(item.supervisor, keep_conditions=True)
            self._after_round()
        elif action == "enter_card":
            if item.card is None:
                self.notice = "enter_card needs a card"
            elif self.pending is None:
                self.notice = "no unread or suspect card is pending"
            else:
                self._resolve_pending(item.card, source="supervisor", actor=item.supervisor)
        elif action == "end_shoe":
            if self.state in ("no_shoe", "shoe_finished"):
                self.notice = "no shoe in play to end"
                return
            if self._round_in_progress():
                self.game.void_round()
                self._emit("round_void", round=self.round_number, supervisor=item.supervisor,
                           reason="shoe ended early")
            self.pending = None
            self._clear_latches(item.supervisor, keep_conditions=False)
            self._finish_shoe(early=True, supervisor=item.supervisor)
        else:
            self.notice = f"unknown supervisor action {action!r}"

    # ------------------------------------------------------------------ view
    def view(self) -> TableView:
        due = self._due()
        locked = due is None or self.alarm == "latched" or self.lid_open or not self.link_up
        lights: tuple[str, ...] = ()
        detail = self.notice
        if self.alarm == "latched":
            first = self.latched[0]
            prompt, level = first.kind.prompt, Level.ERROR
            detail = first.kind.remedy + (f" ({first.detail})" if first.detail else "")
            lights = ("stop",)
        elif not self.link_up and self.state != "no_shoe":
            prompt, level, lights = "Shoe offline: check its cable", Level.ERROR, ()
            detail = "The exit stays locked until the shoe is back"
        elif self.lid_open and due is not None:
            prompt, level, lights = "Close the shoe lid", Level.ERROR, ("stop",)
        elif due is not None:
            prompt, level, lights = due.prompt, Level.ACTION, due.lights
            if self.state.endswith("betting_closed"):
                prompt = f"No more bets: {prompt}"
            decided = self.game.decision() if ".dealing." in self.state else ""
            if decided and decided != due.prompt:
                detail = decided
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
            latched=tuple(latch.to_dict() for latch in self.latched),
            lid_open=self.lid_open,
            link_up=self.link_up,
        )

    # ------------------------------------------------------------------ internals
    def _misplaced(self) -> Irregularity:
        """Which irregularity a card is when none is due."""
        if self.state.endswith("betting_open"):
            return Irregularity.CARD_DURING_BETTING
        return Irregularity.EXTRA_CARD

    def _due(self, *, in_flight: bool = False) -> Due | None:
        """The card due now. ``in_flight``: for a card the shoe let out of an unlocked exit;
        if the only errors are lost links, it was drawn before the link dropped (the shoe
        locks itself when it loses the host and flags anything drawn after), so it is due."""
        if self.pending is not None:
            return None
        if self.alarm == "latched" and not (
            in_flight and all(l.kind is Irregularity.LINK_LOST for l in self.latched)
        ):
            return None
        if self.state in ("shoe_loaded", "burn"):
            return self.game.burn_due()
        if self.state.endswith("betting_closed") or ".dealing." in self.state:
            return self.game.card_due()
        return None

    def _round_in_progress(self) -> bool:
        return any(
            self.state.endswith(s) for s in ("betting_closed", "result_shown")
        ) or ".dealing." in self.state

    def waiting_for_round(self) -> bool:
        """Whether the table waits for betting to open (burn done, or last result confirmed)."""
        if self.state == "burn":
            return self.game.burn_due() is None
        return self.state.endswith("result_confirmed")

    def _new_shoe(self) -> None:
        self.shoe_number += 1
        self.round_number = 0
        self.last_counter = 0
        self.cards_dealt = 0
        self.burn_cards = []
        self.strays = []
        self.seen = Counter()
        self.cut_card_seen = False
        self.shoe_empty = False
        self.pending = None
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
        position = len(self.game.cards_in_round())
        sub_state = self.game.deal(card)
        self._emit(
            "card", round=self.round_number, target=due.target, position=position + 1,
            card=card.code, source=source, counter=counter,
        )
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
        self.strays.append({"card": code, "counter": counter, "round": self.round_number,
                            "kind": kind.value})
        text = detail or (f"{code} set aside" if code else "unread card set aside")
        self._latch(kind, text, card=code, counter=counter)

    def _latch(
        self, kind: Irregularity, detail: str = "", *, card: str | None = None,
        counter: int | None = None,
    ) -> None:
        latched = Latched(kind, detail, card, counter, self.round_number)
        self.latched.append(latched)
        self.latch()
        self._emit("irregularity", **latched.to_dict())

    def _supervisor_clear(self, item: SupervisorAction) -> None:
        if not self.latched:
            self.notice = "nothing to clear"
            return
        blocking = self._blocking_conditions()
        if blocking:
            self.notice = f"cannot clear yet: {blocking}"
            self._emit("clear_refused", supervisor=item.supervisor, reason=blocking)
            return
        if self.pending is not None:
            # The suspect card is accepted as read: it is set aside, not played.
            self.strays.append({"card": None if self.pending.card is None else
                                self.pending.card.code, "counter": self.pending.counter,
                                "round": self.round_number, "kind": self.pending.reason.value})
            self.pending = None
        self._clear_latches(item.supervisor, keep_conditions=False)

    def _blocking_conditions(self) -> str:
        if self.lid_open:
            return "the shoe lid is open"
        if not self.link_up:
            return "the shoe is not connected"
        if self.pending is not None and self.pending.reason is Irregularity.MISREAD:
            return "an unread card is pending: enter it"
        return ""

    def _clear_latches(self, supervisor: str, *, keep_conditions: bool) -> None:
        cleared = []
        kept = []
        for latched in self.latched:
            if keep_conditions and (
                (latched.kind is Irregularity.LID_OPENED and self.lid_open)
                or (latched.kind is Irregularity.LINK_LOST and not self.link_up)
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
        pending = self.pending
        assert pending is not None
        if pending.card is not None:
            # A suspect card replaced by what the supervisor says it really is.
            self.seen[pending.card] -= 1
        self.seen[card] += 1
        if self.seen[card] > self.game.copies_per_card:
            self.seen[card] -= 1
            self.notice = f"{card.code}: the shoe holds only {self.game.copies_per_card} copies"
            return
        self.pending = None
        self.latched = [l for l in self.latched if l.kind not in
                        (Irregularity.MISREAD, Irregularity.TOO_MANY_COPIES)]
        self._emit("irregularity_cleared", kind=pending.reason.value, supervisor=actor,
                   round=self.round_number, card=card.code, source=source)
        if not self.latched:
            self.unlatch()
        due = self._due()
        if due is not None:
            self._apply(card, due, source=source, counter=pending.counter)

    def _emit(self, event_type: str, /, **data: Any) -> None:
        self._events.append({"type": event_type, **data})


def rebuild(game: Game, inputs: list[TableInput], settings: TableSettings | None = None) -> Table:
    """A table with every input applied, as after replaying a journal."""
    table = Table(game, settings)
    for item in inputs:
        table.handle(item)
    return table


__all__ = ["Level", "Table", "TableSettings", "TableView", "machine_definition", "rebuild"]
