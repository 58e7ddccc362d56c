"""bench/bench_idle.py runs (the figures are measured on demand, not asserted here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_idle.py"


def test_the_idle_bench_prints_both_phases_beside_the_target() -> None:
    done = subprocess.run([sys.executable, str(BENCH), "--tables", "2", "--seconds", "0.3"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("2 tables, 0.3 s each phase")
    assert [line[:34].strip() for line in lines[2:]] == [
        "set up, not yet running", "running, waiting for a card"]
    assert all(line.split()[-2] == "0.50%" for line in lines[2:])


def test_the_idle_bench_refuses_nonsense() -> None:
    done = subprocess.run([sys.executable, str(BENCH), "--tables", "0"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and "--tables must be at least 1" in done.stderr
    assert "Traceback" not in done.stderr
