"""Connected (host side, device side) transport pairs over every kind of wire, for tests.

The same host/shoe test can run over each kind (python-can's back-to-back suite idea)::

    with transport_pair("tcp") as pair:
        host, device = pair            # both open and connected
        ...
        pair.break_link()              # the host's connection fails (unplug, peer drop)
        pair.restore_link()            # the device can be reached again
        ReconnectingTransport(pair.new_host)   # fresh host transports to the same device

Kinds (:data:`PAIR_KINDS`):

* ``memory`` - in-process wire (:func:`memory_pair`); break = cut the wire;
* ``pty`` - a real pseudo-terminal pair; host = ``SerialTransport(slave path)``; no break;
* ``tcp`` - ``TcpServerTransport`` on 127.0.0.1 (random port), host = ``socket://``;
  break = the server drops the host's connection;
* ``usb`` - the virtual pyusb backend; host = ``UsbTransport``; break = unplug, restore = replug.

Serial lines that take wire time (:data:`PACED_KINDS`): ``transport_pair("memory", baud=115200)``
or, equivalently, the kind ``"memory@115200"`` (likewise ``pty``). Each direction then delivers
no faster than the baud rate, 8N1 (see ``shoe_controller.transports.paced``): the memory wire
paces itself; on the pty both ends' writes are paced (the kernel pty is instant). Only these two
kinds stand for a serial line; ``tcp`` and ``usb`` refuse a baud rate.

Device sides outlive host disconnects (see each transport's docstring). Each pair is fresh and
everything is closed on exit, so no state leaks between tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass

from shoe_controller.errors import TransportError
from shoe_controller.transports.base import Transport
from shoe_controller.transports.memory import Manipulator, memory_pair
from shoe_controller.transports.paced import DEFAULT_BAUD
from shoe_controller.transports.serial_port import SerialTransport
from shoe_controller.transports.tcp import TcpServerTransport
from shoe_controller.transports.usb import UsbTransport
from simulators.pty import open_pty_pair
from simulators.usb_backend import VirtualUsbBackend, VirtualUsbDevice

__all__ = [
    "PACED_KINDS",
    "PAIR_KINDS",
    "TransportPair",
    "memory_transport_pair",
    "parse_kind",
    "pty_transport_pair",
    "tcp_transport_pair",
    "transport_pair",
    "usb_transport_pair",
]

PAIR_KINDS: tuple[str, ...] = ("memory", "pty", "tcp", "usb")
#: The pairs that can take wire time, at the default 115200 baud (``"KIND@BAUD"`` for others).
PACED_KINDS: tuple[str, ...] = (f"memory@{DEFAULT_BAUD}", f"pty@{DEFAULT_BAUD}")
_PACEABLE = ("memory", "pty")
_CONNECT_TIMEOUT = 5.0


def _unsupported() -> None:
    raise NotImplementedError("this kind of pair cannot break its link")


@dataclass
class TransportPair:
    """A connected pair plus the means to break it and to reconnect the host side."""

    kind: str
    host: Transport
    device: Transport
    new_host: Callable[[], Transport]  # a fresh, unopened host transport to the same device
    break_link: Callable[[], None] = _unsupported
    restore_link: Callable[[], None] = lambda: None
    can_break: bool = False
    baud: int | None = None  # the line's pace; None: bytes arrive at once

    def __iter__(self) -> Iterator[Transport]:
        return iter((self.host, self.device))


@contextmanager
def memory_transport_pair(
    *,
    host_to_device: Manipulator | None = None,
    device_to_host: Manipulator | None = None,
    baud: int | None = None,
) -> Iterator[TransportPair]:
    host, device = memory_pair(
        host_to_device=host_to_device, device_to_host=device_to_host, baud=baud
    )
    wire = host.wire
    try:
        yield TransportPair(
            _kind_name("memory", baud),
            host,
            device,
            new_host=lambda: wire.end("host"),
            break_link=wire.break_connection,
            restore_link=wire.restore,
            can_break=True,
            baud=baud,
        )
    finally:
        host.close()
        device.close()


@contextmanager
def pty_transport_pair(baud: int | None = None) -> Iterator[TransportPair]:
    with open_pty_pair(baud=baud) as pty:
        host = pty.host_transport()
        host.open()
        try:
            yield TransportPair(
                _kind_name("pty", baud),
                host,
                pty.device_side,
                new_host=pty.host_transport,
                baud=baud,
            )
        finally:
            host.close()


@contextmanager
def tcp_transport_pair(host_address: str = "127.0.0.1") -> Iterator[TransportPair]:
    server = TcpServerTransport(host_address, 0)
    server.open()
    try:
        url = server.url
        host = SerialTransport(url)
        host.open()
        if not server.wait_for_client(_CONNECT_TIMEOUT):
            raise TransportError(f"{server.description}: the host did not connect")
        try:
            yield TransportPair(
                "tcp",
                host,
                server,
                new_host=lambda: SerialTransport(url),
                break_link=server.drop_client,
                can_break=True,
            )
        finally:
            host.close()
    finally:
        server.close()


@contextmanager
def usb_transport_pair(device: VirtualUsbDevice | None = None) -> Iterator[TransportPair]:
    gadget = device if device is not None else VirtualUsbDevice()
    bus = VirtualUsbBackend(gadget)

    def new_host() -> Transport:
        return UsbTransport(gadget.vid, gadget.pid, gadget.serial_number, backend=bus)

    host = new_host()
    host.open()
    try:
        yield TransportPair(
            "usb",
            host,
            gadget.device_side,
            new_host=new_host,
            break_link=gadget.unplug,
            restore_link=gadget.replug,
            can_break=True,
        )
    finally:
        host.close()
        gadget.device_side.close()


_FACTORIES: dict[str, Callable[[], AbstractContextManager[TransportPair]]] = {
    "memory": memory_transport_pair,
    "pty": pty_transport_pair,
    "tcp": tcp_transport_pair,
    "usb": usb_transport_pair,
}


def _kind_name(base: str, baud: int | None) -> str:
    return base if baud is None else f"{base}@{baud}"


def parse_kind(kind: str, baud: int | None = None) -> tuple[str, int | None]:
    """``"memory@115200"`` -> ``("memory", 115200)``; ``baud`` given beside it must agree."""
    base, sep, rate = kind.partition("@")
    if base not in _FACTORIES:
        known = ", ".join(PAIR_KINDS + PACED_KINDS)
        raise ValueError(f"unknown transport pair kind {kind!r}; known: {known}")
    if sep:
        if not rate.isdigit() or int(rate) < 1:
            raise ValueError(
                f"transport pair kind {kind!r}: expected KIND@BAUD, e.g. memory@115200"
            )
        if baud is not None and baud != int(rate):
            raise ValueError(f"transport pair kind {kind!r} but baud={baud}")
        baud = int(rate)
    if baud is not None and base not in _PACEABLE:
        raise ValueError(
            f"a {base} pair is not a serial line: only {', '.join(_PACEABLE)} "
            "can be paced at a baud rate"
        )
    return base, baud


def transport_pair(kind: str, *, baud: int | None = None) -> AbstractContextManager[TransportPair]:
    """A fresh connected pair of ``kind`` (one of :data:`PAIR_KINDS`, or ``KIND@BAUD`` such as
    :data:`PACED_KINDS`), as a context manager. ``baud`` paces a memory or pty pair (``None``:
    instant, unless the kind names a rate)."""
    base, baud = parse_kind(kind, baud)
    if baud is None:
        return _FACTORIES[base]()
    if base == "memory":
        return memory_transport_pair(baud=baud)
    return pty_transport_pair(baud=baud)
