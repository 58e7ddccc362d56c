"""Wheel protocol: lines parsed and tracked per second, beside what one wheel can send.

At 9600 baud 8N1 a wheel sends at most 960 bytes/s, about 40 status lines a second; the
target leaves room for a PC following many wheels on one core (a thousand-fold headroom).

Run: .venv/bin/python bench/bench_wheel_protocol.py
"""

from __future__ import annotations

import statistics
import time

from simulators.wheel import SimulatedWheel, WheelTimings
from wheel_protocol import GameTracker, TrackerConfig, WheelParser

TARGET_LINES_PER_S = 40_000


def recorded_stream(games: int) -> tuple[bytes, list[float]]:
    """A simulated wheel's bytes for ``games`` games, as chunks arrive with their times."""
    wheel = SimulatedWheel(seed=1, timings=WheelTimings().scaled(1), games=games)
    chunks, times, now = [], [], 0.0
    while not wheel.finished:
        data = wheel.data_to_send(now)
        if data:
            chunks.append(data)
            times.append(now)
        now += 0.05
    return b"\n".join(chunks), times


def best_of(fn, repeat: int = 5) -> float:  # type: ignore[no-untyped-def]
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return min(samples) if samples else statistics.nan


def main() -> None:
    data, _ = recorded_stream(200)
    lines = data.count(b"\r\n")

    def parse_only() -> None:
        parser = WheelParser()
        for i in range(0, len(data), 64):
            parser.feed(data[i : i + 64])

    def parse_and_track() -> None:
        parser = WheelParser()
        tracker = GameTracker(TrackerConfig(status_timeout=0))
        now = 0.0
        for i in range(0, len(data), 64):
            for message in parser.feed(data[i : i + 64]):
                tracker.receive(message, now)
            now += 0.05
            tracker.poll(now)

    parse_rate = lines / best_of(parse_only)
    track_rate = lines / best_of(parse_and_track)
    print(f"stream: {lines} lines from 200 simulated games, fed in 64-byte reads")
    print(f"{'measure':<34} {'measured':>16} {'target':>16}  verdict")
    for label, rate in (("parse, lines/s", parse_rate), ("parse + track, lines/s", track_rate)):
        verdict = "met" if rate >= TARGET_LINES_PER_S else "NOT met"
        print(f"{label:<34} {rate:>16,.0f} {TARGET_LINES_PER_S:>16,}  {verdict}")


if __name__ == "__main__":
    main()
