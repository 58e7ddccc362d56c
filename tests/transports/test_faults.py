"""Fault injection: parsing, determinism, rates, frame handling, and the transport wrapper."""

from __future__ import annotations

import dataclasses
import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_controller.errors import ConfigError, TransportError
from shoe_controller.transports.base import ReconnectingTransport, TransportEventKind
from shoe_controller.transports.memory import memory_pair
from simulators.faults import FaultConfig, FaultInjector, FaultyTransport

from .helpers import read_exactly, wait_until


def frames(count: int, size: int = 20) -> bytes:
    """``count`` frames: non-zero bodies (as COBS guarantees) each ending in the 0x00 delimiter."""
    return b"".join(bytes((i + j) % 255 + 1 for j in range(size)) + b"\x00" for i in range(count))


# -- configuration --------------------------------------------------------------------------


def test_parse_the_documented_example() -> None:
    config = FaultConfig.parse(
        "corrupt=0.01,drop-frame=0.005,dup-frame=0.005,disconnect=0.0002,seed=7"
    )
    assert config == FaultConfig(
        corrupt_rate=0.01,
        drop_frame_rate=0.005,
        duplicate_frame_rate=0.005,
        disconnect_rate=0.0002,
        seed=7,
    )
    assert config.frame_faults and config.active
    assert FaultConfig.parse("") == FaultConfig.parse("none") == FaultConfig()
    assert not FaultConfig().active


