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
from shoe_controller.transports.serial_port import SerialTransport
from shoe_controller.transports.tcp import TcpServerTransport
from shoe_controller.transports.usb import UsbTransport
from simulators.pty import open_pty_pair
from simulators.usb_backend import VirtualUsbBackend, VirtualUsbDevice

__all__ = [
    "PAIR_KINDS",
    "TransportPair",
    "memory_transport_pair",
    "pty_transport_pair",
    "tcp_transport_pair",
    "transport_pair",
    "usb_transport_pair",
]

PAIR_KINDS: tuple[str, ...] = ("memory", "pty", "tcp", "usb")
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

    def __iter__(self) -> Iterator[Transport]:
        return iter((self.host, self.device))


@contextmanager
def memory_transport_pair(
    *,
    host_to_device: Manipulator | None = None,
    device_to_host: Manipulator | None = None,
) -> Iterator[TransportPair]:
    host, device = memory_pair(host_to_device=host_to_device, device_to_host=device_to_host)
    wire = host.wire
    try:
        yield TransportPair(
            "memory",
            host,
            device,
            new_host=lambda: wire.end("host"),
            break_link=wire.break_connection,
            restore_link=wire.restore,
            can_break=True,
        )
    finally:
        host.close()
        device.close()


@contextmanager
def pty_transport_pair() -> Iterator[TransportPair]:
    with open_pty_pair() as pty:
        host = SerialTransport(pty.slave_path)
        host.open()
        try:
            yield TransportPair(
                "pty", host, pty.device_side, new_host=lambda: SerialTransport(pty.slave_path)
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


_FACTORIES = {
    "memory": memory_transport_pair,
    "pty": pty_transport_pair,
    "tcp": tcp_transport_pair,
    "usb": usb_transport_pair,
}


def transport_pair(kind: str) -> AbstractContextManager[TransportPair]:
    """A fresh connected pair of ``kind`` (one of :data:`PAIR_KINDS`), as a context manager."""
    try:
        factory = _FACTORIES[kind]
    except KeyError:
        raise ValueError(
            f"unknown transport pair kind {kind!r}; known: {', '.join(PAIR_KINDS)}"
        ) from None
    return factory()
