"""``shoe sim --wheel``, ``shoe run`` with a roulette profile and ``shoe table-sim --game
roulette`` as separate processes over loopback, both ways a wheel works:

* the wheel runs its games (the default): the table system does not drive betting;
* the wheel is host-started (``[wheel] host_starts = true``, the wheel in mode 1159, which has
  the host-start bit 2): the table system opens each round and closes its betting, and the
  controller starts the game with ``*u``.

A misspin comes in game 3 either way. The table system's record must then hold every event
the controller's journal implies, each exactly once and in order (ids recomputed from the
journal by replaying it into a fresh wheel table), each valid against its schema with shoe 0;
its rounds must equal ``shoe journal export`` of the journal line for line, each round once;
and neither side refused anything the other sent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
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

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

TOKEN = "wheel-table-token"
GAMES = 8
SPEED = "60"  # a game in about 1.1 s
SCHEMAS = p.load_schemas()


@pytest.fixture
def procs(tmp_path: Path) -> Iterator[Procs]:
    keeper = Procs(tmp_path)
    try:
        yield keeper
    finally:
        keeper.close()


@pytest.mark.parametrize("host_starts", [False, True], ids=["wheel-runs-games", "host-starts"])
def test_the_table_system_records_each_game_once_as_the_journal_has_it(
        tmp_path: Path, procs: Procs, host_starts: bool) -> None:
    key_file = tmp_path / "table.key"
    key_file.write_text(os.urandom(32).hex())
    record, journal = tmp_path / "record.jsonl", tmp_path / "wheel.db"
    config = tmp_path / "run.toml"
    config.write_text(f"[wheel]\nhost_starts = {str(host_starts).lower()}\n", encoding="utf-8")

    mode = ["--mode", "1159"] if host_starts else []
    sim, out, err = procs.start("sim", "sim", "--wheel", "--tcp", "127.0.0.1:0", "--speed",
                                SPEED, "--seed", "7", "--wheel-fault", "misspin@3", *mode)
    wheel_port = int(first_line(sim, out, err).rpartition(":")[2])
    betting = ["--betting-seconds", "0.2"] if host_starts else ["--no-betting"]
    table_system, out, err_table = procs.start(
        "table-sim", "table-sim", "--listen", "127.0.0.1:0", "--record", str(record),
        "--token", TOKEN, "--key-file", str(key_file), "--game", "roulette", *betting,
        "--quiet")
    table_port = int(first_line(table_system, out, err_table).rpartition(":")[2])

    controller, _out, err_run = procs.start(
        "run", "run", "--config", str(config), "--device", f"socket://127.0.0.1:{wheel_port}",
        "--profile", "roulette-single-zero", "--journal", str(journal), "--games", str(GAMES),
        "--log-level", "warning", "--table-url", f"ws://127.0.0.1:{table_port}/",
        "--table-token", TOKEN, "--table-key-file", str(key_file))
    assert controller.wait(60) == 0, err_run.read_text()[-3000:]

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

    closes = {e["data"]["origin"] for e in events if e["type"] == "betting_closed"}
    assert closes == ({"table-system", "wheel"} if host_starts else {"wheel"})
    # Nothing refused either way (the table-sim logs warnings only, with --quiet).
    assert "WARNING" not in err_table.read_text(), err_table.read_text()[-2000:]
    assert "not_applicable" not in err_run.read_text()


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
