"""Protocol throughput and host-side latency, beside the wire time of a frame at 115200 8N1.

Run: .venv/bin/python bench/bench_protocol.py
"""

from __future__ import annotations

import statistics
import time

from firmware_protocol.codec import FrameDecoder, encode_frame
from firmware_protocol.link import Link, Role, initial_sequence
from firmware_protocol.messages import CardDrawn, DeviceInfo, Sensor
from firmware_protocol.testing import TEST_IDENTITY

BAUD = 115_200
BITS_PER_BYTE = 10  # 8N1: start + 8 data + stop
FRAMES = 50_000
CHUNK = 64  # bytes per read, like a USB-serial adapter's packet


def cards(count: int) -> list[CardDrawn]:
    return [
        CardDrawn(n, 1 + n % 13, n % 4, Sensor.OPTICAL_PRIMARY, 90 + n % 11) for n in range(count)
    ]


def bench_encode(messages: list[CardDrawn]) -> tuple[float, bytes]:
    start = time.perf_counter()
    stream = b"".join(encode_frame(m, n & 0xFFFF, 0, reliable=True) for n, m in enumerate(messages))
    return len(messages) / (time.perf_counter() - start), stream


def bench_decode(stream: bytes) -> float:
    decoder = FrameDecoder()
    chunks = [stream[i : i + CHUNK] for i in range(0, len(stream), CHUNK)]
    start = time.perf_counter()
    count = sum(len(decoder.feed(chunk)) for chunk in chunks)
    elapsed = time.perf_counter() - start
    assert count == FRAMES, count
    return count / elapsed


def bench_link_latency(samples: int = 20_000) -> tuple[float, float, int]:
    """Per frame: receive() of one CardDrawn frame plus the data_to_send() carrying its ack."""
    host = Link(Role.HOST, None, 0x1234_5678)
    host.data_to_send(0.0)
    host.receive(encode_frame(DeviceInfo.from_identity(TEST_IDENTITY, 0x9ABC_DEF0)), 0.0)
    host.poll(0.0)
    seq = initial_sequence(0x1234_5678, 0x9ABC_DEF0)
    frames = [
        encode_frame(m, (seq + n) & 0xFFFF, 0, reliable=True) for n, m in enumerate(cards(samples))
    ]
    timings: list[float] = []
    clock = time.perf_counter
    now = 0.0
    for frame in frames:
        now += 0.002
        start = clock()
        delivered = host.receive(frame, now)
        host.data_to_send(now)
        timings.append(clock() - start)
        assert len(delivered) == 1
    timings.sort()
    p50 = statistics.median(timings)
    p99 = timings[int(len(timings) * 0.99)]
    return p50, p99, len(frames[0])


def main() -> None:
    messages = cards(FRAMES)
    encode_rate, stream = bench_encode(messages)
    decode_rate = bench_decode(stream)
    p50, p99, frame_bytes = bench_link_latency()
    wire_s = frame_bytes * BITS_PER_BYTE / BAUD
    line_rate = BAUD / BITS_PER_BYTE / frame_bytes
    rows = [
        ("CardDrawn frame size", f"{frame_bytes} B", "-", ""),
        ("wire time of that frame @115200 8N1", f"{wire_s * 1e6:.0f} us", "-", ""),
        ("frames/s the line can carry", f"{line_rate:,.0f}", "-", ""),
        (
            "encode throughput",
            f"{encode_rate:,.0f} frames/s",
            f">= {10 * line_rate:,.0f}",
            "ok" if encode_rate >= 10 * line_rate else "MISS",
        ),
        (
            f"decode throughput ({CHUNK} B chunks)",
            f"{decode_rate:,.0f} frames/s",
            f">= {10 * line_rate:,.0f}",
            "ok" if decode_rate >= 10 * line_rate else "MISS",
        ),
        ("host link processing p50 (receive+ack)", f"{p50 * 1e6:.1f} us", "-", ""),
        (
            "host link processing p99 (receive+ack)",
            f"{p99 * 1e6:.1f} us",
            f"< {wire_s * 0.1 * 1e6:.0f} us (10% of wire)",
            "ok" if p99 < wire_s * 0.1 else "MISS",
        ),
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    header = ("measure", "measured", "target", "")
    widths = [max(w, len(h)) for w, h in zip(widths, header, strict=True)]
    for row in (header, *rows):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))


if __name__ == "__main__":
    main()
