"""``shoe sim --wheel``, ``shoe run`` with a roulette profile and ``shoe table-sim --game
roulette`` as separate processes over loopback, both ways a wheel works:

* the wheel runs its games (the default): the table system does not drive betting;
* the wheel is host-started (``[wheel] host_starts = true``, the wheel in mode 1159, which has
  the host-start bit 2): the table system opens each round and closes its betting, and the
  controller starts the game with ``*u``.

A misspin comes in game 4 either way. The table system's record must then hold every event
the controller's journal implies, each exactly once and in order (ids recomputed from the
journal by replaying it into a fresh wheel table), each valid against its schema with shoe 0;
its rounds must equal ``shoe journal export`` of the journal line for line, each round once;
its numbers are the wheel's own (``shoe sim --wheel --log``), game after game; and neither
side refused anything the other sent.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from shoe_controller.commands.roulette_journal import (
    replay_wheel_journal,
    wheel_settings_from_config,
)
from shoe_controller.reporting import protocol as p
from shoe_controller.reporting.stream import EventStream
from simulators.table_system import roulette_rounds
from tests.reporting.test_end_to_end import Procs, first_line, read_record, wait_until

pytestmark = pytest.mark.timeout(90)

TOKEN = "wheel-table-token"
GAMES = 8
SPEED = "60"  # a game in about 1.1 s
SCHEMAS = p.load_schemas()


@pytest.mark.slow  # about 10 s each: three processes and eight games
@pytest.mark.parametrize("host_starts", [False, True], ids=["wheel-runs-games", "host-starts"])
def test_the_table_system_records_each_game_once_as_the_journal_has_it(
        tmp_path: Path, procs: Procs, host_starts: bool) -> None:
    key_file = tmp_path / "table.key"
    key_file.write_text(os.urandom(32).hex())
    record, journal = tmp_path / "record.jsonl", tmp_path / "wheel.db"
    config = tmp_path / "run.toml"
    config.write_text(f"[wheel]\nhost_starts = {str(host_starts).lower()}\n", encoding="utf-8")

    betting = ["--betting-seconds", "0.2"] if host_starts else ["--no-betting"]
    table_system, out, err_table = procs.start(
        "table-sim", "table-sim", "--listen", "127.0.0.1:0", "--record", str(record),
        "--token", TOKEN, "--key-file", str(key_file), "--game", "roulette", *betting,
        "--quiet")
    table_port = int(first_line(table_system, out, err_table).rpartition(":")[2])

    # The controller first, waiting for its wheel (it retries the line every second): a
    # wheel that runs its games does not wait for anybody, and a misspin in a game the
    # controller joined half-way would be no round of the table's.
    wheel_port = free_port()
    controller, _out, err_run = procs.start(
        "run", "run", "--config", str(config), "--device", f"socket://127.0.0.1:{wheel_port}",
        "--profile", "roulette-single-zero", "--journal", str(journal), "--games", str(GAMES),
        "--log-level", "warning", "--table-url", f"ws://127.0.0.1:{table_port}/",
        "--table-token", TOKEN, "--table-key-file", str(key_file))
    wait_until("the controller's journal", journal.exists, 30, procs=[controller])
    mode = ["--mode", "1159"] if host_starts else []
    wheel_log = tmp_path / "wheel-games.jsonl"
    sim, out, err = procs.start("sim", "sim", "--wheel", "--tcp", f"127.0.0.1:{wheel_port}",
                                "--speed", SPEED, "--seed", "7", "--wheel-fault", "misspin@4",
                                "--log", str(wheel_log), *mode)
    first_line(sim, out, err)
    try:
        code = controller.wait(60)
    except subprocess.TimeoutExpired:
        code = None
    assert code == 0, f"shoe run: exit {code}; stderr ends:\n{err_run.read_text()[-3000:]}"

    implied = ids_the_journal_implies(journal, config)
    wait_until("the table system to have every event", lambda: len(read_record(record))
               >= len(implied), 10, procs=[table_system])
    events = read_record(record)
    assert [e["id"] for e in events] == implied
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    for event in events:
        assert event["shoe"] == 0
        message = {k: v for k, v in event.items() if k != "received_at"}
        jsonschema.validate({**message, "protocol": 2, "session": "a.b", "sig": "0" * 64},
                            SCHEMAS[event["type"]])

    rounds = roulette_rounds(events)
    export = subprocess.run(
        [sys.executable, "-m", "shoe_controller", "journal", "export", str(journal),
         "--config", str(config)], capture_output=True, text=True, timeout=30, check=False)
    assert export.returncode == 0, export.stderr
    assert rounds == [json.loads(line) for line in export.stdout.splitlines()]
    assert [r["round"] for r in rounds] == list(range(1, len(rounds) + 1))  # each once
    numbers = [r for r in rounds if r["void"] is None]
    assert len(numbers) >= GAMES - 1  # the controller stops after GAMES finished rounds
    assert [r["void"] for r in rounds].count("misspin") == 1
    misspin = next(r["round"] for r in rounds if r["void"] == "misspin")
    respin = next(e["data"] for e in events if e["type"] == "round_opened"
                  and e["data"]["round"] == misspin + 1)
    assert respin["respin_of"] == misspin

    # The numbers are the wheel's own (its log of its games), game after game, none skipped
    # (the wheel may have run a first game before the controller was on the line, and runs
    # on after it stopped).
    drawn = [game["number"] for game in read_record(wheel_log) if game["number"] is not None]
    taken = [r["number"] for r in numbers]
    starts = [i for i in range(len(drawn)) if drawn[i:i + len(taken)] == taken]
    assert starts and starts[0] <= 1, (taken, drawn)

    closes = {e["data"]["origin"] for e in events if e["type"] == "betting_closed"}
    assert closes == ({"table-system", "wheel"} if host_starts else {"wheel"})
    # Nothing refused either way (the table-sim logs warnings only, with --quiet).
    assert "WARNING" not in err_table.read_text(), err_table.read_text()[-2000:]
    assert "not_applicable" not in err_run.read_text()


def free_port() -> int:
    """A loopback port nobody listens on (for a process to take up a moment later)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def ids_the_journal_implies(journal: Path, config: Path) -> list[str]:
    """The ids of the events the journal's records release, replayed into a fresh table."""
    stream = EventStream("table-1")
    ids: list[str] = []
    settings = wheel_settings_from_config(config)
    records: list[tuple[float, list[dict[str, Any]]]] = list(
        replay_wheel_journal(journal, settings))
    for seq, (at, events) in enumerate(records, start=1):
        ids += [out.id for out in stream.add(seq, at, events)]
    return ids


