"""The device end of a TCP connection: what the software shoe listens on (``shoe sim --tcp``).

The host connects with ``SerialTransport("socket://HOST:PORT")``. The device end behaves like
a shoe's serial port, not like a client socket: it **outlives its peers**. When the host
disconnects (or restarts, or is dropped on purpose with :meth:`TcpServerTransport.drop_client`)
the shoe carries on where it was and the next host to connect gets the stream from there; the
link layer on top recovers what was in flight. While no host is connected, reads time out and
writes are dropped (a UART with nobody listening), counted in :attr:`dropped_bytes`.

One host at a time; the newest connection wins (a host that restarted after a crash may have
left a half-open connection behind, and the shoe must not wait for it to time out).
"""

from __future__ import annotations

import select
import socket
import threading
import time

from shoe_controller.errors import TransportError
from shoe_controller.transports.base import (
    DEFAULT_READ_SIZE,
    Deadline,
    Transport,
    check_read_args,
)

__all__ = ["TcpServerTransport"]


class TcpServerTransport(Transport):
    """Listen on ``host:port`` (``port=0`` picks a free one; see :attr:`address`)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, write_timeout: float = 2.0):
        self._bind = (host, port)
        self._write_timeout = write_timeout
        self._listener: socket.socket | None = None
        # Read once at open: asking a listener that another thread is closing raises EBADF, and
        # the address is what a "transport is closed" error must name.
        self._bound: tuple[str, int] | None = None
        self._client: socket.socket | None = None
        self._lock = threading.Lock()  # guards _client swaps, accept and recv
        self._write_lock = threading.Lock()  # one write at a time, in order
        self._closed = True
        self.dropped_bytes = 0
        self.connections = 0  # hosts accepted so far

    # -- state ----------------------------------------------------------------------------------

    @property
    def address(self) -> tuple[str, int]:
        """The bound address (the real port once open, when constructed with port 0)."""
        return self._bind if self._bound is None else self._bound

    @property
    def url(self) -> str:
        """The pyserial URL a host uses to connect here."""
        host, port = self.address
        return f"socket://{host}:{port}"

    @property
    def description(self) -> str:
        host, port = self.address
        return f"tcp server {host}:{port}"

    @property
    def is_open(self) -> bool:
        return not self._closed

    @property
    def has_client(self) -> bool:
        return self._client is not None

    def open(self) -> None:
        if not self._closed:
            return
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            # A restarted simulator must be able to listen on the same port at once.
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(self._bind)
            listener.listen(1)
            listener.setblocking(False)
        except OSError as exc:
            listener.close()
            raise TransportError(
                f"cannot listen on {self._bind[0]}:{self._bind[1]}: {exc}"
            ) from exc
        host, port = listener.getsockname()[:2]
        self._bound = (str(host), int(port))
        self._listener = listener
        self._closed = False

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with self._lock:
            self._drop_client_locked()
            listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()

    def drop_client(self) -> None:
        """Disconnect the current host (fault injection, tests); keep listening."""
        with self._lock:
            self._drop_client_locked()

    def wait_for_client(self, timeout: float | None = None) -> bool:
        """Block until a host is connected (accepting it); False if ``timeout`` ran out."""
        deadline = Deadline(timeout)
        while True:
            self._check_open()
            if self._client is not None:
                return True
            listener = self._listener
            if listener is not None:
                try:
                    select.select([listener], [], [], deadline.slice())
                except (OSError, ValueError):
                    pass
                self._accept_pending()
            if self._client is None and deadline.expired():
                return False

    # -- I/O ----------------------------------------------------------------------------------

    def read(self, size: int = DEFAULT_READ_SIZE, timeout: float | None = None) -> bytes:
        check_read_args(size, timeout)
        deadline = Deadline(timeout)
        while True:
            self._check_open()
            listener, client = self._listener, self._client
            watch = [s for s in (listener, client) if s is not None]
            try:
                ready, _, _ = select.select(watch, [], [], deadline.slice())
            except (OSError, ValueError):
                ready = []  # a socket was closed under us; re-check below
            if listener is not None and listener in ready:
                self._accept_pending()
            if client is not None and client in ready:
                data = self._recv(client, size)
                if data:
                    return data
            if deadline.expired():
                return b""

    def write(self, data: bytes) -> None:
        self._check_open()
        if not data:
            return
        self._accept_pending()  # a host may have connected while nobody was reading
        with self._write_lock:
            client = self._client
            if client is None:
                self.dropped_bytes += len(data)
                return
            try:
                # Not under _lock: a slow host must not stop the reader. A socket closed by
                # another thread meanwhile fails cleanly (Python sets its fd to -1).
                self._send_all(client, data)
            except (OSError, ValueError):
                # The host went away mid-write: like a UART, the rest goes nowhere.
                self.dropped_bytes += len(data)
                with self._lock:
                    if self._client is client:
                        self._drop_client_locked()

    # -- helpers ------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise TransportError(f"{self.description}: transport is closed")

    def _accept_pending(self) -> None:
        with self._lock:
            listener = self._listener
            if listener is None:
                return
            try:
                conn, _ = listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return  # listener closed concurrently; _check_open reports it
            conn.setblocking(False)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._drop_client_locked()  # the newest host wins
            self._client = conn
            self.connections += 1

    def _recv(self, client: socket.socket, size: int) -> bytes:
        with self._lock:
            if client is not self._client:
                return b""  # replaced or dropped meanwhile
            try:
                data = client.recv(size)
            except (BlockingIOError, InterruptedError):
                return b""
            except OSError:
                data = b""
            if not data:  # the host closed the connection (or reset it)
                self._drop_client_locked()
            return data

    def _send_all(self, client: socket.socket, data: bytes) -> None:
        view = memoryview(data)
        give_up = time.monotonic() + self._write_timeout
        while view:
            try:
                sent = client.send(view)
            except (BlockingIOError, InterruptedError):
                sent = 0
            view = view[sent:]
            if view:
                left = give_up - time.monotonic()
                if left <= 0:
                    raise TimeoutError("host is not reading")
                select.select([], [client], [], min(left, 0.05))

    def _drop_client_locked(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                client.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            client.close()
