"""A hundred tables (short shoes, dealers at full speed) publishing through one real Mosquitto
to one real ``shoe pit``: every state and every event of every table reaches the pit, nothing
is dropped. The latency figures are bench/bench_fleet.py's, not asserted here."""

from __future__ import annotations

import contextlib
import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from shoe_controller.cards import new_shoe
from tests.e2e.processes import ProcessKeeper, shoe_command

from .rig import Mosquitto, fleet_table, wait_for

TABLES = 100
CARDS = 28  # with the cut card 14 from the end: a burn and a couple of rounds


def floor(url: str) -> dict[str, dict[str, Any]]:
    with urllib.request.urlopen(url + "api/floor", timeout=10) as response:
        return {t["table_id"]: t for t in json.loads(response.read())["tables"]}


@pytest.mark.slow
def test_every_state_of_a_hundred_tables_reaches_the_pit(tmp_path: Path) -> None:
    broker = Mosquitto(tmp_path / "broker").start()
    try:
        with ProcessKeeper(tmp_path) as procs:
            pit = procs.start(shoe_command("pit", "--broker", broker.url, "--http", "0",
                                           "--log-level", "warning"), "pit")
            url = pit.first_line(20).split()[1]
            with contextlib.ExitStack() as stack:
                tables = [stack.enter_context(fleet_table(
                    tmp_path / f"t-{n:03d}", broker.settings(), f"t-{n:03d}", seed=n,
                    cards=new_shoe(1, n)[:CARDS], wait_connected=True))
                    for n in range(1, TABLES + 1)]
                wait_for(lambda: all(t.controller.shoes_finished for t in tables),
                         "every shoe dealt", 120)
            # Closed: every publisher has published all it had.
            expected = {t.publisher.topics.table_id: t for t in tables}

            def all_there() -> bool:
                tiles = floor(url)
                return all(table_id in tiles and tiles[table_id]["state_version"]
                           == t.publisher.version for table_id, t in expected.items())
            wait_for(all_there, "every table's last state at the pit", 30)
            tiles = floor(url)
            assert pit.alive(), pit.stderr()
    finally:
        broker.stop()
    for table_id, table in expected.items():
        tile, stats = tiles[table_id], table.publisher.stats
        assert stats.states_dropped == stats.events_dropped == stats.inbox_dropped == 0
        # Every state of this table's session, one after the other, none missed...
        assert tile["states_seen"] == tile["state_version"] == stats.states_published
        assert tile["state_gaps"] == 0
        # ... and every event, gap-free, up to the table's last.
        assert tile["event_gaps"] == 0
        assert tile["last_event_seq"] == stats.events_published > 0
        assert tile["shoe"]["finished"] and not tile["online"]
