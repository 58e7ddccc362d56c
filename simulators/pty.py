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
"""

from __future__ import annotations

import errno
import os
import select
import threading
import time
import tty
from types import TracebackType

from shoe_controller.errors import TransportError
from shoe_controller.transports.base import (
    DEFAULT_READ_SIZE,
    Deadline,
    Transport,
    check_read_args,
)

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
    """``os.openpty()`` in raw mode: :attr:`device_side` (master) and :attr:`slave_path`."""

    def __init__(self, *, write_timeout: float = 1.0) -> None:
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
        self.write_timeout = write_timeout
        self.device_side = PtyMasterTransport(self)

    @property
    def master_fd(self) -> int | None:
        return self._master

    @property
    def is_open(self) -> bool:
        return self._master is not None

    def close(self) -> None:
        """Close both ends; a host still holding the slave then gets EIO (device gone)."""
        master, self._master = self._master, None
        keeper, self._slave_keeper = self._slave_keeper, None
        # Wait until no thread is inside os.read/os.write on the master: a descriptor number
        # closed under them could be reused by another file at once.
        with self.device_side._read_lock, self.device_side._write_lock:
            for fd in (keeper, master):
                if fd is not None:
                    os.close(fd)

    def __enter__(self) -> PtyPair:
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


def open_pty_pair(*, write_timeout: float = 1.0) -> PtyPair:
    """A new raw pty pair: the host opens ``pair.slave_path``, the shoe uses ``device_side``."""
    return PtyPair(write_timeout=write_timeout)
