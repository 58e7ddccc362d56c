"""The imperative shell around the table: device link in, journal, table, device outputs out.

One thread (the caller of :meth:`TableController.run` / :meth:`step`) owns the journal and the
table, so inputs are applied strictly in journal order. For every input:

1. translate it (a wire message, a link event, a betting command, a supervisor action);
2. drop it if the shoe resent a card the table already has (card counter);
3. append it to the journal, durable before anything else happens;
4. let the table handle it, let the device acknowledge what was journalled, tell listeners.

Once everything that arrived in a step is applied, the shoe's exit lock and lights are brought
in line with the table's view (an unlock lets exactly one card out), lights before an unlock and
after a lock, so the shoe never shows a light older than its exit (SPEC 6.4). A liveness guard
(:mod:`shoe_controller.table.liveness`) asks the shoe for its status every few seconds and
latches "shoe not responding" when the shoe keeps disagreeing with what it was told.

Other threads (the web panel, the table-system client) hand inputs over with :meth:`submit`.
"""

from __future__ import annotations

import hashlib
import logging
import queue
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from firmware_protocol import messages as wire
from firmware_protocol.link import LinkLost, LinkUp, PeerRestarted, ProtocolError
from shoe_controller.cards import Card
from shoe_controller.config import TABLE_DOWN_POLICIES as DOWN_POLICIES
from shoe_controller.errors import (
    CardCodeError,
    ConfigError,
    ShoeError,
    ShoeTimeoutError,
)
from shoe_controller.journal import Journal
from shoe_controller.live.inputs import session_record
from shoe_controller.live.supervision import (
    TABLE_SYSTEM,
    Reporter,
    SupervisorTicket,
    authorised_ticket,
    own_betting,
)
from shoe_controller.metrics import TableMetrics
from shoe_controller.table.fold import replay_records
from shoe_controller.table.game import is_interactive
from shoe_controller.table.inputs import (
    BettingCommand,
    ButtonPressed,
    CardDrawn,
    CardMisread,
    DeviceConnected,
    DeviceFault,
    InsuranceDecision,
    LinkChanged,
    MessageRefused,
    PlayerDecision,
    ShoeEventInput,
    ShoeStatus,
    ShoeUnresponsive,
    SupervisorAction,
    TableInput,
)
from shoe_controller.table.irregularities import Irregularity
from shoe_controller.table.liveness import Expected, LivenessGuard
from shoe_controller.table.machine import Table, TableView
from shoe_controller.table.secrecy import Withheld
from shoe_controller.transports.base import TransportEvent, TransportEventKind

log = logging.getLogger("shoe_controller.table")

SHOE_EVENT_NAMES = {
    wire.ShoeEvent.LID_OPENED: "lid_opened",
    wire.ShoeEvent.LID_CLOSED: "lid_closed",
    wire.ShoeEvent.SHOE_LOADED: "shoe_loaded",
    wire.ShoeEvent.SHOE_EMPTY: "shoe_empty",
    wire.ShoeEvent.CUT_CARD_REACHED: "cut_card",
    wire.ShoeEvent.CARD_AT_EXIT: "card_at_exit",
    wire.ShoeEvent.PULL_REFUSED: "pull_refused",
}

LIGHTS = {
    "player": wire.Indicator.PLAYER,
    "banker": wire.Indicator.BANKER,
    "tie": wire.Indicator.TIE,
    "stop": wire.Indicator.STOP,
    "error": wire.Indicator.ERROR,
    "confirm": wire.Indicator.RESULT,
    "shuffle": wire.Indicator.SHUFFLE,
}

SUPERVISOR_ACTIONS = ("clear", "void_round", "enter_card", "end_shoe", "error_burn")
"""``error_burn``: burn the profile's cards after a game error (blackjack, between rounds)."""

#: How long the shoe link may be down before the table records it (and, mid-round, latches
#: "link lost"). The shoe locks its exit by itself the moment it loses the host, so nothing is
#: dealt meanwhile; a cable that is replugged or a line that recovers within the grace is a
#: flap the link layer has already healed, not an irregularity.
LINK_GRACE_SECONDS = 5.0
#: How often the controller looks for a player's answer while one is awaited (blackjack).
ANSWER_POLL_SECONDS = 0.005
#: How long after start the dealer sees "Connecting to the shoe..." before "Shoe not
#: connected": a shoe that is there answers within a second; one that is not is an alarm.
CONNECT_GRACE_SECONDS = 5.0


