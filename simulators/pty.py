"""A pseudo-terminal pair for the software shoe: the shoe holds the master, the host opens the
slave path (``/dev/pts/N``) with ``SerialTransport`` exactly as it would open ``/dev/ttyUSB0``.

Both ends are put in raw mode (no echo, no line editing, no CR/LF translation, no XON/XOFF):
a tty in its default "cooked" mode would echo our frames back and eat 0x11/0x13/0x0D bytes.

The pair keeps one descriptor of the slave open itself. Without it, Linux reports EIO on the
master whenever no host has the slave open, and the tty forgets nothing useful anyway; with it,
the device end behaves like a shoe's UART: it outlives hosts that come and go (reads time out,
writes drain into the tty buffer and are discarded when the next host opens the port, since
pyserial flushes the input on open). Writes that cannot drain for ``write_timeout`` seconds
(nobody reading) are dropped and counted, as a UART's bytes would be.

**Wire time** (``baud=115200``; default ``None``: instant). The kernel pty moves bytes at
memory speed, so pacing is done by the writers: :attr:`PtyPair.device_side` and every host end
from :meth:`PtyPair.host_transport` are wrapped in a
:class:`~shoe_controller.transports.paced.PacedTransport`, whose feeder thread hands each byte
to the pty when it would have crossed the line. Each side paces its own direction, so the two
directions are independent (full duplex), and a host opened on the slave path by other code
(``shoe demo``) is simply not paced in its host-to-shoe direction.
"""

from __future__ import annotations

import errno
import os
import select
import threading
import time
import tty
from types import TracebackType
from typing import Self

from shoe_controller.errors import TransportError
from shoe_controller.transports.base import (
    DEFAULT_READ_SIZE,
    Deadline,
    Transport,
    check_read_args,
)
from shoe_controller.transports.paced import DEFAULT_BAUD, PacedTransport
from shoe_controller.transports.serial_port import SerialTransport

__all__ = ["PtyMasterTransport", "PtyPair", "open_pty_pair"]


class PtyMasterTransport(Transport):
    """The device end (master side) of a :class:`PtyPair`."""

    def __init__(self, pair: PtyPair) -> None:
        self._pair = pair
        self._read_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self.dropped_bytes = 0

    @property
    def description(self) -> str:
        return f"pty master for {self._pair.slave_path}"

    @property
    def is_open(self) -> bool:
        return self._pair.is_open

    def open(self) -> None:
        if not self._pair.is_open:
            raise TransportError(f"{self.description}: the pty pair is closed")

    def close(self) -> None:
        self._pair.close()

    def read(self, size: int = DEFAULT_READ_SIZE, timeout: float | None = None) -> bytes:
        check_read_args(size, timeout)
        deadline = Deadline(timeout)
        while True:
            fd = self._fd()
            try:
                ready, _, _ = select.select([fd], [], [], deadline.slice())
            except (OSError, ValueError):
                ready = []  # closed under us; _fd() reports it on the next turn
            if ready:
                with self._read_lock:
                    fd = self._fd()
                    try:
                        data = os.read(fd, size)
                    except BlockingIOError:
                        data = b""
                    except OSError as exc:
                        if exc.errno != errno.EIO:  # EIO: no slave open right now
                            raise TransportError(f"{self.description}: read failed: {exc}") from exc
                        data = b""
                        time.sleep(deadline.slice(0.01))
                if data:
                    return data
            if deadline.expired():
                return b""

    def write(self, data: bytes) -> None:
        view = memoryview(bytes(data))
        give_up = time.monotonic() + self._pair.write_timeout
        with self._write_lock:
            while view:
                fd = self._fd()
                try:
                    view = view[os.write(fd, view) :]
                    continue
                except BlockingIOError:
                    pass
                except OSError as exc:
                    if exc.errno != errno.EIO:
                        raise TransportError(f"{self.description}: write failed: {exc}") from exc
                left = give_up - time.monotonic()
                if left <= 0:
                    self.dropped_bytes += len(view)  # nobody is draining the port
                    return
                try:
                    select.select([], [fd], [], min(left, 0.05))
                except (OSError, ValueError):
                    pass

    def _fd(self) -> int:
        fd = self._pair.master_fd
        if fd is None:
            raise TransportError(f"{self.description}: transport is closed")
        return fd


class PtyPair:
    """``os.openpty()`` in raw mode: :attr:`device_side` (master) and :attr:`slave_path`.

    With ``baud``, :attr:`device_side` is the master paced at that rate (:attr:`master` stays
    the raw one) and :meth:`host_transport` gives paced host ends.
    """

    def __init__(self, *, write_timeout: float = 1.0, baud: int | None = None) -> None:
        master, slave = os.openpty()
        try:
            tty.setraw(master)
            tty.setraw(slave)
            os.set_blocking(master, False)
            self.slave_path = os.ttyname(slave)
        except BaseException:
            os.close(master)
            os.close(slave)
            raise
        self._master: int | None = master
        self._slave_keeper: int | None = slave
        self._closed = False
        self.write_timeout = write_timeout
        self.baud = baud
        self.master = PtyMasterTransport(self)
        self.device_side: Transport = self.master
        if baud is not None:
            try:
                self.device_side = PacedTransport(self.master, baud)
                self.device_side.open()
            except BaseException:
                self.close()
                raise

    def host_transport(self) -> Transport:
        """A new, unopened host end on :attr:`slave_path`, paced like the device side."""
        host: Transport = SerialTransport(self.slave_path, self.baud or DEFAULT_BAUD)
        return host if self.baud is None else PacedTransport(host, self.baud)

    @property
    def master_fd(self) -> int | None:
        return self._master

    @property
    def is_open(self) -> bool:
        return self._master is not None

    def close(self) -> None:
        """Close both ends; a host still holding the slave then gets EIO (device gone)."""
        if self._closed:
            return  # also ends the recursion: closing the paced side closes the master
        self._closed = True
        master, self._master = self._master, None
        keeper, self._slave_keeper = self._slave_keeper, None
        if self.device_side is not self.master:
            self.device_side.close()  # stop its feeder before the descriptors go
        # Wait until no thread is inside os.read/os.write on the master: a descriptor number
        # closed under them could be reused by another file at once.
        with self.master._read_lock, self.master._write_lock:
            for fd in (keeper, master):
                if fd is not None:
                    os.close(fd)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<PtyPair {self.slave_path} {'open' if self.is_open else 'closed'}>"


def open_pty_pair(*, write_timeout: float = 1.0, baud: int | None = None) -> PtyPair:
    """A new raw pty pair: the host opens ``pair.slave_path`` (or :meth:`PtyPair.host_transport`
    for a paced host end), the shoe uses ``device_side``; ``baud`` paces both ends' writes."""
    return PtyPair(write_timeout=write_timeout, baud=baud)
