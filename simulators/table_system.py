"""A reference table system (game server) speaking docs/table-protocol, for tests and demos.

It does what a real one must do with the controller's events: authenticate the controller
(challenge, token, HMAC), check every signature and sequence number, record each event it
accepts exactly once (JSON lines, written and flushed before the acknowledgement leaves, so a
crash of the table system never loses an acknowledged event), recognise a resent event by its
``id``, ask for a resend after a gap, and answer every bad message with an ``error`` (and a
log line) without dropping the connection. It opens and closes betting on a timer. It speaks
protocol version 2 only (RFC 8785 signing); a version-1 controller is refused with
``unsupported_version``.

A bug of its own met while handling a message (an exception other than the protocol's) is
logged with its traceback, answered with ``internal_error``, and kept in
:attr:`TableSystem.faults` (:meth:`TableSystem.check` raises the first; ``shoe table-sim``
exits on it); the connection carries on.

Its record file is its memory: started again on the same file it knows the last ``seq`` it has
and what state the table was in, like a game server restarted after a crash.

For tests it can be told to drop the connection (:meth:`TableSystem.drop_connections`) or to
stay down for a while (:meth:`TableSystem.go_down`), also at chosen ``seq`` numbers
(``drop_at`` / ``down_at``, the ``--drop-at`` / ``--down-at`` options).

Roulette (``game="roulette"``, docs/table-protocol/README.md "Roulette"): a wheel table has no
shoe (``shoe`` 0). Driving betting, the table system opens round N+1 once round N has its
number or its void, and closes it after the betting window: that is a host-started wheel's
(``[wheel] host_starts``) whole cycle. After a misspin it waits for the wheel's respin (a
round whose betting is closed at once) instead of opening a round of its own. A wheel that
runs its own games is run with ``drives_betting=False``. :func:`roulette_rounds` reads a
record back as the rounds it holds, in the form ``shoe journal export`` gives a wheel table's
journal, so the two can be compared line for line.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from shoe_controller.errors import ProtocolViolation
from shoe_controller.reporting import protocol as p

log = logging.getLogger("shoe.table_sim")


@dataclass
class TableSystemOptions:
    token: str
    key: bytes
    record: Path | None = None
    betting_seconds: float = 1.0
    open_delay: float = 0.0
    drives_betting: bool = True
    fsync: bool = False
    drop_at: tuple[int, ...] = ()
    """Drop the connection right after accepting (and acknowledging) these seqs."""
    down_at: tuple[tuple[int, float], ...] = ()
    """(seq, seconds): after accepting seq, close everything and stay down that long."""
    handshake_timeout: float = 5.0
    game: str = "baccarat"
    """"blackjack": close_betting names the seats with a bet, and the table system's players
    answer every ``decision_due`` (basic strategy, some insurance)."""
    players_seed: int = 0
    answer_delay: float = 0.0
    """Seconds the players take to answer a ``decision_due``."""
    silent_every: int = 0
    insurance_rate: float = 0.3
    """Leave every Nth ``decision_due`` unanswered (0: none), so that it times out."""
    respin_wait: float = 15.0
    """Roulette: how long to wait for the wheel's respin after a misspin before opening the
    next round anyway (a wheel that does not respin leaves the table waiting otherwise)."""


@dataclass
class TableRecord:
    """What the table system knows of one table: its accepted events and its betting state."""

    table_id: str
    last_seq: int = 0
    ids: set[str] = field(default_factory=set)
    id_at: dict[int, str] = field(default_factory=dict)
    shoe: int = 0
    round: int = 0
    phase: str = "none"  # none, open, closed, result, done, finished
    phase_since: float = 0.0
    open_sent: tuple[int, int] | None = None
    close_sent: tuple[int, int] | None = None
    #: Blackjack: the decision_due not yet answered by a decision_made/insurance_closed (or
    #: the round's end), and whether the players leave it unanswered (to time out).
    pending_decision: dict[str, Any] | None = None
    pending_silent: bool = False

    def accept(self, event: dict[str, Any], now: float) -> None:
        self.last_seq = event["seq"]
        self.ids.add(event["id"])
        self.id_at[event["seq"]] = event["id"]
        kind, data = event["type"], event["data"]
        phase = {"shoe_new": "done", "round_opened": "open", "betting_closed": "closed",
                 "round_result": "result", "round_confirmed": "done", "round_void": "done",
                 "shoe_finished": "finished", "winning_number": "done"}.get(kind)
        if kind == "round_opened" and data.get("respin_of") is not None:
            phase = "closed"  # a wheel's respin: the voided round's bets stand, none taken
        elif kind == "round_void" and data.get("reason") == "misspin" and "detail" in data:
            phase = "respin"  # a wheel's misspin: the wheel spins again by itself
        if kind == "shoe_new":
            self.shoe, self.round = event["shoe"], 0
        elif kind == "round_opened":
            self.shoe, self.round = event["shoe"], int(data["round"])
        if phase is not None:
            self.phase, self.phase_since = phase, now
        if kind == "decision_due":
            self.pending_decision, self.pending_silent = event, False
        elif kind in ("decision_made", "insurance_closed", "round_result", "round_void") and (
                self.pending_decision is not None
                and data.get("key") in (None, self.pending_decision["data"]["key"])):
            self.pending_decision = None


class TableSystem:
    """The reference table system, serving in a thread of its own (``start`` / ``close``)."""

    def __init__(self, host: str, port: int, options: TableSystemOptions) -> None:
        self.host = host
        self.port = port
        self.options = options
        self.tables: dict[str, TableRecord] = {}
        self.accepted: list[dict[str, Any]] = []
        self.errors_sent: list[dict[str, Any]] = []
        self.errors_received: list[dict[str, Any]] = []
        self.connections: set[ServerConnection] = set()
        self.handshakes = 0
        self.faults: list[Exception] = []
        self._record_file: Any = None
        self._server: Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._changed = threading.Condition()
        self._up_again: asyncio.TimerHandle | None = None
        self.error: BaseException | None = None
        self.decisions_due = 0
        self._players: Any = None
        if options.game == "blackjack":
            from shoe_controller.games.blackjack.live_players import BuiltInPlayers
            from shoe_controller.games.blackjack.profile import load_profile

            self._players = BuiltInPlayers(load_profile("blackjack-8d").rules,
                                           options.players_seed,
                                           insurance_rate=options.insurance_rate)
        self._load_record()

    # ------------------------------------------------------------ record
    def _load_record(self) -> None:
        path = self.options.record
        if path is None:
            return
        good = 0
        if path.exists():
            with open(path, "rb") as file:
                for raw in file:
                    try:
                        event = json.loads(raw)
                    except ValueError:
                        log.warning("%s: dropping a torn last line (never acknowledged)", path)
                        break
                    if not raw.endswith(b"\n"):
                        break
                    good += len(raw)
                    self._table(event["table_id"]).accept(event, time.monotonic())
                    self.accepted.append(event)
            os.truncate(path, good)
        self._record_file = open(path, "ab")  # noqa: SIM115 - closed in close()

    def _table(self, table_id: str) -> TableRecord:
        if table_id not in self.tables:
            self.tables[table_id] = TableRecord(table_id)
        return self.tables[table_id]

    def _write(self, event: dict[str, Any]) -> None:
        if self._record_file is None:
            return
        self._record_file.write(p.canonical_bytes(event) + b"\n")
        self._record_file.flush()
        if self.options.fsync:
            os.fsync(self._record_file.fileno())

    # ------------------------------------------------------------ life cycle
    def start(self) -> tuple[str, int]:
        """Serve in a background thread; returns the address actually listened on."""
        ready = threading.Event()
        self._thread = threading.Thread(target=self._thread_main, args=(ready,),
                                        name="table-sim", daemon=True)
        self._thread.start()
        if not ready.wait(10) or self.error is not None:
            raise RuntimeError(f"table system did not start: {self.error!r}")
        return self.host, self.port

    def _thread_main(self, ready: threading.Event) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._listen())
            ready.set()
            loop.run_forever()
        except BaseException as exc:
            self.error = exc
            log.exception("table system failed")
            ready.set()
        finally:
            loop.run_until_complete(self._shutdown())
            loop.close()

    async def _listen(self) -> None:
        self._server = await serve(self._handle, self.host, self.port,
                                   max_size=p.HARD_FRAME_LIMIT, compression=None,
                                   ping_interval=2.0, ping_timeout=4.0, close_timeout=1.0)
        self.port = self._server.sockets[0].getsockname()[1]
        log.info("listening on %s:%d", self.host, self.port)

    async def _shutdown(self) -> None:
        if self._up_again is not None:
            self._up_again.cancel()
        await self._close_server()

    async def _close_server(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()  # closes the connections too
            await server.wait_closed()

    def close(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._thread = None
        if self._record_file is not None:
            self._record_file.close()
            self._record_file = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def check(self) -> None:
        """Raise the first bug the table system met while handling a message."""
        if self.faults:
            raise RuntimeError(f"table system failed: {self.faults[0]!r}") from self.faults[0]

    def _fault(self, exc: Exception, doing: str) -> None:
        log.error("unexpected %s while %s (a bug)", type(exc).__name__, doing, exc_info=exc)
        self.faults.append(exc)
        self._changed_now()

    # ------------------------------------------------------------ faults (any thread)
    def drop_connections(self) -> None:
        """Cut every connection at once (as a network failure would), keep listening."""
        self._call(self._drop)

    def go_down(self, seconds: float) -> None:
        """Close every connection and stop listening for ``seconds``."""
        self._call(lambda: asyncio.ensure_future(self._down(seconds)))

    @property
    def is_up(self) -> bool:
        return self._server is not None

    def _call(self, action: Callable[[], Any]) -> None:
        assert self._loop is not None, "start() first"
        self._loop.call_soon_threadsafe(action)

    def _drop(self) -> None:
        for ws in list(self.connections):
            ws.transport.abort()

    async def _down(self, seconds: float) -> None:
        if self._server is None:
            return
        log.warning("going down for %.1f s", seconds)
        self._drop()
        await self._close_server()
        loop = asyncio.get_running_loop()
        self._up_again = loop.call_later(seconds, lambda: asyncio.ensure_future(self._listen()))

    # ------------------------------------------------------------ waiting (tests)
    def wait_for(self, predicate: Callable[[TableSystem], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._changed:
            while not predicate(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(min(left, 0.1))
        return True

    def _changed_now(self) -> None:
        with self._changed:
            self._changed.notify_all()

    # ------------------------------------------------------------ one connection
    async def _handle(self, ws: ServerConnection) -> None:
        try:
            session = await self._authenticate(ws)
        except Exception as exc:  # noqa: BLE001 - a bug: kept in faults, the server goes on
            self._fault(exc, "authenticating a controller")
            await self._refuse(ws, p.INTERNAL_ERROR, f"the table system failed on this "
                               f"hello ({type(exc).__name__})")
            return
        if session is None:
            return
        session_id, table, head = session
        self.connections.add(ws)
        link = _Link(ws, session_id, self.options.key, catch_up_to=head)
        ticker = asyncio.ensure_future(self._betting(link, table))
        answers = asyncio.ensure_future(self._answers(link, table))
        try:
            async for raw in ws:
                await self._receive(link, table, raw)
        except ConnectionClosed:
            pass
        finally:
            ticker.cancel()
            answers.cancel()
            self.connections.discard(ws)
            self._changed_now()

    async def _authenticate(self, ws: ServerConnection
                            ) -> tuple[str, TableRecord, int] | None:
        key = self.options.key
        nonce = p.new_nonce()
        try:
            await ws.send(p.encode(p.message("challenge", nonce=nonce), key))
            raw = await asyncio.wait_for(ws.recv(), self.options.handshake_timeout)
            try:
                hello = p.decode(raw, key, sender="controller")
                if hello["type"] != "hello":
                    raise ProtocolViolation(p.UNAUTHENTICATED, "say hello first")
                if not hmac.compare_digest(hello["token"].encode(), self.options.token.encode()):
                    raise ProtocolViolation(p.UNAUTHENTICATED, "unknown token")
                if hello["nonce"] != nonce:
                    raise ProtocolViolation(p.REPLAYED, "hello answers another challenge")
            except ProtocolViolation as exc:
                code = exc.code if exc.code != p.UNKNOWN_TYPE else p.UNAUTHENTICATED
                await self._refuse(ws, code, exc.detail)
                return None
        except (ConnectionClosed, TimeoutError):
            return None
        table = self._table(hello["table_id"])
        session_id = p.session_id(nonce, hello["client_nonce"])
        for other in list(self.connections):  # a restarted controller replaces the old one
            if getattr(other, "table_id", None) == table.table_id:
                other.transport.abort()
        ws.table_id = table.table_id  # type: ignore[attr-defined]
        table.open_sent = table.close_sent = None  # a new controller run: ask again
        self.handshakes += 1
        await ws.send(p.encode(p.message("welcome", session=session_id, last_seq=table.last_seq,
                                         drives_betting=self.options.drives_betting), key))
        log.info("controller %s connected (it has %d events, we have %d)", table.table_id,
                 hello["head"], table.last_seq)
        self._changed_now()
        return session_id, table, hello["head"]

    async def _refuse(self, ws: ServerConnection, code: str, detail: str) -> None:
        log.warning("refused a peer: %s: %s", code, detail)
        self.errors_sent.append({"code": code, "detail": detail})
        self._changed_now()
        try:
            await ws.send(p.encode(p.error_message(code, detail), self.options.key))
            await ws.close(1008, code)
        except ConnectionClosed:
            pass

    async def _receive(self, link: _Link, table: TableRecord, raw: str | bytes) -> None:
        message: dict[str, Any] = {}
        try:
            message = p.decode(raw, self.options.key, sender="controller")
            if message["type"] == "error":
                log.warning("controller reports %s: %s", message["code"], message["detail"])
                self.errors_received.append(message)
                self._changed_now()
                return
            if message["type"] == "hello":
                raise ProtocolViolation(p.MALFORMED, "already authenticated")
            await self._event(link, table, message)
        except ProtocolViolation as exc:
            log.warning("bad message from the controller: %s", exc)
            self.errors_sent.append({"code": exc.code, "detail": exc.detail, "ref": exc.ref})
            self._changed_now()
            await link.send(p.error_message(exc.code, exc.detail, session=link.session,
                                            ref=exc.ref), sequenced=False)
        except ConnectionClosed:
            raise
        except Exception as exc:  # noqa: BLE001 - a bug: kept in faults, the session goes on
            self._fault(exc, "handling a message from the controller")
            ref = message.get("seq") if isinstance(message.get("seq"), int) else None
            await link.send(p.error_message(
                p.INTERNAL_ERROR, f"the table system failed on this message "
                f"({type(exc).__name__}); it was not recorded", session=link.session, ref=ref),
                sequenced=False)

    async def _event(self, link: _Link, table: TableRecord, event: dict[str, Any]) -> None:
        seq = event["seq"]
        if event["session"] != link.session:
            raise ProtocolViolation(p.REPLAYED, "event from another session", seq)
        if event["table_id"] != table.table_id:
            raise ProtocolViolation(p.CONFLICT, f"this session is table {table.table_id}", seq)
        if seq <= table.last_seq:
            if table.id_at.get(seq, event["id"]) != event["id"]:
                raise ProtocolViolation(p.CONFLICT, f"seq {seq} is already {table.id_at[seq]}",
                                        seq)
            await link.send(p.message("ack", upto=table.last_seq))  # a resent duplicate
            return
        if seq > table.last_seq + 1:
            if not link.resend_asked:
                link.resend_asked = True
                await link.send(p.message("resend", from_seq=table.last_seq + 1))
            raise ProtocolViolation(p.OUT_OF_SEQUENCE, f"seq {seq}, expected "
                                    f"{table.last_seq + 1}", seq)
        if event["id"] in table.ids:
            raise ProtocolViolation(p.CONFLICT, f"id {event['id']} is already recorded", seq)
        entry = {k: v for k, v in event.items() if k not in ("sig", "session", "protocol")}
        entry["received_at"] = time.time()
        self._write(entry)
        table.accept(entry, time.monotonic())
        self.accepted.append(entry)
        if entry["type"] == "winning_number":
            data = entry["data"]
            log.info("%s round %s: %s %s", table.table_id, data["round"], data["number"],
                     data["colour"])
        elif entry["type"] == "round_void":
            log.info("%s round %s void: %s", table.table_id, entry["data"]["round"],
                     entry["data"]["reason"])
        link.resend_asked = False
        await link.send(p.message("ack", upto=seq))
        self._changed_now()
        if seq in self.options.drop_at:
            log.warning("dropping the connection after seq %d (as told)", seq)
            self._drop()
        for down_seq, seconds in self.options.down_at:
            if seq == down_seq:
                asyncio.ensure_future(self._down(seconds))  # not awaited: it waits for us
        if entry["type"] == "decision_due" and self._players is not None:
            self.decisions_due += 1
            every = self.options.silent_every
            if every and self.decisions_due % every == 0:
                log.info("leaving %s unanswered (as told)", entry["data"]["key"])
                table.pending_silent = True

    async def _answers(self, link: _Link, table: TableRecord) -> None:
        """Answer the decision awaited, once per connection: also one the controller asked
        before it restarted (its answer may have died with it), once the catch-up is done.
        An answer the controller already has is refused as late, and changes nothing."""
        answered = ""
        while self._players is not None:
            await asyncio.sleep(0.005)
            due = table.pending_decision
            if (due is None or table.pending_silent or table.last_seq < link.catch_up_to
                    or due["data"]["key"] == answered):
                continue
            answered = due["data"]["key"]
            if self.options.answer_delay:
                await asyncio.sleep(self.options.answer_delay)
            type_, fields = self._players.answer_event(due["data"], due["shoe"])
            await link.send(p.message(type_, **fields))

    async def _betting(self, link: _Link, table: TableRecord) -> None:
        """Open the next round once the last is over; close betting after the window."""
        if not self.options.drives_betting:
            return
        while True:
            await asyncio.sleep(0.01)
            if table.last_seq < link.catch_up_to:
                continue  # still catching up: the state we know is old
            now = time.monotonic()
            here = (table.shoe, table.round)
            if (table.phase == "open" and table.close_sent != here
                    and now >= table.phase_since + self.options.betting_seconds):
                table.close_sent = here
                seats = {} if self._players is None else {
                    "seats": self._players.seats(here[0], here[1])}
                await link.send(p.message("close_betting", shoe=here[0], round=here[1],
                                          **seats))
            nxt = (table.shoe, table.round + 1)
            if (self.next_round_due(table, now) and table.open_sent != nxt
                    and now >= table.phase_since + self.options.open_delay):
                table.open_sent = nxt
                await link.send(p.message("open_betting", shoe=nxt[0], round=nxt[1]))

    def next_round_due(self, table: TableRecord, now: float) -> bool:
        """Whether the last round is over, so that the next may open. A card table's is over
        once confirmed (or void), within a shoe; a wheel table's (no shoe: 0) from the start,
        once it has its number or void, or when a misspin's respin did not come."""
        if self.options.game != "roulette":
            return table.phase == "done" and table.shoe > 0
        if table.phase == "respin":
            return now >= table.phase_since + self.options.respin_wait
        return table.phase in ("none", "done")

    # ------------------------------------------------------------ for tests
    def send_raw(self, text: str) -> None:
        """Send a frame as is to every connected controller (bad-input tests)."""
        for ws in list(self.connections):
            self._call(lambda ws=ws: asyncio.ensure_future(ws.send(text)))

    def send_command(self, type_: str, **fields: Any) -> None:
        """Send a signed, sequenced command to every connected controller."""
        for ws in list(self.connections):
            link = getattr(ws, "link", None)
            if link is not None:
                self._call(lambda link=link: asyncio.ensure_future(
                    link.send(p.message(type_, **fields))))


