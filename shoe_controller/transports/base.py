"""Byte pipes between the controller and a shoe, and the reconnecting wrapper around them.

A :class:`Transport` moves bytes and nothing else: it knows no frames and no messages (the link
layer in ``firmware_protocol.link`` does). Every transport keeps the same conventions so that the
link layer, the simulators and the tests can swap one for another:

* **One timeout convention** (seconds): ``None`` waits forever, ``0`` polls, ``t`` waits at most
  ``t`` seconds. ``read`` returns ``b""`` when the time runs out; it never raises for a timeout.
* ``read(size)`` returns *as soon as* any bytes are there (1..size of them); it does not wait to
  fill ``size`` (a serial stream has no message boundaries, and waiting would add latency).
* ``write(data)`` sends all of ``data`` or raises :class:`TransportError`; no short writes.
* Any failure of the underlying device (port vanished, peer closed, USB error) is a
  :class:`TransportError`; using a closed transport is a ``TransportError`` too.
* ``open()`` and ``close()`` are idempotent; a transport is a context manager that opens on
  entry (if not already open) and closes on exit.
* Thread-safety: one reader thread and one writer thread may use a transport at the same time,
  and any thread may ``close()`` it (a blocked ``read`` then ends with ``TransportError``).
"""

from __future__ import annotations

import enum
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Self

from shoe_controller.errors import TransportError

__all__ = [
    "DEFAULT_READ_SIZE",
    "WAIT_SLICE",
    "Deadline",
    "ReconnectingTransport",
    "Transport",
    "TransportError",
    "TransportEvent",
    "TransportEventKind",
    "check_read_args",
]

DEFAULT_READ_SIZE = 4096
#: Longest a blocking wait sleeps before re-checking whether the transport was closed meanwhile.
WAIT_SLICE = 0.05


def check_read_args(size: int, timeout: float | None) -> None:
    """Reject nonsense early: a negative timeout or a non-positive size is a caller's bug."""
    if size < 1:
        raise ValueError(f"read size must be at least 1, got {size}")
    if timeout is not None and not timeout >= 0:  # also rejects NaN
        raise ValueError(f"timeout must be None or >= 0 seconds, got {timeout!r}")


class Deadline:
    """The one timeout convention turned into a deadline: ``None`` never expires, ``0`` polls."""

    __slots__ = ("_end",)

    def __init__(self, timeout: float | None) -> None:
        self._end = None if timeout is None else time.monotonic() + timeout

    @property
    def forever(self) -> bool:
        return self._end is None

    def remaining(self) -> float | None:
        """Seconds left (never negative), or ``None`` for no deadline."""
        if self._end is None:
            return None
        return max(0.0, self._end - time.monotonic())

    def slice(self, longest: float = WAIT_SLICE) -> float:
        """How long the next wait may last: the time left, but no more than ``longest``."""
        left = self.remaining()
        return longest if left is None else min(left, longest)

    def expired(self) -> bool:
        left = self.remaining()
        return left is not None and left <= 0.0


class Transport(ABC):
    """A bidirectional byte pipe to (or, for simulators, from) a shoe. See the module docstring."""

    @property
    @abstractmethod
    def description(self) -> str:
        """Where this pipe leads, for logs and operator messages (e.g. ``/dev/ttyUSB0``)."""

    @property
    @abstractmethod
    def is_open(self) -> bool:
        """True between a successful ``open()`` and ``close()`` (or a failure that closed it)."""

    @abstractmethod
    def open(self) -> None:
        """Connect. Idempotent. Raises :class:`TransportError` if the device is not there."""

    @abstractmethod
    def close(self) -> None:
        """Disconnect and release the device. Idempotent; never raises."""

    @abstractmethod
    def read(self, size: int = DEFAULT_READ_SIZE, timeout: float | None = None) -> bytes:
        """Up to ``size`` bytes as soon as any are there; ``b""`` when ``timeout`` runs out."""

    @abstractmethod
    def write(self, data: bytes) -> None:
        """Send all of ``data`` or raise :class:`TransportError`."""

    def __enter__(self) -> Self:
        self.open()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "open" if self.is_open else "closed"
        return f"<{type(self).__name__} {self.description} {state}>"


class TransportEventKind(enum.Enum):
    LOST = "lost"  # the connection failed; the wrapper is now trying to get it back
    RECONNECTED = "reconnected"  # a new connection is up
    RETRY_FAILED = "retry_failed"  # one reconnection attempt failed; another one will follow