def _event(seq: int, type_: str, **data: Any) -> dict[str, Any]:
    return {"table_id": "t", "seq": seq, "id": f"t:{seq}:0", "type": type_, "shoe": 0,
            "data": data}


def test_a_wheel_tables_next_round_is_due_after_its_number_or_void_not_during_a_respin(
        ) -> None:
    """When the reference table system opens the next round of a wheel table (the decision
    alone, on a table record fed the events a wheel table sends)."""
    from simulators.table_system import TableRecord, TableSystem, TableSystemOptions

    system = TableSystem("127.0.0.1", 0, TableSystemOptions(
        token=TOKEN, key=b"k" * 32, game="roulette", respin_wait=5.0))
    table = TableRecord("t")
    assert system.next_round_due(table, 0.0)  # a wheel table starts with round 1
    steps = [
        (_event(1, "round_opened", round=1, wheel_spin=None, respin_of=None), False),
        (_event(2, "betting_closed", round=1, origin="table-system"), False),
        (_event(3, "winning_number", round=1, number=4, colour="black"), True),
        (_event(4, "round_opened", round=2, wheel_spin=None, respin_of=None), False),
        (_event(5, "betting_closed", round=2, origin="table-system"), False),
        (_event(6, "round_void", round=2, supervisor=None, reason="misspin",
                detail="the ball ran the same way as the rotor"), False),  # the respin comes
        (_event(7, "round_opened", round=3, wheel_spin=9, respin_of=2), False),
        (_event(8, "betting_closed", round=3, origin="wheel"), False),
        (_event(9, "round_void", round=3, supervisor=None, reason="ball_not_detected",
                detail="ball not detected for 5 s"), True),
    ]
    for now, (event, due) in enumerate(steps, start=10):
        table.accept(event, float(now))
        assert system.next_round_due(table, float(now)) is due, event
        if event["type"] == "round_opened" and event["data"]["respin_of"] is not None:
            assert table.phase == "closed"  # its bets stand: no close_betting for it
    # a misspin whose respin never comes: the next round opens after respin_wait
    table.accept(_event(10, "round_opened", round=4, wheel_spin=None, respin_of=None), 30.0)
    table.accept(_event(11, "round_void", round=4, supervisor=None, reason="misspin",
                        detail="x"), 31.0)
    assert not system.next_round_due(table, 35.9)
    assert system.next_round_due(table, 36.0)
    # roulette_rounds reads the rounds back as shoe journal export prints them
    assert [r["void"] for r in roulette_rounds([event for event, _ in steps])] == [
        None, "misspin", "ball_not_detected"]
