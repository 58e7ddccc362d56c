"""Card to prompt on a serial line that takes wire time, clean and bad, with and without the
link's fast recovery (SPEC 8.8).

    .venv/bin/python bench/bench_fast_recovery.py [--runs N] [--baud B]

Per run: the real controller (``running_table``: journal with fsync, table, ``ShoeConnection``)
and the real software shoe (dealer at pace 0: a card as soon as the exit opens and the last
card was acknowledged) on the in-process wire paced at ``--baud`` (115200 8N1 by default: a
23-byte CardDrawn frame takes 2.0 ms), a whole 8-deck shoe. The bad line, on both directions at
the host's end (so the shoe-to-host faults act after the line, the host-to-shoe ones before
it): 1 % of bytes corrupted, 0.5 % of frames dropped, 0.5 % duplicated.

* card -> prompt: from the shoe's **first** transmission of a card (its bytes handed to the
  line) to the controller's listener seeing the prompt that card caused. It includes the wire
  time, any recovery, the journal's fsync and the table.
* whole shoe: from the start to the shoe finished (SHOE_EMPTY handled), pace 0.

The link revisions run on the same line and seeds (``--revisions``, both ends on the same
one): ``1.3`` (fast recovery and frame copies, the default, SPEC 8.8 and 8.9), ``1.2`` (fast
recovery without copies: ``frame_copies=False``) and ``1.0`` (``fast_recovery=False``: what
the link did before). Every run checks that the journal holds every card exactly once, in
order. The table prints medians over ``--runs`` shoes beside the targets of issue 14; a clean
and a bad shoe of each seed run back to back, and the range of those per-seed ratios shows
how much the machine's load moved the figures (``--skip-old`` leaves out the slow revision 1.0
cells).

The same through the CLI (``shoe sim --tcp``, a corrupting proxy, ``shoe run``):
``bench/bench_faulty_runs.py``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from firmware_protocol import messages as wire
from firmware_protocol.codec import FrameDecoder
from firmware_protocol.link import LinkConfig
from shoe_controller.cards import new_shoe
from shoe_controller.config import load_run_config
from shoe_controller.device import ShoeConnection
from shoe_controller.journal import Journal
from shoe_controller.table.controller import Update
from shoe_controller.table.runtime import running_table
from shoe_controller.transports.base import Transport
from shoe_controller.transports.memory import memory_pair
from simulators.dealer import VirtualDealer
from simulators.faults import FaultConfig, FaultInjector, FaultyTransport
from simulators.shoe import ShoeRunner, SimulatedShoe
from simulators.shoe_model import ShoeModel

PROFILE = "punto-banco-8d"
BAD_LINE = "corrupt=0.01,drop-frame=0.005,dup-frame=0.005"
TARGET_P50_MS, TARGET_P99_MS, TARGET_RATIO = 5.0, 25.0, 1.5
REVISIONS = {
    "1.3": LinkConfig(),
    "1.2": LinkConfig(frame_copies=False),
    "1.0": LinkConfig(fast_recovery=False),
}
"""Link revision -> the link's protocol options (the timings come from the run config)."""


class CardTimes:
    """When each card first went onto the line, and when its prompt came."""

    def __init__(self) -> None:
        self.sent: dict[int, float] = {}
        self.prompted: dict[int, float] = {}
        self.table: object = None
        self._decoder = FrameDecoder()
        self._lock = threading.Lock()

    def watch_writes(self, transport: Transport) -> Transport:
        inner_write = transport.write

        def write(data: bytes) -> None:
            now = time.perf_counter()
            with self._lock:
                for frame in self._decoder.feed(data):
                    if isinstance(frame.message, wire.CardDrawn):
                        self.sent.setdefault(frame.message.counter, now)
            inner_write(data)

        transport.write = write  # type: ignore[method-assign]
        return transport

    def listener(self, update: Update) -> None:
        if update.input_kind == "card":
            counter = self.table.last_counter  # type: ignore[attr-defined]
            self.prompted.setdefault(counter, time.perf_counter())

    def latencies_ms(self) -> list[float]:
        with self._lock:
            return [(self.prompted[c] - self.sent[c]) * 1000 for c in self.prompted
                    if c in self.sent]


@dataclass
class Run:
    latencies: list[float]
    seconds: float
    cards: int
    finished: bool = True
    """False: the table stopped dealing (a latched irregularity, which needs a supervisor: a
    revision 1.0 link down for longer than the grace mid-round) within 300 s."""