@pytest.mark.parametrize(
    "spec, message",
    [
        ("corupt=0.1", "unknown key 'corupt'"),
        ("corrupt=lots", "is not a number"),
        ("corrupt=1.5", "rate must be in 0..1"),
        ("drop=-0.1", "rate must be in 0..1"),
        ("seed=1.5", "is not an integer"),
        ("corrupt", "expected KEY=VALUE"),
        ("drop=0.1,drop-byte=0.2", "given twice"),
        ("delay-s=1000", "seconds in 0..60"),
        ("dup=nan", "not finite"),
    ],
)
def test_parse_errors_name_the_problem(spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        FaultConfig.parse(spec)


rates = st.sampled_from([0.0, 0.001, 0.05, 0.5, 1.0])


@given(
    corrupt=rates,
    drop=rates,
    dup=rates,
    drop_frame=rates,
    disconnect=rates,
    seed=st.integers(0, 2**32),
)
def test_spec_round_trips(
    corrupt: float, drop: float, dup: float, drop_frame: float, disconnect: float, seed: int
) -> None:
    config = FaultConfig(
        corrupt_rate=corrupt,
        drop_byte_rate=drop,
        duplicate_byte_rate=dup,
        drop_frame_rate=drop_frame,
        disconnect_rate=disconnect,
        seed=seed,
    )
    assert FaultConfig.parse(config.to_spec()) == config


# -- the injector -----------------------------------------------------------------------------


def test_no_faults_is_the_identity() -> None:
    injector = FaultInjector(FaultConfig())
    assert injector(b"abc\x00def") == [b"abc\x00def"]
    assert injector(b"") == []


def test_same_seed_same_faults_other_seed_other_faults() -> None:
    config = FaultConfig(corrupt_rate=0.02, drop_byte_rate=0.02, duplicate_byte_rate=0.02, seed=3)
    stream = frames(200)
    first = b"".join(FaultInjector(config)(stream))
    second = b"".join(FaultInjector(config)(stream))
    other = b"".join(FaultInjector(dataclasses.replace(config, seed=4))(stream))
    assert first == second
    assert first != other and first != stream


@settings(max_examples=50, deadline=None)
@given(cuts=st.lists(st.integers(0, 4200), max_size=12), seed=st.integers(0, 1000))
def test_faults_do_not_depend_on_how_the_stream_is_split(cuts: list[int], seed: int) -> None:
    config = FaultConfig(
        corrupt_rate=0.01,
        drop_byte_rate=0.01,
        duplicate_byte_rate=0.01,
        drop_frame_rate=0.05,
        duplicate_frame_rate=0.05,
        seed=seed,
    )
    stream = frames(200)
    whole = b"".join(FaultInjector(config)(stream))
    injector = FaultInjector(config)
    pieces: list[bytes] = []
    bounds = [0, *sorted(cuts), len(stream)]
    for start, stop in itertools.pairwise(bounds):
        pieces += injector(stream[start:stop])
    assert b"".join(pieces) == whole


def test_byte_rates_are_statistically_right() -> None:
    n = 200_000
    config = FaultConfig(corrupt_rate=0.01, drop_byte_rate=0.02, duplicate_byte_rate=0.005, seed=11)
    injector = FaultInjector(config)
    out = b"".join(injector(b"\x55" * n))
    c = injector.counters
    for observed, rate in ((c.dropped_bytes, 0.02), (c.duplicated_bytes, 0.005)):
        sigma = math.sqrt(n * rate * (1 - rate))
        assert abs(observed - n * rate) < 5 * sigma, (observed, n * rate)
    # corruption of a dropped byte is not counted: expect about rate * (1 - drop rate)
    expected = n * 0.01 * 0.98
    assert abs(c.corrupted_bytes - expected) < 5 * math.sqrt(expected)
    assert len(out) == n - c.dropped_bytes + c.duplicated_bytes == c.bytes_out
    assert out.count(0x55) < len(out) - 0.9 * c.corrupted_bytes  # corrupted bytes did change


def test_frame_rates_are_statistically_right_and_frames_stay_whole() -> None:
    count = 5000
    config = FaultConfig(drop_frame_rate=0.1, duplicate_frame_rate=0.05, seed=5)
    injector = FaultInjector(config)
    stream = frames(count, size=10)
    chunks = injector(stream)
    c = injector.counters
    assert c.frames == count
    for observed, rate in ((c.dropped_frames, 0.1), (c.duplicated_frames, 0.05 * 0.9)):
        assert abs(observed - count * rate) < 5 * math.sqrt(count * rate)
    assert all(chunk.endswith(b"\x00") and chunk.count(0) == 1 for chunk in chunks)
    assert len(chunks) == count - c.dropped_frames + c.duplicated_frames


def test_partial_frames_are_held_until_their_delimiter() -> None:
    injector = FaultInjector(FaultConfig(drop_frame_rate=0.0, duplicate_frame_rate=1.0))
    assert injector(b"\x01\x02") == []
    assert injector(b"\x03\x00\x04") == [b"\x01\x02\x03\x00", b"\x01\x02\x03\x00"]
    assert injector.flush() == b"\x04"


def test_disconnect_cuts_the_stream_and_reports_it() -> None:
    cuts: list[bool] = []
    injector = FaultInjector(
        FaultConfig(disconnect_rate=1.0), on_disconnect=lambda: cuts.append(True)
    )
    assert injector(b"abc") == []
    assert cuts == [True]
    actions = injector.take_actions()
    assert actions.disconnect and injector.counters.disconnects == 1
    assert injector.counters.discarded_on_disconnect == 3
    assert not injector.take_actions().disconnect  # taken once


def test_delay_is_reported_for_the_carrier() -> None:
    injector = FaultInjector(FaultConfig(delay_rate=1.0, delay_seconds=0.01))
    assert injector(b"abcd") == [b"abcd"]
    assert injector.take_actions().delay_seconds == pytest.approx(0.04)


# -- the wrapper ----------------------------------------------------------------------------


def test_faulty_transport_corrupts_one_direction_only() -> None:
    host, device = memory_pair()
    tx = FaultInjector(FaultConfig(corrupt_rate=1.0, seed=1))
    faulty = FaultyTransport(host, tx=tx)
    faulty.write(b"\x00" * 10)
    assert all(b != 0 for b in read_exactly(device, 10))
    device.write(b"clean")
    assert read_exactly(faulty, 5) == b"clean"


def test_faulty_transport_delays_and_duplicates_on_receive() -> None:
    host, device = memory_pair()
    slept: list[float] = []
    rx = FaultInjector(FaultConfig(duplicate_byte_rate=1.0, delay_rate=1.0, delay_seconds=0.5))
    faulty = FaultyTransport(host, rx=rx, sleep=slept.append)
    device.write(b"ab")
    assert read_exactly(faulty, 4) == b"aabb"
    assert sum(slept) == pytest.approx(1.0)


def test_fault_disconnect_drops_the_connection_and_reconnecting_transport_recovers() -> None:
    host, device = memory_pair()
    wire = host.wire
    tx = FaultInjector(FaultConfig(disconnect_rate=0.01, seed=2))
    events = []
    link = ReconnectingTransport(
        lambda: FaultyTransport(wire.end("host"), tx=tx), events.append, backoff_initial=0.01
    )
    with link:
        sent = 0
        for _ in range(50):
            link.write(b"x" * 10)
            sent += 10
        assert tx.counters.disconnects >= 1
        lost = [e for e in events if e.kind is TransportEventKind.LOST]
        assert lost and "fault injection" in lost[0].reason
        wait_until(lambda: link.write(b"") is None and link.is_connected, what="reconnection")
        received = read_exactly(device, tx.counters.bytes_out)
        assert received == b"x" * (sent - tx.counters.discarded_on_disconnect)
        assert device.read(100, 0.05) == b""


def test_manipulator_disconnect_cuts_a_memory_wire() -> None:
    holder: dict[str, object] = {}
    injector = FaultInjector(
        FaultConfig(disconnect_rate=1.0),
        on_disconnect=lambda: holder["wire"].break_connection("fault"),  # type: ignore[attr-defined]
    )
    host, _device = memory_pair(host_to_device=injector)
    holder["wire"] = host.wire
    with pytest.raises(TransportError, match="fault"):
        host.write(b"abc")
