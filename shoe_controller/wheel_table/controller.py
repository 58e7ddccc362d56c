"""The imperative shell around the wheel table: wheel line in, journal, table, commands out.

One thread (the caller of :meth:`WheelController.run` / :meth:`step`) owns the journal and the
table, so inputs are applied strictly in journal order. For every input (a line from the
wheel, the line going up or down, a timer tick the tracker asked for, a betting command, a
supervisor action):

1. append it to the journal, durable before anything else happens, with its wall time, which
   is the tracker's clock;
2. let the table handle it at that time;
3. write the commands the table gave (``*R`` after a misspin, ``*u`` to start a host-started
   game, ``*F`` after a silent drop to idle, ``*X`` polls), live only: a replay never
   writes to the wheel;
4. hand the events to the table system's reporter (exactly once, as for a card table), the
   record taps (MQTT) and the listeners (display, console).

Other threads (the web panel, the console, the table-system client) hand inputs over with
:meth:`submit`; a supervisor's action is checked by the same access guard as at a card table.
"""

from __future__ import annotations

import logging
import queue
import time
from collections.abc import Callable, Mapping
from typing import Any

from shoe_controller.errors import JournalReplayError, ShoeError
from shoe_controller.journal import Journal
from shoe_controller.live.inputs import TableInput, session_record
from shoe_controller.live.supervision import (
    TABLE_SYSTEM,
    Reporter,
    SupervisorTicket,
    authorised_ticket,
    own_betting,
)
from shoe_controller.wheel_table.connection import LineDown, LineUp, WheelConnection
from shoe_controller.wheel_table.inputs import (
    WHEEL_SUPERVISOR_ACTIONS,
    BettingCommand,
    LinkChanged,
    SupervisorAction,
    WheelLine,
    WheelTick,
    wheel_input_from_record,
)
from shoe_controller.wheel_table.machine import WheelTable, session_settings
from shoe_controller.wheel_table.metrics import WheelMetrics
from wheel_protocol import Unparsed

log = logging.getLogger("shoe_controller.wheel")

#: At most this many lines from the wheel are applied in one step: a line that outruns the
#: journal (a babbling wheel, a disk slow to sync: each line is a commit) must not hold back
#: a supervisor's action, a betting command or a stop for as long as it babbles.
LINES_PER_STEP = 32

#: Host-started games with the controller's own betting window: how long the last result
#: stays on the display before betting opens for the next game.
RESULT_SECONDS = 3.0

class SessionClock:
    """Wall time read once at start, then advanced by the monotonic clock.

    The journal's times are the game tracker's clock (grace periods, confirmation windows,
    silence), so they must not jump: an NTP step during a game would void it or latch a
    silent wheel. Across a restart the clock is read again, never earlier than the journal's
    last record (the tracker's times only go forward)."""

    def __init__(self, not_before: float = 0.0) -> None:
        self._base = max(time.time(), not_before)
        self._started = time.monotonic()

    def __call__(self) -> float:
        return self._base + (time.monotonic() - self._started)


Listener = Callable[[dict[str, Any], list[dict[str, Any]]], None]
"""Called after each input with the table's view and the events it caused."""
RecordTap = Callable[[int, float, list[dict[str, Any]], bool], None]


