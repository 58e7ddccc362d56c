"""Live table latency: a card frame reaching the host -> its dealer prompt; and a whole demo shoe.

    .venv/bin/python bench/bench_table.py [--shoes N] [--demo-runs N]

Card to prompt: the real controller (``running_table``: journal, table, ``ShoeConnection``)
against the real software shoe (``SimulatedShoe``, dealer at pace 0) over the in-process memory
wire. The host transport's ``read`` is wrapped: when the bytes completing a ``CardDrawn`` frame
are read by the host's I/O thread, the time is noted (first arrival of each card counter, so a
retransmission does not restart the clock). A controller listener notes when the ``Update``
carrying that card's new prompt is emitted. The difference covers the link, the hand-over to
the controller thread, the journal append (SQLite WAL, fsync per record with durability
``full``), the table and the device sync. The journal lives on a real disk (not tmpfs).

Whole shoe: ``shoe demo --seed S --pace 0`` as a subprocess, wall time of the whole command.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from firmware_protocol import messages as wire
from firmware_protocol.codec import FrameDecoder
from shoe_controller.cards import new_shoe
from shoe_controller.config import load_run_config
from shoe_controller.device import ShoeConnection
from shoe_controller.games.baccarat.profile import load_profile
from shoe_controller.journal.store import DURABILITY_PRAGMA
from shoe_controller.table.controller import Update
from shoe_controller.table.runtime import link_config, running_table
from shoe_controller.transports.base import Transport
from shoe_controller.transports.memory import memory_pair
from simulators.dealer import VirtualDealer
from simulators.shoe import ShoeRunner, SimulatedShoe
from simulators.shoe_model import ShoeModel

ROOT = Path(__file__).resolve().parent.parent
PROFILE = "punto-banco-8d"
TARGET_P99_MS = 50.0
TARGET_SHOE_S = 60.0
FSYNC_POLICY = {
    "full": "fsync of the WAL on every record, before the record takes effect",
    "normal": "no fsync per record (WAL synced at checkpoints); survives a process crash, "
    "not a power cut",
}


def filesystem_type(path: Path) -> str:
    """The type of the filesystem holding ``path`` (longest matching mount point)."""
    best, kind = "", "?"
    resolved = str(path.resolve())
    with contextlib.suppress(OSError), open("/proc/mounts", encoding="utf-8") as mounts:
        for line in mounts:
            fields = line.split()
            if len(fields) < 3:
                continue
            mount = fields[1]
            inside = resolved == mount or resolved.startswith(mount.rstrip("/") + "/")
            if inside and len(mount) > len(best):
                best, kind = mount, fields[2]
    return kind


@contextlib.contextmanager
def disk_directory() -> Iterator[Path]:
    """A scratch directory on a real disk: /tmp unless it is tmpfs, else ``.bench/`` here."""
    base = Path(tempfile.gettempdir())
    if filesystem_type(base) in ("tmpfs", "ramfs"):
        base = ROOT / ".bench"
        base.mkdir(exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix="bench-table-", dir=base))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        if base == ROOT / ".bench":
            with contextlib.suppress(OSError):
                base.rmdir()


class CardClock:
    """Times each card from its frame's arrival at the host to the controller's prompt."""

    def __init__(self) -> None:
        self.table: object = None  # the controller's table, once it exists
        self.arrived: dict[int, float] = {}
        self.prompted: dict[int, float] = {}
        self._decoder = FrameDecoder()
        self._lock = threading.Lock()

    def wrap(self, transport: Transport) -> Transport:
        """Note the arrival time of every CardDrawn frame the host reads (instance wrapper)."""
        inner_read = transport.read

        def read(size: int = 4096, timeout: float | None = None) -> bytes:
            data = inner_read(size, timeout)
            if data:
                now = time.perf_counter()
                with self._lock:
                    for frame in self._decoder.feed(data):
                        if isinstance(frame.message, wire.CardDrawn):
                            self.arrived.setdefault(frame.message.counter, now)
            return data

        transport.read = read  # type: ignore[method-assign]
        return transport

    def listener(self, update: Update) -> None:
        if update.input_kind != "card":
            return
        now = time.perf_counter()
        counter = self.table.last_counter  # type: ignore[attr-defined]
        self.prompted.setdefault(counter, now)
        assert update.view.prompt, "a card without a prompt"

    def latencies_ms(self) -> list[float]:
        with self._lock:
            return [
                (self.prompted[c] - self.arrived[c]) * 1000
                for c in self.prompted
                if c in self.arrived
            ]


def play_shoe(directory: Path, durability: str, seed: int) -> tuple[list[float], int, float]:
    """One whole shoe in-process; returns (latencies ms, cards, seconds)."""
    profile = load_profile(PROFILE)
    cards = new_shoe(profile.decks, seed)
    journal = directory / f"journal-{durability}-{seed}.sqlite"
    host, device = memory_pair()
    shoe = SimulatedShoe(
        ShoeModel(cards, cut_card=profile.shoe_rules.cut_card, seed=seed),
        dealer=VirtualDealer(pace=0.0, button_delay=0.0),
        rng=random.Random(seed),
        announce_loaded=True,
    )
    config = load_run_config(
        None,
        {
            "device": "memory://bench",
            "profile": PROFILE,
            "journal": journal,
            "betting_seconds": 0,
            "shoes": 1,
            "durability": durability,
            "log_level": "warning",
        },
    )
    clock = CardClock()
    connection = ShoeConnection(clock.wrap(host), link_config=link_config(config))
    started = time.perf_counter()
    with (
        ShoeRunner(shoe, device).start() as runner,
        running_table(config, connection=connection) as controller,
    ):
        clock.table = controller.table
        controller.listeners.append(clock.listener)
        stop = threading.Event()
        deadline = time.monotonic() + 120
        controller.run(lambda: stop.is_set() or time.monotonic() > deadline, shoes=1)
        runner.check()
        if not controller.shoes_finished:
            raise SystemExit(f"{durability}: the shoe did not finish within 120 s")
    elapsed = time.perf_counter() - started
    return clock.latencies_ms(), len(clock.prompted), elapsed


def raw_fsync_ms(directory: Path, count: int = 200) -> list[float]:
    """What one append + fsync of 64 bytes costs on this disk: the floor under ``full``."""
    times = []
    fd = os.open(directory / "fsync-probe", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for _ in range(count):
            started = time.perf_counter()
            os.write(fd, b"x" * 64)
            os.fsync(fd)
            times.append((time.perf_counter() - started) * 1000)
    finally:
        os.close(fd)
    return times


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def demo_seconds(seed: int) -> float:
    command = [sys.executable, "-m", "shoe_controller", "demo", "--seed", str(seed), "--pace", "0"]
    started = time.perf_counter()
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=300, check=False, cwd=tempfile.gettempdir()
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0 or "Shoe summary" not in done.stdout:
        raise SystemExit(
            f"shoe demo --seed {seed} failed ({done.returncode}):\n{done.stderr[-2000:]}"
        )
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=2, help="shoes per durability (default 2)")
    parser.add_argument("--demo-runs", type=int, default=3, help="shoe demo runs (default 3)")
    args = parser.parse_args()

    rows: list[tuple[str, str, str, str]] = []
    with disk_directory() as directory:
        fs = filesystem_type(directory)
        print(f"journal directory: {directory} ({fs}); cpus: {os.cpu_count()}")
        probe = raw_fsync_ms(directory)
        rows.append(
            (
                "raw write+fsync of 64 B (this disk)",
                f"p50 {percentile(probe, 50):6.2f} ms  p99 {percentile(probe, 99):6.2f} ms",
                "(reference)",
                "",
            )
        )
        for durability in ("full", "normal"):
            latencies: list[float] = []
            cards = 0
            seconds = 0.0
            for n in range(args.shoes):
                shoe_latencies, shoe_cards, elapsed = play_shoe(directory, durability, 1000 + n)
                latencies += shoe_latencies
                cards += shoe_cards
                seconds += elapsed
            p50, p99 = percentile(latencies, 50), percentile(latencies, 99)
            print(
                f"durability {durability} (SQLite journal_mode=WAL, "
                f"synchronous={DURABILITY_PRAGMA[durability]}): {FSYNC_POLICY[durability]}"
            )
            print(
                f"  {cards} cards in {args.shoes} shoe(s), {seconds:.1f} s in-process; "
                f"card->prompt p50 {p50:.2f} ms, p99 {p99:.2f} ms, max {max(latencies):.2f} ms"
            )
            target = f"p99 < {TARGET_P99_MS:.0f} ms" if durability == "full" else "(reference)"
            verdict = ("ok" if p99 < TARGET_P99_MS else "MISSED") if durability == "full" else ""
            rows.append(
                (
                    f"card->prompt, durability={durability}",
                    f"p50 {p50:6.2f} ms  p99 {p99:6.2f} ms",
                    target,
                    verdict,
                )
            )

    times = [demo_seconds(3 + run) for run in range(args.demo_runs)]
    median = statistics.median(times)
    rows.append(
        (
            f"shoe demo --pace 0 (whole shoe, {len(times)} runs)",
            f"median {median:5.2f} s  max {max(times):5.2f} s",
            f"< {TARGET_SHOE_S:.0f} s",
            "ok" if max(times) < TARGET_SHOE_S else "MISSED",
        )
    )

    print()
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    header = ("measure", "measured", "target", "")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip())
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


if __name__ == "__main__":
    main()
