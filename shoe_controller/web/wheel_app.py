"""The wheel table's dealer display, supervisor panel and API (docs/roulette.md, Dealer
display), on the frame every display shares (:mod:`shoe_controller.web.server`).

The controller's thread owns the table, its view and its bias monitor (numpy arrays it
changes with every number). Its listener here takes the view it is handed (a fresh dict each
time, never changed afterwards) and, when a number was accepted or the monitor reset, the
bias report (~1 ms, built there, where the counts are consistent), and hands both to the web
loop; JSON and HTTP run there. :func:`serve_wheel` must be called on the controller's thread
before ``controller.run()`` (``wheel_services`` does), so the first view and report are
read where they belong.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI

from shoe_controller import __version__
from shoe_controller.web.binding import HttpSettings
from shoe_controller.web.server import (
    DisplayServer,
    Publisher,
    add_metrics,
    add_stream,
    add_supervisor,
    display_app,
)
from shoe_controller.web.wheel_schema import WHEEL_API_VERSION, WheelActionOutcome, WheelState
from shoe_controller.wheel_table.controller import WheelController

#: Events after which the bias report is taken again (the counts changed).
BIAS_EVENTS = frozenset({"winning_number", "bias_reset"})


@dataclass(frozen=True, slots=True)
class WheelUpdate:
    """One update, as the controller's thread hands it over."""

    view: dict[str, Any]
    bias_report: dict[str, Any] | None  # None: unchanged


class WheelHub(Publisher):
    """The wheel display's state on the web loop: the last view and bias report."""

    def __init__(self, profile: str, first: WheelUpdate, clock: Callable[[], float]) -> None:
        super().__init__()
        self.profile = profile
        self.view = first.view
        self.bias_report = first.bias_report or {}
        self._clock = clock

    def update(self, item: WheelUpdate) -> None:
        """Called on the loop for every controller update (via ``call_soon_threadsafe``)."""
        self.view = item.view
        if item.bias_report is not None:
            self.bias_report = item.bias_report
        self.schedule_publish()

    def snapshot(self, version: int) -> dict[str, Any]:
        view = self.view
        closes_at = view.get("betting_closes_at")
        left = None
        if closes_at is not None and view.get("phase") == "betting_open":
            left = round(max(0.0, closes_at - self._clock()), 3)
        return {"api_version": WHEEL_API_VERSION, "version": version, "profile": self.profile,
                "betting_seconds_left": left, "view": view}


def create_wheel_app(server: WheelWebServer, controller: WheelController,
                     allowed_hosts: frozenset[str] | None = None) -> FastAPI:
    """The wheel display's FastAPI application; ``server.hub`` is read on the loop only."""
    app = display_app(
        title="Shoe controller wheel table API",
        version=WHEEL_API_VERSION, page="wheel.html", allowed_hosts=allowed_hosts,
        description=(
            "Read-only state of a live roulette table (the wheel, the round, the winning "
            "number, the last numbers, hot and cold numbers, the bias monitor), the wheel's "
            "bias report, and the PIN-protected supervisor actions. `/api/stream` pushes the "
            "whole `WheelState` document as server-sent events. This page: `/api/docs`; the "
            "machine-readable description: `/openapi.json`. "
            f"Wheel API version {WHEEL_API_VERSION} (changes: "
            f"`shoe_controller/web/wheel_schema.py`); shoe controller {__version__}."),
    )
    add_metrics(app, controller)

    @app.get("/api/state", response_model=WheelState, tags=["table"])
    async def state() -> Any:
        """Everything the dealer display shows, as of the last update."""
        return server.hub.snapshot(server.hub.version)

    @app.get("/api/bias", tags=["bias"], responses={200: {
        "description": "the bias report, schema `roulette-bias/1` "
                       "(docs/roulette/bias-report.schema.json)",
        "content": {"application/json": {"schema": {"type": "object"}}}}})
    async def bias() -> Any:
        """The wheel's bias report as of the last number: every number's and sector's games,
        the chi-square evidence against a fair wheel, the dealer and direction breakdown."""
        return server.hub.bias_report

    add_stream(app, server, document="WheelState")
    add_supervisor(app, controller, outcome=WheelActionOutcome, api_version=WHEEL_API_VERSION,
                   actions="`clear` (the latched irregularities), `void_round` (the game in "
                   "progress; `reason` required), `reset_bias` (a new monitoring period, e.g. "
                   "after the wheel was serviced; `reason`), `dealer` (`reason`: the dealer's "
                   "name)")
    return app


class WheelWebServer(DisplayServer):
    """The wheel table's display in its own thread (see :class:`DisplayServer`)."""

    controller: WheelController
    hub: WheelHub

    def _prepare(self) -> None:
        self._first = WheelUpdate(self.controller.view(), self.controller.table.bias.report())

    def create_app(self) -> FastAPI:
        return create_wheel_app(self, self.controller, self.settings.allowed)

    def _make_hub(self) -> WheelHub:
        return WheelHub(self.controller.profile, self._first, self.controller.clock)

    def _on_update(self, view: dict[str, Any],
                   events: list[dict[str, Any]]) -> None:
        """The controller's listener (its thread): the view as handed over, the bias report
        only when the counts changed."""
        if self._closed or self._loop is None:
            return
        report = None
        if any(event["type"] in BIAS_EVENTS for event in events):
            report = self.controller.table.bias.report()
        self._hand_over(self.hub.update, WheelUpdate(view, report))


def serve_wheel(controller: WheelController, settings: HttpSettings) -> WheelWebServer:
    """Serve the wheel table's dealer display, supervisor panel and API (validated
    ``settings``: ``shoe_controller.web.binding.http_settings``). Call on the controller's
    thread before ``controller.run()``. Returns the running server (``.url``, ``.check()``,
    ``.failed``, idempotent ``.close()``); raises ``WebServerError`` if it cannot start."""
    return WheelWebServer(controller, settings).start()


__all__ = ["WheelWebServer", "create_wheel_app", "serve_wheel"]
