"""A TCP proxy with a bad line inside: what a flaky serial-over-IP link does between two ends.

    python -m simulators.faulty_proxy --listen 127.0.0.1:0 --target 127.0.0.1:PORT \\
        --faults corrupt=0.01,disconnect=0.00033,seed=7
    # prints "TCP 127.0.0.1:PROXYPORT": connect the host there (socket://127.0.0.1:PROXYPORT)

Each client accepted on the listening address gets its own connection to the target, and each
direction of that pair goes through its own seeded :class:`~simulators.faults.FaultInjector`
(``simulators/faults.py`` lists the faults and their units). Seeds: connection ``n`` (from 0)
uses ``seed + 2n`` from client to target and ``seed + 2n + 1`` from target to client, so a run
is reproducible given the same traffic. A ``disconnect`` fault (per byte) cuts the connection:
the bytes before the cut are delivered, the rest is lost, and **both** sockets are closed, so
the client sees its connection drop and reconnects (the target, e.g. ``shoe sim --tcp``, takes
the next connection as a replugged cable). ``disconnect=0.00033`` cuts about every 3 kB of one
direction's traffic.

Unlike ``shoe sim --faults`` (faults applied inside the simulator), the proxy works between any
two unmodified processes: ``shoe run`` and ``shoe sim`` talk through it as through a bad cable.

Errors: a peer that resets or refuses a connection is the network doing its job and is logged;
anything else that goes wrong in a proxy thread (a bug, the listening socket failing) is
logged at once, kept, and raised to the owner as :class:`ProxyError` by
:meth:`FaultyProxy.check` and :meth:`FaultyProxy.close`; the command exits with status 1.
"""

from __future__ import annotations

import argparse
import logging
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from types import TracebackType
from typing import Self

from shoe_controller.errors import ConfigError, ShoeError
from shoe_controller.stop_signal import stopped_by_signals
from simulators.faults import FaultConfig, FaultCounters, FaultInjector

__all__ = ["FaultyProxy", "ProxyError", "ProxyStats", "main"]

log = logging.getLogger("shoe.proxy")

ACCEPT_POLL = 0.1
"""How often the accepting thread looks at the stop flag (seconds)."""
RECV_SIZE = 65536


class ProxyError(ShoeError, RuntimeError):
    """A proxy thread failed: the proxy is not doing its job any more."""


@dataclass(frozen=True, slots=True)
class ProxyStats:
    """What the proxy did so far, over every connection."""

    connections: int
    """Clients accepted and connected to the target."""
    refused: int
    """Clients accepted whose connection to the target failed (closed at once)."""
    cuts: int
    """Connections cut by a ``disconnect`` fault."""
    upstream: FaultCounters
    """Client to target, summed over connections."""
    downstream: FaultCounters
    """Target to client, summed over connections."""


def _sum(counters: Sequence[FaultCounters]) -> FaultCounters:
    total = FaultCounters()
    for item in counters:
        for f in fields(FaultCounters):
            setattr(total, f.name, getattr(total, f.name) + getattr(item, f.name))
    return total


class _Pair:
    """One proxied connection: the client's socket, the target's, and the two pumps."""

    def __init__(self, index: int, client: socket.socket, upstream: socket.socket) -> None:
        self.index = index
        self.client = client
        self.upstream = upstream
        self._closed = False
        self._lock = threading.Lock()
        self.threads: list[threading.Thread] = []

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Close both sides (idempotent). ``shutdown`` first: it wakes a ``recv`` blocked in
        the other pump, which a bare ``close`` from another thread does not reliably do."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        for sock in (self.client, self.upstream):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already disconnected by the peer: nothing left to shut down
            sock.close()


