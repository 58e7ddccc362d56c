"""The dealer display, supervisor panel and read-only table API, served by the controller.

Threads, and why: the controller's thread runs the table and must never wait for a browser. Its
listener (:meth:`WebServer._on_update`) only copies the update (view, events, cards seen) and
hands it to the web server's event loop with ``call_soon_threadsafe``; folding, roads, JSON and
HTTP all run on the web thread, and the exact odds (~1 ms) run on a one-worker pool beside it.
Browsers get the whole display state pushed over server-sent events (``/api/stream``): a burst
of updates is coalesced into one push, and a slow browser skips states rather than queueing them.

Supervisor actions go the other way through :meth:`TableController.supervisor` (thread-safe;
its access guard, :mod:`shoe_controller.access`, shared with the console, checks the PIN and
limits wrong ones per client address, and the table journals the action with the supervisor's
id). The action endpoint then waits (up to :data:`ACTION_WAIT_SECONDS`, in FastAPI's worker
threads, never on the event loop) for the table's decision and answers with it: 200 done,
409 refused by the table, 202 still queued.

Where it listens, TLS and the ``Host`` check: :mod:`shoe_controller.web.binding`.

:func:`start_web` is the one entry point: call it from the controller's thread before
``controller.run()`` so the history it rebuilds from the journal and the live updates join up.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import socket
import ssl
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Self

from fastapi import FastAPI, HTTPException, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles

from shoe_controller import __version__
from shoe_controller.access import SupervisorHeldOffError
from shoe_controller.errors import ShoeError
from shoe_controller.games.baccarat.profile import Profile
from shoe_controller.table.controller import (
    SupervisorAuthError,
    SupervisorTicket,
    TableController,
    Update,
)
from shoe_controller.table.history import replay_journal
from shoe_controller.table.secrecy import Withheld
from shoe_controller.web import schema
from shoe_controller.web.binding import (
    LOCAL_NAMES,
    HostCheck,
    HttpSettings,
    HttpSettingsError,
    http_settings,
    parse_http,
)
from shoe_controller.web.state import RECALL_ROUNDS, Ingest, TableHistory, compute_odds

log = logging.getLogger("shoe_controller.web")

STATIC = Path(__file__).with_name("static")
PING_SECONDS = 5.0
"""A ping event this often lets the page tell a live screen from a frozen one."""
ACTION_WAIT_SECONDS = 2.0
"""How long an action request waits for the table's decision before answering "queued"."""
START_TIMEOUT = 10.0


class WebServerError(ShoeError, RuntimeError):
    """The web display could not start, or its thread failed."""


