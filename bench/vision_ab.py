"""The working tree's camera recogniser against another revision's, timed in one run.

This machine is shared, and its speed swings by a third from one minute to the next: two
benches run one after the other compare the machine as much as the code. Here each version
runs in a process of its own (the other revision exported with ``git archive``, so each
imports its own ``vision``), enrolled from the same seeded draw of a labelled folder, and
the two read each test photo in turn, A then B, then B then A on the next photo, so a swing
falls on both alike. Prints each version's reads and CPU time per frame (the reading
thread's, one core), the photos on which they decided differently, and the ratio of their
total CPU times.

Usage: flock /tmp/bench.lock .venv/bin/python bench/vision_ab.py [--against REV]
    [--enrol-per-card 5] [--seed 2024] [--roi whole] [--every N] FOLDER

The other revision must have ``vision.bench.holdout_bench`` (2026-11-25 and later).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent


# ------------------------------------------------------------------------- the worker side
def _worker(root: Path, folder: Path, per_card: int, seed: int, roi_text: str | None) -> None:
    """Enrol with the ``vision`` of ``root``, then read the test photo whose index comes in
    on each line of stdin, answering with one JSON line on stdout."""
    sys.path.insert(0, str(root))
    import time

    import cv2

    from shoe_controller.errors import ShoeError
    from vision import bench
    from vision.capture import read_image
    from vision.recognise import Recogniser
    from vision.roi import parse_roi

    cv2.setNumThreads(1)  # the figures are for one core
    try:
        roi = None if roi_text is None else parse_roi(roi_text)
        _, test = bench.draw_enrolment(bench.read_labels(folder), per_card, seed)
        # Enrolled as `shoe vision bench --enrol-per-card` enrols (holdout_bench: cards
        # with too few photos showing them left out), its reading of the test photos
        # skipped: they are read here, in turn with the other version.
        measure, bench.measure = bench.measure, lambda *_args, **_kwargs: bench.BenchResult()
        try:
            model = bench.holdout_bench(folder, per_card, seed, roi, name="ab").model
        finally:
            bench.measure = measure
    except (ShoeError, ValueError) as exc:  # a bad folder or draw: said, not a traceback
        print(json.dumps({"error": str(exc)}), flush=True)
        return
    if model is None:
        print(json.dumps({"error": "fewer than 2 cards had 2 photos showing them to enrol"}),
              flush=True)
        return
    recogniser = Recogniser(model)
    print(json.dumps({"frames": len(test)}), flush=True)
    for line in sys.stdin:
        path, card = test[int(line)]
        frame = read_image(path)
        cpu = time.thread_time()
        read = recogniser.recognise(frame)
        cpu = time.thread_time() - cpu
        print(json.dumps({"file": path.name, "card": card.code,
                          "read": None if read.card is None else read.card.code,
                          "reason": read.reason, "cpu_ms": cpu * 1e3}), flush=True)


# ------------------------------------------------------------------------- the driver side
@dataclass
class Version:
    name: str
    process: subprocess.Popen[str]
    errors: IO[str]
    reads: list[dict[str, Any]] = field(default_factory=list)

    def ask(self, request: str | None = None) -> dict[str, Any]:
        """One request (a test photo's index; none for the ready line) and its answer."""
        assert self.process.stdin is not None and self.process.stdout is not None
        if request is not None:
            self.process.stdin.write(request + "\n")
            self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            self.process.wait()
            self.errors.seek(0)
            tail = "".join(self.errors.readlines()[-15:])
            raise SystemExit(f"vision_ab: the {self.name} process stopped "
                             f"(exit {self.process.returncode}):\n{tail}")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise SystemExit(f"vision_ab: {self.name}: {answer['error']}")
        return answer


@contextmanager
def exported(revision: str) -> Iterator[Path]:
    """A temporary copy of the repository at ``revision`` (``git archive``)."""
    with tempfile.TemporaryDirectory(prefix="vision-ab-") as scratch:
        archive = Path(scratch) / "revision.tar"
        try:
            subprocess.run(["git", "-C", str(REPO), "archive", "-o", str(archive), revision],
                           check=True, capture_output=True, text=True)
        except subprocess.CalledProcessError as exc:
            raise SystemExit(f"vision_ab: cannot export {revision!r}: "
                             f"{exc.stderr.strip()}") from None
        root = Path(scratch) / "tree"
        with tarfile.open(archive) as tar:
            # Our own repository's files; the "data" filter where this Python has it (3.11.4+).
            safe: dict[str, Any] = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(root, **safe)
        yield root


@contextmanager
def started(name: str, root: Path, args: argparse.Namespace) -> Iterator[Version]:
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", str(root),
               "--enrol-per-card", str(args.enrol_per_card), "--seed", str(args.seed),
               str(args.folder)]
    if args.roi:
        command += ["--roi", args.roi]
    # Each worker's BLAS on one thread too (the benches' rule: one core's cost).
    environment = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    with tempfile.TemporaryFile("w+") as errors:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=errors, text=True, env=environment)
        try:
            yield Version(name, process, errors)
        finally:
            if process.stdin is not None:
                process.stdin.close()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def compare(args: argparse.Namespace) -> list[Version]:
    """Both versions enrolled, then every ``args.every``-th test photo read by each in
    turn; the versions (this tree first) with their reads."""
    with exported(args.against) as other_root, \
            started("working tree", REPO, args) as this, \
            started(args.against, other_root, args) as other:
        counts = {this.ask()["frames"], other.ask()["frames"]}
        if len(counts) != 1:
            raise SystemExit(f"vision_ab: the two versions drew different test photos "
                             f"({sorted(counts)})")
        for turn, index in enumerate(range(0, counts.pop(), args.every)):
            for version in (this, other) if turn % 2 == 0 else (other, this):
                version.reads.append(version.ask(str(index)))
        return [this, other]


