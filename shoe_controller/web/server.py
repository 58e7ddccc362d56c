"""The frame every table's web display shares (a card table's, :mod:`.app`; a wheel table's,
:mod:`.wheel_app`): the server in its own thread, TLS, the ``Host``/``Origin`` checks, the
static page, server-sent events, ``/metrics`` and the PIN-checked supervisor endpoints.

Threads, and why: the controller's thread runs the table and must never wait for a browser.
A display's listener only copies the update and hands it to the web server's event loop with
``call_soon_threadsafe``; JSON and HTTP run on the web thread. Browsers get the whole display
state pushed over server-sent events (``/api/stream``): a burst of updates is coalesced into
one push (:class:`Publisher`), and a slow browser skips states rather than queueing them.

Supervisor actions go the other way through the controller's ``supervisor(...)``
(thread-safe; its access guard, :mod:`shoe_controller.access`, shared with the console,
checks the PIN and limits wrong ones per client address, and the table journals the action
with the supervisor's id). The action endpoint waits (up to :data:`ACTION_WAIT_SECONDS`, in
FastAPI's worker threads, never on the event loop) for the table's decision and answers with
it: 200 done, 409 refused by the table, 202 still queued.

Where it listens and which requests it answers: :mod:`shoe_controller.web.binding`.
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
from pathlib import Path
from typing import Any, Self

from fastapi import FastAPI, HTTPException, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel

from shoe_controller.access import SupervisorHeldOffError
from shoe_controller.errors import ShoeError
from shoe_controller.live.supervision import SupervisorAuthError, SupervisorTicket
from shoe_controller.web import schema
from shoe_controller.web.binding import LOCAL_NAMES, HostCheck, HttpSettings

log = logging.getLogger("shoe_controller.web")

STATIC = Path(__file__).with_name("static")
PING_SECONDS = 5.0
"""A ping event this often lets the page tell a live screen from a frozen one."""
ACTION_WAIT_SECONDS = 2.0
"""How long an action request waits for the table's decision before answering "queued"."""
START_TIMEOUT = 10.0


class WebServerError(ShoeError, RuntimeError):
    """The web display could not start, or its thread failed."""


class Publisher:
    """The display state on the web loop: a version that increases with every change, the
    state serialised once per version whoever asks, and the streams woken on a change.
    Subclasses say what the state is (:meth:`snapshot`)."""

    def __init__(self) -> None:
        self.version = 0
        self.closing = False
        self._changed = asyncio.Event()
        self._publish_scheduled = False
        self._payload: tuple[int, str] | None = None
        self.published_at: float | None = None

    def snapshot(self, version: int) -> dict[str, Any]:
        raise NotImplementedError

    def schedule_publish(self) -> None:
        """Publish once the loop has taken every update already handed over (coalesced)."""
        if not self._publish_scheduled:
            self._publish_scheduled = True
            asyncio.get_running_loop().call_soon(self._publish)

    def _publish(self) -> None:
        self._publish_scheduled = False
        self.version += 1
        self.published_at = time.monotonic()
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def payload(self) -> tuple[int, str]:
        """The current state as JSON, serialised once per version whoever asks."""
        if self._payload is None or self._payload[0] != self.version:
            text = json.dumps(self.snapshot(self.version), separators=(",", ":"))
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


# ------------------------------------------------------------------ the application


def client_of(request: Request) -> str:
    """The client a supervisor try is counted against: the TCP peer's address (proxy headers
    are not trusted: uvicorn runs with ``proxy_headers=False``)."""
    return request.client.host if request.client is not None else "unknown"


def outcome_of(ticket: SupervisorTicket, api_version: int = schema.API_VERSION
               ) -> dict[str, Any]:
    """The ``ActionOutcome`` document for a ticket, as it stands now."""
    base = {"api_version": api_version, "supervisor": ticket.supervisor,
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


def display_app(*, title: str, description: str, version: int, page: str,
                allowed_hosts: frozenset[str] | None = None) -> FastAPI:
    """A display's FastAPI application with the shared frame: the ``Host``/``Origin`` check
    (``allowed_hosts``: the names the ``Host`` header may give; ``None``: the local ones),
    422s that never echo their input, ``/static``, the page (``page``: its file in
    ``static/``) at ``/``, and the offline API docs at ``/api/docs`` (and ``/docs``)."""
    app = FastAPI(title=title, version=str(version), description=description,
                  docs_url=None, redoc_url=None, openapi_url="/openapi.json")
    app.add_middleware(HostCheck, allowed=allowed_hosts if allowed_hosts is not None
                       else LOCAL_NAMES)
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC / page, headers={"Cache-Control": "no-store"})

    @app.get("/api/docs", include_in_schema=False)
    async def docs() -> FileResponse:
        return FileResponse(STATIC / "docs.html")

    @app.get("/docs", include_in_schema=False)
    async def docs_by_convention() -> RedirectResponse:
        """FastAPI's usual address for the docs: the offline ones here."""
        return RedirectResponse("/api/docs", status_code=307)

    return app


def add_metrics(app: FastAPI, controller: Any) -> None:
    """``/metrics``: the table's Prometheus metrics (docs/metrics.md)."""

    @app.get("/metrics", include_in_schema=False)
    def metrics() -> Response:
        """A plain ``def``: FastAPI runs it in a worker thread, so a scrape never holds up
        the display's event loop."""
        from shoe_controller.metrics import CONTENT_TYPE

        return Response(controller.metrics.exposition(), media_type=CONTENT_TYPE,
                        headers={"Cache-Control": "no-store"})


