"""Journal append latency per fsync policy: the journal's share of card-to-prompt latency.

Each append is one SQLite transaction in WAL mode; with durability "full" the WAL is fsynced
before append() returns (the record survives a power cut), with "normal" it is not (it
survives a process crash only). Run: ``.venv/bin/python bench/bench_journal.py [--dir DIR]``;
point --dir at the disk the controller will use (the default temp dir may be tmpfs, where
fsync costs nothing).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from shoe_controller.journal import Journal, verify_journal

# p99 targets for one append on an SSD: a card's prompt must appear well within 50 ms.
TARGET_P99_MS = {"full": 5.0, "normal": 1.0}
CARD = {
    "card": "QH",
    "counter": 123,
    "sensor": "scanner",
    "confidence": 98,
    "drawn_while_locked": False,
    "source": "scanner",
}


def filesystem(path: Path) -> str:
    try:
        out = subprocess.run(
            ["df", "-T", str(path)], capture_output=True, text=True, timeout=5, check=False
        )
        return out.stdout.splitlines()[-1].split()[1]
    except (OSError, IndexError, subprocess.SubprocessError):
        return "?"


def measure(directory: Path, durability: str, count: int) -> tuple[list[float], float]:
    path = directory / f"bench-{durability}.db"
    latencies = []
    with Journal(path, durability=durability) as journal:  # type: ignore[arg-type]
        for i in range(20):  # warm-up: file creation, first WAL pages
            journal.append("card", CARD | {"counter": i})
        started = time.perf_counter()
        for i in range(count):
            t0 = time.perf_counter()
            journal.append("card", CARD | {"counter": i})
            latencies.append((time.perf_counter() - t0) * 1000)
        elapsed = time.perf_counter() - started
    assert verify_journal(path).ok
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return latencies, count / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=None, help="where to write (default: temp)")
    parser.add_argument("--count", type=int, default=2000, help="appends per policy")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        directory = Path(tmp)
        print(
            f"journal append latency, {args.count} appends per policy, "
            f"{filesystem(directory)} at {directory} ({os.cpu_count()} cpus)"
        )
        print(
            f"{'durability':<11} {'fsync per append':<17} {'p50 ms':>8} {'p99 ms':>8} "
            f"{'max ms':>8} {'target p99':>11} {'appends/s':>10}  verdict"
        )
        for durability in ("full", "normal"):
            latencies, rate = measure(directory, durability, args.count)
            p50 = statistics.median(latencies)
            p99 = statistics.quantiles(latencies, n=100)[98]
            target = TARGET_P99_MS[durability]
            print(
                f"{durability:<11} {'yes (WAL fsync)' if durability == 'full' else 'no':<17} "
                f"{p50:8.3f} {p99:8.3f} {max(latencies):8.3f} {'< ' + str(target) + ' ms':>11} "
                f"{rate:10.0f}  {'ok' if p99 < target else 'MISSED'}"
            )


if __name__ == "__main__":
    main()
