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
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from shoe_controller.errors import TransportError
from shoe_controller.transports.base import (
    DEFAULT_READ_SIZE,
    WAIT_SLICE,
    Deadline,
    Transport,
    check_read_args,
)

__all__ = ["Manipulator", "MemoryTransport", "MemoryWire", "memory_pair"]

Manipulator = Callable[[bytes], list[bytes]]

HOST = "host"
DEVICE = "device"


class _Direction:
    """One direction of the wire: a byte buffer with a condition to wait on."""

    def __init__(self, manipulator: Manipulator | None) -> None:
        self.manipulator = manipulator
        self.buffer = bytearray()
        self.ready = threading.Condition(threading.Lock())


class MemoryWire:
    """The shared state of an in-process pair. Make ends with :meth:`end`."""

    def __init__(
        self,
        host_to_device: Manipulator | None = None,
        device_to_host: Manipulator | None = None,
        name: str = "memory",
    ) -> None:
        self.name = name
        self._to_device = _Direction(host_to_device)
        self._to_host = _Direction(device_to_host)
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
                direction.buffer.clear()
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
        with incoming.ready:
            while True:
                self._check_usable()
                if incoming.buffer:
                    data = bytes(incoming.buffer[:size])
                    del incoming.buffer[:size]
                    return data
                if deadline.expired():
                    return b""
                incoming.ready.wait(deadline.slice(WAIT_SLICE * 4))

    def write(self, data: bytes) -> None:
        self._check_usable()
        if not data:
            return
        outgoing = self._wire._outgoing(self._side)
        chunks = (
            [bytes(data)] if outgoing.manipulator is None else outgoing.manipulator(bytes(data))
        )
        with outgoing.ready:
            self._check_usable()  # the manipulator may have cut the wire (fault injection)
            if self._wire.is_broken:  # device end while cut: nobody is listening
                self._wire.dropped_bytes += len(data)
                return
            for chunk in chunks:
                outgoing.buffer += chunk
            outgoing.ready.notify_all()

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
) -> tuple[MemoryTransport, MemoryTransport]:
    """Open, connected ``(host_end, device_end)``; ``host_end.wire`` cuts and restores them.

    ``manipulator`` applies to both directions unless a per-direction one is given. Give a
    stateful manipulator (a ``FaultInjector`` that tracks frames) to one direction only.
    """
    wire = MemoryWire(
        host_to_device if host_to_device is not None else manipulator,
        device_to_host if device_to_host is not None else manipulator,
        name=name,
    )
    host, device = wire.end(HOST), wire.end(DEVICE)
    host.open()
    device.open()
    return host, device
