"""``shoe demo --game roulette``: the software wheel and the wheel table over a real pty, as a
process. The numbers must be the wheel's documented draw (``random.Random(seed)
.randrange(37)``, one per number drawn: simulators/wheel.py), in order, the misspin and the
ball not detected void with their reasons, and what it printed what its journal says."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(90)

SEED = 11


def demo(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "shoe_controller", "demo", *args],
                          capture_output=True, text=True, timeout=80, cwd=cwd, check=False)


def test_the_demo_plays_roulette_games_with_the_wheels_numbers(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite"
    # games 1-4 draw a number each (game 2 after its misspin's respin); game 5 finds no ball
    done = demo("--game", "roulette", "--seed", str(SEED), "--speed", "200", "--games", "6",
                "--wheel-fault", "misspin@2,no-ball@5", "--journal", str(journal),
                "--supervisor-delay", "0.2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    out = done.stdout
    draw = random.Random(SEED)
    numbers = [draw.randrange(37) for _ in range(4)]
    printed = [(int(r), int(n)) for r, n in re.findall(
        r"^round (\d+): (\d+) (?:red|black|green)", out, re.MULTILINE)]
    assert printed == list(zip([1, 3, 4, 5], numbers, strict=True))
    voids = re.findall(r"^round (\d+) void: ([a-z ]+) \(", out, re.MULTILINE)
    assert voids == [("2", "misspin"), ("6", "ball not detected")]
    assert "round 3: place your bets (respin of round 2)" in out
    assert "6 game(s) this journal: 4 numbers, 2 void; last round 6" in out
    assert "each of the 4 number(s) the table accepted is the one the wheel drew" in out
    assert re.search(r"^Played in [0-9.]+ s \(the wheel at 200x\)\.$", out, re.MULTILINE)

    export = subprocess.run([sys.executable, "-m", "shoe_controller", "journal", "export",
                             str(journal)], capture_output=True, text=True, timeout=60,
                            check=False)
    assert export.returncode == 0, export.stderr
    rounds = [json.loads(line) for line in export.stdout.splitlines()]
    assert [(r["round"], r["number"], r["void"]) for r in rounds] == [
        (1, numbers[0], None), (2, None, "misspin"), (3, numbers[1], None),
        (4, numbers[2], None), (5, numbers[3], None), (6, None, "ball_not_detected")]


@pytest.mark.parametrize(("args", "message"), [
    (["--game", "roulette", "--pace", "1"], "--pace: not with --game roulette"),
    (["--game", "roulette", "--betting-seconds", "5"], "the wheel opens and closes betting"),
    (["--game", "roulette", "--misread-rate", "0.1"], "--misread-rate: not with --game"),
    (["--games", "3"], "--games: a roulette option; add --game roulette"),
    (["--wheel-fault", "misspin@2"], "--wheel-fault: a roulette option"),
    (["--game", "roulette", "--profile", "punto-banco-8d"], "a baccarat profile"),
    (["--game", "roulette", "--wheel-fault", "bogus@1"], "unknown fault 'bogus'"),
    (["--game", "roulette", "--speed", "0"], "a speed factor more than 0"),
    (["--game", "roulette", "--games", "0"], "expected a whole number of games"),
])
def test_wrong_demo_options_are_one_clear_line(tmp_path: Path, args: list[str],
                                               message: str) -> None:
    done = demo(*args, cwd=tmp_path)
    assert done.returncode != 0
    assert message in done.stderr and "Traceback" not in done.stderr
    assert not list(tmp_path.iterdir())  # nothing written
