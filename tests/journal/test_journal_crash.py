"""A writer killed with SIGKILL, or a power cut tearing the WAL, leaves a journal that verifies.

The child prints each seq after ``append`` returned: those records were acknowledged as
durable, so every one of them must be in the journal after the kill.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from shoe_controller.journal import Journal, verify_journal

WRITER = """
import sys
from shoe_controller.journal import Journal
with Journal(sys.argv[1]) as journal:
    i = 0
    while True:
        record = journal.append("card", {"i": i, "pad": "x" * (i % 300)}, actor="shoe")
        print(record.seq, flush=True)
        i += 1
"""


def run_and_kill(path: Path, rng: random.Random) -> list[int]:
    """Start a writer, kill it at a random moment, return the seqs it saw acknowledged."""
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    acknowledged: list[int] = []
    try:
        wanted = rng.randint(1, 150)
        deadline = time.monotonic() + 30
        while len(acknowledged) < wanted and time.monotonic() < deadline:
            line = child.stdout.readline()
            if not line:
                break
            acknowledged.append(int(line))
        time.sleep(rng.uniform(0, 0.02))
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    acknowledged += [int(line) for line in child.stdout.read().split()]
    child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    assert acknowledged, "the writer never appended anything"
    return acknowledged


def test_sigkill_at_random_moments_leaves_a_valid_gap_free_journal(tmp_path: Path) -> None:
    rng = random.Random(20240501)
    path = tmp_path / "journal.db"
    for _ in range(6):
        acknowledged = run_and_kill(path, rng)
        report = verify_journal(path)
        assert report.ok, report.problems
        with Journal(path, readonly=True) as journal:
            seqs = [record.seq for record in journal.records()]
        assert seqs == list(range(1, len(seqs) + 1))  # gap-free
        assert max(acknowledged) <= len(seqs)  # nothing acknowledged was lost


def test_torn_wal_after_power_loss_keeps_a_valid_prefix(tmp_path: Path) -> None:
    """Simulate a power cut mid-write: the WAL ends at an arbitrary byte."""
    rng = random.Random(7)
    path = tmp_path / "journal.db"
    run_and_kill(path, rng)
    with Journal(path, readonly=True) as journal:
        full = [record.hash for record in journal.records()]
    wal = Path(f"{path}-wal")
    assert wal.stat().st_size > 0
    for trial in range(8):
        copy = tmp_path / f"cut{trial}" / "journal.db"
        copy.parent.mkdir()
        shutil.copyfile(path, copy)
        cut = rng.randrange(wal.stat().st_size)
        Path(f"{copy}-wal").write_bytes(wal.read_bytes()[:cut])
        report = verify_journal(copy)
        assert report.ok, (cut, report.problems)
        with Journal(copy) as journal:  # and the controller can carry on writing
            survivors = [record.hash for record in journal.records()]
            assert survivors == full[: len(survivors)]
            journal.append("card", {"after": "power cut"})
        assert verify_journal(copy).ok