class FaultyProxy:
    """Listen on ``listen``; connect each client to ``target`` through a faulty line.

    A context manager (``close()`` is idempotent). Start it with :meth:`start`; its real
    address is :attr:`address` (``listen`` may name port 0).
    """

    def __init__(
        self,
        target: tuple[str, int],
        faults: FaultConfig | None = None,
        *,
        listen: tuple[str, int] = ("127.0.0.1", 0),
        connect_timeout: float = 2.0,
    ) -> None:
        self.target = target
        self.faults = faults if faults is not None else FaultConfig()
        self.connect_timeout = connect_timeout
        self._listen = listen
        self._listener: socket.socket | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()  # guards the lists below
        self._pairs: list[_Pair] = []
        self._injectors: list[tuple[FaultInjector, FaultInjector]] = []
        self._errors: list[BaseException] = []
        self._refused = 0
        self._cuts = 0
        self._acceptor: threading.Thread | None = None
        self._closed = False

    # -- life cycle ---------------------------------------------------------------------------

    def start(self) -> FaultyProxy:
        if self._listener is not None:
            return self
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(self._listen)
            listener.listen(8)
            listener.settimeout(ACCEPT_POLL)
        except OSError as exc:
            listener.close()
            raise ProxyError(f"cannot listen on {self._listen[0]}:{self._listen[1]}: {exc}") \
                from exc
        self._listener = listener
        self._acceptor = threading.Thread(target=self._guarded, args=(self._accept_loop,),
                                          name="proxy-accept", daemon=True)
        self._acceptor.start()
        return self

    @property
    def address(self) -> tuple[str, int]:
        if self._listener is None:
            return self._listen
        host, port = self._listener.getsockname()[:2]
        return str(host), int(port)

    def check(self) -> None:
        """Raise :class:`ProxyError` if a proxy thread failed (the first failure)."""
        with self._lock:
            error = self._errors[0] if self._errors else None
        if error is not None:
            raise ProxyError(f"faulty proxy failed: {error!r}") from error

    def close(self) -> None:
        """Stop accepting, close every connection, join the threads, then :meth:`check`."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        if self._acceptor is not None:
            self._acceptor.join(timeout=5)
        if self._listener is not None:
            self._listener.close()
        with self._lock:
            pairs = list(self._pairs)
        for pair in pairs:
            pair.close()
        stuck = []
        for pair in pairs:
            for thread in pair.threads:
                thread.join(timeout=5)
                if thread.is_alive():
                    stuck.append(thread.name)
        if self._acceptor is not None and self._acceptor.is_alive():
            stuck.append(self._acceptor.name)
        self.check()
        if stuck:
            raise ProxyError(f"proxy threads did not stop within 5 s: {', '.join(stuck)}")

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- statistics ---------------------------------------------------------------------------

    def stats(self) -> ProxyStats:
        with self._lock:
            injectors = list(self._injectors)
            refused, cuts = self._refused, self._cuts
        return ProxyStats(
            connections=len(injectors),
            refused=refused,
            cuts=cuts,
            upstream=_sum([up.counters for up, _ in injectors]),
            downstream=_sum([down.counters for _, down in injectors]),
        )

    def open_connections(self) -> int:
        with self._lock:
            return sum(not pair.closed for pair in self._pairs)

    # -- threads ------------------------------------------------------------------------------

    def _guarded(self, target: Callable[..., None], *args: object) -> None:
        """Run a thread's body; any failure is logged at once and kept for the owner."""
        try:
            target(*args)
        except BaseException as exc:
            log.error("proxy thread %s failed: %r", threading.current_thread().name, exc,
                      exc_info=exc)
            with self._lock:
                self._errors.append(exc)

    def _accept_loop(self) -> None:
        listener = self._listener
        assert listener is not None
        while not self._stop.is_set():
            try:
                client, peer = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                if self._stop.is_set():
                    return  # closed to stop us
                raise
            self._connect(client, peer)

    def _connect(self, client: socket.socket, peer: tuple[str, int]) -> None:
        try:
            upstream = socket.create_connection(self.target, timeout=self.connect_timeout)
        except OSError as exc:
            log.warning("client %s:%s: cannot reach the target %s:%s (%s); closed",
                        peer[0], peer[1], *self.target, exc)
            client.close()
            with self._lock:
                self._refused += 1
            return
        try:
            for sock in (client, upstream):
                sock.settimeout(None)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError as exc:  # the client gave up already: a network event, not a failure
            log.info("client %s:%s left before it was connected (%s)", peer[0], peer[1], exc)
            client.close()
            upstream.close()
            return
        with self._lock:
            index = len(self._injectors)
            up = FaultInjector(replace(self.faults, seed=self.faults.seed + 2 * index))
            down = FaultInjector(replace(self.faults, seed=self.faults.seed + 2 * index + 1))
            self._injectors.append((up, down))
            pair = _Pair(index, client, upstream)
            self._pairs = [p for p in self._pairs if not p.closed] + [pair]
        log.info("connection %d: client %s:%s <-> target %s:%s", index, peer[0], peer[1],
                 *self.target)
        for name, src, dst, injector in (("up", client, upstream, up),
                                         ("down", upstream, client, down)):
            thread = threading.Thread(target=self._guarded,
                                      args=(self._pump, pair, name, src, dst, injector),
                                      name=f"proxy-{index}-{name}", daemon=True)
            pair.threads.append(thread)
        for thread in pair.threads:
            thread.start()

    def _pump(self, pair: _Pair, name: str, src: socket.socket, dst: socket.socket,
              injector: FaultInjector) -> None:
        """Copy one direction through its injector until EOF, a cut or the proxy stops."""
        try:
            while not self._stop.is_set():
                try:
                    data = src.recv(RECV_SIZE)
                except OSError as exc:
                    if not pair.closed:
                        log.info("connection %d %s: %s", pair.index, name, exc)
                    return
                if not data:
                    if not pair.closed:
                        log.info("connection %d %s: closed by the peer", pair.index, name)
                    return
                chunks = injector(data)
                actions = injector.take_actions()
                if actions.delay_seconds:
                    time.sleep(actions.delay_seconds)
                for chunk in chunks:
                    try:
                        dst.sendall(chunk)
                    except OSError as exc:
                        if not pair.closed:
                            log.info("connection %d %s: %s", pair.index, name, exc)
                        return
                if actions.disconnect:
                    log.info("connection %d %s: cut (fault injection)", pair.index, name)
                    with self._lock:
                        self._cuts += 1
                    return
        finally:
            pair.close()  # either side ending ends the pair: the client reconnects