class Hub:
    """The display state on the web loop: folds updates, computes odds, wakes the streams."""

    def __init__(self, history: TableHistory, profile: Profile, odds_pool: ThreadPoolExecutor,
                 on_error: Any) -> None:
        self.history = history
        self.profile = profile
        self.version = 0
        self.closing = False
        self._odds_pool = odds_pool
        self._on_error = on_error
        self._changed = asyncio.Event()
        self._publish_scheduled = False
        self._payload: tuple[int, str] | None = None
        self.published_at: float | None = None

    def ingest(self, item: Ingest) -> None:
        """Called on the loop for every controller update (via ``call_soon_threadsafe``)."""
        try:
            self.history.apply(item)
            self._start_odds()
        except Exception as exc:  # noqa: BLE001 - a display bug must reach the owner
            self._on_error(exc)
            return
        self.schedule_publish()

    def schedule_publish(self) -> None:
        if not self._publish_scheduled:
            self._publish_scheduled = True
            asyncio.get_running_loop().call_soon(self._publish)

    def _publish(self) -> None:
        self._publish_scheduled = False
        self.version += 1
        self.published_at = time.monotonic()
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

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

    def payload(self) -> tuple[int, str]:
        """The current state as JSON, serialised once per version whoever asks."""
        if self._payload is None or self._payload[0] != self.version:
            text = json.dumps(self.history.snapshot(self.version), separators=(",", ":"))
            self._payload = (self.version, text)
        return self._payload

    async def wait_newer(self, last: int, timeout: float) -> bool:
        """Wait until the version is past ``last`` (True) or ``timeout`` passes (False)."""
        if self.version > last or self.closing:
            return True
        changed = self._changed
        try:
            await asyncio.wait_for(changed.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def close(self) -> None:
        self.closing = True
        self._changed.set()


def client_of(request: Request) -> str:
    """The client a supervisor try is counted against: the TCP peer's address (proxy headers
    are not trusted: uvicorn runs with ``proxy_headers=False``)."""
    return request.client.host if request.client is not None else "unknown"


def outcome_of(ticket: SupervisorTicket) -> dict[str, Any]:
    """The ``ActionOutcome`` document for a ticket, as it stands now."""
    base = {"api_version": schema.API_VERSION, "supervisor": ticket.supervisor,
            "action": ticket.action, "record": ticket.record}
    if ticket.status != "journalled":
        return {**base, "status": "queued", "accepted": None, "message": (
            "queued, not yet journalled: the table applies it in order with everything else; "
            "a queued action is lost if the controller stops before it is journalled")}
    return {**base, "status": "journalled", "accepted": bool(ticket.accepted),
            "message": ticket.message}


def _allowed_range(request: Request, loc: tuple[Any, ...]) -> str | None:
    """"from 1 to 10" for a query parameter declared with bounds (``Query(ge=1, le=10)``) that
    ``loc`` names, from the route that refused it; None if it has none."""
    if len(loc) != 2 or loc[0] != "query":
        return None
    route = request.scope.get("route")
    dependant = getattr(route, "dependant", None)
    for param in getattr(dependant, "query_params", ()):
        if param.alias != loc[1]:
            continue
        low = high = None
        for rule in param.field_info.metadata:
            low = getattr(rule, "ge", low)
            high = getattr(rule, "le", high)
        if low is not None and high is not None:
            return f"a whole number from {low} to {high}"
        if low is not None:
            return f"a whole number of at least {low}"
        if high is not None:
            return f"a whole number of at most {high}"
    return None


async def _invalid_request(request: Request, exc: Exception) -> JSONResponse:
    """422 for a body or query that does not fit the schema. FastAPI's own handler echoes the
    raw input back and fails (500) on a body that is not UTF-8: say where and why (for a
    query parameter with bounds, the allowed range), never echo the input (it may hold a
    PIN, and it may not be text)."""
    errors = exc.errors() if isinstance(exc, RequestValidationError) else []
    detail = []
    for error in errors:
        loc = tuple(error.get("loc", ()))
        message = str(error.get("msg", ""))
        allowed = _allowed_range(request, loc)
        if allowed is not None:
            message = f"{loc[1]} must be {allowed} ({message[:1].lower()}{message[1:]})"
        detail.append({"loc": [str(part) for part in loc], "msg": message,
                       "type": str(error.get("type", ""))})
    return JSONResponse(status_code=422, content={"detail": detail or "invalid request"})


def create_app(hub_ref: WebServer, controller: TableController,
               allowed_hosts: frozenset[str] | None = None) -> FastAPI:
    """The FastAPI application; ``hub_ref.hub`` is read on the loop only. ``allowed_hosts``:
    the names the ``Host`` header may give (``binding.HostCheck``); ``None``: the local ones."""
    app = FastAPI(
        title="Shoe controller table API",
        version=str(schema.API_VERSION),
        description=(
            "Read-only state of the live table (dealer view, rounds, roads, recall, exact "
            "odds of the remaining shoe) and the PIN-protected supervisor actions. "
            "`/api/stream` pushes the whole `State` document as server-sent events. "
            "This page: `/api/docs` (or `/docs`); the machine-readable description: "
            "`/openapi.json`. "
            f"API version {schema.API_VERSION} (changes: `shoe_controller/web/schema.py`); "
            f"shoe controller {__version__}."),
        docs_url=None, redoc_url=None, openapi_url="/openapi.json",
    )
    app.add_middleware(HostCheck, allowed=allowed_hosts if allowed_hosts is not None
                       else LOCAL_NAMES)
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    access = controller.access

    def history() -> TableHistory:
        return hub_ref.hub.history

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    @app.get("/api/docs", include_in_schema=False)
    async def docs() -> FileResponse:
        return FileResponse(STATIC / "docs.html")

    @app.get("/docs", include_in_schema=False)
    async def docs_by_convention() -> RedirectResponse:
        """FastAPI's usual address for the docs: the offline ones here."""
        return RedirectResponse("/api/docs", status_code=307)

    @app.get("/metrics", include_in_schema=False)
    def metrics() -> Response:
        """Prometheus metrics of the table (docs/metrics.md). A plain ``def``: FastAPI runs it
        in a worker thread, so a scrape never holds up the display's event loop."""
        from shoe_controller.metrics import CONTENT_TYPE

        return Response(controller.metrics.exposition(), media_type=CONTENT_TYPE,
                        headers={"Cache-Control": "no-store"})

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

    @app.get("/api/stream", tags=["table"], response_class=StreamingResponse,
             responses={200: {"content": {"text/event-stream": {}},
                              "description": "`state` events carrying the State document"}})
    async def stream(request: Request) -> StreamingResponse:
        """Server-sent events: a `state` event after every change, `ping` every 5 s."""
        hub = hub_ref.hub

        async def events() -> Any:
            yield "retry: 1000\n\n"
            last = -1
            while not hub.closing:
                if await hub.wait_newer(last, PING_SECONDS) and not hub.closing:
                    version, text = hub.payload()
                    if version != last:
                        last = version
                        yield f"event: state\nid: {version}\ndata: {text}\n\n"
                        continue
                yield "event: ping\ndata: {}\n\n"

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    def held_off(exc: SupervisorHeldOffError) -> HTTPException:
        return HTTPException(429, str(exc),
                             headers={"Retry-After": str(max(1, math.ceil(exc.retry_after)))})

    @app.post("/api/supervisor/login", response_model=schema.Accepted, tags=["supervisor"],
              responses={403: {"description": "unknown id or wrong PIN"},
                         429: {"description": "too many wrong PINs from this client (or, "
                               "briefly, at this table): wait `Retry-After` seconds"}})
    def login(body: schema.Login, request: Request) -> Any:
        """Check a supervisor's PIN (unlocks the panel; every action is checked again).

        Wrong PINs are limited per client address and id, per client and table-wide
        (docs/config.md, Supervisor access); the PIN check runs in a worker thread."""
        try:
            ok = access.verify(body.supervisor, body.pin, client_of(request))
        except SupervisorHeldOffError as exc:
            raise held_off(exc) from exc
        if not ok:
            raise HTTPException(403, "unknown supervisor id or wrong PIN")
        return {"accepted": True, "supervisor": body.supervisor}

    @app.post("/api/supervisor/action", response_model=schema.ActionOutcome, tags=["supervisor"],
              responses={
                  200: {"description": "journalled and carried out by the table"},
                  202: {"model": schema.ActionOutcome,
                        "description": "queued, not yet journalled: applied in order; lost if "
                        "the controller stops first"},
                  400: {"description": "bad action or card code"},
                  403: {"description": "unknown id or wrong PIN"},
                  409: {"model": schema.ActionOutcome,
                        "description": "journalled, but the table refused it (`message` says "
                        "why, e.g. 'cannot clear yet: card 12 was not read: ...')"},
                  429: {"description": "too many wrong PINs; wait `Retry-After` seconds"}})
    def action(body: schema.Action, request: Request, response: Response) -> Any:
        """Do a supervisor action and say what the table decided.

        The PIN is checked, the action handed to the table, and the answer waits up to
        2 s for the table to journal it: 200 (`status` journalled, `accepted` true), 409
        (journalled, `accepted` false, the table's reason in `message`) or 202 (`status`
        queued). Runs in a worker thread, never on the event loop."""
        try:
            ticket = controller.supervisor(body.action, body.supervisor, body.pin,
                                           card=body.card or None, reason=body.reason,
                                           client=client_of(request))
        except SupervisorHeldOffError as exc:
            raise held_off(exc) from exc
        except SupervisorAuthError as exc:
            raise HTTPException(403, str(exc)) from exc
        except ShoeError as exc:
            raise HTTPException(400, str(exc)) from exc
        ticket.wait(ACTION_WAIT_SECONDS)
        outcome = outcome_of(ticket)
        response.status_code = (202 if outcome["status"] == "queued"
                                else 200 if outcome["accepted"] else 409)
        log.info("supervisor %s: %s: %s%s", body.supervisor, body.action, outcome["status"],
                 "" if outcome["accepted"] is not False else f" but refused: {ticket.message}",
                 extra={"supervisor": body.supervisor, "action": body.action,
                        "status": outcome["status"], "accepted": outcome["accepted"]})
        return outcome

    return app


class WebServer:
    """The web display in its own thread. ``url``; ``check()`` re-raises a failure of that
    thread; ``failed`` tells without raising; ``close()`` is idempotent."""

    hub: Hub

    def __init__(self, controller: TableController, settings: HttpSettings, *,
                 profile: Profile) -> None:
        self.controller = controller
        self.profile = profile
        self.settings = settings
        self._error: BaseException | None = None
        self._closed = False
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        context = _tls_context(settings)  # a bad certificate fails before anything listens
        host, port = settings.host, settings.port
        self._odds_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="web-odds")
        try:
            self._sock = socket.create_server((host, port))
        except OSError as exc:
            self._odds_pool.shutdown(wait=False)
            raise WebServerError(f"web display: cannot listen on {host}:{port}: {exc}") from exc
        bound = self._sock.getsockname()
        self.url = f"{'https' if context else 'http'}://{settings.url_host}:{bound[1]}/"
        self._history = self._rebuild_history()
        import uvicorn

        config = uvicorn.Config(
            create_app(self, controller, settings.allowed), log_level="warning",
            access_log=False, lifespan="off", timeout_graceful_shutdown=2,
            # The client address is what wrong PINs are counted against: never let a
            # request choose it with X-Forwarded-For (uvicorn trusts 127.0.0.1 by default).
            proxy_headers=False, server_header=False,
            ssl_certfile=None if context is None else str(settings.cert_file),
            ssl_keyfile=None if context is None else str(settings.key_file))
        config.load()
        if context is not None:
            config.ssl = context  # ours: TLS 1.2 at least
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, name="web-display", daemon=True)

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

    # ------------------------------------------------------------------ thread
    def start(self) -> WebServer:
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.close()
                self.check()
                raise WebServerError(f"web display did not start within {START_TIMEOUT} s")
            self._ready.wait(0.01)
        self.controller.listeners.append(self._on_update)
        log.info("web display on %s", self.url, extra={"url": self.url})
        return self

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # noqa: BLE001 - handed to the owner by check()
            self._fail(exc)

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.hub = Hub(self._history, self.profile, self._odds_pool, self._fail)
        self.hub.ingest(Ingest(self._history.view, [], self._history.seen,
                               self.controller.table.shoe_number, time.monotonic()))
        self._ready.set()
        await self._server.serve(sockets=[self._sock])
        if not self._closed:
            raise WebServerError("web display stopped by itself")

    def _fail(self, exc: BaseException) -> None:
        if self._error is None:
            self._error = exc
        log.error("web display failed: %s", exc, exc_info=exc)

    # ------------------------------------------------------------------ controller side
    def _on_update(self, update: Update) -> None:
        """The controller's listener: copy, hand over, return (runs on the controller thread)."""
        loop = self._loop
        if self._closed or loop is None:
            return
        table = self.controller.table
        blackjack = self._history.blackjack
        item = Ingest(update.view.to_dict(), [dict(event) for event in update.events],
                      dict(table.seen), table.shoe_number, time.monotonic(),
                      table.game.cards_in_round() if blackjack else None,
                      self.controller.answer_seconds_left() if blackjack else None)
        try:
            loop.call_soon_threadsafe(self.hub.ingest, item)
        except RuntimeError:
            pass  # the loop has ended; check() reports why

    # ------------------------------------------------------------------ owner side
    @property
    def failed(self) -> bool:
        return self._error is not None or (
            not self._closed and self._ready.is_set() and not self._thread.is_alive())

    def check(self) -> None:
        if self._error is not None:
            raise WebServerError(f"web display failed: {self._error}") from self._error
        if self.failed:
            raise WebServerError("web display thread ended unexpectedly")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self.controller.listeners.remove(self._on_update)
        except ValueError:
            pass
        loop, hub = self._loop, getattr(self, "hub", None)
        if loop is not None and hub is not None and self._thread.is_alive():
            try:
                loop.call_soon_threadsafe(hub.close)  # ends the event streams first
            except RuntimeError:
                pass
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        if self._thread.is_alive():
            self._fail(WebServerError("web display thread did not stop within 5 s"))
        self._sock.close()
        self._odds_pool.shutdown(wait=False, cancel_futures=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _tls_context(settings: HttpSettings) -> ssl.SSLContext | None:
    """The server's TLS context from ``settings`` (None without TLS); a clear error if the
    certificate or key cannot be used."""
    if settings.cert_file is None or settings.key_file is None:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(settings.cert_file, settings.key_file)
    except (OSError, ssl.SSLError) as exc:
        raise WebServerError(
            f"web display: cannot use certificate {settings.cert_file} with key "
            f"{settings.key_file}: {getattr(exc, 'strerror', None) or exc}") from exc
    return context


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
