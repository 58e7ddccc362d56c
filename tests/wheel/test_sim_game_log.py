"""The software wheel's own record of its games (``shoe sim --wheel --log``), and the
statuses it owes for phases a pause of its process skipped."""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys
from pathlib import Path

import jsonschema

from simulators.wheel import SimulatedWheel, WheelTimings
from wheel_protocol.messages import Status, WarningFlag, WheelState, WinningNumberLine
from wheel_protocol.parser import WheelParser

SPEED = 100.0


def run(wheel: SimulatedWheel, seconds: float, step: float = 0.001) -> list[object]:
    """Step the wheel's clock; answer a misspin with *R as a host does; the messages sent."""
    parser, messages, now = WheelParser(), [], 0.0
    while now < seconds and not wheel.finished:
        for message in parser.feed(wheel.data_to_send(now)):
            messages.append(message)
            if isinstance(message, Status) and WarningFlag.MISSPIN in message.warnings:
                wheel.receive(b"*R\r\n", now)
            if isinstance(message, Status) and message.state is WheelState.TABLE_CLOSED:
                wheel.receive(b"*F\r\n", now)
        now += step
    return messages


def test_the_game_log_holds_each_game_once_with_its_number_or_none() -> None:
    faults = {2: "misspin", 3: "no-ball", 4: "sensor", 5: "launch-retry", 6: "silent-idle"}
    wheel = SimulatedWheel(seed=4, timings=WheelTimings().scaled(SPEED), faults=faults, games=7)
    messages = run(wheel, 30.0)
    assert wheel.finished
    played = wheel.played
    assert [g.game for g in played] == list(range(1, 8))
    assert [g.fault for g in played] == [faults.get(n) for n in range(1, 8)]
    # no ball, a sensor fault and a silent drop end a game without a number
    assert [g.number is None for g in played] == [False, False, True, True, False, True, False]
    # the numbers are the ones the wheel announced on its result lines, in order
    announced = [m.number for m in messages if isinstance(m, WinningNumberLine)]
    assert [g.number for g in played if g.number is not None] == announced == wheel.numbers
    assert all(g.began < g.ended for g in played)
    assert all(a.ended <= b.began for a, b in itertools.pairwise(played))


def test_a_pause_of_the_process_does_not_skip_the_statuses_of_a_game() -> None:
    wheel = SimulatedWheel(seed=1, timings=WheelTimings().scaled(SPEED), games=1)
    parser = WheelParser()
    wheel.data_to_send(0.0)
    wheel.data_to_send(0.06)  # place your bets (state 2)
    sent = list(parser.feed(wheel.data_to_send(0.6)))  # a pause of 0.54 s: 3, 4 and 5 passed
    states = [int(m.state) for m in sent if isinstance(m, Status)]
    assert states[:4] == [3, 3, 4, 4] and 5 in states
    assert any(isinstance(m, WinningNumberLine) for m in sent)


SCHEMA = Path(__file__).parents[2] / "docs" / "roulette" / "sim-game-log.schema.json"


def test_shoe_sim_wheel_log_writes_a_line_per_game_as_its_schema_says(tmp_path: Path) -> None:
    log = tmp_path / "games.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "shoe_controller", "sim", "--wheel", "--tcp", "127.0.0.1:0",
         "--speed", "200", "--seed", "3", "--games", "3", "--wheel-fault", "no-ball@2",
         "--exit-when-done", "--log", str(log), "--quiet"],
        capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    schema = json.loads(SCHEMA.read_text())
    for line in lines:
        jsonschema.validate(line, schema)
    draw = random.Random(3)
    assert [(g["game"], g["number"], g["fault"]) for g in lines] == [
        (1, draw.randrange(37), None), (2, None, "no-ball"), (3, draw.randrange(37), None)]


def test_shoe_sim_wheel_log_refuses_an_existing_file(tmp_path: Path) -> None:
    existing = tmp_path / "games.jsonl"
    existing.write_text(json.dumps({"game": 1}) + "\n")
    result = subprocess.run(
        [sys.executable, "-m", "shoe_controller", "sim", "--wheel", "--tcp", "127.0.0.1:0",
         "--log", str(existing)], capture_output=True, text=True, timeout=30, check=False)
    assert result.returncode != 0
    assert "--log" in result.stderr and "Traceback" not in result.stderr
    assert existing.read_text() == json.dumps({"game": 1}) + "\n"  # untouched
