"""Reconnection cases beyond the generic break/restore: a restarted TCP peer, a USB shoe that
is absent at start, and errors that must not be swallowed."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from shoe_controller.errors import ConfigError, TransportError
from shoe_controller.transports import transport_for_url
from shoe_controller.transports.base import (
    ReconnectingTransport,
    Transport,
    TransportEvent,
    TransportEventKind,
)
from shoe_controller.transports.serial_port import SerialTransport
from shoe_controller.transports.tcp import TcpServerTransport
from shoe_controller.transports.usb import UsbTransport
from simulators.transport_pairs import TransportPair
from simulators.usb_backend import VirtualUsbBackend, VirtualUsbDevice

from .helpers import read_exactly, wait_until


def test_socket_url_reports_a_closed_peer_as_transport_error() -> None:
    with TcpServerTransport() as server:
        host = SerialTransport(server.url)
        with host:
            assert server.wait_for_client(5)
            server.drop_client()
            with pytest.raises(TransportError):
                read_exactly(host, 1, timeout=5)
            assert not host.is_open


def test_reconnects_to_a_restarted_tcp_peer_on_the_same_port() -> None:
    first = TcpServerTransport()
    first.open()
    url, (_, port) = first.url, first.address
    events: list[TransportEvent] = []
    link = ReconnectingTransport(
        lambda: SerialTransport(url), events.append, backoff_initial=0.02, backoff_max=0.1
    )
    with link:
        assert first.wait_for_client(5)
        first.write(b"one")
        assert read_exactly(link, 3) == b"one"

        first.close()  # the simulator process dies
        wait_until(lambda: link.read(10, 0.05) == b"" and not link.is_connected, what="loss")
        wait_until(
            lambda: TransportEventKind.RETRY_FAILED in [e.kind for e in events], what="retry"
        )

        with TcpServerTransport("127.0.0.1", port) as second:  # ... and is started again
            wait_until(lambda: (link.read(10, 0.05), link.is_connected)[1], what="reconnection")
            assert second.wait_for_client(5)
            second.write(b"two")
            assert read_exactly(link, 3) == b"two"
            link.write(b"ack")
            assert read_exactly(second, 3) == b"ack"
    kinds = [e.kind for e in events]
    assert kinds[0] is TransportEventKind.LOST and kinds[-1] is TransportEventKind.RECONNECTED
    assert "retry_failed" in {k.value for k in kinds}


def test_usb_shoe_plugged_in_after_start_is_picked_up() -> None:
    gadget = VirtualUsbDevice()
    bus = VirtualUsbBackend(gadget)
    gadget.unplug()
    events: list[TransportEvent] = []
    link = ReconnectingTransport(
        lambda: UsbTransport(backend=bus), events.append, backoff_initial=0.01, backoff_max=0.05
    )
    with link:  # does not raise: the shoe may be plugged in later
        assert not link.is_connected
        assert events[0].kind is TransportEventKind.LOST and "not found" in events[0].reason
        gadget.replug()
        wait_until(lambda: (link.read(10, 0.02), link.is_connected)[1], what="connection")
        gadget.device_side.write(b"card")
        assert read_exactly(link, 4) == b"card"


def test_usb_unplug_during_blocked_read_and_replug() -> None:
    gadget = VirtualUsbDevice()
    bus = VirtualUsbBackend(gadget)
    events: list[TransportEvent] = []
    link = ReconnectingTransport(
        lambda: UsbTransport(backend=bus), events.append, backoff_initial=0.01, backoff_max=0.05
    )
    with link:
        gadget.unplug()
        assert link.read(10, 0.3) == b""
        assert next(e.kind for e in events) is TransportEventKind.LOST
        assert "No such device" in events[0].reason
        gadget.replug()
        wait_until(lambda: (link.read(10, 0.02), link.is_connected)[1], what="reconnection")
        link.write(b"hello")
        assert read_exactly(gadget.device_side, 5) == b"hello"


def test_configuration_errors_are_not_retried_forever() -> None:
    link = ReconnectingTransport(lambda: transport_for_url("nosuchproto://x"))
    with pytest.raises(ConfigError):
        link.open()


def test_an_exception_in_on_event_reaches_the_reader() -> None:
    gadget = VirtualUsbDevice()
    bus = VirtualUsbBackend(gadget)

    def on_event(event: TransportEvent) -> None:
        raise RuntimeError(f"owner saw {event.kind.value}")

    link = ReconnectingTransport(lambda: UsbTransport(backend=bus), on_event)
    with link:
        gadget.unplug()
        with pytest.raises(RuntimeError, match="owner saw lost"):
            link.read(10, 1.0)


def test_closed_reconnecting_transport_refuses_io() -> None:
    gadget = VirtualUsbDevice()
    link = ReconnectingTransport(lambda: UsbTransport(backend=VirtualUsbBackend(gadget)))
    link.open()
    link.close()
    link.close()
    with pytest.raises(TransportError):
        link.read(1, 0)
    with pytest.raises(TransportError):
        link.write(b"x")


class _RefusingPeer(Transport):
    """A peer that refuses every connection; once ``hold`` is set, each refusal waits for
    ``release`` (so a test can act while an attempt is under way)."""

    def __init__(self, hold: threading.Event, opening: threading.Event,
                 release: threading.Event) -> None:
        self._hold, self._opening, self._release = hold, opening, release

    @property
    def description(self) -> str:
        return "refusing peer"

    @property
    def is_open(self) -> bool:
        return False

    def open(self) -> None:
        if self._hold.is_set():
            self._opening.set()
            self._release.wait(5)
        raise TransportError("connection refused")

    def close(self) -> None:
        pass

    def read(self, size: int = 1, timeout: float | None = None) -> bytes:
        raise TransportError("not connected")

    def write(self, data: bytes) -> None:
        raise TransportError("not connected")


def test_a_failed_reconnection_is_reported_after_the_attempt_lets_go_of_its_lock() -> None:
    """The owner's callback takes the owner's lock (ShoeConnection: its endpoint's), and the
    owner writes under that lock from another thread. A reader's failed attempt used to
    report RETRY_FAILED while still holding the connect lock that the owner's write waited
    for, each thread then waiting for the other's lock for good (seen once in CI: the
    controller and the simulated shoe both silent after a refused reconnection)."""
    owner = threading.RLock()
    hold, opening, release, writing = (threading.Event() for _ in range(4))
    events: list[TransportEventKind] = []

    def on_event(event: TransportEvent) -> None:
        with owner:
            events.append(event.kind)

    link = ReconnectingTransport(lambda: _RefusingPeer(hold, opening, release), on_event,
                                 backoff_initial=0.01, backoff_max=0.01)
    link.open()  # refused at once: LOST
    hold.set()
    reader = threading.Thread(target=link.read, args=(1, 1.0), daemon=True)
    reader.start()
    assert opening.wait(5)  # the reader's attempt is under way, holding the connect lock

    def owner_writes() -> None:
        with owner:
            writing.set()
            link.write(b"x")  # due for an attempt of its own: waits for the connect lock

    writer = threading.Thread(target=owner_writes, daemon=True)
    writer.start()
    assert writing.wait(5)
    time.sleep(0.1)  # the writer now waits for the connect lock, holding the owner's
    release.set()  # the reader's attempt is refused; its callback wants the owner's lock
    reader.join(5)
    writer.join(5)
    assert not reader.is_alive() and not writer.is_alive(), "deadlocked"
    assert events[0] is TransportEventKind.LOST
    assert TransportEventKind.RETRY_FAILED in events
    assert link.dropped_bytes == 1  # the write went nowhere while the peer refused
    link.close()



def test_the_owner_s_send_does_not_wait_for_a_reconnection_attempt() -> None:
    """A shoe connection whose line drops while its reader is in a slow reconnection attempt
    (pyserial gives a TCP connect 5 s): the table's thread sends (a light) and must return
    at once, the command kept by the link for the line's return, not wait for the attempt
    under the connection's lock (it did: its write under the lock made an attempt of its
    own, queued behind the reader's). Then the line comes back and the shoe is reached."""
    from firmware_protocol.messages import Indicator, SetIndicators
    from shoe_controller.cards import new_shoe
    from tests.conformance.rig import FAST_LINK, shoe_rig

    hold, opening, release = threading.Event(), threading.Event(), threading.Event()

    def host_factory(pair: TransportPair) -> Callable[[], Transport]:
        def next_host() -> Transport:
            if hold.is_set() and not release.is_set():
                return _RefusingPeer(hold, opening, release)
            return pair.host if not hold.is_set() else pair.new_host()
        return next_host

    with shoe_rig("memory", new_shoe(1), link_config=FAST_LINK,
                  host_factory=host_factory) as rig:
        rig.conn.wait_until_up(5)
        hold.set()
        rig.pair.break_link()
        assert opening.wait(5)  # the reader lost the line and is in a slow attempt
        sender = threading.Thread(target=rig.conn.send,
                                  args=(SetIndicators(Indicator.SHUFFLE),), daemon=True)
        sender.start()
        sender.join(2)
        stuck = sender.is_alive()
        rig.pair.restore_link()
        release.set()
        assert not stuck, "send waited for the reader's reconnection attempt"
        wait_until(lambda: rig.shoe.model.indicators == Indicator.SHUFFLE, timeout=10,
                   what="the light after the line came back")
