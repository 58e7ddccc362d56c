"""Publishing one table to an MQTT broker without ever making the table wait.

Three threads, and why:

* **The controller's thread** only hands over. :meth:`MqttPublisher.on_record` (a record tap:
  every journal record's events, replayed at start and live) numbers the events with the
  same :class:`~shoe_controller.reporting.stream.EventStream` the table-system reporter uses,
  so what the stream holds back (a hole card not yet revealed) is never handed over at all;
  :meth:`MqttPublisher.on_update` (a controller listener) adds a copy of the view and puts
  one item on a bounded inbox with ``put_nowait``. Microseconds, no lock the worker holds
  for long, no I/O. A full inbox (the worker stuck: a bug, never the broker) drops the item
  and counts it.
* **The worker** wakes :data:`BATCH_SECONDS` after an item arrived (the table has finished
  with that input by then), folds what came into the state (:class:`~.state.TableState`),
  computes the live odds when the cards left changed (~1 ms), and publishes: every event at
  QoS 1 in order, one retained state per item (QoS 0: each supersedes the last). While the broker is away it keeps the events (up to
  :data:`EVENT_BACKLOG`; older ones are dropped and counted) and only the newest state:
  each state superseded before it could be published is a dropped state update, counted.
  When the broker is back it publishes the status, the newest state (retained again: a
  broker that restarted without persistence has lost it) and the events kept.
* **paho's network thread** connects, reconnects with backoff, and sends.

Nothing here can stop or slow the table: a broker down, refusing the login, or refusing a
publish (ACL) is logged, counted (``shoe_mqtt_*`` metrics) and retried; a failure of the
worker itself is logged with its traceback, exposed as :attr:`MqttPublisher.error` and in the
metrics, and the table deals on (the table system, not the broker, is the authority).
"""

from __future__ import annotations

import json
import logging
import queue
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import paho.mqtt.client as mqtt

from shoe_controller import __version__
from shoe_controller.fleet.broker import BrokerSettings, Topics
from shoe_controller.fleet.client import connect, is_failure, new_client, reason_text
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
#: How long a clean stop waits for the broker to take the "offline: stopped" status.
GOODBYE_SECONDS = 2.0


def _json(document: Mapping[str, Any]) -> bytes:
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


@dataclass(frozen=True, slots=True)
class _Item:
    released: tuple[Released, ...]
    view: dict[str, Any] | None
    at: float
    seen: dict[Any, int] | None  # cards seen, when the odds changed


_WAKE = object()
"""Put on the inbox when the broker is (back) up: the worker publishes at once."""


@dataclass
class PublisherStats:
    """Counters read by the metrics at scrape time (plain ints: a torn read is harmless)."""

    connected: bool = False
    states_published: int = 0
    states_dropped: int = 0
    events_published: int = 0
    events_dropped: int = 0
    inbox_dropped: int = 0
    refused: int = 0
    connections: int = 0
    failed: bool = False


