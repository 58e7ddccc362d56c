"""Publishing one table to an MQTT broker without ever making the table wait.

Two threads, and why:

* **The controller's thread** only hands over. :meth:`MqttPublisher.on_record` (a record tap:
  every journal record's events, replayed at start and live) numbers the events with the
  same :class:`~shoe_controller.reporting.stream.EventStream` the table-system reporter uses,
  so what the stream holds back (a hole card not yet revealed) is never handed over at all;
  :meth:`MqttPublisher.on_update` (a controller listener) appends the (immutable) view and
  the events released to a bounded inbox and sets an event. A few microseconds, no lock
  the worker holds for long, no system call but the wake-up, no I/O. A full inbox (the
  worker stuck: a bug, never the broker) drops the item and counts it.
* **The worker** is the only thread that touches the MQTT client: it drives paho's network
  itself (:class:`~.network.OwnedLoop`: connect, reconnect with backoff, read the broker's
  acknowledgements, keepalive), so what a batch publishes goes out with one ``send`` from
  this thread and wakes no other. It wakes :data:`BATCH_SECONDS` after an item arrived (the table
  has finished with that input by then), folds what came into the state
  (:class:`~.state.TableState`) and publishes every event at QoS 1, in order, at once, and
  the retained state (QoS 0: each supersedes the last) **at most every**
  :data:`STATE_SECONDS`: a change within that time of the last state is folded into the next
  one, published when the time is up (the pit redraws a table a few times a second at most,
  and each state is the whole table: nothing is lost but intermediate pictures). The view
  is turned into a document only for a state that goes out, and the live odds (~1 ms) are
  computed at most every :data:`ODDS_SECONDS` (the newest once the time is up, and always
  for the last state). While the broker is away it keeps the events (up to
  :data:`EVENT_BACKLOG`; older ones are dropped and counted) and only the newest state
  (the changes it superseded are counted as dropped state updates). When the broker is
  back it publishes the status, the newest state (retained again: a broker that restarted
  without persistence has lost it) and the events kept.

Nothing here can stop or slow the table: a broker down, refusing the login, or refusing a
publish (ACL) is logged, counted (``shoe_mqtt_*`` metrics) and retried; a failure of the
worker itself is logged with its traceback, exposed as :attr:`MqttPublisher.error` and in the
metrics, and the table deals on (the table system, not the broker, is the authority).
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import paho.mqtt.client as mqtt

from shoe_controller import __version__
from shoe_controller.fleet.broker import BrokerSettings, Topics
from shoe_controller.fleet.client import is_failure, new_client, reason_text
from shoe_controller.fleet.network import BUSY_TURN_SECONDS, BatchingClient, OwnedLoop
from shoe_controller.fleet.state import ODDS_EVENTS, PAYLOAD_VERSION, Released, TableState
from shoe_controller.reporting.stream import EventStream

log = logging.getLogger("shoe_controller.mqtt")

#: Items (one per journal record or view change) waiting for the worker; it keeps up with
#: thousands a second, so a full inbox means it is stuck, not that the broker is away.
INBOX = 10_000
#: Events kept while the broker is away (hours of a busy table); older ones are dropped.
EVENT_BACKLOG = 20_000
#: Messages handed to paho and not yet acknowledged by the broker (QoS 1).
MAX_INFLIGHT = 200
#: The worker waits this long after an item arrives before it takes it and what follows:
#: the table has finished with the card by then, and the pit sees it this much later.
BATCH_SECONDS = 0.005
#: At most one state per this many seconds (10 a second): a change sooner after the last
#: state goes out with the next one. Events are never held back or merged.
STATE_SECONDS = 0.1
#: The live odds (about a millisecond of the CPU, the largest part of a state's cost) at most
#: this often: a baccarat round takes 20 s or more at a real table, so there every round's
#: odds go out; faster (a simulator, a bench) the state carries the odds of an earlier round
#: (its ``after_round`` says which) until the time is up, and then the newest.
ODDS_SECONDS = 5.0
#: (The worker's wait when nothing is due: the network's turn is always sooner.)
NOTHING_DUE = 3600.0
#: How long a clean stop waits for the broker to take the "offline: stopped" status.
GOODBYE_SECONDS = 2.0


def _json(document: Mapping[str, Any]) -> bytes:
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


@dataclass(frozen=True, slots=True)
class _Item:
    released: tuple[Released, ...]
    view: Any  # the controller's TableView (immutable; made a document only if published)
    at: float
    seen: dict[Any, int] | None  # cards seen, when the odds changed


_CLOSE = object()
"""The last item: publish what is left, say goodbye, stop."""


@dataclass
class PublisherStats:
    """Counters read by the metrics at scrape time (plain ints: a torn read is harmless).

    ``states_dropped``: changes superseded while the broker was away; ``states_coalesced``:
    changes folded into the next state because the last one went out less than
    :data:`STATE_SECONDS` before (both are in the state that went out after them)."""

    connected: bool = False
    states_published: int = 0
    states_dropped: int = 0
    states_coalesced: int = 0
    events_published: int = 0
    events_dropped: int = 0
    inbox_dropped: int = 0
    refused: int = 0
    connections: int = 0
    failed: bool = False


@dataclass(frozen=True, slots=True)
class _WheelUpdate:
    """A wheel table's view, shaped as a card table's update (what :meth:`on_update` reads)."""

    view: dict[str, Any]


class MqttPublisher:
    """Publishes one table's state, events and status (docs/mqtt/README.md).

    Wire it before the controller replays its journal (``controller.record_taps`` gets
    :meth:`on_record`), then :meth:`start` with the controller: it adds :meth:`on_update` to
    the listeners and connects. :meth:`close` says goodbye (status offline, "stopped").
    ``odds``: a function of the cards seen giving the exact odds document, or None.
    ``state_seconds``: the least time between two states; ``odds_seconds``: between two
    computations of the odds."""

    def __init__(self, settings: BrokerSettings, topics: Topics, *, pit: str | None = None,
                 odds: Callable[[int, int, dict[Any, int]], dict[str, Any]] | None = None,
                 inbox: int = INBOX, backlog: int = EVENT_BACKLOG,
                 state_seconds: float = STATE_SECONDS, odds_seconds: float = ODDS_SECONDS,
                 clock: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self.topics = topics
        self.session = secrets.token_hex(6)
        self.stats = PublisherStats()
        self.error: BaseException | None = None
        self._clock = clock
        self._odds = odds
        # Numbers events as the table system's stream does; nothing is kept once numbered
        # (the broker, not this stream, delivers them: every message is "acknowledged").
        self._stream = EventStream(topics.table_id, retain=0)
        # The game is known once the controller is there (start()): the journal's profile.
        self._state = TableState(topics.table_id, game="", profile="", pit=pit)
        # Controller's thread -> worker: one producer appends, the worker pops (a deque's
        # append and popleft are atomic); the event wakes the worker.
        self._inbox: deque[Any] = deque()
        self._inbox_max = inbox
        self._wake = threading.Event()
        self._pending: list[Released] = []  # controller thread: released by the last record
        self._controller: Any = None
        #: The controller's listener: :meth:`on_update` at a card table (its updates carry
        #: the view), :meth:`_on_wheel_update` at a wheel table (view and events).
        self._listener: Callable[..., None] = self.on_update
        self._closing = False
        # Worker thread only:
        self._backlog: deque[Released] = deque()
        self._backlog_max = backlog
        self._state_seconds = state_seconds
        self._version = 0  # states published in this session
        self._changes = 0  # items folded since the last state went out
        self._view: Any = None  # the newest view not yet in the state, and its time
        self._view_at = 0.0
        self._seen: dict[Any, int] | None = None  # newest cards seen, odds not yet computed
        self._next_state_at = 0.0  # monotonic: no state before this
        self._odds_seconds = odds_seconds
        self._next_odds_at = 0.0  # monotonic: no odds computed before this
        self._reconnected = False  # set by on_connect: the status goes out first
        self._republish = False  # the newest state again (a new connection)
        self._unacked: set[int] = set()  # QoS 1 messages of this connection not yet acked
        self._connected = False
        self._refusal_logged = ""
        offline = _json({"v": PAYLOAD_VERSION, "table_id": topics.table_id, "online": False,
                         "reason": "connection lost", "session": self.session})
        self._client = cast(BatchingClient, new_client(
            settings, f"shoe-{topics.table_id}-{self.session}", will=(topics.status, offline),
            cls=BatchingClient))
        self._client.max_inflight_messages_set(MAX_INFLIGHT)
        self._client.on_connect = self._on_connect
        self._client.on_disconnect = self._on_disconnect
        self._client.on_publish = self._on_publish
        self._network = OwnedLoop(self._client, settings)
        self._thread = threading.Thread(target=self._run, name=f"mqtt-{topics.table_id}",
                                        daemon=True)

    # ------------------------------------------------------------ controller's thread
    def on_record(self, record_seq: int, at: float, events: list[dict[str, Any]],
                  live: bool = True) -> None:
        """A journal record's events (replayed at start with ``live`` False: they only
        rebuild the stream's numbering and the state, nothing is published for them)."""
        try:
            stream = self._stream
            released = stream.add(record_seq, at, events)
            stream.ack(stream.head)  # let it forget them (held events it keeps, as it must)
            if live:
                self._pending.extend(released)
            else:
                self._state.add(released)  # the worker has not started yet
        except Exception as exc:  # noqa: BLE001 - the table must deal on
            self._fail(exc)

    def on_update(self, update: Any) -> None:
        """The controller's listener: hand the view and the events released over."""
        released, self._pending = tuple(self._pending), []
        try:
            if len(self._inbox) >= self._inbox_max:
                self.stats.inbox_dropped += 1
                self.stats.events_dropped += len(released)
                return
            seen = None
            if self._odds is not None and any(r.type in ODDS_EVENTS for r in released):
                seen = dict(self._controller.table.seen)
            self._inbox.append(_Item(released, update.view, self._clock(), seen))
            self._wake.set()
        except Exception as exc:  # noqa: BLE001 - the table must deal on
            self._fail(exc)

    # ------------------------------------------------------------ owner
    def start(self, controller: Any = None) -> MqttPublisher:
        """Begin with ``controller``'s view now, then follow its updates. Without a
        controller the caller's thread is the one that calls :meth:`on_record` and
        :meth:`on_update` (a table in the same thread, or a test of the stream's holds)."""
        if controller is None:
            self._inbox.append(_Item((), None, self._clock(), None))
            self._thread.start()
            return self
        self._controller = controller
        state = self._state
        game = getattr(controller.table, "game", None)
        if game is None:  # a wheel table: no card game, no shoe, no odds
            state.game, state.profile, state.cards_total = "roulette", controller.profile, None
            self._listener = self._on_wheel_update
            self._inbox.append(_Item((), controller.view(), self._clock(), None))
            controller.listeners.append(self._listener)
            self._thread.start()
            return self
        game_profile = getattr(game, "profile", None)
        decks = getattr(game, "copies_per_card", None)  # every game's decks (Game protocol)
        state.game = str(getattr(game, "name", ""))
        state.profile = str(getattr(game_profile, "name", "") or controller.profile)
        state.cards_total = 52 * decks if isinstance(decks, int) else None
        if self._odds is None and state.game == "baccarat" and game_profile is not None:
            self._odds = baccarat_odds(game_profile)
        seen = dict(controller.table.seen) if self._odds is not None else None
        self._inbox.append(_Item((), controller.view, self._clock(), seen))
        controller.listeners.append(self._listener)
        self._thread.start()
        return self

    def _on_wheel_update(self, view: dict[str, Any], _events: list[dict[str, Any]]) -> None:
        """A wheel controller's listener (view and events; the events reach this publisher
        through its record tap, as a card table's do)."""
        self.on_update(_WheelUpdate(view))

    def close(self) -> None:
        """Publish what is left if connected, say "offline: stopped", disconnect."""
        if self._closing:
            return
        controller = self._controller
        if controller is not None and self._listener in controller.listeners:
            controller.listeners.remove(self._listener)
        self._closing = True
        self._inbox.append(_CLOSE)  # past the bound on purpose: it must get there
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(GOODBYE_SECONDS + 3.0)

    @property
    def connected(self) -> bool:
        return self._connected

    @property
    def version(self) -> int:
        """States published in this session (the ``version`` of the last one)."""
        return self._version

    def _fail(self, exc: BaseException) -> None:
        if self.error is None:
            self.error = exc
            self.stats.failed = True
            log.error("mqtt publisher failed (the table deals on; the broker gets no more "
                      "updates from it): %s", exc, exc_info=exc)

    # ------------------------------------------------------------ paho's callbacks
    # Called by paho from within OwnedLoop.turn() or a publish: in the worker's thread.
    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason_code: Any,
                    properties: Any = None) -> None:
        if is_failure(reason_code):
            text = reason_text(reason_code)
            if text != self._refusal_logged:
                self._refusal_logged = text
                log.error("mqtt: %s refused the connection: %s (retrying)",
                          self.settings.describe(), text,
                          extra={"broker": self.settings.describe(), "reason": text})
            return
        self._refusal_logged = ""
        self.stats.connections += 1
        log.info("mqtt: connected to %s", self.settings.describe(),
                 extra={"broker": self.settings.describe()})
        self._reconnected = True  # the status and the newest state go out first
        self._connected = self.stats.connected = True

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason_code: Any,
                       properties: Any = None) -> None:
        if self._connected and not self._closing:
            log.warning("mqtt: lost %s: %s (the table deals on; state updates are counted "
                        "as dropped until it is back)", self.settings.describe(),
                        reason_text(reason_code), extra={"broker": self.settings.describe()})
        self._connected = self.stats.connected = False

    def _on_publish(self, client: Any, userdata: Any, mid: int, reason_code: Any,
                    properties: Any = None) -> None:
        self._unacked.discard(mid)
        if is_failure(reason_code):
            self.stats.refused += 1
            text = reason_text(reason_code)
            if text != self._refusal_logged:
                self._refusal_logged = text
                log.error("mqtt: the broker refused a publish under %s: %s (an ACL that does "
                          "not grant this table's topics?)", self.topics.base, text,
                          extra={"topic": self.topics.base, "reason": text})

    # ------------------------------------------------------------ worker thread
    def _run(self) -> None:
        try:
            wait = 0.0
            turn_at = 0.0  # monotonic: when the network needs its next turn
            while True:
                if self._wake.wait(wait) and not self._closing and BATCH_SECONDS:
                    # The controller's thread has more to do for the input it just handed
                    # over (the exit, the lights, the next input): let it, then take what
                    # came meanwhile in one go, off the table's critical path.
                    time.sleep(BATCH_SECONDS)
                self._wake.clear()  # before taking: an item appended after sets it again
                closing = self._take()
                now = time.monotonic()
                if now >= turn_at or not self._connected:
                    # Not at every item: a turn reads the socket (a system call, a thread
                    # switch on a busy machine) and the acknowledgements can wait.
                    turn_at = now + self._network.turn(
                        busy=len(self._unacked) >= MAX_INFLIGHT)
                due = self._publish_due(final=closing)
                if not self._network.flush():  # all of it with one send
                    turn_at = 0.0  # the connection failed: the next turn finds out
                if closing:
                    self._goodbye()
                    return
                wait = max(0.0, min(turn_at - time.monotonic(), due))
        except BaseException as exc:  # noqa: BLE001 - reported to the owner, table deals on
            self._fail(exc)

    def _take(self) -> bool:
        """Fold everything in the inbox; True once the owner asked to close."""
        inbox = self._inbox
        while inbox:
            item = inbox.popleft()
            if item is _CLOSE:
                return True
            self._fold(item)
        return False

    def _fold(self, item: _Item) -> None:
        if item.released:
            self._state.add(item.released)
            backlog = self._backlog
            for event in item.released:
                if len(backlog) >= self._backlog_max:
                    backlog.popleft()
                    self.stats.events_dropped += 1
                backlog.append(event)
        if item.view is not None:
            self._view, self._view_at = item.view, item.at
        if item.seen is not None:
            self._seen = item.seen
        if self._changes:  # a change not yet published, superseded by this one
            if self._connected:
                self.stats.states_coalesced += 1
            else:
                self.stats.states_dropped += 1
        self._changes += 1

    def _publish_due(self, *, final: bool = False) -> float:
        """Publish what is due (``final``: the last state too, however recent the one
        before); returns the seconds until a state held back is due."""
        if not self._connected:
            return NOTHING_DUE  # the network's turn says when to look again
        if self._reconnected:
            self._reconnected = False
            self._unacked.clear()  # paho sends again what the last connection left unacked
            self._publish(self.topics.status, self._status(True), retain=True)
            # The newest state again, at once: the broker may have lost it (once there is
            # a state at all).
            self._republish = self._version > 0
        backlog = self._backlog
        while backlog:
            if not self._publish(self.topics.events, self._event(backlog[0])):
                return BUSY_TURN_SECONDS
            backlog.popleft()
            self.stats.events_published += 1
        now = time.monotonic()
        odds_waiting = self._seen is not None and self._odds is not None
        odds = odds_waiting and (now >= self._next_odds_at or final)
        if not (self._changes or self._republish or odds):
            return self._next_odds_at - now if odds_waiting else NOTHING_DUE
        if now < self._next_state_at and not (final or self._republish):
            return self._next_state_at - now
        version = self._version + 1 if self._changes or odds else self._version
        if not self._publish_state(version, odds=odds):
            return BUSY_TURN_SECONDS  # not sent after all (the connection just went): kept
        self._version = version
        self._changes = 0
        self._republish = False
        self._next_state_at = now + self._state_seconds
        if odds:
            self._next_odds_at = now + self._odds_seconds
            return NOTHING_DUE
        # Odds held back: a state with the newest goes out when their time is up.
        return self._next_odds_at - now if odds_waiting else NOTHING_DUE

    def _publish_state(self, version: int, *, odds: bool) -> bool:
        """The state as it is now (``odds``: with the odds of the newest cards seen)."""
        state = self._state
        if self._view is not None:
            view = self._view
            state.set_view(view.to_dict() if hasattr(view, "to_dict") else view, self._view_at)
            self._view = None
        if odds and self._odds is not None and self._seen is not None:
            rounds = sum(1 for r in state.recent if r.get("outcome") != "void")
            state.set_odds(self._odds(state.shoe, rounds, self._seen))
            self._seen = None
        document = state.payload(version=version, session=self.session, at=self._clock(),
                                 table_system=self._table_system())
        # QoS 0 for the state: each supersedes the last, TCP delivers it while the
        # connection lasts, and a new connection gets the newest again (above).
        if not self._publish(self.topics.state, document, retain=True, qos=0):
            return False
        self.stats.states_published += 1
        return True

    def _publish(self, topic: str, document: Mapping[str, Any], *, retain: bool = False,
                 qos: int = 1) -> bool:
        info = self._client.publish(topic, _json(document), qos=qos, retain=retain)
        if info.rc != mqtt.MQTT_ERR_SUCCESS:
            return False  # not connected after all (lost since the check): kept for later
        if qos:
            # Its PUBACK is read in this thread, after this call: never before this line.
            self._unacked.add(info.mid)
        return True

    def _goodbye(self) -> None:
        """Status offline, "stopped", acknowledged by the broker (or given up on after
        :data:`GOODBYE_SECONDS`), then DISCONNECT: the broker drops the last will."""
        try:
            if self._connected:
                info = self._client.publish(self.topics.status, _json(self._status(False)),
                                            qos=1, retain=True)
                self._network.flush()
                give_up = time.monotonic() + GOODBYE_SECONDS
                while (self._connected and not info.is_published()
                       and time.monotonic() < give_up):
                    time.sleep(min(self._network.turn(), BUSY_TURN_SECONDS))
            self._network.close()
        except (RuntimeError, ValueError, OSError) as exc:
            log.info("mqtt: goodbye not delivered: %s", exc)

    def _status(self, online: bool) -> dict[str, Any]:
        return {"v": PAYLOAD_VERSION, "table_id": self.topics.table_id, "online": online,
                "reason": "" if online else "stopped", "session": self.session,
                "at": self._clock(), "controller_version": __version__}

    def _event(self, event: Released) -> dict[str, Any]:
        return {"v": PAYLOAD_VERSION, "table_id": self.topics.table_id, "seq": event.seq,
                "id": event.id, "type": event.type, "at": event.at, "shoe": event.shoe,
                "data": dict(event.data)}

    def _table_system(self) -> bool | None:
        reporter = getattr(self._controller, "reporter", None)
        return None if reporter is None else bool(reporter.connected)


def baccarat_odds(profile: Any) -> Callable[[int, int, dict[Any, int]], dict[str, Any]]:
    """The exact odds of a baccarat profile on the cards left (the dealer display's)."""
    from shoe_controller.web.state import compute_odds

    def odds(shoe: int, rounds: int, seen: dict[Any, int]) -> dict[str, Any]:
        return compute_odds(profile, shoe, rounds, seen)

    return odds


def publisher_for(config: Any) -> MqttPublisher | None:
    """The publisher a ``RunConfig`` asks for (None without ``mqtt``); raises
    ``ConfigError`` for a bad broker, prefix, table id or TLS file."""
    settings = config.mqtt_settings()
    if settings is None:
        return None
    return MqttPublisher(settings, Topics(config.mqtt_prefix, config.table_id), pit=config.pit)