class DeviceConnection(Protocol):
    """What the controller needs from the host side of the shoe link (``ShoeConnection``):
    ``get`` raises :class:`ShoeTimeoutError` when nothing arrived in time."""

    def get(self, timeout: float | None = None) -> object: ...

    def send(self, message: wire.Message) -> None: ...

    def commit(self) -> None: ...


@dataclass(frozen=True)
class Update:
    """What listeners (console, display, table-system reporter) get after each input.

    ``events`` are those that may be shown now: a held event (a blackjack hole card) is left
    out until the input that reveals it, and then comes just before the revealing event."""

    view: TableView
    events: list[dict[str, Any]]
    input_kind: str


Listener = Callable[[Update], None]

RecordTap = Callable[[int, float, list[dict[str, Any]], bool], None]
"""Called with every journal record's (seq, wall time, events, live): replayed at start
(``live`` False) and applied live, on the controller's thread; it must only hand over (the
MQTT publisher numbers the events as the table-system stream does, holds included)."""


class TableController:
    def __init__(
        self,
        *,
        journal: Journal,
        table: Table,
        profile: str,
        connection: DeviceConnection,
        betting_seconds: float = 15.0,
        auto_betting: bool = True,
        supervisors: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.monotonic,
        version: str = "",
        reporter: Reporter | None = None,
        down_policy: str = "keep-dealing",
        link_grace: float = LINK_GRACE_SECONDS,
        profile_toml: str = "",
        liveness: LivenessGuard | None = None,
        metrics: TableMetrics | None = None,
        players_seed: int = 0,
        player_seconds: float = 0.0,
    ) -> None:
        if down_policy not in DOWN_POLICIES:
            raise ConfigError(f"table down policy must be one of {DOWN_POLICIES}, "
                              f"got {down_policy!r}")
        self.journal = journal
        self.link_grace = link_grace
        self._link_lost: tuple[float, str] | None = None  # (when, why) while in the grace
        self.table = table
        self.profile = profile
        self.profile_toml = profile_toml
        self.connection = connection
        self.betting_seconds = betting_seconds
        self.auto_betting = auto_betting
        self.supervisors = dict(supervisors or {})
        from shoe_controller.access import AccessGuard

        #: Every way in (web panel, console) checks PINs through this one guard.
        self.access = AccessGuard(self.supervisors, clock=clock)  # refuses reserved ids
        self.clock = clock
        self.version = version
        self.listeners: list[Listener] = []
        self.record_taps: list[RecordTap] = []
        self.shoes_finished = 0
        self._submitted: queue.Queue[tuple[TableInput, SupervisorTicket | None]] = queue.Queue()
        self._betting_closes_at: float | None = None
        self._sent_lock: bool | None = None
        self._sent_for_card = 0
        self._sent_lights: wire.Indicator | None = None
        self._view: TableView | None = None
        self.liveness = liveness if liveness is not None else LivenessGuard()
        self._shoe_link_up = False  # the link as it is now (the table hears of it after grace)
        self._device_session: int | None = None  # the shoe session last journalled
        self._device_caps = wire.Capability(0xFF)  # revision 1.0's, until the shoe says
        self.reporter = reporter
        self.down_policy = down_policy
        self._requested_open: tuple[int, int] | None = None  # (shoe, round) the table system
        # Why the shoe is not there, for the dealer's view (not journalled: the table's own
        # link state is; this only explains it).
        self._session_at: float | None = None  # when this run's session record was written
        self._link_seen = False  # the shoe answered at least once in this run
        self._link_detail = ""
        self.connect_grace = CONNECT_GRACE_SECONDS
        #: Prometheus metrics of this table (its own registry; docs/metrics.md): counted on
        #: this thread as inputs are applied, the rest read from the parts at scrape time.
        self.metrics = metrics if metrics is not None else TableMetrics(
            getattr(getattr(table, "settings", None), "table_id", "table-1"))
        self.metrics.watch(self)
        #: Blackjack without a table system (or with one that does not drive betting): the
        #: built-in players' seed and how long they "think" before each answer.
        self.players_seed = players_seed
        self.player_seconds = player_seconds
        self._awaiting: tuple[str, float] | None = None  # (key, since) of the answer awaited
        #: What listeners may see: a held event (the hole card) only once it is revealed.
        self.withheld = Withheld()
        self._last_record_wall: float | None = None  # the journal's last record at start

    # ----------------------------------------------------------------- start-up
    def start(self, *, begin_session: bool = True) -> int:
        """Rebuild the table from the journal, then record this session (unless
        ``begin_session`` is False: then :meth:`begin_session` does, once everything else
        has started, so a start that fails leaves no record). Returns records read."""
        reporter = self.reporter

        metrics = self.metrics

        def report(record: Any, _item: TableInput, events: list[dict[str, Any]]) -> None:
            self._last_record_wall = record.wall_time
            self.withheld.visible(events)  # a hole card held at the restart stays held
            metrics.on_replayed(record.wall_time, events, self.table.latched)
            if reporter is not None:
                reporter.add(record.seq, record.wall_time, events, live=False)
            for tap in self.record_taps:
                tap(record.seq, record.wall_time, events, False)

        _, count = replay_records(self.journal, self.table, on_record=report)
        sha256 = hashlib.sha256(self.profile_toml.encode("utf-8")).hexdigest() \
            if self.profile_toml else ""
        if (sha256 and self.table.profile_sha256 and sha256 != self.table.profile_sha256
                and self.table.state not in ("no_shoe", "shoe_finished")):
            log.warning("profile %s differs from the one shoe %d was started with: the shoe "
                        "in play finishes with the journalled profile, the new one applies from "
                        "the next shoe", self.profile, self.table.shoe_number,
                        extra={"profile": self.profile, "shoe": self.table.shoe_number})
        if self.table.state == "shoe_finished":
            self.shoes_finished = 1
        log.info("table rebuilt from %d journal records: %s", count, self.table.state,
                 extra={"records": count, "state": self.table.state,
                        "round": self.table.round_number})
        if begin_session:
            self.begin_session()
        return count

    def begin_session(self) -> None:
        """Journal this run's session record (once, after :meth:`start`)."""
        if self._session_at is not None:
            return
        self._session_at = self.clock()
        # The session record also marks the shoe link down until the shoe answers this run.
        self._apply(session_record(self.profile, self.table.game.name, self.version,
                                   self.profile_toml))

    # ----------------------------------------------------------------- inputs
    def submit(self, item: TableInput, ticket: SupervisorTicket | None = None) -> None:
        """Hand an input over from another thread; the controller's thread applies it (and
        settles ``ticket`` once it is journalled)."""
        self._submitted.put((item, ticket))

    def supervisor(
        self, action: str, supervisor: str, pin: str, *, card: str | None = None,
        reason: str = "", client: str | None = None,
    ) -> SupervisorTicket:
        """Check the supervisor's PIN, then queue the action (journalled with who did it).

        ``client`` says where the try comes from (the web client's address, ``"console"``;
        default ``"local"``): the access guard (:attr:`access`, :mod:`shoe_controller.access`)
        counts wrong PINs per client and id, per client and table-wide, before it hashes.
        Raises :class:`SupervisorAuthError` (unknown or reserved id, wrong or too short PIN),
        ``SupervisorHeldOffError`` (too many wrong PINs: not checked), ``ShoeError`` (unknown
        action, bad card code; nothing counted).

        Returns the action's :class:`SupervisorTicket`: wait on it to learn when the action
        was journalled and whether the table carried it out."""
        if action not in SUPERVISOR_ACTIONS:
            raise ShoeError(f"unknown supervisor action {action!r}; one of {SUPERVISOR_ACTIONS}")
        if action == "void_round" and not reason.strip():
            # Refused before the PIN is checked (nothing counted); the table refuses one
            # submitted without a reason too, whichever way it came.
            raise ShoeError("a void needs a reason (what happened), e.g. 'dealer exposed a "
                            "card'")
        parsed = None
        if action == "enter_card":
            if not card:
                raise CardCodeError("enter_card needs the card code, e.g. 'QS'")
            parsed = Card.from_code(card)
        ticket = authorised_ticket(self.access, action, supervisor, pin, client)
        self.submit(SupervisorAction(action, supervisor, parsed, reason), ticket)
        return ticket

    def step(self, timeout: float = 0.05) -> None:
        """Process what arrived within ``timeout`` seconds, then the timers and outputs."""
        if self.reporter is not None:
            self.reporter.check()
            for command in self.reporter.take_commands():
                self._table_system_command(command)
        while True:
            try:
                self._apply(*self._submitted.get_nowait())
            except queue.Empty:
                break
        deadline = self._next_timer()
        if self._awaiting is not None:
            # A player's answer comes through submit(), which cannot wake the wait for the
            # shoe below: look for it often while one is awaited (the dealer waits too).
            timeout = min(timeout, ANSWER_POLL_SECONDS)
        wait = timeout if deadline is None else max(0.0, min(timeout, deadline - self.clock()))
        wait_for = wait
        while True:
            try:
                received = self.connection.get(wait_for)
            except ShoeTimeoutError:
                break
            for item in self._translate(received):
                self._apply(item)
            wait_for = 0
        self._run_timers()
        # The exit is set once everything that arrived has been applied: unlocking after one
        # card while the next (say, one forced past the stop) is already queued would let a
        # card out that is not due. Between cards the shoe keeps its stop engaged by itself.
        self._sync_device()
        self._watch_liveness()
        self._refresh_view()

    def run(self, should_stop: Callable[[], bool], shoes: int | None = None) -> None:
        """Run until ``should_stop()`` or until ``shoes`` shoes have finished in this run."""
        self._sync_device()
        while not should_stop():
            if shoes is not None and self.shoes_finished >= shoes:
                log.info("finished %d shoe(s); stopping", self.shoes_finished)
                return
            self.step()

    # ----------------------------------------------------------------- internals
    def _translate(self, received: object) -> list[TableInput]:
        """The journal inputs one item from the shoe connection stands for (often none)."""
        if isinstance(received, wire.CardDrawn):
            try:
                card = Card.from_wire(received.rank, received.suit)
            except CardCodeError as exc:
                log.error("shoe sent an invalid card; treating it as unread: %s", exc,
                          extra={"counter": received.counter})
                return [CardMisread(received.counter, received.sensor.name.lower(),
                                    received.drawn_while_locked)]
            return [CardDrawn(card, received.counter, received.sensor.name.lower(),
                              received.confidence, received.drawn_while_locked)]
        if isinstance(received, wire.CardMisread):
            return [CardMisread(received.counter, received.sensor.name.lower(),
                                received.drawn_while_locked)]
        if isinstance(received, wire.ShoeStateChanged):
            return [ShoeEventInput(SHOE_EVENT_NAMES[received.event], received.counter)]
        if isinstance(received, wire.ButtonPressed):
            return [ButtonPressed(int(received.button))]
        if isinstance(received, wire.DeviceFault):
            if received.code == wire.FaultCode.NONE:
                return []
            return [DeviceFault(received.code.name.lower(), received.detail)]
        if isinstance(received, wire.StatusReport):
            return self._on_status(received)
        if isinstance(received, PeerRestarted):
            log.warning("the shoe restarted (session %08x -> %08x): sending its state again",
                        received.old_session, received.new_session,
                        extra={"carried_over": received.carried_over,
                               "dropped": len(received.dropped)})
            return self._shoe_connected(received.peer, restarted=True)
        if isinstance(received, TransportEvent):
            self._on_transport(received)
            return []
        if isinstance(received, LinkUp):
            self._shoe_link_up = True
            self._link_seen = True
            self._link_detail = ""
            peer = received.peer
            if isinstance(peer, wire.DeviceInfo):
                log.info("shoe connected: %s %s, serial %s, firmware %s", peer.vendor,
                         peer.model, peer.serial_number, peer.firmware_version,
                         extra={"serial": peer.serial_number, "model": peer.model,
                                "firmware": peer.firmware_version})
            items = self._shoe_connected(received.peer, restarted=False)
            if self._link_lost is not None:
                log.info("shoe link back within %.1f s: nothing to record", self.link_grace)
                self._link_lost = None
            elif not self.table.link_up:
                items.append(LinkChanged(True, ""))
            return items
        if isinstance(received, LinkLost):
            self.metrics.link_lost()
            self._shoe_link_up = False
            self.liveness.link_changed()
            reason = dealer_reason(received.reason)
            self._link_detail = reason
            if self.table.link_up and self._link_lost is None:
                log.warning("shoe link lost (%s); recorded if not back within %.1f s",
                            received.reason, self.link_grace,
                            extra={"reason": received.reason})
                self._link_lost = (self.clock(), reason)
            return []
        if isinstance(received, ProtocolError):
            return self._on_protocol_error(received)
        if isinstance(received, wire.ErrorReport):
            log.warning("shoe reports error %s: %s", received.code.name, received.detail,
                        extra={"code": received.code.name})
        elif isinstance(received, BaseException):
            raise received
        else:
            log.debug("shoe: %s", received)
        return []

    def _on_transport(self, event: TransportEvent) -> None:
        """The port itself (not the shoe's protocol) went or came back. The connection has
        logged it; the dealer's view says why the shoe is not there."""
        if event.kind is TransportEventKind.RECONNECTED:
            self._link_detail = ""
        else:
            self._link_detail = f"cannot reach the shoe on {event.description}"

    def link_detail(self) -> str:
        """Why the shoe is not connected, in the dealer's words ("" if nothing is known)."""
        if self._link_detail:
            return self._link_detail
        where = getattr(self.connection, "description", "")
        return f"no answer from the shoe on {where}" if where else "no answer from the shoe"

    def current_view(self) -> TableView:
        """The table's view with what only this shell knows: how long it has been waiting
        for the shoe to answer, and why it is not there."""
        if self.table.link_up:
            return self.table.view()
        connecting = (not self._link_seen and self._session_at is not None
                      and self.clock() - self._session_at < self.connect_grace)
        return self.table.view(connecting=connecting, link_detail=self.link_detail())

    def _refresh_view(self) -> None:
        """Tell listeners when the view changed with time alone (connecting -> not
        connected), not by an input."""
        if self._view is None:
            return
        view = self.current_view()
        if view != self._view:
            self._view = view
            update = Update(view, [], "view")
            for listener in list(self.listeners):
                listener(update)

    def _shoe_connected(self, peer: object, *, restarted: bool) -> list[TableInput]:
        """The shoe answered a handshake: send it our whole state again (it may have
        rebooted, or a restart dropped our commands), check its status at once, and journal
        its identity when this is a session the journal has not seen."""
        self._sent_lock = self._sent_lights = None
        self.liveness.link_changed()
        if not isinstance(peer, wire.DeviceInfo) or peer.session_id == self._device_session:
            return []
        self._device_session = peer.session_id
        self._device_caps = peer.capabilities
        return [DeviceConnected(peer.serial_number, peer.vendor, peer.model,
                                peer.firmware_version, int(peer.capabilities), peer.session_id,
                                restarted)]

    def _on_protocol_error(self, error: ProtocolError) -> list[TableInput]:
        if error.seq is not None:
            # A reliable message of the shoe's we could not read: the link acknowledged and
            # skipped it (SPEC 8.2), so if it was a card, that card has left unreported. The
            # table stops; the shoe's status report tells whether a card is missing.
            log.warning("shoe message refused: %s %s", error.code.name, error.detail,
                        extra={"code": error.code.name, "seq": error.seq})
            self.liveness.ask_soon()
            return [MessageRefused(error.code.name.lower(), error.detail)]
        if error.from_peer:
            log.warning("shoe refused a frame of ours: %s %s", error.code.name, error.detail,
                        extra={"code": error.code.name})
        else:
            log.info("unreadable frame from the shoe: %s %s", error.code.name, error.detail)
        return []

    def _on_status(self, report: wire.StatusReport) -> list[TableInput]:
        """A status report: the liveness guard compares it with what the shoe was told; the
        table journals it if it tells something new (cards left unreported, the lid)."""
        items: list[TableInput] = []
        if self.table.status_news(report.counter, report.lid_open):
            items.append(ShoeStatus(report.counter, report.exit_locked, report.lid_open,
                                    report.loaded, report.fault.name.lower()))
        verdict = self.liveness.on_report(self.clock(), exit_locked=report.exit_locked,
                                          counter=report.counter, lights=int(report.indicators))
        items += self._liveness_verdict(verdict.action, verdict.detail)
        return items

    def _watch_liveness(self) -> None:
        """Ask the shoe for its status when due; a report overdue counts as disagreement."""
        if not (self._shoe_link_up and self.table.link_up):
            return
        now = self.clock()
        overdue = self.liveness.check_overdue(now)
        for item in self._liveness_verdict(overdue.action, overdue.detail):
            self._apply(item)
        if self.liveness.request_due(now):
            self._sync_device()  # anything resynchronised goes out before the request
            self.connection.send(wire.StatusRequest())
            caps = self._device_caps
            self.liveness.requested(now, Expected(
                exit_locked=self._sent_lock is not False, for_card=self._sent_for_card,
                lights=int(self._sent_lights or 0),
                check_lock=bool(caps & wire.Capability.EXIT_LOCK),
                check_lights=bool(caps & wire.Capability.INDICATORS)))

    def _liveness_verdict(self, action: str, detail: str) -> list[TableInput]:
        if action == "ok":
            return []
        log.warning("shoe disagrees with its commands (%s): sending them again", detail,
                    extra={"detail": detail})
        self._sent_lock = self._sent_lights = None
        already = any(l.kind is Irregularity.SHOE_NOT_RESPONDING for l in self.table.latched)
        if action == "latch" and not already:
            return [ShoeUnresponsive(detail)]
        return []

    def _apply(self, item: TableInput, ticket: SupervisorTicket | None = None) -> None:
        if self.table.is_duplicate(item):
            log.info("%s %s already journalled (resent by the shoe): ignored", item.KIND,
                     getattr(item, "counter", "?"))
            self.connection.commit()
            return
        actor = item.supervisor if isinstance(item, SupervisorAction) else None
        started = time.perf_counter()
        record = self.journal.append(item.KIND, item.to_data(), actor=actor)
        self.metrics.observe_append(time.perf_counter() - started)
        events = self.table.handle(item)
        if isinstance(item, (CardDrawn, CardMisread)) and not item.drawn_while_locked:
            self._sent_lock = True  # the shoe re-engaged its stop after this card by itself
            self._sent_for_card = 0
        self.connection.commit()  # only now may the shoe learn that its message arrived
        if self.reporter is not None:
            self.reporter.add(record.seq, record.wall_time, events)
        for tap in self.record_taps:
            tap(record.seq, record.wall_time, events, True)
        for event in events:
            if event["type"] == "shoe_finished":
                self.shoes_finished += 1
            if event["type"] == "betting_closed" or event["type"] == "round_opened":
                self._betting_closes_at = None
            if not event.get("hold"):
                _log_event(event, self.table.shoe_number)
        view = self.current_view()
        self._view = view
        if self.table.notice:
            log.info("%s", self.table.notice, extra={"input": item.KIND})
        update = Update(view, self.withheld.visible(events), item.KIND)
        try:
            for listener in list(self.listeners):
                listener(update)
        finally:
            if ticket is not None:
                # Answered only once the displays have the update in their queues: a
                # request the supervisor makes after the answer sees the action's effect.
                ticket.settle(record.seq, self.table.refusal, self.table.notice)
        self.metrics.on_record(item.KIND, record.wall_time, events, self.table.latched)
        if isinstance(item, (CardDrawn, CardMisread)):
            self.metrics.observe_decision(time.perf_counter() - started)

    def _next_timer(self) -> float | None:
        times = [t for t in (self._betting_closes_at,
                             None if self._link_lost is None
                             else self._link_lost[0] + self.link_grace,
                             self._answer_due_at()) if t is not None]
        return min(times) if times else None

    # ----------------------------------------------------------------- players' answers
    def _players(self) -> Any:
        from shoe_controller.games.blackjack.live_players import BuiltInPlayers

        return BuiltInPlayers(self.table.game.profile.rules, self.players_seed)  # type: ignore[attr-defined]

    def _close_betting(self, origin: str) -> BettingCommand:
        """The close-betting input of the controller's own timer: for blackjack it names the
        built-in players' seats."""
        if is_interactive(self.table.game):
            seats = self._players().seats(self.table.shoe_number, self.table.round_number)
            return BettingCommand("close", origin, seats)
        return BettingCommand("close", origin)

    def _players_answer(self) -> bool:
        """Whether the built-in players answer (the bets are not the table system's)."""
        return self.reporter is None or self._own_betting()

    def _answer_due_at(self) -> float | None:
        """When the awaited answer is due: the built-in players' think time, or the
        profile's decision time (then it times out)."""
        if self._awaiting is None:
            return None
        _, since = self._awaiting
        if self._players_answer():
            return since + self.player_seconds
        return since + float(getattr(self.table.game, "decision_seconds", 15))

    def answer_seconds_left(self) -> float | None:
        """Seconds left before the awaited answer times out (None: nothing is awaited), for
        the dealer display's countdown. A wait not yet clocked has its whole time left."""
        awaiting = self.table.awaiting()
        if awaiting is None:
            return None
        seconds = float(getattr(self.table.game, "decision_seconds", 15))
        if self._awaiting is None or self._awaiting[0] != awaiting.key:
            return seconds
        return max(0.0, self._awaiting[1] + seconds - self.clock())

    def _run_answers(self) -> None:
        """Start the clock of a new wait for the players; answer it (built-in players) or
        time it out once it is due. Both are journalled inputs like any other."""
        table = self.table
        awaiting = table.awaiting()
        now = self.clock()
        if awaiting is None:
            self._awaiting = None
            return
        if table.alarm == "latched" or not table.link_up:
            self._awaiting = (awaiting.key, now)  # paused: the table waits for the error
            return
        if self._awaiting is None or self._awaiting[0] != awaiting.key:
            since = now
            if self._last_record_wall is not None:
                # Restarted while it waited: the time already waited (since the journal's
                # last record) counts, so a restart gives nobody more time.
                since -= max(0.0, time.time() - self._last_record_wall)
                self._last_record_wall = None
            self._awaiting = (awaiting.key, since)
        due_at = self._answer_due_at()
        if due_at is None or now < due_at:
            return
        from shoe_controller.games.blackjack.live_players import timeout_answer

        if self._players_answer():
            answer = self._players().answer(table.game, awaiting, table.shoe_number,
                                            table.round_number)
        else:
            answer = timeout_answer(awaiting)
        self._awaiting = None
        self._apply(answer)

    def _own_betting(self) -> bool:
        """Whether the controller's own timer opens and closes betting now.

        With a table system that drives betting, only while it is unreachable and the down
        policy is ``keep-dealing``; with ``stop-after-round`` the table finishes the round in
        progress and waits (betting already open stays open) until the table system is back.
        """
        return self.auto_betting and own_betting(self.reporter, self.down_policy)

    def _table_system_command(self, command: Any) -> None:
        """Apply (or refuse) a command from the table system: it must name this round."""
        reporter = self.reporter
        assert reporter is not None
        table = self.table
        here = (table.shoe_number, table.round_number)
        named = (command.shoe, command.round)
        if command.type == "open_betting":
            if named != (here[0], here[1] + 1):
                reporter.reject(command, f"the next round is shoe {here[0]} round {here[1] + 1}")
                return
            self._requested_open = named  # opened as soon as the table is ready for it
        elif command.type == "close_betting":
            if named != here or not table.state.endswith("betting_open"):
                reporter.reject(command, f"betting is not open for shoe {named[0]} round "
                                f"{named[1]}")
                return
            seats = command.seats if is_interactive(table.game) else None
            self._apply(BettingCommand("close", TABLE_SYSTEM,
                                       None if seats is None else list(seats)))
            if table.refusal:
                reporter.reject(command, table.refusal)
        elif command.type in ("decision", "insurance"):
            if named != here:
                reporter.reject(command, f"shoe {named[0]} round {named[1]} is not in play")
                return
            if command.type == "decision":
                item: TableInput = PlayerDecision(command.seat, command.hand, command.action,
                                                  TABLE_SYSTEM, command.key)
            else:
                item = InsuranceDecision(list(command.seats or ()), TABLE_SYSTEM, command.key)
            self._apply(item)
            if table.refusal:
                reporter.reject(command, table.refusal)
        elif command.type == "void_round":
            if named != here or not table._round_in_progress():
                reporter.reject(command, f"shoe {named[0]} round {named[1]} is not in progress")
                return
            self._apply(SupervisorAction("void_round", TABLE_SYSTEM, None,
                                         command.reason or "voided by the table system"))
        else:
            reporter.reject(command, "unknown command")

    def _open_requested_round(self) -> None:
        table = self.table
        requested = self._requested_open
        if requested is None:
            return
        if requested != (table.shoe_number, table.round_number + 1):
            self._requested_open = None  # overtaken (own timer while it was away, new shoe)
            return
        if (table.alarm == "ok" and table.link_up and table.view().due is None
                and table.waiting_for_round()):
            self._requested_open = None
            self._apply(BettingCommand("open", TABLE_SYSTEM))

    def _run_timers(self) -> None:
        self._run_answers()
        if self._link_lost is not None and self.clock() >= self._link_lost[0] + self.link_grace:
            _, reason = self._link_lost
            self._link_lost = None
            self._apply(LinkChanged(False, reason or "shoe link lost"))
        if self.reporter is not None:
            self._open_requested_round()
        if not self._own_betting():
            self._betting_closes_at = None
            return
        table = self.table
        if table.alarm == "latched" or not table.link_up:
            return
        if table.state.endswith("betting_open"):
            now = self.clock()
            if self._betting_closes_at is None:
                self._betting_closes_at = now + self.betting_seconds
            if now >= self._betting_closes_at:
                self._betting_closes_at = None
                self._apply(self._close_betting("timer"))
        elif table.view().due is None and table.waiting_for_round():
            self._apply(BettingCommand("open", "timer"))
            if self.betting_seconds == 0:
                self._apply(self._close_betting("timer"))

    def _sync_device(self) -> None:
        """Make the shoe's exit lock and lights match the table (resent after a reconnect).

        A shoe that takes SetState gets both in one command. Otherwise order matters on a line
        that loses frames: the shoe applies commands in order, and a dealer acts on lights.
        Locking goes before the lights of the new state, an unlock after them, so the shoe
        never holds an unlock newer than its lights (a SHUFFLE light left on after the unlock
        once made the dealer reload a shoe in play)."""
        if not self.table.link_up:
            return
        view = self.table.view()
        lights = wire.Indicator(0)
        for name in view.lights:
            lights |= LIGHTS.get(name, wire.Indicator(0))
        if view.state.endswith("result_shown") and view.alarm == "ok":
            lights |= LIGHTS.get(str(self.table.game.result().get("outcome")), wire.Indicator(0))
        lock_changed = view.exit_locked != self._sent_lock
        if self._device_caps & wire.Capability.STATE_COMMAND:
            if lock_changed or lights != self._sent_lights:  # both in one command
                for_card = 0 if view.exit_locked else self.table.last_counter + 1
                self.connection.send(wire.SetState(lights, view.exit_locked,
                                                   0 if view.exit_locked else 1, for_card))
                self._sent_lights = lights
                self._sent_lock, self._sent_for_card = view.exit_locked, for_card
            return
        if lock_changed and view.exit_locked:
            self._send_lock()
        if lights != self._sent_lights:
            self.connection.send(wire.SetIndicators(lights=lights, beep_ms=0))
            self._sent_lights = lights
        if lock_changed and not view.exit_locked:
            self._send_unlock()

    def _send_lock(self) -> None:
        self.connection.send(wire.SetExitLock(locked=True))
        self._sent_lock, self._sent_for_card = True, 0

    def _send_unlock(self) -> None:
        # Unlock for the one card that is due, named by its counter: the shoe relocks after
        # it by itself, and ignores this unlock if a card has left since the last one the
        # table has (an unlock carried over a reconnect and then sent again must not let a
        # second card out).
        for_card = self.table.last_counter + 1
        self.connection.send(wire.SetExitLock(locked=False, cards=1, for_card=for_card))
        self._sent_lock, self._sent_for_card = False, for_card

    @property
    def view(self) -> TableView:
        return self._view or self.current_view()