class WheelController:
    def __init__(
        self,
        *,
        journal: Journal,
        table: WheelTable,
        profile: str,
        connection: WheelConnection,
        betting_seconds: float = 15.0,
        supervisors: Mapping[str, str] | None = None,
        clock: Callable[[], float] | None = None,
        version: str = "",
        reporter: Reporter | None = None,
        down_policy: str = "keep-dealing",
        profile_toml: str = "",
        result_seconds: float = RESULT_SECONDS,
        metrics: WheelMetrics | None = None,
    ) -> None:
        from shoe_controller.access import AccessGuard

        self.journal = journal
        self.table = table
        self.profile = profile
        self.profile_toml = profile_toml
        self.connection = connection
        self.betting_seconds = betting_seconds
        self.result_seconds = result_seconds
        self.supervisors = dict(supervisors or {})
        self.access = AccessGuard(self.supervisors, clock=time.monotonic)
        #: The journal's and the tracker's clock (None: a :class:`SessionClock` set at start).
        self.clock: Callable[[], float] = clock or time.time
        self._own_clock = clock is None
        self.version = version
        self.reporter = reporter
        self.down_policy = down_policy
        self.listeners: list[Listener] = []
        self.record_taps: list[RecordTap] = []
        self._submitted: queue.Queue[tuple[TableInput, SupervisorTicket | None]] = queue.Queue()
        self._session_at: float | None = None
        self._betting_closes_at: float | None = None
        self._next_open_at: float | None = None
        self._requested_open: int | None = None  # the round the table system asked to open
        self.refusal = ""
        self._view: dict[str, Any] | None = None
        #: Prometheus metrics (``shoe run --metrics``; the display serves them at /metrics).
        self.metrics = metrics if metrics is not None else WheelMetrics(table.settings.table_id)
        self.metrics.watch(self)

    # ----------------------------------------------------------------- start-up
    def start(self, *, begin_session: bool = True) -> int:
        """Rebuild the table from the journal (nothing is written to the wheel), then record
        this session unless ``begin_session`` is False. Returns the records read."""
        count = 0
        last_time = 0.0
        for record in self.journal.records():
            last_time = record.wall_time
            try:
                item = wheel_input_from_record(record.kind, record.data)
                outcome = self.table.handle(item, record.wall_time)
            except (ValueError, ShoeError) as exc:
                raise JournalReplayError(f"journal record {record.seq} ({record.kind}): {exc}; "
                                         "this journal is not a wheel table's, or is "
                                         "damaged (shoe journal verify)") from None
            self.metrics.on_record(record.kind, None, record.wall_time, outcome.events,
                                   live=False)
            count += 1
            if self.reporter is not None:
                self.reporter.add(record.seq, record.wall_time, outcome.events, live=False)
            for tap in self.record_taps:
                tap(record.seq, record.wall_time, outcome.events, False)
        if self._own_clock:
            self.clock = SessionClock(not_before=last_time)
        log.info("wheel table rebuilt from %d journal records: round %d", count,
                 self.table.round_number,
                 extra={"records": count, "round": self.table.round_number})
        if begin_session:
            self.begin_session()
        return count

    def begin_session(self) -> None:
        if self._session_at is not None:
            return
        self._session_at = self.clock()
        self._apply(session_record(self.profile, "roulette", self.version, self.profile_toml,
                                   session_settings(self.table.settings)))

    # ----------------------------------------------------------------- inputs from others
    def submit(self, item: TableInput, ticket: SupervisorTicket | None = None) -> None:
        self._submitted.put((item, ticket))

    def supervisor(self, action: str, supervisor: str, pin: str, *, reason: str = "",
                   client: str | None = None, card: str | None = None) -> SupervisorTicket:
        """Check the PIN, then queue the action (journalled with who did it): ``clear``,
        ``void_round`` (with a reason), ``reset_bias`` or ``dealer`` (``reason``: the name
        of the dealer going on the table). Raises as a card table's does."""
        if action not in WHEEL_SUPERVISOR_ACTIONS:
            raise ShoeError(f"unknown supervisor action {action!r} at a wheel table; one of "
                            f"{', '.join(WHEEL_SUPERVISOR_ACTIONS)}")
        if card:
            raise ShoeError("a wheel table has no cards to enter")
        if action == "void_round" and not reason.strip():
            raise ShoeError("a void needs a reason (what happened), e.g. 'ball left the wheel'")
        if action == "dealer" and not reason.strip():
            raise ShoeError("name the dealer going on the table, e.g. 'dealer alice Maria'")
        ticket = authorised_ticket(self.access, action, supervisor, pin, client)
        self.submit(SupervisorAction(action, supervisor, None, reason), ticket)
        return ticket

    # ----------------------------------------------------------------- the loop
    def step(self, timeout: float = 0.05) -> None:
        self.connection.check()
        if self.reporter is not None:
            self.reporter.check()
            for command in self.reporter.take_commands():
                self._table_system_command(command)
        while True:
            try:
                self._apply(*self._submitted.get_nowait())
            except queue.Empty:
                break
        deadlines = [t for t in (self.table.next_deadline(), self._betting_closes_at,
                                 self._next_open_at) if t is not None]
        wait = timeout if not deadlines else max(0.0, min(timeout, min(deadlines) - self.clock()))
        received = self.connection.get(wait)
        taken = 0
        while received is not None:
            self._receive(received)
            taken += 1
            if taken == LINES_PER_STEP:
                # Behind the line: back to the others' inputs (and to the caller, who may be
                # stopping); the timers wait until what came has been applied, so none gives
                # up on a line that is here, unread.
                return
            received = self.connection.get(0)
        self._run_timers()

    def run(self, should_stop: Callable[[], bool], games: int | None = None) -> None:
        """Run until ``should_stop()``, or until ``games`` rounds finished in this run."""
        first = self.table.rounds_finished
        while not should_stop():
            if games is not None and self.table.rounds_finished - first >= games:
                log.info("%d game(s) finished; stopping", games)
                return
            self.step()

    def _receive(self, received: object) -> None:
        if isinstance(received, bytes):
            self._apply(WheelLine.of(received))
        elif isinstance(received, Unparsed):
            log.info("noise from the wheel: %s (%r)", received.reason, received.raw[:40])
            self._apply(WheelLine(received.raw.decode("latin-1"), received.reason or "noise"))
        elif isinstance(received, LineUp):
            self._apply(LinkChanged(True))
        elif isinstance(received, LineDown):
            self._apply(LinkChanged(False, f"wheel line lost: {received.reason}"))

    def _run_timers(self) -> None:
        now = self.clock()
        deadline = self.table.next_deadline()
        if deadline is not None and now >= deadline:
            self._apply(WheelTick())
        if not self.table.settings.tracker.host_starts:
            return
        if self.reporter is not None:
            self._open_requested_round()
        if not self._own_betting():
            self._betting_closes_at = self._next_open_at = None
            return
        table = self.table
        current = table.current
        if current is not None and current.phase == "betting_open":
            self._next_open_at = None
            if self._betting_closes_at is None:
                self._betting_closes_at = now + self.betting_seconds
            if now >= self._betting_closes_at:
                self._betting_closes_at = None
                self._apply(BettingCommand("close", "timer"))
        elif table.link_up and table.waiting_for_round:
            if self._next_open_at is None:
                self._next_open_at = now + (self.result_seconds if table.last_result else 0.0)
            if now >= self._next_open_at:
                self._next_open_at = None
                self._apply(BettingCommand("open", "timer"))

    def _own_betting(self) -> bool:
        return own_betting(self.reporter, self.down_policy)

    def _table_system_command(self, command: Any) -> None:
        reporter = self.reporter
        assert reporter is not None
        table = self.table
        if command.shoe != 0:
            reporter.reject(command, "a wheel table has no shoe: shoe must be 0")
            return
        current = table.current
        if command.type == "open_betting":
            if command.round != table.round_number + 1:
                reporter.reject(command, f"the next round is {table.round_number + 1}")
            elif not table.settings.tracker.host_starts:
                reporter.reject(command, "the wheel runs the games: betting opens when it "
                                "says 'place your bets'")
            else:
                self._requested_open = command.round
        elif command.type == "close_betting":
            if current is None or current.round != command.round \
                    or current.phase != "betting_open":
                reporter.reject(command, f"betting is not open for round {command.round}")
                return
            self._apply(BettingCommand("close", TABLE_SYSTEM))
            if self.refusal:
                reporter.reject(command, self.refusal)
        elif command.type == "void_round":
            if current is None or current.round != command.round:
                reporter.reject(command, f"round {command.round} is not in progress")
                return
            self._apply(SupervisorAction("void_round", TABLE_SYSTEM, None,
                                         command.reason or "voided by the table system"))
        else:
            reporter.reject(command, f"a wheel table does not take {command.type}")

    def _open_requested_round(self) -> None:
        requested = self._requested_open
        if requested is None:
            return
        table = self.table
        if requested != table.round_number + 1:
            self._requested_open = None
        elif table.link_up and table.waiting_for_round:
            self._requested_open = None
            self._apply(BettingCommand("open", TABLE_SYSTEM))

    # ----------------------------------------------------------------- applying one input
    def _apply(self, item: TableInput, ticket: SupervisorTicket | None = None) -> None:
        actor = item.supervisor if isinstance(item, SupervisorAction) else None
        started = time.perf_counter()
        record = self.journal.append(item.KIND, item.to_data(), actor=actor,
                                     wall_time=self.clock())
        self.metrics.observe_append(time.perf_counter() - started)
        outcome = self.table.handle(item, record.wall_time)
        self.metrics.on_record(item.KIND, self.table.line_kind, record.wall_time,
                               outcome.events)
        if self._betting_closes_at is None and self.table.settings.tracker.host_starts \
                and self._own_betting() \
                and any(e["type"] == "round_opened" for e in outcome.events):
            # The countdown starts with the round, in the view the listeners get now (the
            # timer would set it at the next step, after the display was told).
            self._betting_closes_at = record.wall_time + self.betting_seconds
        refused = [e["reason"] for e in outcome.events if e["type"] == "refused"]
        self.refusal = refused[0] if refused else ""
        for command in outcome.commands:
            self.connection.send(command)
        if self.reporter is not None:
            self.reporter.add(record.seq, record.wall_time, outcome.events)
        for tap in self.record_taps:
            tap(record.seq, record.wall_time, outcome.events, True)
        for event in outcome.events:
            _log_event(event)
        view = self.view()
        self._view = view
        try:
            for listener in list(self.listeners):
                listener(view, outcome.events)
        finally:
            if ticket is not None:
                # Answered only once the displays have the update in their queues: a
                # request the supervisor makes after the answer sees the action's effect.
                ticket.settle(record.seq, self.refusal, "")

    def view(self) -> dict[str, Any]:
        """The table's view with the controller's own timers (the betting countdown)."""
        view = self.table.view()
        view["betting_closes_at"] = self._betting_closes_at
        view["reporting"] = None if self.reporter is None else {
            "connected": self.reporter.connected}
        return view


