"""Serial transport: any pyserial URL through ``serial.serial_for_url``.

One code path for a device path (``/dev/ttyUSB0``, a pty slave), ``socket://HOST:PORT`` (the
software shoe over TCP), ``loop://``, ``spy://`` (hex trace to stderr) and ``hwgrep://VID:PID``
(the first port whose hardware id matches).

How reads work: the port is opened non-blocking (pyserial ``timeout=0``) and this class does the
waiting itself with ``select`` on the port's file descriptor, in slices of at most
:data:`~shoe_controller.transports.base.WAIT_SLICE`, so that

* ``read`` returns as soon as *any* byte is there (pyserial's own ``read(n)`` waits for ``n``);
* changing the timeout never re-programs the UART (pyserial re-applies termios on each change);
* a ``close()`` from another thread ends a blocked ``read`` promptly.

URL handlers without a file descriptor (``loop://``) are polled every 2 ms instead.

A vanished device shows up in pyserial as a ``SerialException``/``OSError`` (USB-serial
unplugged: EIO, or "ready to read but returned no data"; ``socket://`` peer closed: "socket
disconnected"; peer reset: ECONNRESET/EPIPE on write). Each becomes a :class:`TransportError`
and the port is closed, so a :class:`ReconnectingTransport` can bring it back.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import select
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import serial

from shoe_controller.errors import ConfigError, TransportError
from shoe_controller.transports.base import (
    DEFAULT_READ_SIZE,
    Deadline,
    Transport,
    check_read_args,
)

__all__ = ["SerialTransport", "is_pty_path"]

_POLL_INTERVAL = 0.002  # for URL handlers without a file descriptor


def _is_url_syntax_error(exc: BaseException) -> bool:
    """pyserial reports a malformed URL (``socket://host`` without port) as SerialException."""
    return str(exc).startswith("expected a string in the form")


def _check_socket_url(url: str) -> None:
    """pyserial fails on ``socket://host`` without a port with a TypeError; say it clearly."""
    if not url.startswith("socket://"):
        return
    try:
        port = urlsplit(url).port
    except ValueError as exc:
        raise ConfigError(f"serial port {url!r}: {exc}") from None
    if port is None:
        raise ConfigError(f"serial port {url!r}: expected socket://HOST:PORT")


def check_serial_url(url: str) -> None:
    """The checks of :meth:`SerialTransport.open` that need no device: an empty URL, a
    ``socket://`` URL without HOST:PORT, a protocol pyserial does not know (``foo://``)."""
    if not url:
        raise ConfigError("serial port URL is empty")
    _check_socket_url(url)
    if "://" not in url:
        return
    protocol = url.split("://", 1)[0].lower()
    for package in serial.protocol_handler_packages:
        try:
            importlib.import_module(f"{package}.protocol_{protocol}")
        except ImportError:
            continue
        return
    raise ConfigError(f"serial port {url!r}: invalid URL, protocol {protocol!r} not known")


def is_pty_path(path: str) -> bool:
    """True for a pseudo-terminal slave (``/dev/pts/N``): raw bytes, no modem lines."""
    if "://" in path:
        return False
    real = os.path.realpath(path)
    return real.startswith("/dev/pts/") or os.path.basename(real).startswith("ttys0")


class SerialTransport(Transport):
    """A pyserial port as a :class:`Transport`.

    ``write_timeout`` (seconds) bounds a write to a port that stopped draining (hardware flow
    control stuck, TCP peer not reading); when it expires the port counts as failed.
    """

    def __init__(
        self,
        url: str,
        baudrate: int = 115200,
        *,
        bytesize: int = serial.EIGHTBITS,
        parity: str = serial.PARITY_NONE,
        stopbits: float = serial.STOPBITS_ONE,
        write_timeout: float | None = 2.0,
    ) -> None:
        if not url:
            raise ConfigError("serial port URL is empty")
        self._url = url
        self._settings: dict[str, Any] = {
            "baudrate": baudrate,
            "bytesize": bytesize,
            "parity": parity,
            "stopbits": stopbits,
        }
        self._write_timeout = write_timeout
        self._port: serial.SerialBase | None = None
        self._read_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._closed = True

    @property
    def url(self) -> str:
        return self._url

    @property
    def description(self) -> str:
        return self._url

    @property
    def is_open(self) -> bool:
        return not self._closed

    def open(self) -> None:
        if not self._closed:
            return
        _check_socket_url(self._url)
        kwargs = dict(self._settings)
        plain_path = "://" not in self._url
        if plain_path:
            # Two controllers on one shoe would each see half the bytes: lock the port.
            kwargs["exclusive"] = True
        if is_pty_path(self._url):
            # A pty has no modem lines: don't assert DTR (dsrdtr=True makes pyserial skip it).
            kwargs["dsrdtr"] = True
        try:
            # hwgrep:// looks the port up here already, hence the SerialException.
            port = serial.serial_for_url(self._url, do_not_open=True, **kwargs)
            port.timeout = 0
            port.write_timeout = self._write_timeout
            port.open()
        except ValueError as exc:  # unknown protocol, bad baud rate, bad parity...
            raise ConfigError(f"serial port {self._url!r}: {exc}") from exc
        except (serial.SerialException, OSError) as exc:
            if _is_url_syntax_error(exc):
                raise ConfigError(f"serial port {self._url!r}: {exc}") from exc
            raise TransportError(f"{self._url}: cannot open: {exc}") from exc
        _disable_nagle(port)
        self._port = port
        self._closed = False

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True  # a reader waiting in select notices within one wait slice
        port = self._port
        if port is None:
            return
        cancel_write = getattr(port, "cancel_write", None)
        if callable(cancel_write):
            # Best effort: the port may already be dead.
            with contextlib.suppress(Exception):
                cancel_write()
        # Take both locks so no thread is inside pyserial when the fd goes away (a reused fd
        # number would otherwise receive another file's bytes).
        with self._read_lock, self._write_lock:
            self._port = None
            _close_socket_at_once(port)
            # Closing a vanished device may fail: it is gone either way.
            with contextlib.suppress(Exception):
                port.close()

    def read(self, size: int = DEFAULT_READ_SIZE, timeout: float | None = None) -> bytes:
        check_read_args(size, timeout)
        deadline = Deadline(timeout)
        while True:
            with self._read_lock:
                port = self._live_port()
                try:
                    data = port.read(size)
                except (serial.SerialException, OSError) as exc:
                    self._fail_locked_read(exc)
            if data or deadline.expired():
                return bytes(data)
            self._wait_readable(port, deadline)

    def write(self, data: bytes) -> None:
        if not data:
            return
        with self._write_lock:
            port = self._live_port()
            try:
                written = port.write(data)
            except (serial.SerialException, OSError) as exc:
                failure = exc
            else:
                if written is None or written == len(data):
                    return
                failure = OSError(f"short write: {written} of {len(data)} bytes")
        self.close()
        raise TransportError(f"{self._url}: write failed: {failure}") from failure

    # -- helpers ----------------------------------------------------------------------------------

    def _live_port(self) -> serial.SerialBase:
        port = self._port
        if self._closed or port is None:
            raise TransportError(f"{self._url}: transport is closed")
        return port

    def _fail_locked_read(self, exc: BaseException) -> None:
        # Called with the read lock held: release it before close() takes it again.
        self._read_lock.release()
        try:
            self.close()
        finally:
            self._read_lock.acquire()
        raise TransportError(f"{self._url}: read failed: {exc}") from exc

    def _wait_readable(self, port: serial.SerialBase, deadline: Deadline) -> None:
        wait = deadline.slice()
        try:
            fd = port.fileno()
        except Exception:  # noqa: BLE001 - loop:// and friends have no descriptor
            fd = None
        if fd is None:
            time.sleep(min(wait, _POLL_INTERVAL))
            return
        try:
            select.select([fd], [], [], wait)
        except (OSError, ValueError):
            # The fd was closed under us by close(): the next read reports it.
            pass


def _close_socket_at_once(port: object) -> None:
    """Close a ``socket://`` port's socket ourselves: pyserial's ``close()`` then sleeps 0.3 s
    after it ("give the server some time"), which stalled the shoe's line for 0.3 s at every
    reconnection of a flaky TCP line. Marking the port closed skips that sleep; nothing else
    of pyserial's close is needed for a socket."""
    if not type(port).__module__.endswith("protocol_socket"):
        return  # rfc2217:// has a socket too, and a reader thread its close() must join
    sock = getattr(port, "_socket", None)
    if sock is None:
        return
    import socket

    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # already disconnected by the peer
        pass
    sock.close()
    port._socket = None  # type: ignore[attr-defined]
    port.is_open = False  # type: ignore[attr-defined]


def _disable_nagle(port: object) -> None:
    """Send small frames at once on ``socket://``: pyserial leaves Nagle's algorithm on, which
    holds a lone frame back until the previous one is acknowledged (tens of ms per card)."""
    sock = getattr(port, "_socket", None)
    if sock is None:
        return
    import socket

    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:  # not TCP (or already closed): nothing to tune
        pass
