"""bench/vision_ab.py: two revisions of the recogniser, enrolled alike, read each photo in turn.

Run here against HEAD: on a clean checkout the working tree is HEAD, so the two must decide
alike on every photo (the figures themselves are measured on demand, not asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from vision.bench import read_labels

from .test_real_photos import HEARTS, sample_folder

BENCH = Path(__file__).resolve().parents[2] / "bench" / "vision_ab.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True,
                          timeout=300, check=False)


def test_two_revisions_read_each_photo_in_turn(tmp_path: Path) -> None:
    folder = sample_folder(tmp_path / "hearts", HEARTS, ["9H", "KH"])
    done = _run("--against", "HEAD", "--every", "10", str(folder))
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| version | frames | right")
    assert [row.split(" | ")[0] for row in rows[1:]] == ["| working tree", "| HEAD"]
    tested = len(read_labels(folder)) - 2 * 5
    read = (tested + 9) // 10  # every tenth
    assert [row.split(" | ")[1] for row in rows[1:]] == [str(read), str(read)]
    assert f"same decision on {read} of {read} photos" in done.stdout
    assert "CPU time, working tree / HEAD: " in done.stdout


def test_a_revision_or_a_folder_it_cannot_use_is_a_clear_error(tmp_path: Path) -> None:
    folder = sample_folder(tmp_path / "hearts", HEARTS, ["AH", "7H"], 8)
    done = _run("--against", "no-such-revision", str(folder))
    assert done.returncode == 1 and "cannot export 'no-such-revision'" in done.stderr
    assert "Traceback" not in done.stderr
    # The first 8 photos of each (session s1): too few with the card found to enrol.
    done = _run("--against", "HEAD", str(folder))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "working tree: fewer than 2 cards had 2 photos showing them" in done.stderr
    assert _run("--every", "0", str(folder)).returncode == 2