def _log_event(event: Mapping[str, Any]) -> None:
    kind = event["type"]
    if kind == "winning_number":
        log.info("round %d: %d %s", event["round"], event["number"], event["colour"],
                 extra={"round": event["round"], "number": event["number"]})
    elif kind == "round_void":
        log.warning("round %d void: %s (%s)", event["round"], event["reason"], event["detail"],
                    extra={"round": event["round"], "reason": event["reason"]})
    elif kind == "irregularity":
        log.warning("irregularity: %s (%s)%s", event["prompt"], event["detail"],
                    "" if event.get("latched") else " - not latched",
                    extra={"irregularity": event["kind"], "round": event.get("round")})
    elif kind == "irregularity_cleared":
        log.warning("irregularity cleared: %s by %s", event["kind"], event["supervisor"],
                    extra={"irregularity": event["kind"], "supervisor": event["supervisor"]})
    elif kind == "wheel_warning":
        log.warning("wheel: %s (%s)", event["prompt"], event["detail"],
                    extra={"warning": event["kind"]})
    elif kind == "wheel_health":
        log.log(logging.INFO if event["status"] == "up" else logging.WARNING, "wheel line %s%s",
                event["status"], f": {event['reason']}" if event["reason"] else "")
    elif kind == "game_not_opened":
        log.warning("wheel ran a game while an irregularity is latched: not opened, not "
                    "settled")
    elif kind == "refused":
        log.info("refused: %s", event["reason"])
