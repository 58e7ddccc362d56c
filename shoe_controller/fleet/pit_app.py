"""``shoe pit``'s server: subscribes to the broker, folds the floor, serves the page.

Threads, and why: paho's network thread receives messages and only appends them to a list
(``_arrived``) and, if no drain is pending, schedules one on the web server's event loop;
the loop folds them into the :class:`~.floor.Floor` in arrival order and wakes the browsers'
streams. One push per burst: a browser gets the tiles changed since the last push it saw
(``/api/stream``, server-sent events), so a hundred busy tables cost a browser a few small
messages a second, and a slow browser skips versions rather than queueing them.

JSON API: ``/api/floor`` (every tile), ``/api/tables/{id}`` (a table's detail: its state
document and recent events), ``/api/stream`` (``floor`` then ``tables`` events). Read-only:
the pit never publishes (its broker login should only be allowed to read, docs/fleet.md).
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time
from pathlib import Path
from typing import Any, Self

from fastapi import FastAPI, HTTPException
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse

from shoe_controller.errors import ShoeError
from shoe_controller.fleet.broker import BrokerSettings, floor_subscriptions
from shoe_controller.fleet.client import connect, is_failure, new_client, reason_text
from shoe_controller.fleet.floor import Floor
from shoe_controller.web.binding import HostCheck, HttpSettings

log = logging.getLogger("shoe_controller.pit")

STATIC = Path(__file__).with_name("static")
PING_SECONDS = 5.0
START_TIMEOUT = 10.0


class PitError(ShoeError, RuntimeError):
    """The pit view could not start, or one of its threads failed."""


class FloorHub:
    """The floor on the event loop: folds arrivals, tells streams what changed."""

    def __init__(self, floor: Floor) -> None:
        self.floor = floor
        self.closing = False
        self.broker_connected = False
        self._changed = asyncio.Event()

    def fold(self, arrived: list[tuple[str, bytes, float]]) -> None:
        changed = False
        for topic, payload, received in arrived:
            changed = self.floor.apply(topic, payload, received) is not None or changed
        if changed:
            self.wake()

    def wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def wait_newer(self, version: int, timeout: float) -> bool:
        if self.floor.version != version:
            return True
        try:
            await asyncio.wait_for(self._changed.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def close(self) -> None:
        self.closing = True
        self.wake()


def create_app(server: PitServer, allowed: frozenset[str]) -> Any:
    app = FastAPI(title="shoe pit", version="1", docs_url=None, redoc_url=None,
                  openapi_url="/api/openapi.json")

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC / "pit.html", headers={"Cache-Control": "no-store"})

    @app.get("/static/{name}", include_in_schema=False)
    async def static(name: str) -> FileResponse:
        if name not in ("pit.js", "pit.css"):
            raise HTTPException(404, "not found")
        return FileResponse(STATIC / name, headers={"Cache-Control": "no-store"})

    @app.get("/api/floor", tags=["floor"])
    async def floor() -> JSONResponse:
        """Every table's tile, the games and pits to filter by, the broker connection."""
        return JSONResponse(server.floor_document(), headers={"Cache-Control": "no-store"})

    @app.get("/api/tables/{table_id}", tags=["floor"])
    async def table(table_id: str) -> JSONResponse:
        """One table: its tile, its whole state document, its recent events."""
        floor = server.hub.floor
        if table_id not in floor.tables:
            raise HTTPException(404, f"table {table_id!r} is not on this floor")
        return JSONResponse(floor.detail(table_id), headers={"Cache-Control": "no-store"})

    @app.get("/api/stream", tags=["floor"], response_class=StreamingResponse)
    async def stream() -> StreamingResponse:
        """Server-sent events: ``floor`` (everything) first, then ``tables`` (the tiles
        changed since the last push), ``ping`` every 5 s when nothing changes."""
        hub = server.hub

        async def events() -> Any:
            yield "retry: 1000\n\n"
            last = hub.floor.version
            yield f"event: floor\nid: {last}\ndata: {json.dumps(server.floor_document())}\n\n"
            while not hub.closing:
                if await hub.wait_newer(last, PING_SECONDS) and not hub.closing:
                    version = hub.floor.version
                    if version != last:
                        tiles = hub.floor.changed_since(last)
                        last = version
                        body = json.dumps({"version": version, "tables": tiles,
                                           "broker": hub.broker_connected,
                                           "now": time.time()}, separators=(",", ":"))
                        yield f"event: tables\nid: {version}\ndata: {body}\n\n"
                        continue
                yield f"event: ping\ndata: {json.dumps({'now': time.time(), 'broker': hub.broker_connected})}\n\n"

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    return HostCheck(app, allowed)


