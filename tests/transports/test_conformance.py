"""The byte-level contract every transport keeps, re-run over memory, pty, tcp and usb pairs,
and over the memory and pty pairs paced at 115200 baud (bulk payloads cut to 0.5 s of wire time)."""

from __future__ import annotations

import os
import threading
import time

import pytest

from shoe_controller.errors import TransportError
from shoe_controller.transports.base import (
    ReconnectingTransport,
    TransportEvent,
    TransportEventKind,
)
from simulators.transport_pairs import TransportPair
from simulators.transport_pairs import transport_pair as make_pair

from .helpers import Background, bulk_size, read_exactly, wait_until


def test_bytes_arrive_in_order_both_ways(transport_pair: TransportPair) -> None:
    host, device = transport_pair
    chunks = [bytes([i % 256]) * (1 + i % 7) for i in range(200)]
    for chunk in chunks:
        host.write(chunk)
    expected = b"".join(chunks)
    assert read_exactly(device, len(expected)) == expected
    for chunk in chunks:
        device.write(chunk[::-1] + b"\x00")
    back = b"".join(chunk[::-1] + b"\x00" for chunk in chunks)
    assert read_exactly(host, len(back)) == back


def test_all_byte_values_pass_unchanged(transport_pair: TransportPair) -> None:
    host, device = transport_pair
    every_byte = bytes(range(256)) * 4  # a tty in cooked mode would eat or translate some
    host.write(every_byte)
    assert read_exactly(device, len(every_byte)) == every_byte
    device.write(every_byte)
    assert read_exactly(host, len(every_byte)) == every_byte


@pytest.mark.parametrize("direction", ["host_to_device", "device_to_host"])
def test_large_write_is_delivered_whole(transport_pair: TransportPair, direction: str) -> None:
    host, device = transport_pair
    sender, receiver = (host, device) if direction == "host_to_device" else (device, host)
    # One call, larger than any OS buffer (and a paced line's transmit buffer): no short write.
    payload = os.urandom(bulk_size(transport_pair, 256 * 1024))
    reader = Background(lambda: read_exactly(receiver, len(payload), timeout=20))
    sender.write(payload)
    assert reader.result(timeout=25) == payload


def test_read_returns_what_is_there_without_waiting_to_fill_size(
    transport_pair: TransportPair,
) -> None:
    host, device = transport_pair
    device.write(b"abc")
    started = time.monotonic()
    got = read_exactly(host, 3)
    assert got == b"abc"
    assert host.read(4096, 0.3) == b""  # nothing more
    assert time.monotonic() - started < 2.0


def test_read_never_returns_more_than_size(transport_pair: TransportPair) -> None:
    host, device = transport_pair
    device.write(bytes(range(100)))
    wait_until_data = read_exactly(host, 1)
    pieces = [wait_until_data]
    while sum(map(len, pieces)) < 100:
        piece = host.read(7, 2.0)
        assert 1 <= len(piece) <= 7
        pieces.append(piece)
    assert b"".join(pieces) == bytes(range(100))


def test_timeout_zero_polls(transport_pair: TransportPair) -> None:
    host, _ = transport_pair
    started = time.monotonic()
    assert host.read(10, 0) == b""
    assert time.monotonic() - started < 0.1


def test_timeout_seconds_waits_then_returns_empty(transport_pair: TransportPair) -> None:
    host, _ = transport_pair
    started = time.monotonic()
    assert host.read(10, 0.2) == b""
    elapsed = time.monotonic() - started
    assert 0.19 <= elapsed < 1.0


def test_timeout_none_waits_until_data(transport_pair: TransportPair) -> None:
    host, device = transport_pair
    reader = Background(lambda: host.read(10, None))
    time.sleep(0.15)  # the point is that the reader is still waiting after this
    device.write(b"late")
    got = reader.result(timeout=5)
    assert isinstance(got, bytes) and b"late".startswith(got) and got


def test_close_is_idempotent_and_io_after_close_fails(transport_pair: TransportPair) -> None:
    host, _ = transport_pair
    assert host.is_open
    host.close()
    host.close()
    assert not host.is_open
    with pytest.raises(TransportError):
        host.read(1, 0)
    with pytest.raises(TransportError):
        host.write(b"x")


