"""The card table's dealer display, supervisor panel and read-only table API.

The frame (its thread, TLS, the ``Host`` check, server-sent events, the supervisor
endpoints) is every display's: :mod:`shoe_controller.web.server`. Here: what a card table
shows. Its listener (:meth:`WebServer._on_update`) only copies the update (view, events,
cards seen) and hands it to the web loop; folding, roads and JSON run there, and the exact
odds (~1 ms) run on a one-worker pool beside it.

:func:`start_web` is the one entry point: call it from the controller's thread before
``controller.run()`` so the history it rebuilds from the journal and the live updates join up.
"""

from __future__ import annotations

import asyncio
import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Query

from shoe_controller import __version__
from shoe_controller.games.baccarat.profile import Profile
from shoe_controller.table.controller import TableController, Update
from shoe_controller.table.history import replay_journal
from shoe_controller.table.secrecy import Withheld
from shoe_controller.web import schema
from shoe_controller.web.binding import HttpSettings, HttpSettingsError, http_settings, parse_http
from shoe_controller.web.server import (
    ACTION_WAIT_SECONDS,
    DisplayServer,
    Publisher,
    WebServerError,
    add_metrics,
    add_stream,
    add_supervisor,
    display_app,
    tls_context,
)
from shoe_controller.web.state import RECALL_ROUNDS, Ingest, TableHistory, compute_odds

_tls_context = tls_context  # the name others import it by (live.startup, fleet.pit_app)


class Hub(Publisher):
    """The display state on the web loop: folds updates, computes odds, wakes the streams."""

    def __init__(self, history: TableHistory, profile: Profile, odds_pool: ThreadPoolExecutor,
                 on_error: Any) -> None:
        super().__init__()
        self.history = history
        self.profile = profile
        self._odds_pool = odds_pool
        self._on_error = on_error

    def snapshot(self, version: int) -> dict[str, Any]:
        return self.history.snapshot(version)

    def ingest(self, item: Ingest) -> None:
        """Called on the loop for every controller update (via ``call_soon_threadsafe``)."""
        try:
            self.history.apply(item)
            self._start_odds()
        except Exception as exc:  # noqa: BLE001 - a display bug must reach the owner
            self._on_error(exc)
            return
        self.schedule_publish()

    def _start_odds(self) -> None:
        wanted = self.history.odds_input()
        if wanted is None:
            return
        future = asyncio.get_running_loop().run_in_executor(
            self._odds_pool, compute_odds, self.profile, *wanted)
        future.add_done_callback(self._odds_done)

    def _odds_done(self, future: asyncio.Future[dict[str, Any]]) -> None:
        if future.cancelled():
            return
        exc = future.exception()
        if exc is not None:
            self._on_error(exc)
            return
        # One worker computes them in order, so the last one done is the newest.
        self.history.odds = future.result()
        self.schedule_publish()


def create_app(hub_ref: WebServer, controller: TableController,
               allowed_hosts: frozenset[str] | None = None) -> FastAPI:
    """The FastAPI application; ``hub_ref.hub`` is read on the loop only. ``allowed_hosts``:
    the names the ``Host`` header may give (``binding.HostCheck``); ``None``: the local ones."""
    app = display_app(
        title="Shoe controller table API",
        version=schema.API_VERSION, page="index.html", allowed_hosts=allowed_hosts,
        description=(
            "Read-only state of the live table (dealer view, rounds, roads, recall, exact "
            "odds of the remaining shoe) and the PIN-protected supervisor actions. "
            "`/api/stream` pushes the whole `State` document as server-sent events. "
            "This page: `/api/docs` (or `/docs`); the machine-readable description: "
            "`/openapi.json`. "
            f"API version {schema.API_VERSION} (changes: `shoe_controller/web/schema.py`); "
            f"shoe controller {__version__}."),
    )
    add_metrics(app, controller)

    def history() -> TableHistory:
        return hub_ref.hub.history

    @app.get("/api/state", response_model=schema.State, tags=["table"])
    async def state() -> Any:
        """Everything the dealer display shows, as of the last update."""
        return json.loads(hub_ref.hub.payload()[1])

    @app.get("/api/shoes", response_model=list[schema.ShoeSummary], tags=["rounds"])
    async def shoes() -> Any:
        """The shoes this table has played (kept: the last 50), with their statistics."""
        return [shoe.summary() for shoe in history().shoes]

    @app.get("/api/rounds", response_model=list[schema.Round], tags=["rounds"])
    async def rounds(shoe: int | None = Query(None, description="shoe number; default current")
                     ) -> Any:
        """Every round of a shoe, card by card, with results and voids."""
        found = history().rounds_of(shoe)
        if found is None:
            raise HTTPException(404, f"shoe {shoe} is not known")
        return found

    @app.get("/api/recall", response_model=list[schema.Round], tags=["rounds"],
             summary="Recall",
             description=f"The last completed or voided rounds (game recall), oldest first: "
                         f"at most {RECALL_ROUNDS} (`last`).",
             responses={422: {"description": f"`last` is not a whole number from 1 to "
                                             f"{RECALL_ROUNDS}"}})
    async def recall(last: int = Query(
            RECALL_ROUNDS, ge=1, le=RECALL_ROUNDS,
            description=f"how many rounds: 1 to {RECALL_ROUNDS} (the display keeps the last "
                        f"{RECALL_ROUNDS} for recall; every round of a shoe: `/api/rounds`)")
            ) -> Any:
        return history().recall_document(last)

    @app.get("/api/odds", response_model=schema.Odds | None, tags=["odds"])
    async def odds() -> Any:
        """Exact house edge of every bet on the remaining shoe, after the last round."""
        return history().odds

    @app.get("/api/roads", response_model=schema.Roads, tags=["rounds"])
    async def roads() -> Any:
        """Bead plate, big road and the derived roads of the current shoe."""
        return history().roads()

    add_stream(app, hub_ref, document="State")
    add_supervisor(app, controller, outcome=schema.ActionOutcome,
                   api_version=schema.API_VERSION,
                   actions="`clear`, `void_round` (with a `reason`), `enter_card` (with a "
                   "`card`), `end_shoe`, and at a blackjack table `error_burn`")
    return app


