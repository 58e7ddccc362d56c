"""Whole-shoe runs as a new user makes them, on a bad line: how many finish, and how right.

    .venv/bin/python bench/bench_faulty_runs.py [--runs 30] [--jobs 2] [--careless-reload]

Each run (seeds ``--first-seed`` onwards): ``shoe sim --tcp`` deals an 8-deck shoe from a shoe
file written for the seed (``--pace 0 --button-delay 0``); ``python -m simulators.faulty_proxy``
sits in between (default: 1 % of bytes corrupted both ways and a cut about every 3 kB of each
direction's traffic, seeded per run); ``shoe run`` (no table system, ``--shoes 1``) deals the
shoe to its end. A run that journals nothing new for ``--stall`` seconds (60) is STALLED: the
tails of the processes' stderr and the last rounds are printed. A finished run's
``shoe journal export --json`` is compared line for line with ``shoe replay --json`` of the
same shoe file: ``match`` or ``MISMATCH``; anything else (a process failing, the overall
``--timeout``) is an ERROR. Every process is killed at the end, whatever happens (Ctrl-C too).

Columns: ``wall s`` is ``shoe run`` from start to exit (start-up included), ``deal s`` the
journal's first record to its last (the shoe itself). ``--faults "seed={seed}"`` is the same
run on a clean line: compare the medians of the two runs (issue 14's target: the bad line in
under 1.5x the clean one).

Run on demand, not in CI. The work directory (journals, shoe files, logs) is kept when a run
did not match, and its path printed.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.processes import (
    ProcessKeeper,
    Started,
    card_records,
    journal_records,
    json_lines,
    last_rounds,
    replay_lines,
    run_args,
    run_shoe_cli,
    start_proxy,
    start_sim,
    write_shoe_file,
)

BAD_LINE = "corrupt=0.01,disconnect=0.00033,seed={seed}"
"""1 % of bytes corrupted, a cut about every 3 000 bytes of one direction (per-byte rate)."""
POLL = 1.0
TAIL = 2500

MATCH, MISMATCH, STALL, ERROR = "match", "MISMATCH", "STALL", "ERROR"


@dataclass
class RunResult:
    seed: int
    seconds: float
    cards: int
    result: str
    detail: str = ""
    cuts: str = "?"
    dealing: float = 0.0
    """Seconds from the journal's first record to its last: the shoe dealt, without the
    processes' start-up."""


