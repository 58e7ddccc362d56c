"""The pit page in a real browser: 20 live tables publishing through a real Mosquitto to a
real ``shoe pit`` process; one table has a latched irregularity (a card its shoe could not
read, nobody clears it), one has stopped (offline), one deals blackjack (its tile words the
last result: the dealer's total, each seat's outcome). Screenshot saved (see tests/web)."""

from __future__ import annotations

import contextlib
import json
import re
import urllib.request
from pathlib import Path
from typing import Any

from tests.e2e.processes import ProcessKeeper, shoe_command

from .rig import Mosquitto, fleet_table, wait_for

TABLES = 20
LATCHED, OFFLINE, BLACKJACK = "t-07", "t-13", "t-20"


def floor(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url + "api/floor", timeout=5) as response:
        return json.loads(response.read())


def test_pit_page_shows_the_floor(tmp_path: Path, page: Any, artifacts: Path) -> None:
    broker = Mosquitto(tmp_path / "broker").start()
    try:
        with ProcessKeeper(tmp_path) as procs, contextlib.ExitStack() as stack:
            pit = procs.start(shoe_command("pit", "--broker", broker.url, "--http", "0",
                                           "--log-level", "warning"), "pit")
            url = pit.first_line(20).split()[1]
            tables = {}
            for n in range(1, TABLES + 1):
                table_id = f"t-{n:02d}"
                tables[table_id] = stack.enter_context(fleet_table(
                    tmp_path / table_id, broker.settings(), table_id, seed=n, pace=0.01,
                    misread_at=(9,) if table_id == LATCHED else (),
                    pit="pit-1" if n <= 10 else "pit-2",
                    profile="blackjack-8d" if table_id == BLACKJACK else "punto-banco-1d"))
            offline = tables.pop(OFFLINE)
            wait_for(lambda: offline.controller.view.cards_dealt >= 5, "cards at t-13", 30)
            # Stop that one table (its controller says goodbye: offline, "stopped").
            offline.publisher.close()
            wait_for(lambda: tables[LATCHED].controller.view.alarm == "latched",
                     "the misread latched", 30)

            def ready() -> bool:
                tiles = {t["table_id"]: t for t in floor(url)["tables"]}
                return (len(tiles) == TABLES and bool(tiles[LATCHED]["latched"])
                        and not tiles[OFFLINE]["online"]
                        and bool(tiles[BLACKJACK]["last_result_text"]))
            wait_for(ready, "every table on the pit's floor", 30)

            page.goto(url)
            page.wait_for_function(f"document.querySelectorAll('.tile').length === {TABLES}")
            latched = page.locator(f".tile[data-table='{LATCHED}']")
            assert "latched" in latched.get_attribute("class")
            assert "Card not read by the shoe" in latched.locator(".latch").inner_text()
            assert latched.locator(".latch .age").inner_text().endswith("s")
            gone = page.locator(f".tile[data-table='{OFFLINE}']")
            assert "offline" in gone.get_attribute("class")
            assert "OFFLINE: stopped" in gone.inner_text()
            # Blackjack's last result on its tile: "round N: dealer T; S outcome, ...".
            said = page.locator(f".tile[data-table='{BLACKJACK}'] .last-result").inner_text()
            assert re.fullmatch(r"round \d+: dealer (BJ|\d+( bust)?); \d+(\.[12])? (win|lose|push)"
                                r"(, \d+(\.[12])? (win|lose|push))*", said), said
            assert page.locator(".tile.latched").count() == 1
            assert page.locator(".tile.offline").count() == 1
            assert "20 tables" in page.locator("#counts").inner_text()
            assert page.locator("#broker").inner_text() == "Broker: connected"
            page.screenshot(path=str(artifacts / "pit-20-tables.png"), full_page=True)
            # Filter by pit, then by alerts.
            page.select_option("#pit-filter", "pit-2")
            page.wait_for_function("document.querySelectorAll('.tile').length === 10")
            page.select_option("#pit-filter", "")
            page.check("#alerts-only")
            # Alerts: offline, latched, or a bet with the player's edge on the cards left.
            page.wait_for_function(
                "document.querySelectorAll('.tile').length === [...window.pitTables.values()]"
                ".filter(t => !t.online || t.latched.length || t.player_edge.length).length")
            # Read in one go: the page redraws as the tables go on dealing.
            shown, quiet = page.evaluate(
                "() => { const tiles = [...document.querySelectorAll('.tile')];"
                " return [tiles.length, tiles.filter(t => !t.querySelector("
                "'.latch, .offline-badge, .edge')).map(t => t.dataset.table)]; }")
            assert 2 <= shown < TABLES and quiet == []
            page.uncheck("#alerts-only")
            # A table's detail: its state and recent events.
            page.locator(f".tile[data-table='{LATCHED}']").click()
            page.wait_for_selector("#detail:not([hidden])")
            detail = page.locator("#detail").inner_text()
            assert f"Table {LATCHED}" in detail and "Latched irregularities" in detail
            assert "Recent events" in detail and "irregularity" in detail
            page.screenshot(path=str(artifacts / "pit-detail.png"), full_page=True)
            # A press and its release on two drawings of one tile (the floor drawn anew in
            # between, as it is whenever a table deals) still open that table's detail.
            page.click("#close-detail")
            page.wait_for_selector("#detail", state="hidden")
            # Measured in one go in the page: Playwright's bounding_box() finds the tile,
            # then measures it, and a redraw in between (a table dealt) leaves it measuring
            # a tile no longer in the page (None; CI failed so once).
            box = page.evaluate(
                f"() => {{ const r = document.querySelector(\".tile[data-table='{BLACKJACK}']\")"
                ".getBoundingClientRect(); return {x: r.x, y: r.y, width: r.width,"
                " height: r.height}; }")
            assert box["width"] > 0 and box["height"] > 0, box
            page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            page.mouse.down()
            page.evaluate("render()")
            page.mouse.up()
            page.wait_for_selector("#detail:not([hidden])")
            assert f"Table {BLACKJACK}" in page.locator("#detail").inner_text()
            assert pit.alive(), pit.stderr()
    finally:
        broker.stop()
