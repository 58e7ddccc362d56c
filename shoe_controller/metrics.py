"""Prometheus metrics of one table: what it counts, and how it is served (docs/metrics.md).

One :class:`TableMetrics` per controller, with its own ``CollectorRegistry`` (never the
process-wide default one: tests run several tables in one process). Two kinds of metric:

* **Counted on the controller's thread** as inputs are applied (:meth:`TableMetrics.on_record`
  is handed each journal record's input and events; :meth:`observe_append` the time the
  journal took): cards by source, misreads, irregularities by kind and their time to clearance,
  rounds and their duration, decision latency. Each is a counter increment or a histogram
  observation: microseconds, no I/O, no lock the table waits on.
* **Read at scrape time** by :class:`_TableCollector` from counters the parts already keep:
  the shoe link's and its decoder's statistics, the transport's reconnections, the table
  system's backlog (events not yet acknowledged) and its age, what is latched now. A scrape
  runs on the web server's or the metrics server's thread, reads plain attributes (and the
  reporter's lock for a moment) and never blocks the table.

Process facts (``process_*``, ``python_*``) come from prometheus-client's own collectors,
registered on the same registry. Every ``shoe_*`` metric carries ``table_id``; other labels
are bounded (a card's source, an irregularity's kind, a frame error's reason): never a card
code, a counter value or a supervisor's id.

Served by ``GET /metrics`` on the dealer display (``--http``) and, with ``--metrics
[HOST:]PORT``, by :func:`serve_metrics` on a port of its own.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from shoe_controller.errors import ConfigError

log = logging.getLogger("shoe_controller.metrics")

#: Journal appends: an fsync on a good SSD takes about a millisecond, a slow disk tens.
APPEND_BUCKETS = (0.0002, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                  1.0, 2.5)
#: A card in to the dealer's next prompt out (journal included).
DECISION_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)
#: A baccarat round, betting window included, runs from half a minute to a few.
ROUND_BUCKETS = (5.0, 10.0, 20.0, 30.0, 45.0, 60.0, 90.0, 120.0, 180.0, 300.0, 600.0)
#: From an irregularity latched to cleared: seconds (a misread read by the camera) to hours.
CLEARANCE_BUCKETS = (1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)
#: One camera capture and recognition.
CAMERA_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

CARD_SOURCES = ("scanner", "camera", "supervisor")
#: Baccarat's outcomes and a voided round (another game's outcomes appear when they happen).
ROUND_OUTCOMES = ("player", "banker", "tie", "void")
#: Decoder statistics that are frames thrown away, by reason (``firmware_protocol.codec``).
FRAME_ERRORS = ("bad_crc", "bad_cobs", "too_short", "oversize", "unsupported_version",
                "bad_length", "unknown_type", "bad_payload")


class LiveTableFamilies:
    """The metric families every live table has, whatever its device (docs/metrics.md): the
    same names and meanings at a card table and at a wheel table. Each table's metrics are
    one of these, with their own families added."""

    def __init__(self, registry: CollectorRegistry, outcomes: str) -> None:
        labels = ("table_id",)
        self.irregularities = Counter("shoe_irregularities", "Irregularities raised, by kind",
                                      (*labels, "kind"), registry=registry)
        self.cleared = Counter("shoe_irregularities_cleared", "Irregularities cleared, by kind "
                               "and by what cleared them", (*labels, "kind", "by"),
                               registry=registry)
        self.clearance = Histogram("shoe_irregularity_clearance_seconds", "Time from an "
                                   "irregularity latched to cleared", (*labels, "kind"),
                                   buckets=CLEARANCE_BUCKETS, registry=registry)
        self.rounds = Counter("shoe_rounds", f"Rounds ended, by outcome ({outcomes})",
                              (*labels, "outcome"), registry=registry)
        self.round_duration = Histogram("shoe_round_duration_seconds", "Time from a round "
                                        "opened (betting open) to its result", labels,
                                        buckets=ROUND_BUCKETS, registry=registry)
        self.append = Histogram("shoe_journal_append_seconds", "Time to append (and, with "
                                "durability full, fsync) one journal record", labels,
                                buckets=APPEND_BUCKETS, registry=registry)


class TableMetrics(LiveTableFamilies):
    """The metrics of one table (``table_id``) in their own :attr:`registry`.

    The controller's thread calls :meth:`observe_append`, :meth:`observe_decision`,
    :meth:`on_record` (and :meth:`on_replayed` while the journal is replayed at start),
    :meth:`link_lost`; the camera fallback's worker :meth:`observe_camera`. :meth:`watch`
    attaches the controller whose parts are read at scrape time.
    """

    def __init__(self, table_id: str, *, process: bool = True) -> None:
        self.table_id = table_id
        self.registry = CollectorRegistry()
        labels = ("table_id",)
        reg = self.registry
        self.cards = Counter("shoe_cards", "Cards played (dealt or burned), by what read "
                             "their face: the shoe's scanner, the camera, a supervisor",
                             (*labels, "source"), registry=reg)
        self.misreads = Counter("shoe_misreads", "Cards the shoe reported it could not read",
                                labels, registry=reg)
        self.cards_set_aside = Counter("shoe_cards_set_aside", "Cards that left the shoe "
                                       "and were set aside, not played", labels, registry=reg)
        super().__init__(reg, "player, banker, tie, void")
        self.shoes = Counter("shoe_shoes_finished", "Shoes finished", labels, registry=reg)
        self.decision = Histogram("shoe_decision_seconds", "Time from a card (or misread) "
                                  "taken from the shoe link to the table's decision: "
                                  "journalled, applied, prompt out", labels,
                                  buckets=DECISION_BUCKETS, registry=reg)
        self.link_losses = Counter("shoe_link_losses", "Shoe links lost (link layer: no valid "
                                   "frame within the link timeout, or the shoe went away)",
                                   labels, registry=reg)
        self.camera = Histogram("shoe_camera_read_seconds", "Time for one camera capture and "
                                "recognition (purpose: misread or cross-check)",
                                (*labels, "purpose"), buckets=CAMERA_BUCKETS, registry=reg)
        self.camera_reads = Counter("shoe_camera_reads", "Camera reads by purpose and outcome",
                                    (*labels, "purpose", "outcome"), registry=reg)
        # Children made now, so every series is there from the first scrape (at 0).
        for source in CARD_SOURCES:
            self.cards.labels(table_id, source)
        from shoe_controller.table.irregularities import Irregularity  # a card table's kinds

        for irregularity in Irregularity:
            self.irregularities.labels(table_id, irregularity.value)
        for outcome in ROUND_OUTCOMES:
            self.rounds.labels(table_id, outcome)
        for metric in (self.misreads, self.cards_set_aside, self.round_duration, self.shoes,
                       self.append, self.decision, self.link_losses):
            metric.labels(table_id)
        self._cards = {s: self.cards.labels(table_id, s) for s in CARD_SOURCES}
        self._misreads = self.misreads.labels(table_id)
        self._set_aside = self.cards_set_aside.labels(table_id)
        self._round_duration = self.round_duration.labels(table_id)
        self._shoes = self.shoes.labels(table_id)
        self._append = self.append.labels(table_id)
        self._decision = self.decision.labels(table_id)
        self._link_losses = self.link_losses.labels(table_id)
        # Controller thread only: open irregularities (kind, wall time latched), in order, and
        # when the round in progress opened (wall time), for durations across a restart.
        self._latches: list[tuple[str, float]] = []
        self._oldest_latch: float | None = None  # read by scrapes (one float: atomic)
        self._round_opened: float | None = None
        self._collector = _TableCollector(self)
        self.registry.register(self._collector)
        if process:
            ProcessCollector(registry=self.registry)
            PlatformCollector(registry=self.registry)
            GCCollector(registry=self.registry)

    # ------------------------------------------------------------ wiring
    def watch(self, controller: Any) -> None:
        """Read ``controller``'s parts (link, transport, reporter, table) at scrape time."""
        self._collector.controller = controller

    def watch_mqtt(self, stats: Any) -> None:
        """Read the MQTT publisher's counters (``fleet.publisher.PublisherStats``) too."""
        self._collector.mqtt = stats

    # ------------------------------------------------------------ controller's thread
    def observe_append(self, seconds: float) -> None:
        self._append.observe(seconds)

    def observe_decision(self, seconds: float) -> None:
        self._decision.observe(seconds)

    def link_lost(self) -> None:
        self._link_losses.inc()

    def on_replayed(self, wall_time: float, events: Iterable[Mapping[str, Any]],
                    latched: Iterable[Any]) -> None:
        """A journal record replayed at start: only what spans a restart (open
        irregularities, the round in progress) is followed; nothing is counted."""
        try:
            self._follow(wall_time, events, latched, count=False)
        except Exception:  # metrics must never stop the table
            log.exception("metrics: replayed record not followed")

    def on_record(self, kind: str, wall_time: float, events: Iterable[Mapping[str, Any]],
                  latched: Iterable[Any]) -> None:
        """A journal record of input ``kind`` was applied: count what its events say.
        ``latched``: the table's latched irregularities after it."""
        try:
            if kind == "misread":
                self._misreads.inc()
            self._follow(wall_time, events, latched, count=True)
        except Exception:  # metrics must never stop the table
            log.exception("metrics: record not counted")

    def _follow(self, wall_time: float, events: Iterable[Mapping[str, Any]],
                latched: Iterable[Any], *, count: bool) -> None:
        table_id = self.table_id
        changed = False
        for event in events:
            kind = event.get("type")
            if kind in ("card", "burn_card"):
                if count:
                    counter = self._cards.get(str(event.get("source")))
                    if counter is not None:
                        counter.inc()
            elif kind == "irregularity":
                self._latches.append((str(event.get("kind")), wall_time))
                changed = True
                if count:
                    self.irregularities.labels(table_id, str(event.get("kind"))).inc()
            elif kind == "irregularity_cleared":
                what = str(event.get("kind"))
                since = self._take_latch(what)
                changed = True
                if count:
                    self.cleared.labels(table_id, what, _cleared_by(event)).inc()
                    if since is not None:
                        self.clearance.labels(table_id, what).observe(
                            max(0.0, wall_time - since))
            elif kind == "round_opened":
                self._round_opened = wall_time
            elif kind == "round_result":
                if count:
                    self.rounds.labels(table_id, str(event.get("outcome") or "unknown")).inc()
                    if self._round_opened is not None:
                        self._round_duration.observe(max(0.0, wall_time - self._round_opened))
                self._round_opened = None
            elif kind == "round_void":
                if count:
                    self.rounds.labels(table_id, "void").inc()
                self._round_opened = None
            elif kind == "card_set_aside":
                if count:
                    self._set_aside.inc()
            elif kind == "shoe_finished":
                if count:
                    self._shoes.inc()
                self._round_opened = None
        current = [getattr(item, "kind", item) for item in latched]
        if changed or len(current) != len(self._latches):
            self._reconcile([str(getattr(k, "value", k)) for k in current], wall_time)

    def _take_latch(self, kind: str) -> float | None:
        for index, (latched_kind, at) in enumerate(self._latches):
            if latched_kind == kind:
                del self._latches[index]
                return at
        return None

    def _reconcile(self, kinds: list[str], wall_time: float) -> None:
        """Keep the open irregularities in step with the table's (one may go without an
        ``irregularity_cleared`` event, say when a shoe ends)."""
        old = list(self._latches)
        kept: list[tuple[str, float]] = []
        for kind in kinds:
            for index, (old_kind, at) in enumerate(old):
                if old_kind == kind:
                    kept.append(old.pop(index))
                    break
            else:
                kept.append((kind, wall_time))
        self._latches = kept
        self._oldest_latch = min((at for _, at in kept), default=None)

    # ------------------------------------------------------------ camera's worker thread
    def observe_camera(self, purpose: str, outcome: str, seconds: float) -> None:
        self.camera.labels(self.table_id, purpose).observe(seconds)
        self.camera_reads.labels(self.table_id, purpose, outcome).inc()

    # ------------------------------------------------------------ exposure
    def exposition(self) -> bytes:
        """The registry in the Prometheus text format (:data:`CONTENT_TYPE`)."""
        return generate_latest(self.registry)