# -- command line --------------------------------------------------------------------------------

def _host_port(text: str) -> tuple[str, int]:
    from simulators.cli import _host_port as parse

    return parse(text)


def _faults(text: str) -> FaultConfig:
    try:
        return FaultConfig.parse(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m simulators.faulty_proxy",
        description="TCP proxy that corrupts, drops and cuts the traffic it carries",
    )
    parser.add_argument("--listen", type=_host_port, default=("127.0.0.1", 0),
                        metavar="HOST:PORT", help="where clients connect (port 0: a free one; "
                        "default 127.0.0.1:0)")
    parser.add_argument("--target", type=_host_port, required=True, metavar="HOST:PORT",
                        help="where each client is connected to")
    parser.add_argument("--faults", type=_faults, default=FaultConfig(), metavar="SPEC",
                        help="e.g. 'corrupt=0.01,disconnect=0.00033,seed=7' "
                        "(simulators/faults.py lists the keys)")
    parser.add_argument("--quiet", action="store_true", help="log warnings only")
    return parser


def _summary(stats: ProxyStats) -> str:
    up, down = stats.upstream, stats.downstream
    return (f"{stats.connections} connections ({stats.refused} refused), {stats.cuts} cuts; "
            f"client->target {up.bytes_in} bytes, {up.corrupted_bytes} corrupted; "
            f"target->client {down.bytes_in} bytes, {down.corrupted_bytes} corrupted")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING if args.quiet else logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    stop = threading.Event()
    error: ProxyError | None = None
    with stopped_by_signals(stop, log):
        proxy = FaultyProxy(args.target, args.faults, listen=args.listen)
        try:
            proxy.start()
            host, port = proxy.address
            print(f"TCP {host}:{port}", flush=True)  # the first line on stdout: where to connect
            log.info("faulty proxy %s:%s -> %s:%s, faults %s", host, port, *args.target,
                     args.faults.to_spec())
            while not stop.wait(0.2):
                proxy.check()
        except ProxyError as exc:
            error = exc
        finally:
            try:
                proxy.close()
            except ProxyError as exc:
                error = error or exc
    log.info("%s", _summary(proxy.stats()))
    if error is not None:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0

if __name__ == "__main__":
    sys.exit(main())
