"""The dealer display, supervisor panel and read-only table API, served by the controller.

Threads, and why: the controller's thread runs the table and must never wait for a browser. Its
listener (:meth:`WebServer._on_update`) only copies the update (view, events, cards seen) and
hands it to the web server's event loop with ``call_soon_threadsafe``; folding, roads, JSON and
HTTP all run on the web thread, and the exact odds (~1 ms) run on a one-worker pool beside it.
Browsers get the whole display state pushed over server-sent events (``/api/stream``): a burst
of updates is coalesced into one push, and a slow browser skips states rather than queueing them.

Supervisor actions go the other way through :meth:`TableController.supervisor` (thread-safe;
it checks the PIN and the table journals the action with the supervisor's id).

:func:`start_web` is the one entry point: call it from the controller's thread before
``controller.run()`` so the history it rebuilds from the journal and the live updates join up.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Self

from fastapi import FastAPI, HTTPException, Query, Request
from fastapi.responses import FileResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles

from shoe_controller import __version__
from shoe_controller.config import check_pin
from shoe_controller.errors import ShoeError
from shoe_controller.games.baccarat.profile import Profile
from shoe_controller.table.controller import SupervisorAuthError, TableController, Update
from shoe_controller.table.history import replay_journal
from shoe_controller.web import schema
from shoe_controller.web.state import Ingest, TableHistory, compute_odds

log = logging.getLogger("shoe_controller.web")

STATIC = Path(__file__).with_name("static")
PING_SECONDS = 5.0
"""A ping event this often lets the page tell a live screen from a frozen one."""
LOGIN_FAILURES = 5
LOGIN_WINDOW = 300.0
"""At most LOGIN_FAILURES wrong PINs per supervisor id within LOGIN_WINDOW seconds."""
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


class LoginGuard:
    """Counts wrong PINs per supervisor id; refuses further tries for a while after too many."""

    def __init__(self, clock: Any = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._failures: dict[str, collections.deque[float]] = collections.defaultdict(
            collections.deque)

    def blocked(self, supervisor: str) -> bool:
        with self._lock:
            failures = self._failures[supervisor]
            while failures and failures[0] < self._clock() - LOGIN_WINDOW:
                failures.popleft()
            return len(failures) >= LOGIN_FAILURES

    def failed(self, supervisor: str) -> None:
        with self._lock:
            self._failures[supervisor].append(self._clock())

    def succeeded(self, supervisor: str) -> None:
        with self._lock:
            self._failures.pop(supervisor, None)


def create_app(hub_ref: WebServer, controller: TableController) -> FastAPI:
    """The FastAPI application; ``hub_ref.hub`` is read on the loop only."""
    app = FastAPI(
        title="Shoe controller table API",
        version=__version__,
        description=(
            "Read-only state of the live table (dealer view, rounds, roads, recall, exact "
            "odds of the remaining shoe) and the PIN-protected supervisor actions. "
            "`/api/stream` pushes the whole `State` document as server-sent events."),
        docs_url=None, redoc_url=None, openapi_url="/openapi.json",
    )
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    guard = LoginGuard()

    def history() -> TableHistory:
        return hub_ref.hub.history

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    @app.get("/api/docs", include_in_schema=False)
    async def docs() -> FileResponse:
        return FileResponse(STATIC / "docs.html")

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

    @app.get("/api/recall", response_model=list[schema.Round], tags=["rounds"])
    async def recall(last: int = Query(10, ge=1, le=10)) -> Any:
        """The last completed or voided rounds (game recall), oldest first."""
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

    @app.post("/api/supervisor/login", response_model=schema.Accepted, tags=["supervisor"],
              responses={403: {"description": "unknown id or wrong PIN"},
                         429: {"description": "too many wrong PINs; wait"}})
    def login(body: schema.Login) -> Any:
        """Check a supervisor's PIN (unlocks the panel; every action is checked again)."""
        if guard.blocked(body.supervisor):
            raise HTTPException(429, "too many wrong PINs: wait five minutes")
        stored = controller.supervisors.get(body.supervisor)
        if stored is None or not check_pin(stored, body.pin):
            guard.failed(body.supervisor)
            log.warning("supervisor panel: wrong id or PIN", extra={"supervisor": body.supervisor})
            raise HTTPException(403, "unknown supervisor id or wrong PIN")
        guard.succeeded(body.supervisor)
        return {"accepted": True, "supervisor": body.supervisor}

    @app.post("/api/supervisor/action", response_model=schema.Accepted, status_code=202,
              tags=["supervisor"],
              responses={400: {"description": "bad action or card code"},
                         403: {"description": "unknown id or wrong PIN"},
                         429: {"description": "too many wrong PINs; wait"}})
    def action(body: schema.Action) -> Any:
        """Queue a supervisor action; the table journals it with the supervisor's id."""
        if guard.blocked(body.supervisor):
            raise HTTPException(429, "too many wrong PINs: wait five minutes")
        try:
            controller.supervisor(body.action, body.supervisor, body.pin,
                                  card=body.card or None, reason=body.reason)
        except SupervisorAuthError as exc:
            guard.failed(body.supervisor)
            raise HTTPException(403, str(exc)) from exc
        except ShoeError as exc:
            raise HTTPException(400, str(exc)) from exc
        log.info("supervisor %s: %s", body.supervisor, body.action,
                 extra={"supervisor": body.supervisor, "action": body.action})
        return {"accepted": True, "supervisor": body.supervisor, "action": body.action}

    return app