class Bench:
    """Shared state of the runs: the stop flag, the keepers to kill, one printer."""

    def __init__(self, args: argparse.Namespace, workdir: Path) -> None:
        self.args = args
        self.workdir = workdir
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._keepers: list[ProcessKeeper] = []

    def say(self, text: str) -> None:
        with self._lock:
            print(text, flush=True)

    def kill_all(self) -> None:
        with self._lock:
            keepers = list(self._keepers)
        for keeper in keepers:
            keeper.close()

    # -- one run --------------------------------------------------------------------------------

    def run(self, seed: int) -> RunResult:
        if self.stop.is_set():
            return RunResult(seed, 0.0, 0, ERROR, "not started: interrupted")
        directory = self.workdir / f"seed-{seed}"
        logs = directory / "logs"
        logs.mkdir(parents=True)
        keeper = ProcessKeeper(logs)
        with self._lock:
            self._keepers.append(keeper)
        started = time.monotonic()
        try:
            with keeper:
                result = self._deal(seed, directory, keeper)
        except Exception as exc:  # noqa: BLE001 - a failed run is a row of the table
            result = RunResult(seed, 0.0, 0, ERROR, f"{type(exc).__name__}: {exc}"[:300])
        if not result.seconds:
            result.seconds = time.monotonic() - started
        self.say(f"seed {seed}: {result.result} after {result.seconds:.0f} s, "
                 f"{result.cards} cards {result.detail}")
        return result

    def _deal(self, seed: int, directory: Path, keeper: ProcessKeeper) -> RunResult:
        args = self.args
        shoe_file = write_shoe_file(directory, seed)
        journal = directory / "table.sqlite"
        sim_args = ["--cards", str(shoe_file), "--pace", "0", "--button-delay", "0"]
        if args.careless_reload:
            sim_args.append("--careless-reload")
        sim, sim_port = start_sim(keeper, *sim_args)
        proxy, proxy_port = start_proxy(keeper, sim_port, args.faults.format(seed=seed))
        begin = time.monotonic()
        run = keeper.start(run_args(proxy_port, journal, "--log-level", "info"), "run")
        records, progress_at = 0, begin
        while True:
            code = run.popen.poll()
            now = time.monotonic()
            if self.stop.is_set():  # (the processes are being killed: no post-mortem)
                return RunResult(seed, now - begin, card_records(journal), ERROR, "interrupted")
            if code is not None:
                break
            latest = journal_records(journal)
            if latest != records:
                records, progress_at = latest, now
            why = ""
            if not sim.alive() or not proxy.alive():
                why = "the simulator or the proxy died"
            elif now - progress_at > args.stall:
                self._dump(seed, "stalled", journal, run=run, sim=sim, proxy=proxy)
                return RunResult(seed, now - begin, card_records(journal), STALL,
                                 f"no journal record for {args.stall:g} s; "
                                 f"{latched_in_last_round(journal)}", self._cuts(proxy))
            elif now - begin > args.timeout:
                why = f"still dealing after {args.timeout:g} s"
            if why:
                self._dump(seed, why, journal, run=run, sim=sim, proxy=proxy)
                return RunResult(seed, now - begin, card_records(journal), ERROR, why,
                                 self._cuts(proxy))
            try:
                run.popen.wait(POLL)  # returns as soon as it exits: the time is exact
            except subprocess.TimeoutExpired:
                pass
        seconds = time.monotonic() - begin
        cuts = self._cuts(proxy)
        cards = card_records(journal)
        if code != 0:
            self._dump(seed, f"shoe run exited with {code}", journal, run=run, sim=sim,
                       proxy=proxy)
            return RunResult(seed, seconds, cards, ERROR, f"shoe run exited with {code}", cuts)
        export = run_shoe_cli("journal", "export", str(journal), "--json")
        if export.returncode != 0:
            return RunResult(seed, seconds, cards, ERROR,
                             f"journal export failed: {export.stderr.strip()[-200:]}", cuts)
        got, want = export.stdout.splitlines(), replay_lines(shoe_file)
        if got == want:
            return RunResult(seed, seconds, cards, MATCH, "", cuts, dealing_seconds(journal))
        first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b),
                     min(len(got), len(want)))
        return RunResult(seed, seconds, cards, MISMATCH,
                         f"{len(got)} vs {len(want)} lines, first difference at line {first + 1}",
                         cuts)

    def _cuts(self, proxy: Started) -> str:
        """The proxy's cut count, from its summary line (it writes one when stopped)."""
        if proxy.alive():
            proxy.popen.send_signal(signal.SIGTERM)
            try:
                proxy.popen.wait(10)
            except Exception:  # noqa: BLE001 - killed by the keeper anyway
                return "?"
        for line in reversed(proxy.stderr().splitlines()):
            if " cuts; " in line:
                return line.split(" cuts; ")[0].rsplit(" ", 1)[-1]
        return "?"

    def _dump(self, seed: int, why: str, journal: Path, **procs: Started) -> None:
        parts = [f"===== seed {seed}: {why}; last rounds:", last_rounds(journal).rstrip()]
        for name, proc in procs.items():
            parts.append(f"----- {name} stderr ends with:")
            parts.append(proc.stderr()[-TAIL:].rstrip())
        self.say("\n".join(parts) + "\n=====")


def dealing_seconds(journal: Path) -> float:
    with sqlite3.connect(f"file:{journal}?mode=ro", uri=True) as conn:
        first, last = conn.execute("SELECT MIN(wall_time), MAX(wall_time) FROM records").fetchone()
    return float(last - first) if first is not None else 0.0