def report(versions: list[Version], revision: str) -> str:
    this, other = versions
    lines = [("| version | frames | right | wrong | declined | CPU p50 ms | CPU p95 ms | "
              "CPU mean ms |"), "|---|---|---|---|---|---|---|---|"]
    for version in versions:
        cpu = np.array([read["cpu_ms"] for read in version.reads])
        right = sum(read["read"] == read["card"] for read in version.reads)
        declined = sum(read["read"] is None for read in version.reads)
        wrong = len(version.reads) - right - declined
        lines.append(f"| {version.name} | {len(cpu)} | {right} | {wrong} | {declined} | "
                     f"{np.percentile(cpu, 50):.1f} | {np.percentile(cpu, 95):.1f} | "
                     f"{cpu.mean():.1f} |")
    differ = [(mine, theirs) for mine, theirs in zip(this.reads, other.reads, strict=True)
              if (mine["read"], mine["reason"]) != (theirs["read"], theirs["reason"])]
    lines.append(f"\nsame decision on {len(this.reads) - len(differ)} of {len(this.reads)} "
                 f"photos")
    for mine, theirs in differ[:20]:
        lines.append(f"  {mine['file']} ({mine['card']}): working tree "
                     f"{mine['read'] or mine['reason']!s}; {revision} "
                     f"{theirs['read'] or theirs['reason']!s}")
    total = sum(read["cpu_ms"] for read in this.reads)
    other_total = sum(read["cpu_ms"] for read in other.reads)
    lines.append(f"CPU time, working tree / {revision}: {total / other_total:.3f} "
                 f"(totals of one run, each photo read by both in turn)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a labelled folder (labels.csv: file,card)")
    parser.add_argument("--against", default="HEAD", metavar="REV",
                        help="the revision to compare with (default HEAD)")
    parser.add_argument("--enrol-per-card", type=int, default=5, metavar="N")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--roi", metavar="REGION", help="read in a region (a fixed camera)")
    parser.add_argument("--every", type=int, default=1, metavar="N",
                        help="read every N-th test photo (default all)")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker is not None:
        _worker(args.worker, args.folder, args.enrol_per_card, args.seed, args.roi)
        return 0
    if args.every < 1 or args.enrol_per_card < 2:
        parser.error("--every needs 1 or more, --enrol-per-card 2 or more")
    print(report(compare(args), args.against))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
