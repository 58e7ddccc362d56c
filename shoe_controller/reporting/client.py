"""The controller's end of the table-system link: a WebSocket client in its own thread.

:class:`TableSystemReporter` is the hook the :class:`~shoe_controller.table.controller.
TableController` calls (from its own thread) with the events of every journal record; it
numbers them in an :class:`~shoe_controller.reporting.stream.EventStream` and wakes the client
thread, which sends them, signed, to the table system and collects its acknowledgements,
commands and errors.

The client connects out, authenticates (challenge, signed ``hello`` with the token, ``welcome``
telling the last ``seq`` the table system has), sends everything after that ``seq`` in order
and then each new event as it happens. Any failure (refused, dropped, timed out, rejected
handshake) is logged and retried with exponential backoff; the table keeps running meanwhile.

With the journal attached (:meth:`TableSystemReporter.attach_journal`, as ``shoe run`` does)
every numbered message is first stored in the journal file's outbox (:mod:`.outbox`), by the
client thread, and sent only once stored: numbers once sent are never derived again.

Bad input from the table system is answered with an ``error`` and the session goes on. An
unexpected exception (a bug) while handling one message is logged with its traceback,
answered with ``internal_error``, and kept for the owner: :meth:`TableSystemReporter.check`,
which the controller calls on every step, raises it. One that stops the client thread is kept
the same way.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import ssl
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Self

import websockets
from websockets.asyncio.client import ClientConnection, connect

from shoe_controller.errors import ProtocolViolation, TableSystemError
from shoe_controller.reporting import protocol as p
from shoe_controller.reporting.stream import EventStream

if TYPE_CHECKING:
    from shoe_controller.journal import Journal
    from shoe_controller.reporting.outbox import Outbox

log = logging.getLogger("shoe_controller.reporting")

_SEND_BATCH = 256
_PERSIST_BATCH = 500
"""Outbox rows per transaction (whole records): short, so an append never waits long."""


@dataclass(frozen=True)
class TableSystemConfig:
    """How to reach the table system. ``key`` is the shared HMAC key."""

    url: str
    token: str
    key: bytes
    table_id: str
    ssl_context: ssl.SSLContext | None = None
    handshake_timeout: float = 5.0
    backoff_initial: float = 0.1
    backoff_max: float = 2.0
    drain_seconds: float = 5.0
    controller_version: str = ""
    auth_backoff_initial: float = 30.0
    auth_backoff_max: float = 300.0
    """After the table system refused our token or key: a configuration error that retrying
    every 2 s cannot fix; the retries go on (the operator may fix it on the server's side)
    but wait 30 s, doubling up to 5 min."""


@dataclass(frozen=True)
class TableCommand:
    """A command from the table system, authenticated and in sequence; the controller applies
    it (or :meth:`TableSystemReporter.reject` s it) in its own thread."""

    type: str  # open_betting, close_betting, void_round, decision, insurance
    shoe: int
    round: int
    seq: int
    session: str
    reason: str = ""
    #: close_betting (blackjack) and insurance: the seats; decision: the seat, hand, action.
    seats: tuple[int, ...] | None = None
    seat: int = 0
    hand: int = 0
    action: str = ""
    #: decision and insurance: the ``key`` of the ``decision_due`` event answered.
    key: str = ""


@dataclass
class ReporterStats:
    connects: int = 0
    sent: int = 0
    acked: int = 0
    errors_sent: int = 0
    errors_received: int = 0
    commands: int = 0
    last_error: str = ""
    connected_at: list[float] = field(default_factory=list)


#: Error codes in the handshake that mean our credentials (token, shared key) are wrong.
AUTH_CODES = (p.UNAUTHENTICATED, p.BAD_SIGNATURE)


class AuthenticationRefused(ProtocolViolation):
    """The table system refused our token, or its messages are not signed with our key."""


class TableSystemReporter:
    """Reports the table's events to the table system exactly once; takes its commands.

    Thread-safe: the controller's thread calls :meth:`add`, :meth:`take_commands`,
    :meth:`reject` and :meth:`check`; the client thread runs the connection.
    """

    def __init__(self, config: TableSystemConfig) -> None:
        self.config = config
        self.stream = EventStream(config.table_id)
        self.stats = ReporterStats()
        self._lock = threading.Lock()
        self._acked = threading.Condition(self._lock)
        self._commands: queue.Queue[TableCommand] = queue.Queue()
        self._control: list[dict[str, Any]] = []  # control messages (errors) to send
        self._outbox: Outbox | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._persist_wake: asyncio.Event | None = None
        self._stop: asyncio.Event | None = None
        self._session = ""
        self._connected = False
        self._drives_betting = False
        self._cursor = 1
        self._rewind: int | None = None
        self._next_command_seq = 1
        self._down_logged = False
        self._auth_refused = False  # the last connection was refused for our credentials

    # ------------------------------------------------------------ controller side
    def attach_journal(self, journal: Journal) -> JournalAttachment:
        """Keep the numbers given to events in ``journal``'s outbox, so they never change.

        Call before the journal is replayed into :meth:`add` (records the outbox covers are
        then taken from it, later ones numbered on from its head). Returns a context manager
        (and ``close()``) that stops the reporter, stores what is still unstored and closes
        the outbox; before the journal is closed.
        """
        from shoe_controller.reporting.outbox import Outbox

        if self._outbox is not None or self.stream.head or self.stream.held:
            raise RuntimeError("attach_journal() comes once, before the journal is replayed")
        outbox = Outbox(journal, self.config.table_id)
        with self._lock:
            self.stream.resume(outbox)
            self._outbox = outbox
        log.info("outbox: %d event(s) numbered before, up to journal record %d",
                 outbox.head, outbox.covered,
                 extra={"outbox_head": outbox.head, "covered": outbox.covered})
        return JournalAttachment(self)

    def _detach_journal(self) -> None:
        self.close()
        outbox, self._outbox = self._outbox, None
        if outbox is not None:
            try:
                self._persist(outbox)
            except Exception:
                log.exception("could not store the last numbered events in the outbox")
            outbox.close()

    def add(self, record_seq: int, at: float, events: Iterable[Mapping[str, Any]], *,
            live: bool = True) -> None:
        """The events journal record ``record_seq`` caused (replayed ones with live=False)."""
        with self._lock:
            released = self.stream.add(record_seq, at, list(events))
        if released and live:
            self._notify()

    @property
    def connected(self) -> bool:
        """An authenticated session with the table system is up."""
        return self._connected

    def backlog(self) -> tuple[int, float | None]:
        """(events not yet acknowledged, when the oldest of them was recorded): for
        monitoring, read from any thread."""
        with self._lock:
            return self.stream.unacked, self.stream.oldest_unacked_at()

    @property
    def drives_betting(self) -> bool:
        """The table system is connected and opens and closes betting itself."""
        return self._connected and self._drives_betting

    def take_commands(self) -> list[TableCommand]:
        commands = []
        while True:
            try:
                commands.append(self._commands.get_nowait())
            except queue.Empty:
                return commands

    def reject(self, command: TableCommand, reason: str) -> None:
        """Tell the table system its command does not apply (e.g. the round is over)."""
        log.warning("table-system command %s refused: %s", command.type, reason,
                    extra={"command": command.type, "round": command.round,
                           "command_seq": command.seq})
        if command.session == self._session:
            self._queue_control(p.error_message(p.NOT_APPLICABLE, f"{command.type}: {reason}",
                                                session=command.session, ref=command.seq))

    def check(self) -> None:
        """Raise, in the owner's thread, what broke the client thread (or a bug it met)."""
        if self._error is not None:
            raise TableSystemError(f"table-system client failed: {self._error!r}") from self._error

    def wait_acked(self, timeout: float) -> bool:
        """Wait until the table system has acknowledged everything released so far."""
        deadline = time.monotonic() + timeout
        with self._acked:
            while self.stream.unacked:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._acked.wait(left)
        return True

    # ------------------------------------------------------------ life cycle
    def start(self) -> None:
        if self._thread is not None:
            return
        ready = threading.Event()
        self._thread = threading.Thread(target=self._thread_main, args=(ready,),
                                        name="table-system", daemon=True)
        self._thread.start()
        ready.wait(5)

    def close(self, *, drain: bool = True) -> None:
        """Stop; first give the table system ``drain_seconds`` to acknowledge what is out."""
        if self._thread is None:
            return
        if drain and self._error is None and not self.wait_acked(self.config.drain_seconds):
            log.warning("%d event(s) not acknowledged by the table system; they are sent again "
                        "at the next start", self.stream.unacked,
                        extra={"unacked": self.stream.unacked})
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(stop.set)
            except RuntimeError:  # the loop just finished
                pass
        self._thread.join(10)
        self._thread = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ client thread
    def _thread_main(self, ready: threading.Event) -> None:
        try:
            asyncio.run(self._main(ready))
        except BaseException as exc:
            log.exception("table-system client thread failed")
            self._error = exc
        finally:
            self._connected = False
            ready.set()

    def _bug(self, exc: Exception, doing: str) -> None:
        """A bug met in the client thread: logged, and kept for the owner's :meth:`check`."""
        log.error("table-system client: unexpected %s while %s (a bug)", type(exc).__name__,
                  doing, exc_info=exc)
        if self._error is None:
            self._error = exc

    def _notify(self) -> None:
        loop, wake, persist = self._loop, self._wake, self._persist_wake
        if loop is not None and wake is not None and persist is not None:
            try:
                loop.call_soon_threadsafe(wake.set)
                loop.call_soon_threadsafe(persist.set)
            except RuntimeError:  # loop closed while stopping
                pass

    def _persist(self, outbox: Outbox | None = None) -> int:
        """Store every numbered message not yet in the outbox, whole records per transaction
        (in the client thread; at the end in the owner's, once the thread has stopped).
        Returns how many were stored."""
        outbox = outbox or self._outbox
        if outbox is None:
            return 0
        with self._lock:
            pending = self.stream.unpersisted()
        stored = len(pending)
        while pending:
            cut = min(_PERSIST_BATCH, len(pending))
            while cut < len(pending) and pending[cut].released_by == pending[cut - 1].released_by:
                cut += 1  # a record's messages go in together
            chunk, pending = pending[:cut], pending[cut:]
            outbox.append(chunk)
            with self._lock:
                self.stream.mark_persisted(chunk[-1].seq)
        return stored

    async def _persister(self) -> None:
        """Store what :meth:`add` numbers as it comes, connected or not."""
        assert self._persist_wake is not None and self._stop is not None
        assert self._wake is not None
        try:
            while True:
                self._persist_wake.clear()
                if self._persist():
                    self._wake.set()  # the writer may send them now
                await self._persist_wake.wait()
        except Exception as exc:  # noqa: BLE001 - the owner's check() raises it
            self._bug(exc, "storing numbered events in the outbox")
            self._stop.set()

    def _queue_control(self, message: dict[str, Any]) -> None:
        with self._lock:
            self._control.append(message)
        self._notify()

    async def _main(self, ready: threading.Event) -> None:
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._persist_wake = asyncio.Event()
        self._stop = asyncio.Event()
        ready.set()
        persister = asyncio.ensure_future(self._persister())
        try:
            await self._connect_loop()
        finally:
            persister.cancel()
            await asyncio.gather(persister, return_exceptions=True)

    async def _connect_loop(self) -> None:
        assert self._stop is not None
        delay = self.config.backoff_initial
        while not self._stop.is_set():
            session = asyncio.ensure_future(self._connect_once())
            stopping = asyncio.ensure_future(self._stop.wait())
            done, _ = await asyncio.wait({session, stopping},
                                         return_when=asyncio.FIRST_COMPLETED)
            if session not in done:
                session.cancel()
                await asyncio.gather(session, return_exceptions=True)
                break
            stopping.cancel()
            if session.result():
                delay = self.config.backoff_initial  # it worked for a while: retry quickly
            if self._auth_refused:  # retrying at once cannot help: wait long, doubling
                delay = max(delay, self.config.auth_backoff_initial)
                limit = self.config.auth_backoff_max
            else:
                limit = self.config.backoff_max
            try:
                await asyncio.wait_for(self._stop.wait(), delay)
            except TimeoutError:
                pass
            delay = min(delay * 2, limit)

    async def _connect_once(self) -> bool:
        """One connection; True if a session was established. Network trouble is logged."""
        reached = False
        try:
            async with connect(
                self.config.url, ssl=self.config.ssl_context, open_timeout=self.config
                .handshake_timeout, max_size=p.HARD_FRAME_LIMIT, compression=None,
                proxy=None, ping_interval=2.0, ping_timeout=4.0, close_timeout=1.0,
            ) as ws:
                await self._handshake(ws)
                reached = True
                await self._run_session(ws)
        except (OSError, TimeoutError, websockets.exceptions.WebSocketException,
                ProtocolViolation) as exc:
            self._log_down(exc)
        finally:
            if self._connected and not (self._stop is not None and self._stop.is_set()):
                log.warning("table system disconnected; %d event(s) not yet acknowledged",
                            self.stream.unacked, extra={"unacked": self.stream.unacked})
            self._connected = False
            self._session = ""
        return reached

    def _log_down(self, exc: BaseException) -> None:
        text = f"{type(exc).__name__}: {exc}"
        self.stats.last_error = text
        if isinstance(exc, AuthenticationRefused):
            if not self._auth_refused:  # said once, clearly; the same refusal again is not news
                log.error("table system at %s refused this controller: %s. Check the "
                          "controller's table token and key (--table-token, --table-key-file) "
                          "against the table system's; retrying every few minutes",
                          self.config.url, exc.detail,
                          extra={"url": self.config.url, "code": exc.code})
            else:
                log.debug("table system still refuses this controller: %s", text)
            self._auth_refused = True
            self._down_logged = True
            return
        self._auth_refused = False
        if isinstance(exc, ProtocolViolation) or not self._down_logged:
            log.warning("table system unreachable (%s); retrying, the table keeps the events",
                        text, extra={"url": self.config.url})
            self._down_logged = True
        else:
            log.debug("table system still unreachable: %s", text)

    async def _handshake(self, ws: ClientConnection) -> None:
        timeout = self.config.handshake_timeout
        try:
            challenge = p.decode(await asyncio.wait_for(ws.recv(), timeout), self.config.key,
                                 sender="table_system")
        except ProtocolViolation as exc:
            if exc.code == p.BAD_SIGNATURE:  # the table system signs with another key
                raise AuthenticationRefused(exc.code, f"its challenge is not signed with our "
                                            f"key ({exc.detail})") from None
            raise
        if challenge["type"] != "challenge":
            raise ProtocolViolation(p.MALFORMED, f"expected challenge, got {challenge['type']}")
        client_nonce = p.new_nonce()
        await ws.send(p.encode(p.message(
            "hello", table_id=self.config.table_id, token=self.config.token,
            nonce=challenge["nonce"], client_nonce=client_nonce,
            controller=self.config.controller_version, head=self.stream.head), self.config.key))
        reply = p.decode(await asyncio.wait_for(ws.recv(), timeout), self.config.key,
                         sender="table_system")
        if reply["type"] == "error":
            self.stats.errors_received += 1
            if reply["code"] in AUTH_CODES:
                raise AuthenticationRefused(reply["code"], f"{reply['code']}: {reply['detail']}")
            raise ProtocolViolation(reply["code"], f"table system refused us: {reply['detail']}")
        session = p.session_id(challenge["nonce"], client_nonce)
        if reply["type"] != "welcome" or reply["session"] != session:
            raise ProtocolViolation(p.MALFORMED, "expected a welcome for this session")
        # Never await while holding the (threading) lock: the persister on this same event
        # loop and the controller's thread both take it, and a send that waits for a closing
        # socket would stop them all for good. The refusal is sent after letting go.
        refused: ProtocolViolation | None = None
        with self._acked:
            try:
                self.stream.ack(reply["last_seq"])
                self._check_available(reply["last_seq"] + 1)
            except ProtocolViolation as exc:
                refused = exc
            else:
                self._acked.notify_all()
                self._cursor = reply["last_seq"] + 1
                self._rewind = None
                self._control.clear()
        if refused is not None:
            log.error("table system cannot be served: %s", refused.detail)
            await ws.send(p.encode(p.error_message(refused.code, refused.detail,
                                                   session=session), self.config.key))
            raise refused
        self._session = session
        self._next_command_seq = 1
        self._drives_betting = reply["drives_betting"]
        self._connected = True
        self._down_logged = False
        self._auth_refused = False
        self.stats.connects += 1
        self.stats.connected_at.append(time.monotonic())
        log.info("table system connected: it has events up to %d, %d to send",
                 reply["last_seq"], self.stream.head - reply["last_seq"],
                 extra={"last_seq": reply["last_seq"], "head": self.stream.head})

    async def _run_session(self, ws: ClientConnection) -> None:
        tasks = {asyncio.ensure_future(self._read(ws)), asyncio.ensure_future(self._write(ws))}
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            results = await asyncio.gather(*tasks, return_exceptions=True)
        for result in results:  # re-raise what ended the session
            if isinstance(result, BaseException) and not isinstance(
                    result, asyncio.CancelledError):
                raise result

    def _check_available(self, from_seq: int) -> None:
        """Raise ``unavailable`` if seqs from ``from_seq`` on can no longer be sent."""
        first = self.stream.first_available
        if from_seq < first and from_seq <= self.stream.head:
            raise ProtocolViolation(
                p.UNAVAILABLE, f"seq {from_seq}..{first - 1} can no longer be sent (this "
                f"controller keeps seq {first}..{self.stream.head})", from_seq)

    async def _write(self, ws: ClientConnection) -> None:
        assert self._wake is not None
        key, table_id, session = self.config.key, self.config.table_id, self._session
        while True:
            self._persist()  # only what is in the outbox goes out
            with self._lock:
                control, self._control = self._control, []
                if self._rewind is not None:
                    self._cursor, self._rewind = self._rewind, None
                room = min(_SEND_BATCH, self.stream.sendable + 1 - self._cursor)
                batch = self.stream.since(self._cursor, room) if room > 0 else []
                if not control and not batch:
                    self._wake.clear()
            for item in control:
                self.stats.errors_sent += 1
                await ws.send(p.encode(item, key))
            for out in batch:
                await ws.send(p.encode(out.to_message(table_id, session), key))
                self.stats.sent += 1
                with self._lock:
                    if self._rewind is not None:
                        break
                    self._cursor = out.seq + 1
            if not control and not batch:
                await self._wake.wait()

    async def _read(self, ws: ClientConnection) -> None:
        async for raw in ws:
            ref = None
            try:
                message = p.decode(raw, self.config.key, sender="table_system")
                ref = message.get("seq")
                self._check_sequence(message)
                self._handle(message)
            except ProtocolViolation as exc:
                log.warning("bad message from the table system: %s", exc,
                            extra={"code": exc.code, "ref": exc.ref})
                self._queue_control(p.error_message(exc.code, exc.detail,
                                                    session=self._session, ref=exc.ref))
            except Exception as exc:  # noqa: BLE001 - a bug: reported to both, session goes on
                self._bug(exc, f"handling a message from the table system (seq {ref})")
                self._queue_control(p.error_message(
                    p.INTERNAL_ERROR, f"the controller failed on this message "
                    f"({type(exc).__name__}); it was not applied", session=self._session,
                    ref=ref))

    def _check_sequence(self, message: Mapping[str, Any]) -> None:
        if "seq" not in message:
            if message["type"] in ("challenge", "welcome"):
                raise ProtocolViolation(p.MALFORMED, f"{message['type']} in a running session")
            return  # an error report: informational, not sequenced
        if message["session"] != self._session:
            raise ProtocolViolation(p.REPLAYED, "message from another session", message["seq"])
        seq = message["seq"]
        if seq < self._next_command_seq:
            raise ProtocolViolation(p.REPLAYED, f"seq {seq} was already received "
                                    f"(next is {self._next_command_seq})", seq)
        if seq > self._next_command_seq:
            # Accept it (refusing every later message would stall the session) but say so.
            self._queue_control(p.error_message(
                p.OUT_OF_SEQUENCE, f"seq {seq}, expected {self._next_command_seq}",
                session=self._session, ref=seq))
            log.warning("table system skipped seq %d..%d", self._next_command_seq, seq - 1)
        self._next_command_seq = seq + 1

    def _handle(self, message: Mapping[str, Any]) -> None:
        kind = message["type"]
        if kind == "ack":
            with self._acked:
                newly = self.stream.ack(message["upto"])
                self.stats.acked += newly
                self._acked.notify_all()
        elif kind == "resend":
            log.info("table system asks to resend from seq %d", message["from_seq"])
            with self._lock:
                from_seq = max(1, message["from_seq"])
                self._check_available(from_seq)
                self._rewind = from_seq
            self._notify()
        elif kind == "error":
            self.stats.errors_received += 1
            log.warning("table system reports %s: %s", message["code"], message["detail"],
                        extra={"code": message["code"], "ref": message.get("ref")})
        elif kind in p.COMMAND_TYPES:
            self.stats.commands += 1
            seats = message.get("seats")
            self._commands.put(TableCommand(
                kind, message["shoe"], message["round"], message["seq"], message["session"],
                message.get("reason", ""), None if seats is None else tuple(seats),
                message.get("seat", 0), message.get("hand", 0), message.get("action", ""),
                message.get("key", "")))


class JournalAttachment:
    """What :meth:`TableSystemReporter.attach_journal` returns; ``close()`` (idempotent) or the
    end of its ``with`` block detaches the journal."""

    def __init__(self, reporter: TableSystemReporter) -> None:
        self._reporter: TableSystemReporter | None = reporter

    def close(self) -> None:
        reporter, self._reporter = self._reporter, None
        if reporter is not None:
            reporter._detach_journal()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

