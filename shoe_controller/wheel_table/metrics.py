"""Prometheus metrics of a wheel table (``shoe run --metrics`` with a roulette profile).

The names a card table has too keep their meaning (docs/metrics.md): rounds by outcome,
round duration, irregularities latched, cleared and their time to clearance, journal append
latency, the table-system backlog, process facts. A wheel's own are ``shoe_wheel_*``: lines
received by kind, warnings, line losses, games not opened while latched, whether the wheel is
connected, and the bias monitor's evidence. Counted on the controller's thread as records are
applied (never while the journal is replayed); the rest is read at scrape time.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    GCCollector,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from shoe_controller.metrics import LiveTableFamilies, backlog_of
from wheel_protocol.events import FaultCode

log = logging.getLogger("shoe_controller.metrics")

#: A roulette round's outcomes: the winning number's colour, or void.
OUTCOMES = ("red", "black", "green", "void")
LINE_KINDS = ("status", "result", "reply", "noise")
IRREGULARITY_KINDS = (*(code.value for code in FaultCode), "wheel_bias")


class WheelMetrics(LiveTableFamilies):
    def __init__(self, table_id: str, *, process: bool = True) -> None:
        self.table_id = table_id
        self.registry = CollectorRegistry()
        labels = ("table_id",)
        reg = self.registry
        super().__init__(reg, "the winning number's colour, or void")
        self.lines = Counter("shoe_wheel_lines", "Lines received from the wheel, by kind "
                             "(status, result, reply, noise)", (*labels, "kind"), registry=reg)
        self.warnings = Counter("shoe_wheel_warnings", "Wheel warnings that latch nothing "
                                "(misspin, launch retry, a game with no round open), by kind",
                                (*labels, "kind"), registry=reg)
        self.line_losses = Counter("shoe_wheel_line_losses", "Times the wheel's serial line "
                                   "was lost (port closed or failed)", labels, registry=reg)
        self.not_opened = Counter("shoe_wheel_games_not_opened", "Games the wheel ran while an "
                                  "irregularity was latched (not settled)", labels, registry=reg)
        for outcome in OUTCOMES:
            self.rounds.labels(table_id, outcome)
        for kind in LINE_KINDS:
            self.lines.labels(table_id, kind)
        for kind in IRREGULARITY_KINDS:
            self.irregularities.labels(table_id, kind)
        for metric in (self.round_duration, self.append, self.line_losses, self.not_opened):
            metric.labels(table_id)
        self._append = self.append.labels(table_id)
        self._round_opened: float | None = None
        self._latched_at: dict[str, float] = {}
        self.controller: Any = None
        self.registry.register(_WheelCollector(self))
        if process:
            ProcessCollector(registry=reg)
            PlatformCollector(registry=reg)
            GCCollector(registry=reg)

    def watch(self, controller: Any) -> None:
        self.controller = controller

    def observe_append(self, seconds: float) -> None:
        self._append.observe(seconds)

    def on_record(self, kind: str, line_kind: str | None, wall_time: float,
                  events: Iterable[Mapping[str, Any]], *, live: bool = True) -> None:
        """One journal record applied (``live`` False: replayed at start, only what spans a
        restart is followed). ``line_kind``: what a ``wheel_line`` record was."""
        try:
            if live and line_kind is not None:
                self.lines.labels(self.table_id, line_kind).inc()
            for event in events:
                self._follow(event, wall_time, live)
        except Exception:  # metrics must never stop the table
            log.exception("metrics: record not counted")

    def _follow(self, event: Mapping[str, Any], wall_time: float, live: bool) -> None:
        kind, table_id = event["type"], self.table_id
        if kind == "round_opened":
            self._round_opened = wall_time
        elif kind in ("winning_number", "round_void"):
            if live:
                outcome = event["colour"] if kind == "winning_number" else "void"
                self.rounds.labels(table_id, outcome).inc()
                if kind == "winning_number" and self._round_opened is not None:
                    self.round_duration.labels(table_id).observe(
                        max(0.0, wall_time - self._round_opened))
            self._round_opened = None
        elif kind == "irregularity":
            if event.get("latched"):
                self._latched_at.setdefault(str(event["kind"]), wall_time)
            if live:
                self.irregularities.labels(table_id, str(event["kind"])).inc()
        elif kind == "irregularity_cleared":
            since = self._latched_at.pop(str(event["kind"]), None)
            if live:
                self.cleared.labels(table_id, str(event["kind"]), "supervisor").inc()
                if since is not None:
                    self.clearance.labels(table_id, str(event["kind"])).observe(
                        max(0.0, wall_time - since))
        elif live and kind == "wheel_warning":
            self.warnings.labels(table_id, str(event["kind"])).inc()
        elif live and kind == "wheel_health" and event["status"] == "down":
            self.line_losses.labels(table_id).inc()
        elif live and kind == "game_not_opened":
            self.not_opened.labels(table_id).inc()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


class _WheelCollector(Collector):
    """What is read from the controller at scrape time."""

    def __init__(self, metrics: WheelMetrics) -> None:
        self.metrics = metrics

    def describe(self) -> Iterable[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        metrics = self.metrics
        controller = metrics.controller
        view = getattr(controller, "_view", None) or {}
        wheel = view.get("wheel") or {}
        bias = view.get("bias") or {}
        reporter = getattr(controller, "reporter", None)
        backlog, age = backlog_of(reporter)
        oldest = min(metrics._latched_at.values(), default=None)
        for name, doc, value in (
            ("shoe_wheel_connected", "1 while the wheel's serial line is open",
             1.0 if wheel.get("connected") else 0.0),
            ("shoe_irregularities_latched", ("Irregularities latched now (no round opens until "
             "a supervisor clears them)"), float(len(view.get("latched") or ()))),
            ("shoe_irregularity_latched_age_seconds", ("How long the oldest irregularity "
             "latched now has been latched (0 when none is)"),
             max(0.0, time.time() - oldest) if oldest is not None else 0.0),
            ("shoe_table_round_number", "The round in play (or last played)",
             float(view.get("round") or 0)),
            ("shoe_wheel_bias_games", "Games in the bias monitor's period", 
             float(bias.get("games") or 0)),
            ("shoe_wheel_bias_p", ("The bias monitor's evidence (p-value; 1 before it has "
             "enough games)"), float(bias["p"]) if bias.get("p") is not None else 1.0),
            ("shoe_wheel_bias_alerting", "1 once the bias monitor's evidence passed its level",
             1.0 if bias.get("alerting") else 0.0),
            ("shoe_table_system_enabled", ("1 if this table reports to a table system "
             "(table_url)"), 0.0 if reporter is None else 1.0),
            ("shoe_table_system_connected", ("1 while an authenticated session with the table "
             "system is up"), 1.0 if reporter is not None and reporter.connected else 0.0),
            ("shoe_table_system_backlog_events", ("Events numbered for the table system and "
             "not yet acknowledged by it"), backlog),
            ("shoe_table_system_backlog_age_seconds", ("Age of the oldest event not yet "
             "acknowledged by the table system (0 when none is waiting)"), age),
        ):
            family = GaugeMetricFamily(name, doc, labels=["table_id"])
            family.add_metric([metrics.table_id], value)
            yield family
        info = GaugeMetricFamily("shoe_controller_info", "The controller's version and the "
                                 "game it plays (always 1)",
                                 labels=["table_id", "version", "profile"])
        info.add_metric([metrics.table_id, str(getattr(controller, "version", "")),
                         str(getattr(controller, "profile", ""))], 1.0)
        yield info
