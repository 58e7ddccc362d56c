"""A roulette table on the floor: real ``shoe sim --wheel``, ``shoe run --mqtt`` with a
roulette profile and a real Mosquitto. Its states validate against the published schema,
its events carry every number the wheel drew, in order, and the pit's model shows the
numbers on its tile."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shoe_controller.fleet.floor import Floor

from .rig import PREFIX, Mosquitto, Subscriber
from .test_publisher import SCHEMAS

pytestmark = pytest.mark.timeout(90)

GAMES = 4


def test_a_wheel_table_publishes_its_numbers_to_the_floor(tmp_path: Path) -> None:
    broker = Mosquitto(tmp_path / "broker").start()
    watcher = Subscriber(broker)
    log = tmp_path / "wheel-games.jsonl"
    sim = subprocess.Popen([sys.executable, "-m", "shoe_controller", "sim", "--wheel", "--tcp",
                            "127.0.0.1:0", "--speed", "60", "--seed", "21",
                            "--log", str(log)], stdout=subprocess.PIPE, text=True)
    run = None
    try:
        assert sim.stdout is not None
        address = sim.stdout.readline().split()[1]
        run = subprocess.Popen(
            [sys.executable, "-m", "shoe_controller", "run", "--profile",
             "roulette-single-zero", "--device", f"socket://{address}",
             "--journal", str(tmp_path / "wheel.sqlite"), "--durability", "normal",
             "--mqtt", broker.url, "--games", str(GAMES), "--quiet"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = run.communicate(timeout=75)
        assert run.returncode == 0, err
        assert "mqtt: " in out
        watcher.wait(lambda: any(s.get("game") == "roulette" and s["round"] >= GAMES
                                 for s in watcher.payloads("table-1", "state")),
                     "the last round's state")
    finally:
        for proc in (run, sim):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                proc.wait(10)
        watcher.close()
        broker.stop()

    states = watcher.payloads("table-1", "state")
    for state in states:
        SCHEMAS["state"].validate(state)
        assert state["game"] == "roulette" and state["exit_locked"] is False
    events = watcher.payloads("table-1", "events")
    for event in events:
        SCHEMAS["event"].validate(event)
    numbers = [e["data"]["number"] for e in events if e["type"] == "winning_number"]
    drawn = [g["number"] for g in map(json.loads, log.read_text().splitlines())
             if g.get("number") is not None]
    assert len(numbers) >= GAMES - 1  # the first game may have begun before the table heard
    position = 0
    for number in numbers:  # the wheel's, in order, each once
        position = drawn.index(number, position) + 1
    last = states[-1]
    assert last["last_result"]["number"] == numbers[-1]
    assert [r["number"] for r in last["recent_results"] if "number" in r][-len(numbers):] \
        == numbers
    # the pit's model takes the states and shows the numbers on the tile
    floor = Floor(PREFIX)
    for state in states:
        floor.apply(f"{PREFIX}/tables/table-1/state", json.dumps(state).encode(), time.time())
    tile = floor.summary("table-1")
    assert tile["result_numbers"][-len(numbers):] == numbers
    assert tile["last_result_text"] == f"{numbers[-1]} {last['last_result']['colour']} " \
        f"(round {last['last_result']['round']})"


def test_the_event_schema_names_every_event_type_the_table_system_stream_has() -> None:
    from shoe_controller.reporting.protocol import EVENT_TYPES

    document = json.loads((Path(__file__).resolve().parents[2] / "docs" / "mqtt"
                           / "event.schema.json").read_text(encoding="utf-8"))
    assert document["properties"]["type"]["enum"] == list(EVENT_TYPES)
    described = {rule["if"]["properties"]["type"]["const"] for rule in document["allOf"]}
    assert described == set(EVENT_TYPES)
