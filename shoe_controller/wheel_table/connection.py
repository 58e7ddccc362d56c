"""The serial line to the wheel: any pyserial URL, read by a thread, opened again when lost.

The wheel protocol has no handshake and no checksum: the line is up when the port is open,
and what arrives is cut into lines (:class:`wheel_protocol.LineSplitter`) in this thread and
handed to the controller's thread in order, with the line's going up and down between them.
Writes (commands) come from the controller's thread. An error that is not the line's (a bug)
is kept and re-raised to the owner by :meth:`WheelConnection.check`.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Self

import serial

from wheel_protocol import Command, LineSplitter, Unparsed, encode_line

log = logging.getLogger("shoe_controller.wheel")

#: The wheel's line settings (the vendor's guide: 9600 baud, 8N1, no flow control).
BAUDRATE = 9600


@dataclass(frozen=True, slots=True)
class LineUp:
    pass


@dataclass(frozen=True, slots=True)
class LineDown:
    reason: str


Received = bytes | Unparsed | LineUp | LineDown


WRITE_TIMEOUT = 1.0  # seconds a command line may take to go out


class WheelConnection:
    def __init__(self, url: str, *, baudrate: int = BAUDRATE, retry_seconds: float = 1.0,
                 opener: Callable[..., Any] = serial.serial_for_url) -> None:
        self.url = url
        self.baudrate = baudrate
        self.retry_seconds = retry_seconds
        self._opener = opener
        self._received: queue.Queue[Received] = queue.Queue()
        self._port: Any = None
        self._write_lock = threading.Lock()
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self.reconnects = 0

    # ------------------------------------------------------------------ owner's side
    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._main, name="wheel-line", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._closed.set()
        port = self._port
        if port is not None:
            with contextlib.suppress(Exception):  # a broken port: nothing more to do
                port.close()  # wakes a read in progress
        if self._thread is not None:
            self._thread.join(timeout=5)

    def get(self, timeout: float) -> Received | None:
        """The next thing received, or None after ``timeout`` seconds."""
        try:
            return self._received.get(timeout=timeout) if timeout > 0 \
                else self._received.get_nowait()
        except queue.Empty:
            return None

    def send(self, command: Command) -> bool:
        """Write one command line; False when the line is down (the tracker's timers notice
        a command that had no effect)."""
        data = encode_line(command)
        with self._write_lock:
            port = self._port
            if port is None:
                log.warning("wheel line down: %s not sent", data.strip().decode("ascii"))
                return False
            try:
                port.write(data)
                port.flush()
            except (serial.SerialException, OSError) as exc:
                log.warning("cannot write to the wheel: %s", exc)
                return False
        log.debug("to wheel: %s", data.strip().decode("ascii"))
        return True

    def check(self) -> None:
        """Re-raise, in the owner's thread, an error that stopped the reading thread."""
        if self._error is not None:
            raise self._error

    # ------------------------------------------------------------------ reading thread
    def _main(self) -> None:
        try:
            while not self._closed.is_set():
                port = self._open()
                if port is None:
                    self._closed.wait(self.retry_seconds)
                    continue
                reason = self._read(port)
                with self._write_lock:
                    self._port = None
                with contextlib.suppress(Exception):  # the line is gone either way
                    port.close()
                if not self._closed.is_set():
                    self._received.put(LineDown(reason))
                    self.reconnects += 1
                    self._closed.wait(self.retry_seconds)
        except BaseException as exc:  # noqa: BLE001 - handed to the owner by check()
            self._error = exc

    def _open(self) -> Any:
        try:
            # A write that cannot go out within a second fails (and is logged) rather than
            # holding the write lock, and the table's thread, until TCP gives up on a peer
            # that vanished (socket:// wheels).
            port = self._opener(self.url, baudrate=self.baudrate, timeout=0.1,
                                write_timeout=WRITE_TIMEOUT)
        except (serial.SerialException, OSError, ValueError) as exc:
            if self.reconnects == 0:
                log.warning("cannot open the wheel line %s: %s (retrying)", self.url, exc)
            return None
        with self._write_lock:
            self._port = port
        self._received.put(LineUp())
        log.info("wheel line open: %s", self.url)
        return port

    def _read(self, port: Any) -> str:
        splitter = LineSplitter()
        while not self._closed.is_set():
            try:
                data = port.read(max(1, port.in_waiting))
            except (serial.SerialException, OSError, TypeError, AttributeError) as exc:
                # TypeError/AttributeError: pyserial's socket port closed under its read
                return str(exc) or type(exc).__name__
            for item in splitter.feed(data):
                self._received.put(item)
        return "closed"