def add_stream(app: FastAPI, server: DisplayServer, *, document: str) -> None:
    """``/api/stream``: server-sent events, a ``state`` event carrying ``document`` after
    every change, ``ping`` every 5 s."""

    @app.get("/api/stream", tags=["table"], response_class=StreamingResponse,
             responses={200: {"content": {"text/event-stream": {}},
                              "description": f"`state` events carrying the {document} "
                              "document"}})
    async def stream(request: Request) -> StreamingResponse:
        """Server-sent events: a `state` event after every change, `ping` every 5 s."""
        hub = server.hub

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


def add_supervisor(app: FastAPI, controller: Any, *, outcome: type[BaseModel],
                   api_version: int, actions: str) -> None:
    """``POST /api/supervisor/login`` and ``POST /api/supervisor/action`` for a controller
    with an access guard (``access``) and ``supervisor(action, supervisor, pin, card=,
    reason=, client=) -> SupervisorTicket``. ``outcome``: the answer's model; ``actions``:
    the table's actions, for the docs."""
    access = controller.access

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

    @app.post("/api/supervisor/action", response_model=outcome, tags=["supervisor"],
              description=f"Actions at this table: {actions}.\n\n" + _ACTION_DOC,
              responses={
                  200: {"description": "journalled and carried out by the table"},
                  202: {"model": outcome,
                        "description": "queued, not yet journalled: applied in order; lost if "
                        "the controller stops first"},
                  400: {"description": "unknown action, a void without a reason, a card "
                        "where the table takes none"},
                  403: {"description": "unknown id or wrong PIN"},
                  409: {"model": outcome,
                        "description": "journalled, but the table refused it (`message` says "
                        "why, e.g. 'nothing to clear')"},
                  429: {"description": "too many wrong PINs; wait `Retry-After` seconds"}})
    def action(body: schema.Action, request: Request, response: Response) -> Any:
        """Do a supervisor action and say what the table decided."""
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
        answer = outcome_of(ticket, api_version)
        response.status_code = (202 if answer["status"] == "queued"
                                else 200 if answer["accepted"] else 409)
        log.info("supervisor %s: %s: %s%s", body.supervisor, body.action, answer["status"],
                 "" if answer["accepted"] is not False else f" but refused: {ticket.message}",
                 extra={"supervisor": body.supervisor, "action": body.action,
                        "status": answer["status"], "accepted": answer["accepted"]})
        return answer


_ACTION_DOC = (
    "The PIN is checked, the action handed to the table, and the answer waits up to 2 s for "
    "the table to journal it: 200 (`status` journalled, `accepted` true), 409 (journalled, "
    "`accepted` false, the table's reason in `message`) or 202 (`status` queued). Runs in a "
    "worker thread, never on the event loop.")


# ------------------------------------------------------------------ the server and its thread


class DisplayServer:
    """A display in its own thread. ``url``; ``check()`` re-raises a failure of that thread;
    ``failed`` tells without raising; ``close()`` is idempotent.

    A subclass gives :meth:`_prepare` (on the controller's thread, before anything is
    served: read what the display starts from), :meth:`create_app`, :meth:`_make_hub` (on the
    web loop) and :meth:`_on_update` (the controller's listener: copy, hand over, return)."""

    hub: Publisher

    def __init__(self, controller: Any, settings: HttpSettings) -> None:
        self.controller = controller
        self.settings = settings
        self._error: BaseException | None = None
        self._closed = False
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        context = tls_context(settings)  # a bad certificate fails before anything listens
        host, port = settings.host, settings.port
        try:
            self._sock = socket.create_server((host, port))
        except OSError as exc:
            raise WebServerError(f"web display: cannot listen on {host}:{port}: {exc}") from exc
        bound = self._sock.getsockname()
        self.url = f"{'https' if context else 'http'}://{settings.url_host}:{bound[1]}/"
        try:
            self._prepare()
            app = self.create_app()
        except BaseException:
            self._sock.close()
            self._release()
            raise
        import uvicorn

        config = uvicorn.Config(
            app, log_level="warning", access_log=False, lifespan="off",
            timeout_graceful_shutdown=2,
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

    # ------------------------------------------------------------------ the subclass's part
    def _prepare(self) -> None:
        """On the controller's thread, before the display is served."""

    def create_app(self) -> FastAPI:
        raise NotImplementedError

    def _make_hub(self) -> Publisher:
        raise NotImplementedError

    def _on_update(self, *update: Any) -> None:
        raise NotImplementedError

    def _release(self) -> None:
        """Free what :meth:`_prepare` took (after the thread has ended)."""

    def _hand_over(self, apply: Any, item: Any) -> None:
        """From the controller's thread: ``apply(item)`` on the web loop, soon."""
        loop = self._loop
        if self._closed or loop is None:
            return
        try:
            loop.call_soon_threadsafe(apply, item)
        except RuntimeError:
            pass  # the loop has ended; check() reports why

    # ------------------------------------------------------------------ thread
    def start(self) -> Self:
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
        self.hub = self._make_hub()
        self._ready.set()
        await self._server.serve(sockets=[self._sock])
        if not self._closed:
            raise WebServerError("web display stopped by itself")

    def _fail(self, exc: BaseException) -> None:
        if self._error is None:
            self._error = exc
        log.error("web display failed: %s", exc, exc_info=exc)

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
        self._release()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def tls_context(settings: HttpSettings) -> ssl.SSLContext | None:
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
