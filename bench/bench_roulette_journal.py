"""``shoe journal export`` and ``recall`` of a wheel table's journal: a day's games replayed.

A real wheel sends its status every 500 ms and runs about 50 games an hour, so a journal holds
some 130 records per game; a table open 24 hours runs about 1,200 games (some 157,000
records). Both tools replay the whole journal into a fresh wheel table, so their time grows
with the journal. Target: a day's journal exported (and recalled) within 10 s on the dealer PC.

Run: .venv/bin/python bench/bench_roulette_journal.py [--games N]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from shoe_controller.commands.roulette_journal import export_lines, recall
from shoe_controller.journal import Journal

TARGET_SECONDS = 10.0
DAY_GAMES = 1200


def status(state: int, spin: int, last: int) -> str:
    return f"*X;{state};{spin:03d};{last:>2};0;250;0"


def write_journal(path: Path, games: int, seed: int = 1) -> int:
    """A journal of ``games`` games as a wheel reports them every 500 ms (real timings:
    25 s of bets, 14 s in the rim, 10 s of no more bets, 12 s of the number, 4 s before the
    next), with the bare result line; returns the records written."""
    rng = random.Random(seed)
    records = 0
    with Journal(path, durability="normal") as journal:
        at = 1_760_000_000.0
        journal.append("session", {"profile": "roulette-single-zero", "game": "roulette"},
                       wall_time=at)
        journal.append("link", {"up": True, "reason": ""}, wall_time=at)
        last = 0
        for game in range(games):
            number, spin = rng.randrange(37), game % 256 + 1
            lines = ([status(2, spin, last)] * 50 + [status(3, spin, last)] * 28
                     + [status(4, spin, last)] * 20 + [status(5, spin, number)] * 24
                     + [f"{number:>2}"] + [status(1, spin, number)] * 8)
            for line in lines:
                at += 0.5
                journal.append("wheel_line", {"line": line, "noise": ""}, wall_time=at)
            records += len(lines)
            last = number
    return records + 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=DAY_GAMES)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "wheel.db"
        records = write_journal(path, args.games)
        start = time.perf_counter()
        rounds = sum(1 for _ in export_lines(path))
        export_s = time.perf_counter() - start
        start = time.perf_counter()
        recall(path, 10)
        recall_s = time.perf_counter() - start
    assert rounds == args.games, (rounds, args.games)
    scale = DAY_GAMES / args.games  # the figure for a day's journal, if fewer games were run
    rows = [("export", export_s), ("recall --last 10", recall_s)]
    print(f"wheel journal: {args.games} games, {records} records")
    print(f"{'tool':<18} {'measured':>10} {'records/s':>10} {'a day (est.)':>13} {'target':>8}")
    for name, seconds in rows:
        day = seconds * scale
        print(f"{name:<18} {seconds:>9.2f}s {records / seconds:>10.0f} {day:>12.1f}s "
              f"{TARGET_SECONDS:>7.0f}s  {'ok' if day <= TARGET_SECONDS else 'MISSED'}")


if __name__ == "__main__":
    main()