def latched_in_last_round(journal: Path) -> str:
    """Whether the table told anyone: the irregularities of the last round (``shoe journal
    recall``, run as a process so that it reads the journal with the code that wrote it)."""
    recall = run_shoe_cli("journal", "recall", str(journal), "--last", "1", "--json")
    rounds = json_lines(recall.stdout) if recall.returncode == 0 else []
    if not rounds:
        return "no round dealt yet" if recall.returncode == 0 else "journal recall failed"
    last = rounds[-1]
    where = f"shoe {last.get('shoe')} round {last.get('round')}"
    if last.get("irregularities"):
        return f"{where} latched {', '.join(last['irregularities'])}"
    return f"{where}: nothing latched (a silent stall)"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="runs (seeds), default 30")
    parser.add_argument("--jobs", type=int, default=2, help="runs in parallel, default 2")
    parser.add_argument("--first-seed", type=int, default=1, help="seed of the first run")
    parser.add_argument("--faults", default=BAD_LINE,
                        help=f"the proxy's faults; {{seed}} is the run's seed (default {BAD_LINE})")
    parser.add_argument("--stall", type=float, default=60.0,
                        help="seconds without a new journal record that make a stall")
    parser.add_argument("--timeout", type=float, default=1200.0,
                        help="seconds a run may take at most")
    parser.add_argument("--careless-reload", action="store_true",
                        help="the simulator's dealer reloads on any SHUFFLE light (issue 20)")
    parser.add_argument("--workdir", type=Path, help="keep everything here (default: a "
                        "temporary folder, removed if every run matched)")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.jobs < 1:
        parser.error("--runs and --jobs must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench-faulty-runs-"))
    workdir.mkdir(parents=True, exist_ok=True)
    bench = Bench(args, workdir)
    seeds = list(range(args.first_seed, args.first_seed + args.runs))

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    print(f"{args.runs} runs, {args.jobs} at a time; line: {args.faults}; dealer: "
          f"{'careless' if args.careless_reload else 'careful'}; work dir {workdir}",
          flush=True)
    results: list[RunResult] = []
    pool = ThreadPoolExecutor(max_workers=args.jobs)
    try:
        futures = [pool.submit(bench.run, seed) for seed in seeds]
        for future in futures:
            while True:  # a timed wait, so Ctrl-C gets through
                try:
                    results.append(future.result(timeout=0.5))
                    break
                except TimeoutError:
                    continue
    except KeyboardInterrupt:
        print("interrupted: killing every process", file=sys.stderr, flush=True)
        bench.stop.set()
        interrupted = True
    else:
        interrupted = False
    finally:
        bench.stop.set()
        bench.kill_all()
        pool.shutdown(wait=True, cancel_futures=True)
        bench.kill_all()  # anything a run started while we were stopping
        signal.signal(signal.SIGTERM, previous)
    if results:
        report(results)
    if interrupted:
        print(f"interrupted after {len(results)} of {len(seeds)} runs; logs in {workdir}")
        return 130
    if args.workdir is None and all(r.result == MATCH for r in results):
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        print(f"logs, journals and shoe files kept in {workdir}")
    return 0 if all(r.result == MATCH for r in results) else 1


def report(results: list[RunResult]) -> None:
    print()
    print(f"{'seed':>5} {'wall s':>7} {'deal s':>7} {'cards':>6} {'cuts':>5}  "
          f"{'result':<9} detail")
    for r in sorted(results, key=lambda r: r.seed):
        print(f"{r.seed:>5} {r.seconds:>7.2f} {r.dealing:>7.2f} {r.cards:>6} {r.cuts:>5}  "
              f"{r.result:<9} {r.detail}")
    times = [r.seconds for r in results]
    dealt = [r.dealing for r in results if r.result == MATCH]
    counts = {kind: sum(r.result == kind for r in results)
              for kind in (MATCH, MISMATCH, STALL, ERROR)}
    print(f"{len(results)} runs: {counts[MATCH]} match, {counts[MISMATCH]} mismatch, "
          f"{counts[STALL]} stalled, {counts[ERROR]} errors; wall time median "
          f"{statistics.median(times):.2f} s, max {max(times):.2f} s"
          + (f"; dealing median {statistics.median(dealt):.2f} s" if dealt else ""))


if __name__ == "__main__":
    sys.exit(main())