class MqttPublisher:
    """Publishes one table's state, events and status (docs/mqtt/README.md).

    Wire it before the controller replays its journal (``controller.record_taps`` gets
    :meth:`on_record`), then :meth:`start` with the controller: it adds :meth:`on_update` to
    the listeners and connects. :meth:`close` says goodbye (status offline, "stopped").
    ``odds``: a function of the cards seen giving the exact odds document, or None."""

    def __init__(self, settings: BrokerSettings, topics: Topics, *, pit: str | None = None,
                 odds: Callable[[int, int, dict[Any, int]], dict[str, Any]] | None = None,
                 inbox: int = INBOX, backlog: int = EVENT_BACKLOG,
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
        self._inbox: queue.Queue[Any] = queue.Queue(maxsize=inbox)
        self._pending: list[Released] = []  # controller thread: released by the last record
        self._controller: Any = None
        # Worker thread only:
        self._backlog: deque[Released] = deque()
        self._backlog_max = backlog
        self._version = 0
        self._state_due = False  # a state not yet published
        # paho thread -> worker:
        self._connected = threading.Event()
        self._reconnected = threading.Event()
        self._closing = False
        self._refusal_logged = ""
        offline = _json({"v": PAYLOAD_VERSION, "table_id": topics.table_id, "online": False,
                         "reason": "connection lost", "session": self.session})
        self._client = new_client(settings, f"shoe-{topics.table_id}-{self.session}",
                                  will=(topics.status, offline))
        self._client.max_inflight_messages_set(MAX_INFLIGHT)
        self._client.on_connect = self._on_connect
        self._client.on_connect_fail = self._on_connect_fail
        self._client.on_disconnect = self._on_disconnect
        self._client.on_publish = self._on_publish
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
            seen = None
            if any(r.type in ODDS_EVENTS for r in released) and self._odds is not None:
                seen = dict(self._controller.table.seen)
            self._inbox.put_nowait(_Item(released, update.view.to_dict(), self._clock(), seen))
        except queue.Full:
            self.stats.inbox_dropped += 1
            self.stats.events_dropped += len(released)
        except Exception as exc:  # noqa: BLE001 - the table must deal on
            self._fail(exc)

    # ------------------------------------------------------------ owner
    def start(self, controller: Any = None) -> MqttPublisher:
        """Begin with ``controller``'s view now, then follow its updates. Without a
        controller the caller's thread is the one that calls :meth:`on_record` and
        :meth:`on_update` (a table in the same thread, or a test of the stream's holds)."""
        if controller is None:
            self._inbox.put_nowait(_Item((), None, self._clock(), None))
            self._thread.start()
            connect(self._client, self.settings)
            return self
        self._controller = controller
        game = controller.table.game
        game_profile = getattr(game, "profile", None)
        decks = getattr(game, "copies_per_card", None)  # every game's decks (Game protocol)
        state = self._state
        state.game = str(getattr(game, "name", ""))
        state.profile = str(getattr(game_profile, "name", "") or controller.profile)
        state.cards_total = 52 * decks if isinstance(decks, int) else None
        if self._odds is None and state.game == "baccarat" and game_profile is not None:
            self._odds = baccarat_odds(game_profile)
        state.set_view(controller.view.to_dict(), self._clock())
        seen = dict(controller.table.seen) if self._odds is not None else None
        self._inbox.put_nowait(_Item((), None, self._clock(), seen))
        controller.listeners.append(self.on_update)
        self._thread.start()
        connect(self._client, self.settings)
        return self

    def close(self) -> None:
        """Publish what is left if connected, say "offline: stopped", disconnect."""
        if self._closing:
            return
        controller = self._controller
        if controller is not None and self.on_update in controller.listeners:
            controller.listeners.remove(self.on_update)
        self._closing = True
        try:
            self._inbox.put_nowait(None)
        except queue.Full:
            pass  # a stuck worker sees _closing within its 0.5 s wait
        if self._thread.is_alive():
            self._thread.join(5.0)
        try:
            if self._connected.is_set():
                info = self._client.publish(self.topics.status, _json(self._status(False)),
                                            qos=1, retain=True)
                info.wait_for_publish(GOODBYE_SECONDS)
            self._client.disconnect()
        except (RuntimeError, ValueError, OSError) as exc:
            log.info("mqtt: goodbye not delivered: %s", exc)
        finally:
            self._client.loop_stop()

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def _fail(self, exc: BaseException) -> None:
        if self.error is None:
            self.error = exc
            self.stats.failed = True
            log.error("mqtt publisher failed (the table deals on; the broker gets no more "
                      "updates from it): %s", exc, exc_info=exc)

    # ------------------------------------------------------------ paho's thread
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
        self._reconnected.set()
        try:
            # Before anything handed over once the connection is seen: the status and the
            # newest state go out first.
            self._inbox.put_nowait(_WAKE)
        except queue.Full:
            pass  # the worker is busy anyway
        self._connected.set()
        self.stats.connected = True

    def _on_connect_fail(self, client: Any, userdata: Any) -> None:
        log.debug("mqtt: cannot reach %s (retrying)", self.settings.describe())

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason_code: Any,
                       properties: Any = None) -> None:
        if self._connected.is_set() and not self._closing:
            log.warning("mqtt: lost %s: %s (the table deals on; state updates are counted "
                        "as dropped until it is back)", self.settings.describe(),
                        reason_text(reason_code), extra={"broker": self.settings.describe()})
        self._connected.clear()
        self.stats.connected = False

    def _on_publish(self, client: Any, userdata: Any, mid: int, reason_code: Any,
                    properties: Any = None) -> None:
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
            while True:
                batch = [self._next_item()]
                if batch[0] is not None and not self._closing:
                    # The controller's thread has more to do for the input it just handed
                    # over (the exit, the lights, the next input): let it, then take what
                    # came meanwhile in one go, off the table's critical path.
                    time.sleep(BATCH_SECONDS)
                batch += self._drain()
                for item in batch:
                    if item is not None and item is not _WAKE:
                        # What is due goes out first if the broker has come back meanwhile:
                        # a state is superseded unpublished only while it is away.
                        self._publish_due()
                        self._fold(item)
                    self._publish_due()  # one state per item: every change published
                self._publish_due()
                if self._closing and None in batch:
                    return
        except BaseException as exc:  # noqa: BLE001 - reported to the owner, table deals on
            self._fail(exc)

    def _drain(self) -> list[Any]:
        items = []
        while True:
            try:
                items.append(self._inbox.get_nowait())
            except queue.Empty:
                return items

    def _next_item(self) -> Any:
        try:
            return self._inbox.get(timeout=0.5)
        except queue.Empty:
            return None

    def _fold(self, item: _Item) -> None:
        state = self._state
        if item.released:
            state.add(item.released)
            for event in item.released:
                if len(self._backlog) >= self._backlog_max:
                    self._backlog.popleft()
                    self.stats.events_dropped += 1
                self._backlog.append(event)
        if item.view is not None:
            state.set_view(item.view, item.at)
        if item.seen is not None and self._odds is not None:
            rounds = sum(1 for r in state.recent if r.get("outcome") != "void")
            state.set_odds(self._odds(state.shoe, rounds, item.seen))
        if self._state_due:
            self.stats.states_dropped += 1  # superseded before the broker could have it
        self._version += 1
        self._state_due = True

    def _publish_due(self) -> None:
        if not self._connected.is_set():
            return
        if self._reconnected.is_set():
            self._reconnected.clear()
            self._publish(self.topics.status, self._status(True), retain=True)
            # Re-published: the broker may have lost it (once there is a state at all).
            self._state_due = self._version > 0
        while self._backlog:
            event = self._backlog[0]
            if not self._publish(self.topics.events, self._event(event)):
                return
            self._backlog.popleft()
            self.stats.events_published += 1
        if self._state_due:
            state = self._state.payload(version=self._version, session=self.session,
                                        at=self._clock(), table_system=self._table_system())
            # QoS 0 for the state: each supersedes the last, TCP delivers it while the
            # connection lasts, and a new connection gets the newest again (above).
            if self._publish(self.topics.state, state, retain=True, qos=0):
                self._state_due = False
                self.stats.states_published += 1

    def _publish(self, topic: str, document: Mapping[str, Any], *, retain: bool = False,
                 qos: int = 1) -> bool:
        info = self._client.publish(topic, _json(document), qos=qos, retain=retain)
        # Not connected after all (a loss between the check and now): kept for later.
        return info.rc == mqtt.MQTT_ERR_SUCCESS

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