class WebServer:
    """The web display in its own thread. ``url``; ``check()`` re-raises a failure of that
    thread; ``failed`` tells without raising; ``close()`` is idempotent."""

    hub: Hub

    def __init__(self, controller: TableController, host: str, port: int, *,
                 profile: Profile) -> None:
        self.controller = controller
        self.profile = profile
        self._error: BaseException | None = None
        self._closed = False
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._odds_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="web-odds")
        try:
            self._sock = socket.create_server((host, port))
        except OSError as exc:
            raise WebServerError(f"web display: cannot listen on {host}:{port}: {exc}") from exc
        bound = self._sock.getsockname()
        shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
        self.url = f"http://{shown}:{bound[1]}/"
        self._history = self._rebuild_history()
        import uvicorn

        self._server = uvicorn.Server(uvicorn.Config(
            create_app(self, controller), log_level="warning", access_log=False,
            lifespan="off", timeout_graceful_shutdown=2))
        self._thread = threading.Thread(target=self._run, name="web-display", daemon=True)

    def _rebuild_history(self) -> TableHistory:
        """The shoes so far, from the journal (the controller replayed it the same way)."""
        history = TableHistory(self.profile)
        replayed = replay_journal(self.controller.journal.path)
        for event in replayed.events:
            history.add_event(event)
        table = self.controller.table
        history.view = self.controller.view.to_dict()
        history.seen = dict(table.seen)
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
        item = Ingest(update.view.to_dict(), [dict(event) for event in update.events],
                      dict(table.seen), table.shoe_number, time.monotonic())
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


def start_web(controller: TableController, host: str, port: int, *,
              profile: Profile) -> WebServer:
    """Serve the dealer display, supervisor panel and API on ``host:port`` (0: any free port).

    Call from the controller's thread before ``controller.run()``. Returns the running
    :class:`WebServer` (``.url``, ``.check()``, ``.failed``, idempotent ``.close()``).
    """
    return WebServer(controller, host, port, profile=profile).start()


def parse_http(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``--http``) -> (host, port); IPv6 as ``[::1]:8080``."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535 or not host:
        raise WebServerError(f"--http {text!r}: expected HOST:PORT, e.g. 127.0.0.1:8080")
    return host.strip("[]"), int(port)


__all__ = ["WebServer", "WebServerError", "create_app", "parse_http", "start_web"]
