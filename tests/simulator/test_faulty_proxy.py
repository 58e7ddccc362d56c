"""The faulty TCP proxy: clean bytes pass unchanged, corruption at the configured rate, a cut
closes both sides (and the client can connect again), a thread's failure reaches the owner."""

from __future__ import annotations

import random
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from simulators import faulty_proxy
from simulators.faults import FaultConfig
from simulators.faulty_proxy import FaultyProxy, ProxyError

pytestmark = pytest.mark.timeout(60)

WAIT = 10.0


def wait_for(condition: Callable[[], bool], what: str, timeout: float = WAIT) -> None:
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, f"timed out after {timeout} s waiting for {what}"
        time.sleep(0.01)


class Target:
    """A TCP server that records what each connection sent it and can send to the latest."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)
        self.address = self.listener.getsockname()[:2]
        self.received: list[bytearray] = []
        self.ended: list[bool] = []  # per connection: EOF or reset seen
        self.conns: list[socket.socket] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._accept, daemon=True)]
        self._threads[0].start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)
            index = len(self.conns)
            self.received.append(bytearray())
            self.ended.append(False)
            self.conns.append(conn)
            thread = threading.Thread(target=self._read, args=(index, conn), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _read(self, index: int, conn: socket.socket) -> None:
        try:
            while data := conn.recv(65536):
                self.received[index] += data
        except OSError:
            pass  # a reset is an end too
        self.ended[index] = True

    def close(self) -> None:
        self._stop.set()
        self.listener.close()
        for conn in self.conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()
        for thread in self._threads:
            thread.join(timeout=5)


@pytest.fixture
def target() -> Iterator[Target]:
    server = Target()
    try:
        yield server
    finally:
        server.close()


def connect(proxy: FaultyProxy) -> socket.socket:
    return socket.create_connection(proxy.address, timeout=WAIT)


def read_exactly(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        assert chunk, f"connection closed after {len(data)} of {n} bytes"
        data += chunk
    return bytes(data)


def payload(n: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(n)


def test_without_faults_bytes_pass_unchanged_both_ways(target: Target) -> None:
    up, down = payload(100_000, 1), payload(100_000, 2)
    with FaultyProxy(target.address) as proxy, connect(proxy) as client:
        client.sendall(up)
        wait_for(lambda: target.received and len(target.received[0]) == len(up),
                 "the bytes to reach the target")
        assert bytes(target.received[0]) == up
        target.conns[0].sendall(down)
        assert read_exactly(client, len(down)) == down
        stats = proxy.stats()
    assert stats.connections == 1 and stats.cuts == 0
    assert stats.upstream.bytes_in == len(up) and stats.downstream.bytes_in == len(down)


def test_bytes_are_corrupted_at_the_configured_rate_in_each_direction(target: Target) -> None:
    n, rate = 200_000, 0.01
    up, down = payload(n, 3), payload(n, 4)
    with (FaultyProxy(target.address, FaultConfig(corrupt_rate=rate, seed=5)) as proxy,
          connect(proxy) as client):
        client.sendall(up)
        wait_for(lambda: target.received and len(target.received[0]) == n, "the bytes")
        target.conns[0].sendall(down)
        got_down = read_exactly(client, n)
        stats = proxy.stats()
    changed_up = sum(a != b for a, b in zip(up, target.received[0], strict=True))
    changed_down = sum(a != b for a, b in zip(down, got_down, strict=True))
    # Binomial(200 000, 1 %): 2000 +- 45; a corrupted byte always changes.
    for changed, counters in ((changed_up, stats.upstream), (changed_down, stats.downstream)):
        assert 0.008 * n < changed < 0.012 * n, changed
        assert counters.corrupted_bytes == changed
    assert changed_up != changed_down  # each direction has its own seed


def test_a_cut_closes_both_sides_and_the_client_can_reconnect(target: Target) -> None:
    faults = FaultConfig(disconnect_rate=0.001, seed=9)  # a cut within a few kB
    data = payload(50_000, 6)
    with FaultyProxy(target.address, faults) as proxy:
        client = connect(proxy)
        try:
            for start in range(0, len(data), 1000):
                try:
                    client.sendall(data[start:start + 1000])
                except OSError:
                    break  # the proxy already closed it
                time.sleep(0.001)
            client.settimeout(WAIT)
            try:
                assert client.recv(1) == b"", "the client's side stayed open after the cut"
            except ConnectionResetError:
                pass  # closed with data unread: a reset, just as good
        finally:
            client.close()
        wait_for(lambda: target.ended and target.ended[0], "the target's side to close")
        stats = proxy.stats()
        assert stats.cuts == 1 and stats.upstream.disconnects == 1
        sent_through = bytes(target.received[0])
        assert 0 < len(sent_through) < len(data)
        assert data.startswith(sent_through)  # the bytes before the cut, unchanged
        wait_for(lambda: proxy.open_connections() == 0, "the pair to be closed")
        # The proxy keeps listening: the client reconnects and the new pair works.
        with connect(proxy) as again:
            again.sendall(b"hello")
            wait_for(lambda: len(target.received) == 2 and target.received[1] == b"hello",
                     "the new connection")
        assert proxy.stats().connections == 2


def test_a_target_that_refuses_closes_the_client_and_is_counted() -> None:
    unused = socket.create_server(("127.0.0.1", 0))
    address = unused.getsockname()[:2]
    unused.close()  # nothing listens there now
    with FaultyProxy(address) as proxy, connect(proxy) as client:
        client.settimeout(WAIT)
        try:
            assert client.recv(1) == b""
        except ConnectionResetError:
            pass
        wait_for(lambda: proxy.stats().refused == 1, "the refusal to be counted")


def test_a_failure_in_a_proxy_thread_reaches_the_owner(
    target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Broken:
        def __init__(self, config: FaultConfig) -> None:
            self.counters = faulty_proxy.FaultCounters()

        def __call__(self, data: bytes) -> list[bytes]:
            raise RuntimeError("injector bug")

    monkeypatch.setattr(faulty_proxy, "FaultInjector", Broken)
    proxy = FaultyProxy(target.address).start()
    try:
        with connect(proxy) as client:
            client.sendall(b"x")

            def failed() -> bool:
                try:
                    proxy.check()
                except ProxyError:
                    return True
                return False

            wait_for(failed, "the failure to be reported")
    finally:
        with pytest.raises(ProxyError, match="injector bug"):
            proxy.close()
    proxy.close()  # idempotent


def test_command_prints_its_port_carries_bytes_and_stops_on_sigterm(
    target: Target, tmp_path: Path
) -> None:
    host, port = target.address
    err_path = tmp_path / "proxy.err"
    err = open(err_path, "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, "-m", "simulators.faulty_proxy", "--listen", "127.0.0.1:0",
         "--target", f"{host}:{port}", "--faults", "corrupt=0,seed=7"],
        stdout=subprocess.PIPE, stderr=err, text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        kind, _, where = line.partition(" ")
        assert kind == "TCP" and where.startswith("127.0.0.1:"), line
        with socket.create_connection(("127.0.0.1", int(where.rpartition(":")[2])),
                                      timeout=WAIT) as client:
            client.sendall(b"through the proxy")
            wait_for(lambda: target.received and target.received[0] == b"through the proxy",
                     "the bytes")
        proc.terminate()
        assert proc.wait(WAIT) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
        err.close()
    log = err_path.read_text(encoding="utf-8")
    assert "1 connections (0 refused), 0 cuts" in log, log


@pytest.mark.parametrize(
    "argv", [["--target", "nohost"], ["--target", "127.0.0.1:1", "--faults", "corrupt=2"], []]
)
def test_bad_usage_exits_2(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as excinfo:
        faulty_proxy.build_parser().parse_args(argv)
    assert excinfo.value.code == 2