def test_context_manager_closes(transport_pair: TransportPair) -> None:
    host, _ = transport_pair
    with host as entered:
        assert entered is host and host.is_open
    assert not host.is_open


def test_reopened_host_talks_to_the_same_device(transport_pair: TransportPair) -> None:
    host, device = transport_pair
    host.close()
    again = transport_pair.new_host()
    with again:
        again.write(b"hello again")
        assert read_exactly(device, 11) == b"hello again"
        device.write(b"welcome")
        assert read_exactly(again, 7) == b"welcome"


def test_close_from_another_thread_ends_a_blocked_read(transport_pair: TransportPair) -> None:
    host, _ = transport_pair
    reader = Background(lambda: host.read(10, None))
    time.sleep(0.1)
    started = time.monotonic()
    host.close()
    with pytest.raises(TransportError):
        reader.result(timeout=5)
    assert time.monotonic() - started < 1.0


def test_concurrent_reader_and_writer(transport_pair: TransportPair) -> None:
    """One thread writes while another reads the echo: the documented concurrency."""
    host, device = transport_pair
    total = bulk_size(transport_pair, 64 * 1024)
    stop = threading.Event()

    def echo() -> None:
        while not stop.is_set():
            data = device.read(4096, 0.05)
            if data:
                device.write(data)

    echo_thread = Background(echo)
    payload = os.urandom(total)
    reader = Background(lambda: read_exactly(host, total, timeout=20))
    for start in range(0, total, 1000):
        host.write(payload[start : start + 1000])
    try:
        assert reader.result(timeout=25) == payload
    finally:
        stop.set()
        echo_thread.result()


@pytest.mark.parametrize("size, timeout", [(0, 1.0), (-1, 1.0), (10, -0.5), (10, float("nan"))])
def test_bad_read_arguments_are_rejected(
    transport_pair: TransportPair, size: int, timeout: float
) -> None:
    host, _ = transport_pair
    with pytest.raises(ValueError):
        host.read(size, timeout)


# -- reconnection -----------------------------------------------------------------------------


def _kinds(events: list[TransportEvent]) -> list[TransportEventKind]:
    return [e.kind for e in events]


def test_reconnecting_transport_comes_back_after_the_link_breaks(
    breakable_transport_pair: TransportPair,
) -> None:
    pair = breakable_transport_pair
    pair.host.close()  # the wrapper makes its own host transports
    events: list[TransportEvent] = []
    link = ReconnectingTransport(
        pair.new_host, events.append, backoff_initial=0.01, backoff_max=0.1
    )
    with link:
        assert link.is_connected
        link.write(b"before")
        assert read_exactly(pair.device, 6) == b"before"

        pair.break_link()
        # The reader notices within its read: no exception, just b"" while down.
        wait_until(
            lambda: link.read(100, 0.05) == b"" and TransportEventKind.LOST in _kinds(events),
            what="the loss to be noticed",
        )
        assert _kinds(events)[0] is TransportEventKind.LOST
        if not link.is_connected:  # (a TCP server still listening is back at once)
            link.write(b"into the void")  # dropped while down, never raises
            assert link.dropped_bytes == len(b"into the void")

        pair.restore_link()
        wait_until(lambda: (link.read(100, 0.05), link.is_connected)[1], what="reconnection")
        assert TransportEventKind.RECONNECTED in _kinds(events)
        assert link.reconnections == 1

        link.write(b"after")
        assert read_exactly(pair.device, 5) == b"after"
        pair.device.write(b"welcome back")
        assert read_exactly(link, 12) == b"welcome back"


@pytest.mark.parametrize("kind", ["memory", "usb"])  # a TCP server stays reachable
def test_write_while_down_is_dropped_and_counted(kind: str) -> None:
    with make_pair(kind) as pair:
        pair.host.close()
        events: list[TransportEvent] = []
        link = ReconnectingTransport(
            pair.new_host, events.append, backoff_initial=5.0, backoff_max=5.0
        )
        with link:
            pair.break_link()
            wait_until(lambda: link.read(10, 0.05) == b"" and not link.is_connected, what="loss")
            # the first retry happens at once and fails; the next is 5 s away: still down
            wait_until(lambda: TransportEventKind.RETRY_FAILED in _kinds(events), what="retry")
            link.write(b"12345")
            assert link.dropped_bytes == 5
            assert not link.is_connected