CONTENT_TYPE = CONTENT_TYPE_LATEST


def _cleared_by(event: Mapping[str, Any]) -> str:
    """What cleared an irregularity, as a bounded label value (never a supervisor's id)."""
    source = event.get("source")
    if source in CARD_SOURCES:
        return str(source)
    supervisor = event.get("supervisor")
    if supervisor == "table-system":
        return "table_system"
    if supervisor:
        return "supervisor"
    return "table"


class _TableCollector(Collector):
    """Reads, at scrape time, the counters the link, transport, reporter and table keep."""

    def __init__(self, metrics: TableMetrics) -> None:
        self.metrics = metrics
        self.controller: Any = None
        self.mqtt: Any = None

    def describe(self) -> Iterable[Metric]:
        return []  # no names claimed up front: collect() may be called by nobody else

    def collect(self) -> Iterator[Metric]:
        for part in (self._link, self._reporter, self._table, self._mqtt):
            try:
                yield from part()
            except Exception:  # a scrape must never fail for a torn read
                log.debug("metrics: %s skipped", part.__name__, exc_info=True)

    def _family(self, cls: Any, name: str, doc: str, labels: tuple[str, ...] = ()) -> Any:
        return cls(name, doc, labels=("table_id", *labels))

    def _single(self, cls: Any, name: str, doc: str, value: float) -> Metric:
        """A family of one series, labelled with the table only."""
        family = self._family(cls, name, doc)
        family.add_metric([self.metrics.table_id], value)
        return family

    def _link(self) -> Iterator[Metric]:
        t = self.metrics.table_id
        connection = getattr(self.controller, "connection", None)
        link = getattr(connection, "link", None)
        stats = getattr(link, "stats", None)
        decoder: Mapping[str, int] = getattr(link, "decoder_stats", None) or {}  # a property
        yield self._single(CounterMetricFamily, "shoe_link_frames_sent",
                           "Frames the host sent to the shoe (data, acks, heartbeats, hellos, "
                           "naks, retransmissions)",
                           getattr(stats, "frames_sent", 0))
        yield self._single(CounterMetricFamily, "shoe_link_frames_received",
                           "CRC-valid frames the host received from the shoe",
                           decoder.get("frames", 0))
        resent = self._family(CounterMetricFamily, "shoe_link_retransmissions",
                              "Frames sent again: on a retransmission timeout (timeout) or "
                              "because a Nak said they were missing (nak)", ("trigger",))
        resent.add_metric([t, "timeout"], getattr(stats, "retransmissions", 0))
        resent.add_metric([t, "nak"], getattr(stats, "fast_retransmissions", 0))
        yield resent
        yield self._single(CounterMetricFamily, "shoe_link_crc_errors",
                           "Frames from the shoe that failed their CRC-32",
                           decoder.get("bad_crc", 0))
        errors = self._family(CounterMetricFamily, "shoe_link_frame_errors",
                              "Frames from the shoe thrown away, by reason", ("reason",))
        for reason in FRAME_ERRORS:
            errors.add_metric([t, reason], decoder.get(reason, 0))
        yield errors
        yield self._single(CounterMetricFamily, "shoe_link_garbage_bytes",
                           "Bytes from the shoe that formed no valid frame",
                           decoder.get("garbage_bytes", 0))
        naks = self._family(CounterMetricFamily, "shoe_link_naks",
                            "Naks (selective negative acknowledgements) by direction",
                            ("direction",))
        naks.add_metric([t, "sent"], getattr(stats, "naks_sent", 0))
        naks.add_metric([t, "received"], getattr(stats, "naks_received", 0))
        yield naks
        copies = self._family(CounterMetricFamily, "shoe_link_frame_copies",
                              "Proactive copies of a lone frame (link revision 1.3): sent by "
                              "the host, or received from the shoe and used because the "
                              "original was lost or damaged", ("direction",))
        copies.add_metric([t, "sent"], getattr(stats, "copies_sent", 0))
        copies.add_metric([t, "used"], getattr(stats, "copies_used", 0))
        yield copies
        yield self._single(CounterMetricFamily, "shoe_link_duplicates",
                           "Reliable frames the shoe sent again that the host already "
                           "had (suppressed)",
                           getattr(stats, "duplicates", 0))
        transport = getattr(connection, "transport", None)
        yield self._single(CounterMetricFamily, "shoe_transport_reconnections",
                           "Times the port to the shoe was opened again after it "
                           "failed",
                           getattr(transport, "reconnections", 0))
        yield self._single(GaugeMetricFamily, "shoe_link_up",
                           "1 while the shoe link is up (handshake done, frames arriving)",
                           1.0 if getattr(self.controller, "_shoe_link_up", False) else 0.0)

    def _reporter(self) -> Iterator[Metric]:
        reporter = getattr(self.controller, "reporter", None)
        yield self._single(GaugeMetricFamily, "shoe_table_system_enabled",
                           "1 if this table reports to a table system (table_url)",
                           0.0 if reporter is None else 1.0)
        yield self._single(GaugeMetricFamily, "shoe_table_system_connected",
                           "1 while an authenticated session with the table system is up",
                           1.0 if reporter is not None and reporter.connected else 0.0)
        backlog, age = backlog_of(reporter)
        yield self._single(GaugeMetricFamily, "shoe_table_system_backlog_events",
                           "Events numbered for the table system and not yet acknowledged "
                           "by it",
                           backlog)
        yield self._single(GaugeMetricFamily, "shoe_table_system_backlog_age_seconds",
                           "Age of the oldest event not yet acknowledged by the table "
                           "system (0 when none is waiting)",
                           age)
        stats = getattr(reporter, "stats", None)
        yield self._single(CounterMetricFamily, "shoe_table_system_events_sent",
                           "Event messages sent to the table system (resends included)",
                           getattr(stats, "sent", 0))
        yield self._single(CounterMetricFamily, "shoe_table_system_events_acked",
                           "Events the table system acknowledged",
                           getattr(stats, "acked", 0))

    def _mqtt(self) -> Iterator[Metric]:
        stats = self.mqtt
        enabled = stats is not None
        yield self._single(GaugeMetricFamily, "shoe_mqtt_enabled",
                           "1 if this table publishes to an MQTT broker (mqtt)",
                           1.0 if enabled else 0.0)
        yield self._single(GaugeMetricFamily, "shoe_mqtt_connected",
                           "1 while the MQTT broker connection is up",
                           1.0 if enabled and stats.connected else 0.0)
        yield self._single(GaugeMetricFamily, "shoe_mqtt_failed",
                           "1 if the MQTT publisher stopped on an error of its own (the "
                           "table deals on; see the log)",
                           1.0 if enabled and stats.failed else 0.0)
        for name, doc, attr in (
                ("shoe_mqtt_states_published", "State updates the broker took", "states_published"),
                ("shoe_mqtt_states_dropped", ("State updates superseded while the broker was "
                 "away (never published)"), "states_dropped"),
                ("shoe_mqtt_states_coalesced", ("Changes folded into the next state (less "
                 "than the least time between two states after the last)"),
                 "states_coalesced"),
                ("shoe_mqtt_events_published", "Events handed to the broker (QoS 1)",
                 "events_published"),
                ("shoe_mqtt_events_dropped", ("Events dropped: the backlog kept while the "
                 "broker was away overflowed"), "events_dropped"),
                ("shoe_mqtt_refused", ("Publishes the broker refused (MQTT 5 reason code, "
                 "e.g. an ACL)"), "refused")):
            yield self._single(CounterMetricFamily, name, doc,
                               float(getattr(stats, attr, 0)) if enabled else 0.0)

    def _table(self) -> Iterator[Metric]:
        t = self.metrics.table_id
        controller = self.controller
        table = getattr(controller, "table", None)
        latched = list(getattr(table, "latched", ()))
        yield self._single(GaugeMetricFamily, "shoe_irregularities_latched",
                           "Irregularities latched now (exit locked until cleared)",
                           float(len(latched)))
        oldest = self.metrics._oldest_latch
        yield self._single(GaugeMetricFamily, "shoe_irregularity_latched_age_seconds",
                           "How long the oldest irregularity latched now has been latched "
                           "(0 when none is)",
                           max(0.0, time.time() - oldest) if latched and oldest else 0.0)
        view = getattr(controller, "_view", None)
        yield self._single(GaugeMetricFamily, "shoe_exit_locked",
                           "1 while the table keeps the shoe's exit locked",
                           1.0 if view is None or view.exit_locked else 0.0)
        yield self._single(GaugeMetricFamily, "shoe_table_shoe_number",
                           "The shoe in play (counted over the journal's life)",
                           float(getattr(table, "shoe_number", 0)))
        yield self._single(GaugeMetricFamily, "shoe_table_round_number",
                           "The round in play (or last played) in this shoe",
                           float(getattr(table, "round_number", 0)))
        info = self._family(GaugeMetricFamily, "shoe_controller_info",
                            "The controller's version and the game it plays (always 1)",
                            ("version", "profile"))
        info.add_metric([t, str(getattr(controller, "version", "")),
                         str(getattr(controller, "profile", ""))], 1.0)
        yield info