class WebServer(DisplayServer):
    """The card table's display in its own thread (see :class:`DisplayServer`)."""

    hub: Hub

    def __init__(self, controller: TableController, settings: HttpSettings, *,
                 profile: Profile) -> None:
        self.profile = profile
        super().__init__(controller, settings)

    def _prepare(self) -> None:
        self._odds_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="web-odds")
        self._history = self._rebuild_history()

    def create_app(self) -> FastAPI:
        return create_app(self, self.controller, self.settings.allowed)

    def _release(self) -> None:
        pool = getattr(self, "_odds_pool", None)
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def _rebuild_history(self) -> TableHistory:
        """The shoes so far, from the journal (the controller replayed it the same way)."""
        history = TableHistory(self.profile)
        replayed = replay_journal(self.controller.journal.path)
        # As the controller hands them to listeners: a hole card not yet turned stays out.
        for event in Withheld().visible(replayed.events):
            history.add_event(event)
        table = self.controller.table
        history.view = self.controller.view.to_dict()
        history.seen = dict(table.seen)
        if history.blackjack:
            history.table_cards = table.game.cards_in_round()
            history.answer_left = self.controller.answer_seconds_left()
        return history

    def _make_hub(self) -> Hub:
        hub = Hub(self._history, self.profile, self._odds_pool, self._fail)
        hub.ingest(Ingest(self._history.view, [], self._history.seen,
                          self.controller.table.shoe_number, time.monotonic()))
        return hub

    def _on_update(self, update: Update) -> None:
        """The controller's listener: copy, hand over, return (runs on the controller thread)."""
        if self._closed or self._loop is None:
            return
        table = self.controller.table
        blackjack = self._history.blackjack
        item = Ingest(update.view.to_dict(), [dict(event) for event in update.events],
                      dict(table.seen), table.shoe_number, time.monotonic(),
                      table.game.cards_in_round() if blackjack else None,
                      self.controller.answer_seconds_left() if blackjack else None)
        self._hand_over(self.hub.ingest, item)


def start_web(controller: TableController, host: str, port: int, *, profile: Profile,
              cert_file: Path | str | None = None, key_file: Path | str | None = None,
              hosts: tuple[str, ...] = (), insecure: bool = False) -> WebServer:
    """Serve the dealer display, supervisor panel and API on ``host:port`` (0: any free port).

    HTTPS with ``cert_file`` and ``key_file`` (PEM). A host that is not a loopback one needs
    them, or ``insecure=True``; requests must name ``host``, a local name or one of ``hosts``
    (:mod:`shoe_controller.web.binding`). Call from the controller's thread before
    ``controller.run()``. Returns the running :class:`WebServer` (``.url``, ``.check()``,
    ``.failed``, idempotent ``.close()``). Raises ``HttpSettingsError`` (a ``ConfigError``)
    for an unsafe or impossible combination, :class:`WebServerError` if it cannot start.
    """
    settings = http_settings((host, port), cert_file=cert_file, key_file=key_file,
                             hosts=hosts, insecure=insecure)
    return serve(controller, settings, profile=profile)


def serve(controller: TableController, settings: HttpSettings, *,
          profile: Profile) -> WebServer:
    """:func:`start_web` for validated settings (``RunConfig.http_settings()``)."""
    return WebServer(controller, settings, profile=profile).start()


__all__ = ["ACTION_WAIT_SECONDS", "HttpSettingsError", "WebServer", "WebServerError",
           "create_app", "parse_http", "serve", "start_web"]