class PitServer:
    """The pit in two threads of its own (web server, paho). ``url``; :meth:`check`
    re-raises a failure; :meth:`close` is idempotent."""

    hub: FloorHub

    def __init__(self, broker: BrokerSettings, prefix: str, http: HttpSettings) -> None:
        import uvicorn

        from shoe_controller.web.app import _tls_context

        self.broker = broker
        self.prefix = prefix
        self.subscriptions = floor_subscriptions(prefix)
        self._error: BaseException | None = None
        self._closed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._arrived: list[tuple[str, bytes, float]] = []
        self._arrived_lock = threading.Lock()
        self._drain_pending = False
        self._floor = Floor(prefix)
        context = _tls_context(http)
        try:
            self._sock = socket.create_server((http.host, http.port))
        except OSError as exc:
            raise PitError(f"pit: cannot listen on {http.host}:{http.port}: {exc}") from exc
        port = self._sock.getsockname()[1]
        self.url = f"{'https' if context else 'http'}://{http.url_host}:{port}/"
        config = uvicorn.Config(create_app(self, http.allowed), log_level="warning",
                                access_log=False, lifespan="off", timeout_graceful_shutdown=2,
                                proxy_headers=False, server_header=False)
        config.load()
        if context is not None:
            config.ssl = context
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, name="pit-web", daemon=True)
        self._client = new_client(broker, f"shoe-pit-{port}-{id(self) & 0xFFFFFF:06x}")
        self._client.on_connect = self._on_connect
        self._client.on_disconnect = self._on_disconnect
        self._client.on_message = self._on_message

    # ------------------------------------------------------------ lifecycle
    def start(self) -> Self:
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not (self._server.started and self._loop is not None):
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.close()
                self.check()
                raise PitError(f"pit web server did not start within {START_TIMEOUT} s")
            time.sleep(0.01)
        connect(self._client, self.broker)
        return self

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # noqa: BLE001 - handed to the owner by check()
            self._fail(exc)

    async def _main(self) -> None:
        self.hub = FloorHub(self._floor)
        self._loop = asyncio.get_running_loop()
        await self._server.serve(sockets=[self._sock])
        if not self._closed:
            raise PitError("pit web server stopped by itself")

    def _fail(self, exc: BaseException) -> None:
        if self._error is None:
            self._error = exc
        log.error("pit failed: %s", exc, exc_info=exc)

    def check(self) -> None:
        if self._error is not None:
            raise PitError(f"pit failed: {self._error}") from self._error
        if not self._closed and not self._thread.is_alive():
            raise PitError("pit web server thread ended unexpectedly")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._client.disconnect()
        finally:
            self._client.loop_stop()
        loop = self._loop
        if loop is not None and self._thread.is_alive():
            try:
                loop.call_soon_threadsafe(self.hub.close)
            except RuntimeError:
                pass
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(5)
        self._sock.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ documents
    def floor_document(self) -> dict[str, Any]:
        return {**self.hub.floor.snapshot(), "broker": self.hub.broker_connected,
                "broker_url": self.broker.describe(), "now": time.time()}

    # ------------------------------------------------------------ paho's thread
    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason_code: Any,
                    properties: Any = None) -> None:
        if is_failure(reason_code):
            log.error("pit: %s refused the connection: %s (retrying)", self.broker.describe(),
                      reason_text(reason_code))
            return
        log.info("pit: connected to %s", self.broker.describe())
        client.subscribe([(topic, 1) for topic in self.subscriptions])
        self._set_broker(True)

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason_code: Any,
                       properties: Any = None) -> None:
        if not self._closed:
            log.warning("pit: lost %s: %s (reconnecting)", self.broker.describe(),
                        reason_text(reason_code))
        self._set_broker(False)

    def _set_broker(self, up: bool) -> None:
        loop = self._loop
        if loop is None:
            return

        def apply() -> None:
            self.hub.broker_connected = up
            self.hub.wake()

        try:
            loop.call_soon_threadsafe(apply)
        except RuntimeError:
            pass

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        received = time.time()
        with self._arrived_lock:
            self._arrived.append((message.topic, bytes(message.payload), received))
            if self._drain_pending:
                return
            self._drain_pending = True
        loop = self._loop
        try:
            if loop is not None:
                loop.call_soon_threadsafe(self._drain)
        except RuntimeError:
            pass

    def _drain(self) -> None:
        """On the loop: fold everything that arrived since the last drain."""
        with self._arrived_lock:
            arrived, self._arrived = self._arrived, []
            self._drain_pending = False
        try:
            self.hub.fold(arrived)
        except Exception as exc:  # noqa: BLE001 - a pit bug must reach the owner
            self._fail(exc)