def one_shoe(directory: Path, *, seed: int, baud: int, bad: bool, revision: str) -> Run:
    cards = new_shoe(8, seed)
    journal = directory / f"j-{seed}-{baud}-{bad}-{revision}.sqlite"
    options = REVISIONS[revision]
    config = load_run_config(None, {
        "device": "memory://bench", "profile": PROFILE, "journal": journal,
        "betting_seconds": 0, "shoes": 1, "log_level": "warning"})
    link = dataclasses.replace(config.link_config(), fast_recovery=options.fast_recovery,
                               frame_copies=options.frame_copies)
    host, device = memory_pair(baud=baud)
    if bad:
        faults = FaultConfig.parse(f"{BAD_LINE},seed={seed}")
        host = FaultyTransport(host, tx=FaultInjector(faults),
                               rx=FaultInjector(dataclasses.replace(faults, seed=seed + 1)))
    times = CardTimes()
    shoe = SimulatedShoe(ShoeModel(cards, cut_card=14), link_config=options,
        dealer=VirtualDealer(pace=0.0, button_delay=0.0),
        rng=random.Random(seed), announce_loaded=True)
    connection = ShoeConnection(host, link_config=link)
    started = time.perf_counter()
    with ShoeRunner(shoe, times.watch_writes(device)).start() as runner, \
            running_table(config, connection=connection) as controller:
        times.table = controller.table
        controller.listeners.append(times.listener)
        deadline = time.monotonic() + 300
        controller.run(lambda: time.monotonic() > deadline, shoes=1)
        runner.check()
        finished = bool(controller.shoes_finished)
        if not finished:
            print(f"  seed {seed}: the shoe did not finish within 300 s "
                  f"({controller.table.view().prompt})", flush=True)
    seconds = time.perf_counter() - started
    with Journal(journal, readonly=True) as store:
        counters = [r.data["counter"] for r in store.records() if r.kind == "card"]
    if counters != list(range(1, len(counters) + 1)) or (
            finished and len(counters) < len(cards) - 20):
        raise SystemExit(f"seed {seed}: the journal's cards are not 1..N exactly once, in order")
    return Run(times.latencies_ms(), seconds, len(counters), finished)


def load_average() -> str:
    """The machine's load, printed beside the figures it weighs on."""
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min)"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="shoes per cell (default 3)")
    parser.add_argument("--baud", type=int, default=115200, help="line rate (default 115200)")
    parser.add_argument("--revisions", default="1.3,1.2,1.0",
                        help="link revisions to run, comma-separated (default 1.3,1.2,1.0)")
    parser.add_argument("--skip-old", action="store_true",
                        help="leave out the revision 1.0 cells (a bad shoe takes ~90 s there)")
    args = parser.parse_args()
    versions = tuple(r.strip() for r in args.revisions.split(",") if r.strip())
    unknown = [r for r in versions if r not in REVISIONS]
    if unknown or not versions:
        parser.error(f"--revisions: unknown {', '.join(unknown) or 'none given'} "
                     f"(known: {', '.join(REVISIONS)})")
    if args.skip_old:
        versions = tuple(r for r in versions if r != "1.0")
    print(f"paced line {args.baud} baud 8N1; bad line: {BAD_LINE} (both ways); "
          f"{args.runs} shoe(s) per cell; pace 0; {load_average()}", flush=True)
    runs: dict[tuple[str, bool], list[Run]] = {(f, b): [] for f in versions for b in (False, True)}
    with tempfile.TemporaryDirectory(prefix="bench-fast-recovery-") as tmp:
        # Seeds outside, cells inside: a clean shoe and a bad one run back to back, so that
        # a shared machine's load weighs on both sides of each ratio alike.
        for seed in range(1, args.runs + 1):
            for revision in versions:
                for bad in (False, True):
                    run = one_shoe(Path(tmp), seed=seed, baud=args.baud, bad=bad,
                                   revision=revision)
                    runs[revision, bad].append(run)
                    print(f"  seed {seed} link {revision} "
                          f"{'bad  ' if bad else 'clean'}: {run.cards} cards, shoe "
                          f"{run.seconds:.2f} s{'' if run.finished else ' (not finished)'}",
                          flush=True)
    print()
    print(f"{'link':5} {'line':6} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'shoe s':>7} "
          f"{'x clean':>8} {'per seed':>24}  target")
    for (revision, bad), cell in runs.items():
        latencies = [value for run in cell for value in run.latencies]
        done = [run for run in cell if run.finished]
        clean = [run for run in runs[revision, False] if run.finished]
        if not done or not clean:
            print(f"{revision:5} {'bad' if bad else 'clean':6} no shoe finished")
            continue
        seconds = statistics.median(run.seconds for run in done)
        ratio = seconds / statistics.median(run.seconds for run in clean)
        per_seed = [b.seconds / c.seconds for b, c in zip(cell, runs[revision, False], strict=True)
                    if b.finished and c.finished]
        spread = f"{min(per_seed):.2f}-{max(per_seed):.2f}x"
        if len(done) < len(cell):
            spread = f"{len(done)}/{len(cell)} done, {spread}"
        p50, p99 = percentile(latencies, 50), percentile(latencies, 99)
        target = ""
        if revision != "1.0" and bad:
            ok = (p50 < TARGET_P50_MS and p99 < TARGET_P99_MS and ratio < TARGET_RATIO
                  and len(done) == len(cell))
            target = (f"p50 < {TARGET_P50_MS:g}, p99 < {TARGET_P99_MS:g} ms, shoe < "
                      f"{TARGET_RATIO:g}x clean: {'ok' if ok else 'NOT MET'}")
        print(f"{revision:5} {'bad' if bad else 'clean':6} {p50:7.2f} "
              f"{p99:7.2f} {max(latencies):7.1f} {seconds:7.2f} {ratio:8.2f} {spread:>24}  "
              f"{target}")
    print("\nx clean: the median bad shoe over the median clean one; per seed: the range of "
          "each seed's bad shoe over its clean one (run back to back)")
    print(f"{load_average()} at the end (a shared machine's other work slows the host, "
          "clean and bad alike but not evenly: compare runs made at a low load)")


if __name__ == "__main__":
    main()
