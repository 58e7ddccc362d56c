"""What an operator sees of ``shoe demo`` (issue 15): it finishes with misreads (a demo
supervisor enters them, journalled under its id), refuses an old journal, keeps its display up
after the shoe until told to stop, and cleans up on SIGTERM."""

from __future__ import annotations

import json
import re
import signal
import time
import urllib.request
from pathlib import Path

import pytest

from shoe_controller.journal import Journal

from .processes import ProcessKeeper, run_shoe_cli, shoe_command

SUMMARY_ROW = re.compile(r"^\s*(\S.*?\S)\s{2,}(\S.*)$")


def summary(stdout: str) -> dict[str, str]:
    """The closing summary's rows, label -> value (labels as printed, indented ones too)."""
    block = stdout.split("Shoe summary\n", 1)[1]
    rows = {}
    for line in block.splitlines():
        match = SUMMARY_ROW.match(line.strip())
        if match and not line.startswith(("Shoe played", "Stopped", "Check it", "The dealer")):
            rows[match.group(1)] = match.group(2)
    return rows


@pytest.mark.timeout(150)
def test_demo_with_misreads_finishes_and_says_who_entered_them(tmp_path: Path) -> None:
    journal = tmp_path / "demo.sqlite"
    done = run_shoe_cli("demo", "--seed", "3", "--misread-rate", "0.05", "--journal",
                        str(journal), timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    shown = re.search(r"^demo supervisor: id (\S+), PIN (\d{6,})", done.stdout, re.MULTILINE)
    assert shown is not None, done.stdout[:1000]
    supervisor = shown.group(1)
    assert "Card not read by the shoe" in done.stdout
    assert re.search(rf"cleared misread: card \w\w entered \({supervisor}\)", done.stdout)
    assert "Shoe summary" in done.stdout and "Shoe played in" in done.stdout
    # The journal tells the truth: every entered card is a supervisor action under that id.
    with Journal(journal, readonly=True) as store:
        records = list(store.records())
    entered = [r for r in records if r.kind == "supervisor"]
    misreads = [r for r in records if r.kind == "misread"]
    assert misreads and len(entered) == len(misreads)
    assert {r.actor for r in entered} == {supervisor}
    assert {r.data["action"] for r in entered} == {"enter_card"}


def test_demo_summary_is_aligned_and_splits_burned_from_dealt(tmp_path: Path) -> None:
    done = run_shoe_cli("demo", "--seed", "2", timeout=90, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    block = done.stdout.split("Shoe summary\n", 1)[1].split("Shoe played", 1)[0]
    lines = [line for line in block.splitlines() if line.strip()]
    starts = {len(line) - len(SUMMARY_ROW.match(line).group(2)) for line in lines}
    assert len(starts) == 1, f"values do not start in one column:\n{block}"
    rows = summary(done.stdout)
    assert "Banker / Player / Tie" in rows and "Banker / Player pairs" in rows
    assert not any(label.startswith("Player /") for label in rows), rows
    out, burned, dealt = (int(rows[k]) for k in
                          ("Cards out of the shoe", "burned", "dealt to the hands"))
    assert burned > 0 and out == burned + dealt
    rounds = int(rows["Rounds played"])
    assert sum(int(x) for x in rows["Banker / Player / Tie"].split(" / ")) == rounds


def test_demo_refuses_a_journal_that_holds_a_finished_shoe(tmp_path: Path) -> None:
    journal = tmp_path / "old.sqlite"
    first = run_shoe_cli("demo", "--seed", "2", "--journal", str(journal), timeout=90,
                         cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    again = run_shoe_cli("demo", "--seed", "2", "--journal", str(journal), timeout=60,
                         cwd=tmp_path)
    assert again.returncode == 1
    assert "Rounds played" not in again.stdout
    assert again.stderr.strip().splitlines() == [(
        f"shoe demo: error: --journal {journal}: already exists (it holds an earlier shoe); "
        "the demo plays a new shoe into a new journal: give a new file name, or leave out "
        "--journal")]


def _wait_for(started: object, pattern: str, timeout: float) -> re.Match[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        match = re.search(pattern, started.stdout(), re.MULTILINE)  # type: ignore[attr-defined]
        if match:
            return match
        assert started.alive(), started.stdout()[-2000:] + started.stderr()[-2000:]  # type: ignore[attr-defined]
        time.sleep(0.1)
    raise AssertionError(f"no {pattern!r} within {timeout} s: "
                         f"{started.stdout()[-2000:]}")  # type: ignore[attr-defined]


@pytest.mark.timeout(120)
def test_demo_display_stays_up_after_the_shoe_until_sigterm(
    tmp_path: Path, procs: ProcessKeeper
) -> None:
    demo = procs.start(shoe_command("demo", "--seed", "2", "--http", "0"), "demo")
    url = _wait_for(demo, r"^dealer display: (http://\S+)$", 30).group(1)
    scratch = Path(_wait_for(demo, r"; journal (\S+)$", 5).group(1)).parent
    _wait_for(demo, r"^The dealer display stays up: press Ctrl-C \(or send SIGTERM\) to stop\.$",
              90)
    assert "Shoe summary" in demo.stdout() and "Shoe played in" in demo.stdout()
    time.sleep(0.5)
    assert demo.alive(), "the demo exited instead of keeping the display up"
    with urllib.request.urlopen(url + "api/state", timeout=10) as response:
        state = json.load(response)
    assert state["view"]["state"] == "shoe_finished"
    assert state["view"]["prompt"] == "Shoe finished"
    demo.popen.send_signal(signal.SIGTERM)
    assert demo.wait(30) == 0, demo.stderr()[-2000:]
    assert not scratch.exists(), f"temporary directory {scratch} left behind"
    assert "Traceback" not in demo.stderr()


@pytest.mark.timeout(120)
def test_demo_stopped_by_sigterm_mid_shoe_says_so_and_cleans_up(
    tmp_path: Path, procs: ProcessKeeper
) -> None:
    demo = procs.start(shoe_command("demo", "--seed", "2", "--pace", "0.05"), "demo")
    scratch = Path(_wait_for(demo, r"; journal (\S+)$", 30).group(1)).parent
    _wait_for(demo, r"^Round\s+2:", 60)
    demo.popen.send_signal(signal.SIGTERM)
    assert demo.wait(30) == 128 + signal.SIGTERM
    out = demo.stdout()
    assert "Shoe summary" in out
    assert re.search(r"^Stopped \(SIGTERM\) after [\d.]+ s: the shoe was not finished\.$", out,
                     re.MULTILINE), out[-1500:]
    assert "Shoe played in" not in out
    assert int(summary(out)["Rounds played"]) >= 2
    assert not scratch.exists(), f"temporary directory {scratch} left behind"
    assert "Traceback" not in demo.stderr()