@dataclass(frozen=True, slots=True)
class TransportEvent:
    """What a :class:`ReconnectingTransport` tells its owner about the connection."""

    kind: TransportEventKind
    reason: str  # the error that caused it (LOST, RETRY_FAILED) or the new connection (RECONNECTED)
    description: str  # which transport
    attempt: int = 0  # reconnection attempts since the connection was lost
    down_for: float = 0.0  # seconds since the connection was lost (RECONNECTED, RETRY_FAILED)


EventCallback = Callable[[TransportEvent], None]


class ReconnectingTransport(Transport):
    """Keeps a transport alive across unplugs and peer restarts by re-creating it with backoff.

    ``factory()`` returns a fresh (not yet open) transport each time; the wrapper opens it. When
    a ``read``/``write`` of the current one raises :class:`TransportError`, the wrapper closes
    it, reports ``LOST`` to ``on_event`` and reconnects lazily, from inside later ``read`` and
    ``write`` calls, waiting ``backoff_initial`` seconds after the first failed attempt and
    doubling up to ``backoff_max``. Errors other than ``TransportError`` (a bad URL is a
    ``ConfigError``; a bug is a bug) are not swallowed: they propagate to the caller.

    While the connection is down:

    * ``read`` returns ``b""`` when its timeout runs out, never raises for the outage;
    * ``write`` **drops** the bytes (counted in :attr:`dropped_bytes`) and returns; a write
      that fails midway counts whole, though some of it may have gone out before the failure.

    Dropping is the safe choice for the reliable link layer on top: it retransmits every
    unacknowledged frame after the reconnection, and the host de-duplicates cards by the
    shoe's counter, so nothing is lost and nothing is counted twice. Raising instead would make
    every writer handle a condition the link layer already recovers from. ``open()`` does not
    raise if the device is absent either: it reports ``LOST`` and keeps trying, so a controller
    started before the shoe is plugged in connects as soon as it appears.

    ``on_event`` runs in whichever thread noticed the change (normally the reader thread),
    never while this transport holds a lock of its own (the owner's callback may take the
    owner's locks); an exception it raises propagates out of that ``read``/``write`` call to
    the owner.
    """

    def __init__(
        self,
        factory: Callable[[], Transport],
        on_event: EventCallback | None = None,
        *,
        backoff_initial: float = 0.05,
        backoff_max: float = 2.0,
        description: str | None = None,
    ) -> None:
        if not 0 < backoff_initial <= backoff_max:
            raise ValueError("need 0 < backoff_initial <= backoff_max")
        self._factory = factory
        self._on_event = on_event
        self._backoff_initial = backoff_initial
        self._backoff_max = backoff_max
        self._description = description
        self._lock = threading.RLock()  # guards the fields below, never held during I/O
        self._connect_lock = threading.Lock()  # one reconnection attempt at a time
        self._inner: Transport | None = None
        self._last_description: str | None = None
        self._generation = 0  # bumped on each new connection, so a stale failure is ignored
        self._open = False
        self._down_since: float | None = None
        self._next_attempt = 0.0
        self._backoff = backoff_initial
        self._attempts = 0
        self.dropped_bytes = 0
        self.reconnections = 0
        self.last_error: str | None = None

    # -- state ------------------------------------------------------------------------------

    @property
    def description(self) -> str:
        if self._description is not None:
            return self._description
        inner = self._inner
        if inner is not None:
            return inner.description
        return self._last_description or "reconnecting transport (not connected yet)"

    @property
    def is_open(self) -> bool:
        return self._open

    @property
    def is_connected(self) -> bool:
        """True when a connection is up right now (``is_open`` stays true while it is down)."""
        return self._open and self._inner is not None

    def open(self) -> None:
        with self._lock:
            if self._open:
                return
            self._open = True
            self._down_since = time.monotonic()
            self._next_attempt = 0.0
            self._backoff = self._backoff_initial
            self._attempts = 0
        if not self._try_connect(first=True):
            self._emit(TransportEventKind.LOST, self.last_error or "not connected", 0, 0.0)

    def close(self) -> None:
        with self._lock:
            self._open = False
            inner, self._inner = self._inner, None
        if inner is not None:
            inner.close()

    # -- I/O ----------------------------------------------------------------------------------

    def read(self, size: int = DEFAULT_READ_SIZE, timeout: float | None = None) -> bytes:
        check_read_args(size, timeout)
        deadline = Deadline(timeout)
        while True:
            inner, generation = self._current()
            if inner is None:
                if not self._open:
                    raise TransportError(f"{self.description}: transport is closed")
                if self._due_for_attempt():
                    self._try_connect()
                    continue
                wait = self._next_attempt - time.monotonic()
                left = deadline.remaining()
                if left is not None and left <= 0:
                    return b""
                time.sleep(max(0.0, min(wait, WAIT_SLICE if left is None else left, WAIT_SLICE)))
                continue
            try:
                data = inner.read(size, deadline.slice(WAIT_SLICE * 4))
            except TransportError as exc:
                self._connection_failed(generation, exc)
                continue
            if data or deadline.expired():
                return data

    def write(self, data: bytes, *, reconnect: bool = True) -> None:
        """Write ``data``, or drop it while the connection is down (see the class's doc).
        ``reconnect=False``: never attempt a reconnection here (one can take seconds: a
        writer under its own lock, whose reader reconnects, must not wait for it)."""
        if not self._open:
            raise TransportError(f"{self.description}: transport is closed")
        inner, generation = self._current()
        if inner is None and reconnect and self._due_for_attempt():
            self._try_connect()
            inner, generation = self._current()
        if inner is None:
            with self._lock:
                self.dropped_bytes += len(data)
            return
        try:
            inner.write(data)
        except TransportError as exc:
            with self._lock:
                self.dropped_bytes += len(data)
            self._connection_failed(generation, exc)

    # -- reconnection ---------------------------------------------------------------------------

    def _current(self) -> tuple[Transport | None, int]:
        with self._lock:
            return self._inner, self._generation

    def _due_for_attempt(self) -> bool:
        return time.monotonic() >= self._next_attempt

    def _try_connect(self, first: bool = False) -> bool:
        """One attempt to bring a fresh transport up; True on success.

        ``on_event`` is called only after the attempt has let go of the connect lock: the
        owner's callback takes the owner's own lock, and another of the owner's threads may
        hold that lock while it waits here to write (``ShoeConnection.send``). A failed
        attempt reported under the connect lock deadlocked the two (once in CI, under load:
        the controller and the shoe both silent after a refused reconnection)."""
        event: tuple[TransportEventKind, str, int, float] | None = None
        with self._connect_lock:
            with self._lock:
                if not self._open:
                    return False
                if self._inner is not None:
                    return True  # another thread got there first
                if not first and time.monotonic() < self._next_attempt:
                    return False  # another thread's attempt failed while this one waited
            candidate = self._factory()
            try:
                candidate.open()
            except TransportError as exc:
                candidate.close()
                with self._lock:
                    # Name the device in events and messages even before it ever opened
                    # (else an absent port is reported as "not connected yet", not by name).
                    self._last_description = candidate.description
                    self._attempts += 1
                    self.last_error = str(exc)
                    self._next_attempt = time.monotonic() + self._backoff
                    self._backoff = min(self._backoff * 2, self._backoff_max)
                    event = (TransportEventKind.RETRY_FAILED, str(exc), self._attempts,
                             time.monotonic() - (self._down_since or time.monotonic()))
            else:
                with self._lock:
                    if not self._open:  # closed while we were connecting
                        candidate.close()
                        return False
                    self._inner = candidate
                    self._last_description = candidate.description
                    self._generation += 1
                    event = (TransportEventKind.RECONNECTED, candidate.description,
                             self._attempts,
                             time.monotonic() - (self._down_since or time.monotonic()))
                    self._down_since = None
                    self._backoff = self._backoff_initial
                    self._attempts = 0
                    if not first:
                        self.reconnections += 1
        if not first:
            self._emit(*event)
        return event[0] is TransportEventKind.RECONNECTED

    def _connection_failed(self, generation: int, exc: TransportError) -> None:
        with self._lock:
            if generation != self._generation or self._inner is None:
                return  # already handled (the other thread saw the same failure first)
            inner, self._inner = self._inner, None
            self._down_since = time.monotonic()
            self._next_attempt = 0.0  # first retry at once: a TCP peer may already be back
            self._backoff = self._backoff_initial
            self._attempts = 0
            self.last_error = str(exc)
            still_open = self._open
        inner.close()
        if still_open:
            self._emit(TransportEventKind.LOST, str(exc), 0, 0.0)

    def _emit(self, kind: TransportEventKind, reason: str, attempt: int, down_for: float) -> None:
        if self._on_event is not None:
            self._on_event(TransportEvent(kind, reason, self.description, attempt, down_for))
