"""A serial line that takes wire time: bytes reach the far end no faster than the baud rate.

At 115200 baud, 8N1 (10 bit times per byte: start bit, 8 data bits, stop bit) a byte takes
86.8 us and a 23-byte ``CardDrawn`` frame 2.0 ms. The in-process wire and the pty pair deliver
instantly; pacing them makes latency and throughput figures measured on them mean something
for a real RS-232 line.

Two parts, one model:

* :class:`PacedLine` is the pure model of **one direction** (sans-I/O: no thread, no clock,
  time is passed in as ``now``). ``send(data, now)`` puts bytes on the line behind whatever is
  still queued: the send starts when the line is free, ``start = max(now, end of the previous
  send)``, and its byte ``k`` arrives at ``start + (k + 1) * byte_time``. ``take(now, size)``
  hands over the bytes that have arrived. The two directions of a line are two independent
  ``PacedLine`` objects (full duplex).
* :class:`PacedTransport` wraps any transport and paces what it **writes**: ``write`` queues
  the bytes on a ``PacedLine`` and returns, and a feeder thread hands each byte to the inner
  transport when it is due (it waits on a condition until the next arrival time: no busy
  loop). It serves the pty pair, whose kernel side is instant. The in-process wire
  (:mod:`shoe_controller.transports.memory`) keeps a ``PacedLine`` per direction itself and needs
  no thread: its reader waits until the next byte's arrival time.

Writing is buffered like a UART driver's transmit buffer: ``write`` returns as soon as the bytes
are queued, so a single-threaded I/O loop (write, then read) keeps reading while its frame is on
the wire, as it would on a real port. With ``tx_buffer`` bytes (default 4096, Linux's serial
transmit buffer) still in flight, ``write`` blocks until the line has room, so a writer cannot
run ahead of the line without bound; ``tx_buffer=None`` never blocks.

Pacing never adds or removes bytes and never marks anything by a gap: a reader gets a frame in
as many pieces as its reads happen to catch (down to one byte per read), and receivers frame by
content alone (delimiter, length, CRC), as SPEC section 2 requires.

Faults and pacing (see also ``simulators.faults``): what a fault injector outputs *before*
the pacer is what goes on the line, so there a corrupted byte takes its byte time, a dropped
byte or frame takes none (it was never sent), a duplicated one takes two. An injector *after*
the pacer (on the receiving side, e.g. ``FaultyTransport(rx=...)`` on the reading end) acts on
bytes that already took their wire time: a byte lost there is noise the receiving UART
discarded, and the bytes behind it arrive exactly when they would have anyway.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from dataclasses import dataclass

from shoe_controller.errors import TransportError
from shoe_controller.transports.base import (
    DEFAULT_READ_SIZE,
    WAIT_SLICE,
    Transport,
    check_read_args,
)

__all__ = [
    "DEFAULT_BAUD",
    "DEFAULT_TX_BUFFER",
    "STANDARD_BAUDS",
    "PacedLine",
    "PacedTransport",
    "byte_time",
]

DEFAULT_BAUD = 115200
#: The rates SPEC section 2 allows the host to be configured for (any positive rate works).
STANDARD_BAUDS: tuple[int, ...] = (57600, 115200, 230400, 460800, 921600)
#: 8N1: start bit, 8 data bits, stop bit.
BITS_PER_BYTE_8N1 = 10
#: Bytes a writer may have in flight before ``write`` blocks (Linux's serial xmit buffer).
DEFAULT_TX_BUFFER = 4096
_FEED_SIZE = 65536  # most bytes the feeder hands over in one inner write


def byte_time(baud: int, bits_per_byte: int = BITS_PER_BYTE_8N1) -> float:
    """Seconds one byte takes on the wire (86.8 us at 115200 baud, 8N1)."""
    return bits_per_byte / baud


def _check_options(baud: int | None, bits_per_byte: int, tx_buffer: int | None) -> None:
    if baud is not None and (isinstance(baud, bool) or not isinstance(baud, int) or baud < 1):
        raise ValueError(f"baud must be a positive whole number or None, got {baud!r}")
    if isinstance(bits_per_byte, bool) or not isinstance(bits_per_byte, int) or bits_per_byte < 1:
        raise ValueError(f"bits_per_byte must be a positive whole number, got {bits_per_byte!r}")
    if tx_buffer is not None and (
        isinstance(tx_buffer, bool) or not isinstance(tx_buffer, int) or tx_buffer < 1
    ):
        raise ValueError(f"tx_buffer must be a positive whole number or None, got {tx_buffer!r}")


@dataclass(slots=True)
class _Send:
    """The untaken part of one ``send``: its bytes ``first .. first + count - 1``."""

    start: float  # when the line began sending it
    first: int
    count: int


class PacedLine:
    """One direction of a paced serial line (pure: ``now`` is always passed in).

    ``baud=None`` is an instant line (every byte arrives when sent), so unpaced and paced
    carriers share this one code path.
    """

    def __init__(
        self,
        baud: int | None = DEFAULT_BAUD,
        *,
        bits_per_byte: int = BITS_PER_BYTE_8N1,
        tx_buffer: int | None = DEFAULT_TX_BUFFER,
    ) -> None:
        _check_options(baud, bits_per_byte, tx_buffer)
        self.baud = baud
        self.bits_per_byte = bits_per_byte
        self.byte_time = 0.0 if baud is None else byte_time(baud, bits_per_byte)
        self.tx_buffer = None if baud is None else tx_buffer
        self._data = bytearray()  # sent and not yet taken (arrived or still on the line)
        self._sends: deque[_Send] = deque()  # the same bytes, per send, in order
        self._free_at = -math.inf  # when the last queued byte arrives
        self.bytes_sent = 0

    @property
    def paced(self) -> bool:
        return self.baud is not None

    @property
    def free_at(self) -> float:
        """When the last byte queued so far arrives (``-inf`` if nothing was ever sent)."""
        return self._free_at

    def __len__(self) -> int:
        """Bytes sent and not yet taken, whether they have arrived or not."""
        return len(self._data)

    # -- the model --------------------------------------------------------------------------------

    def send(self, data: bytes | bytearray | memoryview, now: float) -> float:
        """Queue ``data`` behind what is on the line; returns when its last byte arrives."""
        count = len(data)
        if not count:
            return max(now, self._free_at)
        start = max(now, self._free_at)
        self._data += data
        self._sends.append(_Send(start, 0, count))
        self._free_at = self._arrival(start, count - 1)
        self.bytes_sent += count
        return self._free_at

    def arrived(self, now: float) -> int:
        """How many untaken bytes have arrived by ``now``."""
        total = 0
        for send in self._sends:
            got = self._arrived_in(send, now)
            total += got
            if got < send.count:
                break  # later sends start after this one ends
        return total

    def in_flight(self, now: float) -> int:
        """Bytes queued or on the wire at ``now``: sent, not yet arrived."""
        return len(self._data) - self.arrived(now)

    def take(self, now: float, size: int = DEFAULT_READ_SIZE) -> bytes:
        """Up to ``size`` of the bytes that have arrived by ``now``, in order (``b""`` if none)."""
        wanted = size
        taken = 0
        while self._sends and wanted:
            send = self._sends[0]
            got = min(self._arrived_in(send, now), wanted)
            if not got:
                break
            taken += got
            wanted -= got
            if got == send.count:
                self._sends.popleft()
            else:
                send.first += got
                send.count -= got
                break
        if not taken:
            return b""
        data = bytes(self._data[:taken])
        del self._data[:taken]
        return data

    def next_arrival(self) -> float | None:
        """When the first untaken byte arrives (maybe already past); ``None`` if the line is
        empty. A carrier waits until then instead of polling."""
        if not self._sends:
            return None
        send = self._sends[0]
        return self._arrival(send.start, send.first)

    def room(self, now: float) -> int | None:
        """Bytes a writer may queue at ``now`` without exceeding ``tx_buffer`` (``None``: any)."""
        if self.tx_buffer is None:
            return None
        return max(0, self.tx_buffer - self.in_flight(now))

    def when_room(self, count: int) -> float:
        """Earliest time at which :meth:`room` is at least ``count`` (``-inf``: already)."""
        if self.tx_buffer is None:
            return -math.inf
        keep = self.tx_buffer - min(count, self.tx_buffer)  # bytes that may stay in flight
        if keep >= len(self._data):
            return -math.inf
        # In flight <= keep once every byte but the last ``keep`` untaken ones has arrived.
        behind = keep
        for send in reversed(self._sends):
            if behind < send.count:
                return self._arrival(send.start, send.first + send.count - 1 - behind)
            behind -= send.count
        return -math.inf  # unreachable: keep < len(self._data)

    def clear(self) -> int:
        """Lose everything on the line (wire cut, port closed); returns how many bytes."""
        lost = len(self._data)
        self._data.clear()
        self._sends.clear()
        self._free_at = -math.inf
        return lost

    # -- internals --------------------------------------------------------------------------------

    def _arrival(self, start: float, index: int) -> float:
        """When byte ``index`` of a send that started at ``start`` has arrived."""
        return start + (index + 1) * self.byte_time

    def _arrived_in(self, send: _Send, now: float) -> int:
        """How many of ``send``'s untaken bytes have arrived by ``now``.

        Exactly consistent with :meth:`_arrival` (byte k is there iff ``_arrival(k) <= now``),
        so a carrier that waits until :meth:`next_arrival` always finds that byte.
        """
        end = send.first + send.count
        if self.byte_time == 0.0:
            return send.count if now >= send.start else 0
        done = min(max(int((now - send.start) / self.byte_time), 0), end)  # estimate
        while done < end and self._arrival(send.start, done) <= now:
            done += 1
        while done > 0 and self._arrival(send.start, done - 1) > now:
            done -= 1
        return max(0, done - send.first)


class PacedTransport(Transport):
    """Paces what ``inner`` writes at ``baud``; reads pass straight through.

    ``write`` queues (blocking only while ``tx_buffer`` bytes are in flight); a feeder thread
    writes each byte to ``inner`` at its arrival time. An error in the feeder (the inner
    transport failed) reaches the owner: the next ``write`` or ``read`` raises it (as a
    :class:`TransportError`; anything else, a bug, as itself). Closing loses the bytes still
    queued, as closing a real port does. Re-opening after ``close()`` starts afresh.
    """

    def __init__(
        self,
        inner: Transport,
        baud: int = DEFAULT_BAUD,
        *,
        bits_per_byte: int = BITS_PER_BYTE_8N1,
        tx_buffer: int | None = DEFAULT_TX_BUFFER,
    ) -> None:
        if baud is None:
            raise ValueError("PacedTransport needs a baud rate (use the inner transport unpaced)")
        self.inner = inner
        self.line = PacedLine(baud, bits_per_byte=bits_per_byte, tx_buffer=tx_buffer)
        self._cond = threading.Condition(threading.Lock())
        self._open = False
        self._feeder: threading.Thread | None = None
        self._error: BaseException | None = None

    @property
    def baud(self) -> int:
        assert self.line.baud is not None
        return self.line.baud

    @property
    def description(self) -> str:
        return f"{self.inner.description} (paced at {self.baud} baud)"

    @property
    def is_open(self) -> bool:
        return self._open and self._error is None and self.inner.is_open

    def open(self) -> None:
        self.inner.open()
        with self._cond:
            if self._open:
                return
            self._open = True
            self._error = None
            self.line.clear()
            feeder = threading.Thread(target=self._feed, name="paced-line", daemon=True)
            self._feeder = feeder
        feeder.start()

    def close(self) -> None:
        with self._cond:
            self._open = False
            self.line.clear()
            feeder, self._feeder = self._feeder, None
            self._cond.notify_all()
        self.inner.close()  # also ends an inner write the feeder may be blocked in
        if feeder is not None and feeder is not threading.current_thread():
            feeder.join(timeout=5)

    def read(self, size: int = DEFAULT_READ_SIZE, timeout: float | None = None) -> bytes:
        check_read_args(size, timeout)
        self._check_usable()
        return self.inner.read(size, timeout)

    def write(self, data: bytes) -> None:
        view = memoryview(bytes(data))
        with self._cond:
            while True:
                self._check_usable()
                now = time.monotonic()
                room = self.line.room(now)
                count = len(view) if room is None else min(room, len(view))
                if count:
                    self.line.send(view[:count], now)
                    view = view[count:]
                    self._cond.notify_all()
                if not view:
                    return
                # Wait for room for a quarter buffer (not byte by byte): the line stays busy.
                assert self.line.tx_buffer is not None
                wanted = min(len(view), max(1, self.line.tx_buffer // 4))
                wait = self.line.when_room(wanted) - time.monotonic()
                self._cond.wait(min(max(wait, 0.0), WAIT_SLICE))

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until every queued byte has been handed to the inner transport (tcdrain);
        True if it was, False if ``timeout`` ran out first."""
        end = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while len(self.line):
                self._check_usable()
                left = WAIT_SLICE if end is None else min(WAIT_SLICE, end - time.monotonic())
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    # -- internals --------------------------------------------------------------------------------

    def _check_usable(self) -> None:
        error = self._error
        if error is not None:
            if isinstance(error, TransportError):
                raise TransportError(f"{self.description}: {error}") from error
            raise error
        if not self._open:
            raise TransportError(f"{self.description}: transport is closed")

    def _feed(self) -> None:
        """The feeder thread: hand each byte to the inner transport when it has arrived."""
        me = threading.current_thread()
        try:
            while True:
                with self._cond:
                    while True:
                        if not self._open or self._feeder is not me:
                            return
                        now = time.monotonic()
                        data = self.line.take(now, _FEED_SIZE)
                        if data:
                            self._cond.notify_all()  # a drain() may be waiting
                            break
                        due = self.line.next_arrival()
                        wait = WAIT_SLICE if due is None else min(max(due - now, 0.0), WAIT_SLICE)
                        self._cond.wait(wait)
                self.inner.write(data)
        except BaseException as exc:  # noqa: BLE001 - handed to the owner by write()/read()
            with self._cond:
                if self._open and self._feeder is me:
                    self._error = exc
                self._cond.notify_all()
