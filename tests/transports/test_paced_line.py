"""A serial line that takes wire time (issue 14, item 3).

The pure model is checked with explicit times (no clock, no sleeping) against a separate,
byte-by-byte statement of the rule; the memory and pty pairs are measured on the real clock with
bounds that hold on a loaded machine: a byte is never readable before its wire time, and
throughput stays within 0.8..1.3 of the line rate.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_protocol.cobs import cobs_encode
from shoe_controller.cards import new_shoe
from shoe_controller.errors import TransportError
from shoe_controller.transports.memory import memory_pair
from shoe_controller.transports.paced import PacedLine, PacedTransport, byte_time
from simulators.faults import FaultConfig, FaultInjector, FaultyTransport
from simulators.scenarios import deal_shoe
from simulators.transport_pairs import PACED_KINDS, TransportPair, parse_kind, transport_pair

from .helpers import Background, read_exactly

BAUD = 115200
BT = 10 / BAUD  # 86.8 us
FRAME = bytes(range(1, 23)) + b"\x00"  # 23 bytes, the size of a CardDrawn frame
LINE_RATE = BAUD / 10  # 11 520 bytes/s


def reference_arrivals(sends: list[tuple[float, int]], bt: float) -> list[float]:
    """The rule as the issue states it, byte by byte: a write starts when the line is free
    (``max(now, end of the previous write)``) and its byte k arrives at start + (k + 1) bt."""
    arrivals: list[float] = []
    free = -math.inf
    for now, count in sends:
        start = max(now, free)
        arrivals.extend(start + (k + 1) * bt for k in range(count))
        free = arrivals[-1] if count else free
    return arrivals


# -- the pure model ---------------------------------------------------------------------------


def test_a_byte_takes_86_8_us_and_a_card_frame_2_0_ms_at_115200() -> None:
    assert byte_time(115200) == pytest.approx(86.806e-6, rel=1e-4)
    assert 23 * byte_time(115200) == pytest.approx(1.997e-3, rel=1e-3)
    assert byte_time(9600, bits_per_byte=11) == pytest.approx(11 / 9600)  # 8E1


def test_byte_k_arrives_at_start_plus_k_plus_one_byte_times() -> None:
    line = PacedLine(BAUD)
    start = 100.0
    assert line.send(FRAME, start) == pytest.approx(start + 23 * BT)
    for k in range(23):
        due = start + (k + 1) * BT
        assert line.arrived(due - 1e-9) == k
        assert line.arrived(due) == k + 1
    assert line.arrived(start + 1.0) == 23


def test_take_hands_over_only_what_has_arrived_in_order() -> None:
    line = PacedLine(BAUD)
    line.send(b"abcdefghij", 0.0)
    assert line.take(0.5 * BT) == b""
    assert line.next_arrival() == pytest.approx(BT)
    assert line.take(3 * BT) == b"abc"
    assert line.next_arrival() == pytest.approx(4 * BT)
    assert line.take(7.5 * BT, size=2) == b"de"  # never more than asked
    assert line.take(7.5 * BT) == b"fg"
    assert line.take(100.0) == b"hij"
    assert line.next_arrival() is None and len(line) == 0


def test_writes_queue_behind_each_other_and_an_idle_line_starts_at_once() -> None:
    line = PacedLine(BAUD)
    line.send(FRAME, 0.0)
    # Written while the first frame is still on the wire: starts when the line is free.
    assert line.send(FRAME, 0.001) == pytest.approx(46 * BT)
    assert line.arrived(23 * BT + 0.5 * BT) == 23
    assert line.arrived(24.5 * BT) == 24
    # Written after the line went idle: starts at its own time.
    assert line.send(b"x", 1.0) == pytest.approx(1.0 + BT)
    assert line.in_flight(46 * BT) == 1


def test_the_two_directions_are_independent_lines() -> None:
    to_device, to_host = PacedLine(BAUD), PacedLine(BAUD)
    to_device.send(bytes(100), 0.0)
    assert to_host.send(FRAME, 0.001) == pytest.approx(0.001 + 23 * BT)  # not behind the 100
    assert to_device.arrived(100 * BT) == 100 and to_host.arrived(100 * BT) == 23
    # The memory wire keeps one line per direction: each frame takes only its own wire time.
    host, device = memory_pair(baud=BAUD)
    wire = host.wire
    t0 = time.monotonic()
    host.write(FRAME)
    t1 = time.monotonic()
    device.write(FRAME)
    t2 = time.monotonic()
    assert t0 + 23 * BT <= wire.line("device").free_at <= t1 + 23 * BT
    assert t1 + 23 * BT <= wire.line("host").free_at <= t2 + 23 * BT


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0, 0.01), st.integers(0, 40), st.floats(0, 0.004), st.integers(1, 64)),
        min_size=1,
        max_size=30,
    )
)
def test_the_model_agrees_with_the_byte_by_byte_rule(
    steps: list[tuple[float, int, float, int]],
) -> None:
    """Random sends and reads: each read hands over exactly the bytes whose reference time has
    come (never earlier, none held back), in order, up to the size asked; ``next_arrival``
    names the next byte's time, and that byte is there at that time (a waiting carrier never
    spins)."""
    line = PacedLine(BAUD, tx_buffer=None)
    now = 0.0
    sends: list[tuple[float, int]] = []
    sent = bytearray()
    got = 0
    for gap, count, read_gap, size in steps:
        now += gap
        data = bytes((len(sent) + i) % 251 for i in range(count))
        line.send(data, now)
        sends.append((now, count))
        sent += data
        now += read_gap
        arrivals = reference_arrivals(sends, BT)
        due_now = sum(1 for t in arrivals if t <= now)
        piece = line.take(now, size)
        assert piece == sent[got : got + min(size, due_now - got)]
        got += len(piece)
        due = line.next_arrival()
        if got == len(sent):
            assert due is None
            continue
        assert due == arrivals[got]
        now = max(now, due)
        assert line.take(now, 1) == sent[got : got + 1]
        got += 1


def test_room_in_the_transmit_buffer() -> None:
    line = PacedLine(BAUD, tx_buffer=100)
    assert line.room(0.0) == 100
    line.send(bytes(150), 0.0)  # the model does not refuse; the carrier waits for room
    assert line.room(0.0) == 0
    ready = line.when_room(10)  # in flight <= 90: the first 60 bytes have arrived
    assert ready == pytest.approx(60 * BT)
    assert line.room(ready) == 10
    assert line.room(ready - 1e-9) == 9
    assert line.when_room(1000) == pytest.approx(150 * BT)  # capped at the whole buffer
    assert PacedLine(BAUD, tx_buffer=None).room(0.0) is None


def test_an_unpaced_line_is_instant() -> None:
    line = PacedLine(None)
    assert line.send(b"abc", 5.0) == 5.0
    assert line.take(5.0) == b"abc"
    assert line.room(5.0) is None and line.when_room(10) == -math.inf


def test_clearing_loses_what_is_on_the_line_and_frees_it() -> None:
    line = PacedLine(BAUD)
    line.send(bytes(100), 0.0)
    assert line.clear() == 100
    assert line.take(1.0) == b"" and line.next_arrival() is None
    assert line.send(b"x", 0.001) == pytest.approx(0.001 + BT)  # not behind the lost bytes


@pytest.mark.parametrize(
    "kwargs",
    [
        {"baud": 0},
        {"baud": -9600},
        {"baud": 115200.0},
        {"baud": True},
        {"bits_per_byte": 0},
        {"tx_buffer": 0},
    ],
)
def test_bad_options_are_rejected(kwargs: dict[str, object]) -> None:
    options = {"baud": BAUD, **kwargs}
    with pytest.raises(ValueError):
        PacedLine(**options)  # type: ignore[arg-type]


def test_pair_kinds_name_the_rate() -> None:
    assert PACED_KINDS == ("memory@115200", "pty@115200")
    assert parse_kind("memory@115200") == ("memory", 115200)
    assert parse_kind("pty", 57600) == ("pty", 57600)
    assert parse_kind("tcp") == ("tcp", None)
    for bad, baud in (
        ("tcp@115200", None),
        ("usb", 9600),
        ("memory@fast", None),
        ("memory@115200", 9600),
        ("serial", None),
    ):
        with pytest.raises(ValueError):
            parse_kind(bad, baud)


# -- the real pairs, measured -----------------------------------------------------------------


@pytest.fixture(params=PACED_KINDS)
def paced_pair(request: pytest.FixtureRequest) -> Iterator[TransportPair]:
    with transport_pair(request.param) as pair:
        assert pair.baud == BAUD
        yield pair


def timed_read(transport: object, count: int, started: float) -> list[tuple[float, int]]:
    """Read ``count`` bytes; for each byte, the time (since ``started``) its read returned."""
    stamps: list[tuple[float, int]] = []
    got = 0
    deadline = time.monotonic() + 5
    while got < count:
        assert time.monotonic() < deadline, f"only {got} of {count} bytes"
        piece = transport.read(count - got, 0.5)  # type: ignore[attr-defined]
        now = time.monotonic() - started
        stamps.extend((now, got + i) for i in range(len(piece)))
        got += len(piece)
    return stamps


@pytest.mark.parametrize("direction", ["host_to_device", "device_to_host"])
def test_a_card_frame_arrives_after_its_wire_time_never_earlier(
    paced_pair: TransportPair, direction: str
) -> None:
    host, device = paced_pair
    sender, receiver = (host, device) if direction == "host_to_device" else (device, host)
    totals = []
    for _ in range(5):
        started = time.monotonic()
        sender.write(FRAME)
        stamps = timed_read(receiver, len(FRAME), started)
        for when, k in stamps:  # byte k cannot be read before (k + 1) byte times
            assert when >= (k + 1) * BT, f"byte {k} read at {when * 1e6:.0f} us"
        totals.append(stamps[-1][0])  # the line is idle again: the next frame starts at once
    wire = 23 * BT
    assert min(totals) >= wire
    assert min(totals) < wire + 0.005, f"fastest frame took {min(totals) * 1e3:.2f} ms"


@pytest.mark.parametrize("as_frames", [False, True], ids=["one-write", "frame-by-frame"])
def test_throughput_over_5000_bytes_is_the_line_rate(
    paced_pair: TransportPair, as_frames: bool
) -> None:
    host, device = paced_pair
    payload = bytes(i % 255 + 1 for i in range(5000))
    reader = Background(lambda: read_exactly(host, len(payload), timeout=10))
    started = time.monotonic()
    if as_frames:  # written faster than the line: they queue behind each other
        for i in range(0, len(payload), 23):
            device.write(payload[i : i + 23])
    else:
        device.write(payload)  # more than the transmit buffer: write waits for room
    assert reader.result(timeout=15) == payload
    elapsed = time.monotonic() - started
    assert elapsed >= len(payload) / LINE_RATE
    assert 0.8 <= (len(payload) / elapsed) / LINE_RATE <= 1.3, f"{len(payload) / elapsed:.0f} B/s"


def test_both_directions_at_full_rate_at_once(paced_pair: TransportPair) -> None:
    host, device = paced_pair
    size = 4600  # 0.40 s each way; 0.80 s if the directions shared the line
    up = Background(lambda: read_exactly(device, size, timeout=10))
    down = Background(lambda: read_exactly(host, size, timeout=10))
    started = time.monotonic()
    host.write(bytes(size))
    device.write(b"\x01" * size)
    assert up.result() == bytes(size) and down.result() == b"\x01" * size
    elapsed = time.monotonic() - started
    assert size / LINE_RATE <= elapsed < 1.75 * size / LINE_RATE  # 2x if shared


def test_write_returns_before_the_bytes_are_on_the_wire(paced_pair: TransportPair) -> None:
    """Like a UART driver: the writer is free to read while its frame is being sent."""
    host, device = paced_pair
    started = time.monotonic()
    host.write(bytes(2000))  # 0.17 s of wire time, within the 4096-byte transmit buffer
    assert time.monotonic() - started < 2000 / LINE_RATE / 2
    assert read_exactly(device, 2000) == bytes(2000)


def test_a_full_transmit_buffer_makes_write_wait() -> None:
    host, device = memory_pair(baud=BAUD, tx_buffer=256)
    reader = Background(lambda: read_exactly(device, 1280, timeout=5))
    started = time.monotonic()
    host.write(bytes(1280))
    # Returns once at most 256 bytes are still in flight: 1024 byte times at least.
    assert time.monotonic() - started >= 1024 * BT
    assert reader.result() == bytes(1280)


def test_closing_ends_a_write_waiting_for_room() -> None:
    host, _device = memory_pair(baud=9600, tx_buffer=16)
    writer = Background(lambda: host.write(bytes(1000)))  # 1.0 s at 9600 baud
    time.sleep(0.05)
    host.close()
    with pytest.raises(TransportError):
        writer.result(timeout=2)


def test_a_cut_wire_loses_the_bytes_in_flight() -> None:
    host, device = memory_pair(baud=BAUD)
    host.write(bytes(1000))
    host.wire.break_connection()
    host.wire.restore()
    assert device.read(100, 0.2) == b""
    again = host.wire.end("host")
    with again:
        again.write(b"after")
        assert read_exactly(device, 5) == b"after"


def test_a_paced_transport_hands_a_feeder_failure_to_the_owner() -> None:
    host, _device = memory_pair()
    paced = PacedTransport(host, BAUD)
    paced.open()
    host.close()  # the inner transport fails under the feeder
    paced.write(b"lost")
    with pytest.raises(TransportError):
        for _ in range(100):
            time.sleep(0.005)
            paced.write(b"x")
    paced.close()
    paced.close()


def test_a_paced_transport_drains_and_reopens() -> None:
    host, device = memory_pair()
    paced = PacedTransport(host, BAUD)
    with paced:
        paced.write(FRAME)
        assert paced.drain(timeout=1.0)
        assert read_exactly(device, 23) == FRAME
    assert not paced.is_open
    with pytest.raises(TransportError):
        paced.write(b"x")


# -- faults on a paced line -------------------------------------------------------------------


def frames(count: int) -> bytes:
    return b"".join(cobs_encode(bytes([i % 256]) * 20) + b"\x00" for i in range(count))


def test_manipulator_faults_apply_before_pacing() -> None:
    """What the injector outputs is what goes on the line: a dropped frame takes no wire time,
    a duplicated one takes twice, a corrupted byte takes its byte time."""
    data = frames(100)
    for config in (
        FaultConfig(drop_frame_rate=0.3, seed=3),
        FaultConfig(duplicate_frame_rate=0.3, seed=4),
        FaultConfig(corrupt_rate=0.5, seed=5),
    ):
        injector = FaultInjector(config)
        host, device = memory_pair(host_to_device=injector, baud=BAUD, tx_buffer=None)
        started = time.monotonic()
        host.write(data)
        out = injector.counters.bytes_out
        assert out != len(data) or config.corrupt_rate
        # The line was busy for exactly the bytes the injector let through.
        busy = host.wire.line("device").free_at - started
        assert busy == pytest.approx(out * BT, abs=0.01)
        received = read_exactly(device, out, timeout=5)
        assert time.monotonic() - started >= out * BT
        if config.corrupt_rate:
            assert out == len(data)
            assert sum(a != b for a, b in zip(received, data, strict=True)) > 500


def test_a_receiving_end_injector_acts_after_pacing() -> None:
    """``FaultyTransport(rx=...)`` on the reader sees bytes that already took their wire time:
    bytes it drops still took theirs, so what is left arrives no earlier than on a clean line."""
    host, device = memory_pair(baud=BAUD)
    rx = FaultInjector(FaultConfig(drop_byte_rate=0.5, seed=6))
    faulty = FaultyTransport(host, rx=rx)
    started = time.monotonic()
    device.write(bytes(range(1, 256)) * 4)  # 1020 bytes: 89 ms on the line
    got = bytearray()
    last_piece_at = 0.0
    while time.monotonic() < started + 1020 * BT + 0.3:
        piece = faulty.read(4096, 0.05)
        if piece:
            got += piece
            last_piece_at = time.monotonic() - started
    assert rx.counters.dropped_bytes > 300
    assert len(got) == rx.counters.bytes_out == 1020 - rx.counters.dropped_bytes
    # Dropped before pacing, the ~500 bytes left would be through in 44 ms.
    assert last_piece_at >= 1000 * BT


def test_faulty_transport_works_unchanged_over_a_paced_pty() -> None:
    with transport_pair("pty", baud=BAUD) as pair:
        tx = FaultInjector(FaultConfig(corrupt_rate=1.0, seed=1))
        faulty = FaultyTransport(pair.host, tx=tx)
        started = time.monotonic()
        faulty.write(bytes(100))
        got = read_exactly(pair.device, 100)
        assert all(got) and time.monotonic() - started >= 100 * BT
        pair.device.write(b"clean")
        assert read_exactly(faulty, 5) == b"clean"


# -- a whole shoe -----------------------------------------------------------------------------

EIGHT_DECKS = new_shoe(8, seed=416)


@pytest.mark.parametrize("kind", ["memory", "pty"])
def test_a_whole_shoe_over_a_paced_line_arrives_exactly_once_in_order(kind: str) -> None:
    run = deal_shoe(kind, EIGHT_DECKS, baud=BAUD, faults=FaultConfig(), timeout=60)
    assert [m.counter for m in run.cards] == list(range(1, 417))
    assert run.received_cards() == EIGHT_DECKS
    # The shoe cannot have been dealt faster than its busier direction's bytes take.
    busiest = max(run.host_to_shoe.bytes_out, run.shoe_to_host.bytes_out)
    assert busiest >= 416 * 23
    assert run.elapsed >= busiest / LINE_RATE


@pytest.mark.slow
def test_a_whole_shoe_over_a_paced_bad_line_arrives_exactly_once_in_order() -> None:
    bad = FaultConfig.parse("corrupt=0.01,drop-frame=0.005,dup-frame=0.005,seed=39")
    run = deal_shoe("memory@115200", EIGHT_DECKS, faults=bad, timeout=90)
    assert [m.counter for m in run.cards] == list(range(1, 417))
    assert run.received_cards() == EIGHT_DECKS
    assert run.host_to_shoe.corrupted_bytes > 0 and run.shoe_to_host.corrupted_bytes > 0


def test_readers_get_frames_in_pieces_and_frame_by_content() -> None:
    """Pacing marks nothing by gaps: a reader catches a frame in pieces, and only the 0x00
    delimiter says where it ends. (At 1200 baud the three frames take 0.58 s to cross: at
    115200, 6 ms, a reader starved that long on a loaded machine got them in one piece.)"""
    host, device = memory_pair(baud=1200)
    host.write(FRAME * 3)
    pieces = []
    while sum(map(len, pieces)) < 69:
        pieces.append(device.read(4096, 1.0))
    assert len(pieces) > 3
    assert b"".join(pieces).split(b"\x00")[:3] == [FRAME[:-1]] * 3


def test_threads_are_not_left_behind() -> None:
    def feeders() -> int:
        return sum(1 for t in threading.enumerate() if t.name == "paced-line")

    before = feeders()
    with transport_pair("pty@115200") as pair:
        assert feeders() == before + 2  # one per side
        pair.host.write(FRAME)
    assert feeders() == before