def dealer_reason(reason: str) -> str:
    """The link layer's reason for a lost link in words for the table ("no valid frame from
    the peer for 2 s" is the shoe that stopped answering)."""
    if reason.startswith("no valid frame"):
        return "the shoe stopped answering"
    return reason or "shoe link lost"


def _log_event(event: Mapping[str, Any], shoe: int) -> None:
    """One WARNING per irregularity latched, cleared or refused clearance, and per voided
    round, at the default level, with its fields (text and JSON logs alike)."""
    kind = event["type"]
    if kind == "irregularity":
        log.warning("irregularity: %s%s", event["prompt"],
                    f" ({event['detail']})" if event.get("detail") else "",
                    extra={"irregularity": event["kind"], "detail": event.get("detail", ""),
                           "card": event.get("card"), "counter": event.get("counter"),
                           "shoe": shoe, "round": event.get("round")})
    elif kind == "irregularity_cleared":
        who = event.get("supervisor") or event.get("source") or "the table"
        log.warning("irregularity cleared: %s by %s", event["kind"], who,
                    extra={"irregularity": event["kind"], "supervisor": event.get("supervisor"),
                           "source": event.get("source"), "card": event.get("card"),
                           "shoe": shoe, "round": event.get("round")})
    elif kind == "clear_refused":
        log.warning("clear refused for %s: %s", event.get("supervisor"), event.get("reason"),
                    extra={"supervisor": event.get("supervisor"), "reason": event.get("reason"),
                           "shoe": shoe})
    elif kind == "round_void":
        log.warning("round %s voided by %s: %s", event.get("round"),
                    event.get("supervisor") or "the table", event.get("reason"),
                    extra={"supervisor": event.get("supervisor"), "reason": event.get("reason"),
                           "shoe": shoe, "round": event.get("round")})