def backlog_of(reporter: Any) -> tuple[float, float]:
    """(events not acknowledged, age in seconds of the oldest) of a table-system reporter
    (:meth:`TableSystemReporter.backlog`; the age is a lower bound right after a restart)."""
    if reporter is None:
        return 0.0, 0.0
    unacked, oldest_at = reporter.backlog()
    if unacked <= 0:
        return 0.0, 0.0
    age = 0.0 if oldest_at is None else max(0.0, time.time() - oldest_at)
    return float(unacked), age


# -- the standalone metrics server (--metrics) ---------------------------------------------


class MetricsServerError(ConfigError):
    """The metrics port cannot be listened on."""


def check_metrics_port(host: str, port: int) -> None:
    """Fail with one line if ``host:port`` cannot be listened on (before the journal)."""
    import socket

    try:
        socket.create_server((host, port)).close()
    except OSError as exc:
        raise _cannot_listen(host, port, exc) from None


def _cannot_listen(host: str, port: int, exc: OSError) -> MetricsServerError:
    return MetricsServerError(f"metrics: cannot listen on {host}:{port}: {exc.strerror or exc}")


class MetricsServer:
    """``registry`` served in the Prometheus text format on ``host:port`` (0: any free
    port), in a daemon thread of prometheus-client's own server. ``url``; ``close()``."""

    def __init__(self, metrics: TableMetrics, host: str, port: int) -> None:
        from prometheus_client import start_http_server

        try:
            self._server, self._thread = start_http_server(port, addr=host,
                                                           registry=metrics.registry)
        except OSError as exc:
            raise _cannot_listen(host, port, exc) from None
        bound = self._server.server_address[1]
        shown = f"[{host}]" if ":" in host else host
        self.port = int(bound)
        self.url = f"http://{shown}:{self.port}/metrics"

    def check(self) -> None:
        pass  # the server's thread serves requests; a failed request fails only itself

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def serve_metrics(metrics: TableMetrics, host: str, port: int) -> MetricsServer:
    return MetricsServer(metrics, host, port)


__all__ = ["CONTENT_TYPE", "LiveTableFamilies", "MetricsServer", "MetricsServerError",
           "TableMetrics",
           "backlog_of", "check_metrics_port", "serve_metrics"]
