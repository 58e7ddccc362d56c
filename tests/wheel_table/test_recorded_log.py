"""Issue 18, the recorded-log test: a wheel's status stream (data/slingshot-evening.log,
hand-written from the guide's formats and a real wheel's habits: we have no recording)
played by ``shoe sim --wheel --tcp --replay`` into ``shoe run --profile roulette-single-zero``,
both real processes over loopback.

The numbers the controller accepts (``shoe journal export`` of its journal, and what it
printed live) must be exactly the log's games' numbers, once each, in order, each with its
game's spin; the game the controller joined half-way, and the stale "last number" every
status of states 1-4 carries, give nothing; the misspin and the ball not detected are void
with their reasons. The expected rounds are read from the log by :func:`games_in_log`, a
reading of the guide's rules written for this test (it shares no code with the tracker).

The ball not detected latches: a supervisor clears it through the dealer display's API
(``shoe run --http``) while the wheel waits before its next game, as at a table.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from shoe_controller.config import MIN_PIN_ITERATIONS, hash_pin
from tests.reporting.test_end_to_end import Procs, first_line
from tests.wheel_table.test_end_to_end import latch_cleared

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]  # about 15 s: the log's 85 s at 6x

LOG = Path(__file__).with_name("data") / "slingshot-evening.log"
SPEED = 6
SUPERVISOR, PIN = "pit-boss", "8302417"


def games_in_log(path: Path) -> list[dict[str, Any]]:
    """The rounds a controller must report, read from the log by the guide's rules alone:

    * a game begins with a "place your bets" status (state 2) after the previous game ended
      (state 1, 5 or 7; or the log's start): a game already running when the log starts is
      no round;
    * its ball runs from the first state 3 or 4; its number is the "last number" field of
      its first state-5 status once the ball ran (before state 5 that field is the previous
      game's); a bare result line, sent as a game ends, only bears it out (one that comes
      while the ball still runs is noise);
    * flag 2 in state 3 or 4 voids it (misspin); the wheel's next run of the ball without
      flag 2 is its respin, a round of its own; state 7 voids it (ball not detected).
    """
    rounds: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    running = misspun = False
    for raw in path.read_text(encoding="latin-1").splitlines():
        if not raw or raw.startswith("#"):
            continue
        line = raw.split("\t", 1)[1]
        status = re.fullmatch(r"\*X;([1-7]);([0-9]{3});(..);([0-9A-Fa-f]);[0-9]{3};[01]", line)
        if status is None:
            continue  # a result line, noise
        state, spin, last, flags = (int(status.group(1)), int(status.group(2)),
                                    status.group(3), int(status.group(4), 16))
        if state == 2 and (current is None or current["done"]):
            current = {"spin": spin, "number": None, "void": None, "done": False}
            rounds.append(current)
            running = misspun = False
        elif current is None or current["done"]:
            if misspun and state in (3, 4) and not flags & 2:  # the respin
                current = {"spin": spin, "number": None, "void": None, "done": False}
                rounds.append(current)
                running, misspun = True, False
            continue
        elif state in (3, 4):
            running = True
            if flags & 2:
                current.update(void="misspin", done=True)
                misspun = True
        elif state == 5 and running:
            current.update(number=int(last), done=True)
        elif state == 7:
            current.update(void="ball_not_detected", done=True)
    return [{"number": r["number"] if r["void"] is None else None, "wheel_spin": r["spin"],
             "void": r["void"]} for r in rounds]


def test_the_reading_of_the_log_finds_what_its_comment_says() -> None:
    """The hand reading above against the log's own header (typed when the log was)."""
    expected = games_in_log(LOG)
    assert [r["number"] for r in expected if r["void"] is None] == [7, 32, 32, 0, 19, 26, 11]
    assert [(r["void"], r["wheel_spin"]) for r in expected if r["void"]] == [
        ("misspin", 90), ("ball_not_detected", 91)]
    assert [r["wheel_spin"] for r in expected] == [88, 89, 89, 89, 90, 90, 91, 92, 93]


def test_a_wheel_log_replayed_into_shoe_run_gives_exactly_its_numbers(
        tmp_path: Path, procs: Procs) -> None:
    journal, config = tmp_path / "wheel.db", tmp_path / "run.toml"
    config.write_text(f'[supervisors]\n{SUPERVISOR} = '
                      f'"{hash_pin(PIN, salt=b"log-test", iterations=MIN_PIN_ITERATIONS)}"\n',
                      encoding="utf-8")
    # The controller first: the replay starts when a host connects, and it must see it all.
    sim, out, err = procs.start("sim", "sim", "--wheel", "--tcp", "127.0.0.1:0", "--replay",
                                str(LOG), "--speed", str(SPEED), "--exit-when-done", "--quiet")
    port = int(first_line(sim, out, err).rpartition(":")[2])
    run, run_out, run_err = procs.start(
        "run", "run", "--config", str(config), "--device", f"socket://127.0.0.1:{port}",
        "--profile", "roulette-single-zero", "--journal", str(journal), "--http",
        "127.0.0.1:0", "--log-level", "warning")
    url = re.search(r"dealer display: (http://\S+?)/?$", first_line(run, run_out, run_err,
                                                                    timeout=30))
    assert url is not None
    api = url.group(1)

    cleared = 0
    while sim.poll() is None:  # the supervisor watches the table until the log is played
        assert run.poll() is None, run_err.read_text()[-3000:]
        if view_of(api)["latched"]:
            status = clear(api)  # 409 while the wheel still says state 7: tried again
            assert status in (200, 202, 409), status
            cleared += status == 200 or (status == 202 and latch_cleared(lambda: view_of(api)))
        time.sleep(0.1)
    assert sim.wait(10) == 0, err.read_text()
    time.sleep(0.5)  # the last lines reach the controller
    run.send_signal(signal.SIGTERM)
    assert run.wait(20) == 0, run_err.read_text()[-3000:]
    assert cleared == 1

    export = subprocess.run([sys.executable, "-m", "shoe_controller", "journal", "export",
                             str(journal)], capture_output=True, text=True, timeout=30,
                            check=False)
    assert export.returncode == 0, export.stderr
    rounds = [json.loads(line) for line in export.stdout.splitlines()]
    expected = games_in_log(LOG)
    assert [{k: r[k] for k in ("number", "wheel_spin", "void")} for r in rounds] == expected
    assert [r["round"] for r in rounds] == list(range(1, len(expected) + 1))  # each once
    assert 30 not in [r["number"] for r in rounds]  # the joined game's number is no round's

    # What the controller printed live says the same, number by number.
    live = re.findall(r"^round (\d+): (\d+) (?:red|black|green)", run_out.read_text(),
                      re.MULTILINE)
    assert [(int(r), int(n)) for r, n in live] == [
        (r["round"], r["number"]) for r in rounds if r["void"] is None]
    assert re.findall(r"^round (\d+) void: (.+?) \(", run_out.read_text(), re.MULTILINE) == [
        (str(r["round"]), r["void"].replace("_", " ")) for r in rounds if r["void"]]


def clear(api: str) -> int:
    body = json.dumps({"supervisor": SUPERVISOR, "pin": PIN, "action": "clear",
                       "reason": ""}).encode()
    request = urllib.request.Request(f"{api}/api/supervisor/action", data=body,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def view_of(api: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{api}/api/state", timeout=5) as answer:
        return dict(json.load(answer)["view"])
