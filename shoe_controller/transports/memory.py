"""An in-process wire between a host end and a device end (pymodbus ``NullModem`` style).

``memory_pair()`` gives two connected, open transports. Each direction has an optional
*manipulator* ``(bytes) -> list[bytes]`` through which every write passes before the peer can
read it: a tracer returns ``[data]`` after logging it, a fault injector returns corrupted,
dropped or duplicated chunks (``simulators.faults.FaultInjector`` is one).

The wire can be cut and restored (``MemoryWire.break_connection`` / ``restore``) to test
reconnection. The two ends behave like the real ones they stand in for:

* the **host end** behaves like a serial port whose device vanished: I/O raises
  :class:`TransportError`, ``open()`` fails while the wire is cut, and after ``restore()`` it
  works again once closed and re-opened (which is what a ``ReconnectingTransport`` does);
* the **device end** behaves like a device-side endpoint (the TCP server, the USB gadget):
  it survives host disconnects; while the wire is cut its reads time out and its writes are
  dropped, and it carries on when the wire comes back.

Bytes in flight when the wire is cut are lost, as on a real cable.

**Wire time** (``baud=115200``; default ``None``: instant, as before): each direction is a
:class:`~shoe_controller.transports.paced.PacedLine`, so byte ``k`` of a write becomes readable
at ``start + (k + 1) * byte_time`` (``start``: when the direction is free; writes queue behind
each other; the two directions are independent). ``write`` returns once the bytes are queued
(blocking only while ``tx_buffer`` bytes are in flight); ``read`` waits on the direction's
condition until the next byte's arrival time, no polling. The manipulator runs at ``write``,
*before* pacing: its output is what goes on the line, so a corrupted byte takes its byte time,
a dropped byte or frame takes none, a duplicated one takes twice. To model a loss at the
receiving UART instead (the byte took its time, then was discarded), wrap the reading end in
``simulators.faults.FaultyTransport(rx=...)``, which acts after pacing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from shoe_controller.errors import TransportError
from shoe_controller.transports.base import (
    DEFAULT_READ_SIZE,
    WAIT_SLICE,
    Deadline,
    Transport,
    check_read_args,
)
from shoe_controller.transports.paced import BITS_PER_BYTE_8N1, DEFAULT_TX_BUFFER, PacedLine

__all__ = ["Manipulator", "MemoryTransport", "MemoryWire", "memory_pair"]

Manipulator = Callable[[bytes], list[bytes]]

HOST = "host"
DEVICE = "device"


class _Direction:
    """One direction of the wire: a (maybe paced) line with a condition to wait on."""

    def __init__(self, manipulator: Manipulator | None, line: PacedLine) -> None:
        self.manipulator = manipulator
        self.line = line
        self.ready = threading.Condition(threading.Lock())


class MemoryWire:
    """The shared state of an in-process pair. Make ends with :meth:`end`."""

    def __init__(
        self,
        host_to_device: Manipulator | None = None,
        device_to_host: Manipulator | None = None,
        name: str = "memory",
        *,
        baud: int | None = None,
        bits_per_byte: int = BITS_PER_BYTE_8N1,
        tx_buffer: int | None = DEFAULT_TX_BUFFER,
    ) -> None:
        self.name = name
        self.baud = baud

        def line() -> PacedLine:
            return PacedLine(baud, bits_per_byte=bits_per_byte, tx_buffer=tx_buffer)

        self._to_device = _Direction(host_to_device, line())
        self._to_host = _Direction(device_to_host, line())
        self._lock = threading.Lock()
        self._broken_reason: str | None = None
        self._generation = 0  # bumped on each break: host ends opened before it stay failed
        self.dropped_bytes = 0  # written by the device end while the wire was cut

    @property
    def is_broken(self) -> bool:
        return self._broken_reason is not None

    @property
    def generation(self) -> int:
        return self._generation

    def line(self, towards: str) -> PacedLine:
        """The line carrying bytes towards ``side`` (``"host"`` or ``"device"``), to inspect
        its schedule (``free_at``, ``bytes_sent``) in tests and benchmarks (unsynchronised)."""
        if towards not in (HOST, DEVICE):
            raise ValueError(f"towards must be 'host' or 'device', not {towards!r}")
        return self._to_device.line if towards == DEVICE else self._to_host.line

    def end(self, side: str) -> MemoryTransport:
        """A new, not yet opened transport on ``side`` (``"host"`` or ``"device"``)."""
        if side not in (HOST, DEVICE):
            raise ValueError(f"side must be 'host' or 'device', not {side!r}")
        return MemoryTransport(self, side)

    def break_connection(self, reason: str = "cable pulled") -> None:
        """Cut the wire: bytes in flight are lost and host-end I/O fails until restored."""
        with self._lock:
            self._broken_reason = reason
            self._generation += 1
        for direction in (self._to_device, self._to_host):
            with direction.ready:
                direction.line.clear()
                direction.ready.notify_all()

    def restore(self) -> None:
        """Mend the wire; host ends must be re-opened (device ends carry on by themselves)."""
        with self._lock:
            self._broken_reason = None

    # -- used by MemoryTransport -----------------------------------------------------------------

    def _check(self, side: str, generation: int) -> None:
        reason = self._broken_reason
        if side == HOST and (reason is not None or generation != self._generation):
            raise TransportError(f"{self.name} ({side} end): connection lost: {reason or 'cut'}")

    def _outgoing(self, side: str) -> _Direction:
        return self._to_device if side == HOST else self._to_host

    def _incoming(self, side: str) -> _Direction:
        return self._to_host if side == HOST else self._to_device


class MemoryTransport(Transport):
    """One end of a :class:`MemoryWire`."""

    def __init__(self, wire: MemoryWire, side: str) -> None:
        self._wire = wire
        self._side = side
        self._open = False
        self._generation = -1

    @property
    def wire(self) -> MemoryWire:
        return self._wire

    @property
    def description(self) -> str:
        return f"{self._wire.name} ({self._side} end)"

    @property
    def is_open(self) -> bool:
        return self._open

    def open(self) -> None:
        if self._open:
            return
        self._generation = self._wire.generation
        self._wire._check(self._side, self._generation)
        self._open = True

    def close(self) -> None:
        if not self._open:
            return
        self._open = False
        incoming = self._wire._incoming(self._side)
        with incoming.ready:
            incoming.ready.notify_all()  # wake a reader blocked on this end

    def read(self, size: int = DEFAULT_READ_SIZE, timeout: float | None = None) -> bytes:
        check_read_args(size, timeout)
        deadline = Deadline(timeout)
        incoming = self._wire._incoming(self._side)
        line = incoming.line
        with incoming.ready:
            while True:
                self._check_usable()
                now = time.monotonic()
                data = line.take(now, size)
                if data:
                    return data
                if deadline.expired():
                    return b""
                wait = deadline.slice(WAIT_SLICE * 4)
                due = line.next_arrival()  # a byte on its way: wake when it is there
                if due is not None:
                    wait = min(wait, max(due - now, 0.0))
                incoming.ready.wait(wait)

    def write(self, data: bytes) -> None:
        self._check_usable()
        if not data:
            return
        outgoing = self._wire._outgoing(self._side)
        chunks = (
            [bytes(data)] if outgoing.manipulator is None else outgoing.manipulator(bytes(data))
        )
        view = memoryview(b"".join(chunks))
        line = outgoing.line
        queued_any = False
        with outgoing.ready:
            while True:
                self._check_usable()  # the manipulator may have cut the wire (fault injection)
                if self._wire.is_broken:  # device end while cut: nobody is listening
                    self._wire.dropped_bytes += len(view) if queued_any else len(data)
                    return
                now = time.monotonic()
                room = line.room(now)
                count = len(view) if room is None else min(room, len(view))
                if count:
                    line.send(view[:count], now)
                    view = view[count:]
                    queued_any = True
                    outgoing.ready.notify_all()
                if not view:
                    return
                # Transmit buffer full: wait for room for a quarter of it (not byte by byte).
                assert line.tx_buffer is not None
                wanted = min(len(view), max(1, line.tx_buffer // 4))
                wait = line.when_room(wanted) - time.monotonic()
                outgoing.ready.wait(min(max(wait, 0.0), WAIT_SLICE))

    def _check_usable(self) -> None:
        if not self._open:
            raise TransportError(f"{self.description}: transport is closed")
        self._wire._check(self._side, self._generation)


def memory_pair(
    manipulator: Manipulator | None = None,
    *,
    host_to_device: Manipulator | None = None,
    device_to_host: Manipulator | None = None,
    name: str = "memory",
    baud: int | None = None,
    bits_per_byte: int = BITS_PER_BYTE_8N1,
    tx_buffer: int | None = DEFAULT_TX_BUFFER,
) -> tuple[MemoryTransport, MemoryTransport]:
    """Open, connected ``(host_end, device_end)``; ``host_end.wire`` cuts and restores them.

    ``manipulator`` applies to both directions unless a per-direction one is given. Give a
    stateful manipulator (a ``FaultInjector`` that tracks frames) to one direction only.
    ``baud`` paces each direction (``None``: instant); see the module docstring.
    """
    wire = MemoryWire(
        host_to_device if host_to_device is not None else manipulator,
        device_to_host if device_to_host is not None else manipulator,
        name=name,
        baud=baud,
        bits_per_byte=bits_per_byte,
        tx_buffer=tx_buffer,
    )
    host, device = wire.end(HOST), wire.end(DEVICE)
    host.open()
    device.open()
    return host, device