def roulette_rounds(events: list[dict[str, Any]], table_id: str | None = None
                    ) -> list[dict[str, Any]]:
    """The rounds a wheel table's recorded events hold (of ``table_id``, or of every table),
    in the order recorded, as ``shoe journal export`` prints a wheel table's journal:
    ``{"type": "round", "round", "number", "colour", "wheel_spin", "void"}`` (docs/journal.md).

    A round is finished by its ``winning_number`` or its ``round_void``; its ``wheel_spin`` is
    the number's, or for a void the one its ``round_opened`` said."""
    spins: dict[tuple[str, int], Any] = {}
    rounds: list[dict[str, Any]] = []
    for event in events:
        if table_id is not None and event["table_id"] != table_id:
            continue
        kind, data = event["type"], event["data"]
        key = (event["table_id"], data.get("round"))
        if kind == "round_opened":
            spins[key] = data.get("wheel_spin")
        elif kind == "winning_number":
            rounds.append({"type": "round", "round": data["round"], "number": data["number"],
                           "colour": data["colour"], "wheel_spin": data.get("wheel_spin"),
                           "void": None})
        elif kind == "round_void":
            rounds.append({"type": "round", "round": data["round"], "number": None,
                           "colour": None, "wheel_spin": spins.get(key), "void": data["reason"]})
    return rounds


class _Link:
    """One authenticated connection: signs and numbers what the table system sends."""

    def __init__(self, ws: ServerConnection, session: str, key: bytes, *,
                 catch_up_to: int) -> None:
        self.ws = ws
        self.catch_up_to = catch_up_to  # the controller's head at hello
        self.session = session
        self.key = key
        self.seq = 0
        self.resend_asked = False
        ws.link = self  # type: ignore[attr-defined]

    async def send(self, message: dict[str, Any], *, sequenced: bool = True) -> None:
        if sequenced:
            self.seq += 1
            message = {**message, "session": self.session, "seq": self.seq}
        try:
            await self.ws.send(p.encode(message, self.key))
        except ConnectionClosed:
            pass
