"""The wheel table's display API over HTTP, against a real controller following the software
wheel on a real line (tests/wheel_table/display_rig.py).

What the API must say comes from the wheel's own draw and an independent colour table; the
bias report is checked against its published JSON Schema; supervisor actions against the
journal."""

from __future__ import annotations

import http.client
import json
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from shoe_controller.journal import Journal

from .display_rig import PIN, SUPERVISOR, WheelDisplay, colour, wheel_display

pytestmark = pytest.mark.timeout(60)

BIAS_SCHEMA = json.loads((Path(__file__).parents[2] / "docs" / "roulette"
                          / "bias-report.schema.json").read_text())


def numbers_in_strip(state: dict[str, Any]) -> list[int]:
    """The strip's numbers, oldest first (voids left out)."""
    return [e["number"] for e in reversed(state["view"]["last_numbers"]) if not e["void"]]


def supervisor_records(journal: Path) -> list[dict[str, Any]]:
    with Journal(journal, readonly=True) as opened:
        return [dict(r.data, actor=r.actor) for r in opened.records() if r.kind == "supervisor"]


def test_the_state_shows_the_wheels_numbers_their_colours_hot_cold_and_bias(
        tmp_path: Path) -> None:
    with wheel_display(tmp_path, seed=7, games=5) as table:
        # the wheel stops after 5 games: once its last number is shown, nothing changes
        state = table.wait_state(lambda s: table.wheel.finished and s["view"]["last_result"]
                                 is not None and s["view"]["last_result"]["number"]
                                 == table.wheel.numbers[-1], "the wheel's five games")
        bias = table.get("/api/bias")
        view = state["view"]
        taken = numbers_in_strip(state)
        # every game the controller saw from its start (it may have joined during the first)
        assert len(taken) >= 4 and taken == table.wheel.numbers[-len(taken):]
        for entry in view["last_numbers"]:
            assert entry["colour"] == colour(entry["number"])
        last = view["last_result"]
        assert last["colour"] == colour(last["number"])
        number = last["number"]
        if number:  # the facts of a non-zero number, stated here from the layout
            assert last["dozen"] == (number - 1) // 12 + 1
            assert last["column"] == (number - 1) % 3 + 1
            assert last["parity"] == ("even" if number % 2 == 0 else "odd")
            assert last["half"] == ("low" if number <= 18 else "high")
        # hot: most frequent first (ties: the lower number); cold: least frequent
        counts = Counter(taken)
        assert view["recent_games"] == len(taken)
        assert view["hot"] == sorted(counts, key=lambda n: (-counts[n], n))[:5]
        assert view["cold"] == sorted(range(37), key=lambda n: (counts[n], n))[:5]
        assert view["wheel"]["connected"] and view["wheel"]["state_name"]
        assert state["api_version"] == 1 and state["profile"] == "roulette-single-zero"
        # the bias report: its published schema, and the counts of the numbers taken
        jsonschema.validate(bias, BIAS_SCHEMA)
        assert bias["numbers"] == {str(n): counts[n] for n in range(37)}
        assert bias["games"] == view["bias"]["games"] == len(taken)
        assert bias["alerting"] is False and view["bias"]["alerting"] is False
        api = table.get("/openapi.json")
        assert api["info"]["version"] == "1"
        assert {"/api/state", "/api/bias", "/api/stream", "/api/supervisor/login",
                "/api/supervisor/action"} <= set(api["paths"])


def test_the_stream_pushes_the_state(tmp_path: Path) -> None:
    with wheel_display(tmp_path, seed=8) as table:
        host, port = table.web._sock.getsockname()[:2]
        connection = http.client.HTTPConnection(host, port, timeout=10)
        connection.request("GET", "/api/stream")
        response = connection.getresponse()
        assert response.getheader("Content-Type", "").startswith("text/event-stream")
        versions = []
        while len(versions) < 3:
            line = response.readline().decode()
            if line.startswith("data: ") and line.strip() != "data: {}":
                document = json.loads(line[6:])
                assert document["view"]["game"] == "roulette"
                versions.append(document["version"])
        connection.close()
        assert versions == sorted(versions) and len(set(versions)) == 3


def test_supervisor_actions_need_the_pin_and_are_journalled(tmp_path: Path) -> None:
    with wheel_display(tmp_path, seed=9) as table:
        status, _ = table.request("POST", "/api/supervisor/login",
                                  {"supervisor": SUPERVISOR, "pin": "000000"})
        assert status == 403
        status, answer = table.request("POST", "/api/supervisor/login",
                                       {"supervisor": SUPERVISOR, "pin": PIN})
        assert (status, answer["accepted"]) == (200, True)
        assert table.action("clear", pin="999999")[0] == 403
        status, answer = table.action("void_round")  # no reason
        assert status == 400 and "reason" in answer["detail"]
        status, answer = table.action("enter_card")
        assert status == 400 and "wheel table" in answer["detail"]
        status, answer = table.action("clear")
        assert status == 409 and answer["accepted"] is False
        assert answer["message"] == "nothing to clear" and answer["api_version"] == 1
        # a void of the game in progress, with its reason, shown in the strip as a void
        for _ in range(5):  # a game lasts under a second here: it may end before the void
            table.wait_state(lambda s: s["view"]["phase"] == "betting_open", "a game open")
            status, answer = table.action("void_round", reason="ball left the wheel")
            if status != 409:
                break
            assert "progress" in answer["message"] or "no game" in answer["message"], answer
        assert (status, answer["status"], answer["accepted"]) == (200, "journalled", True)
        state = table.wait_state(lambda s: s["view"]["voids"] >= 1, "the void")
        voided = [e for e in state["view"]["last_numbers"] if e["void"]]
        assert voided and voided[0]["void"] == "supervisor" and voided[0]["number"] is None
        # a new bias-monitoring period
        before = table.wait_state(lambda s: s["view"]["bias"]["games"] >= 2, "numbers counted")
        status, answer = table.action("reset_bias", reason="wheel levelled")
        assert status == 200 and answer["accepted"]
        report = table.get("/api/bias")
        after = table.state()["view"]
        # a new period: only the games finished since count (a game may have ended since)
        assert report["games"] <= after["rounds_finished"] - before["view"]["rounds_finished"]
        assert after["bias"]["games"] <= after["rounds_finished"] \
            - before["view"]["rounds_finished"]
    actions = supervisor_records(table.journal)
    assert [(a["action"], a["actor"]) for a in actions] == [
        ("clear", SUPERVISOR), ("void_round", SUPERVISOR), ("reset_bias", SUPERVISOR)]
    assert actions[1]["reason"] == "ball left the wheel"


def test_a_latched_fault_is_shown_and_cleared(tmp_path: Path) -> None:
    with wheel_display(tmp_path, seed=5, host_starts=True, faults={2: "sensor"}) as table:
        state = table.wait_state(lambda s: bool(s["view"]["latched"]), "the sensor fault")
        latched = state["view"]["latched"][0]
        assert latched["kind"] == "hardware"
        assert latched["prompt"] and latched["remedy"] and latched["detail"]
        assert state["view"]["level"] == "error"
        # the supervisor clears once the wheel is back ("before a game", after its recovery)
        table.wait_state(lambda s: s["view"]["wheel"]["state"] == 1, "the wheel back")
        status, answer = table.action("clear")
        assert (status, answer["accepted"]) == (200, True)
        state = table.wait_state(lambda s: s["view"]["rounds_finished"] >= 3, "a game after")
        assert not state["view"]["latched"]


def test_host_started_betting_has_a_countdown(tmp_path: Path) -> None:
    with wheel_display(tmp_path, seed=6, host_starts=True, betting_seconds=2.0) as table:
        state = table.wait_state(lambda s: s["view"]["phase"] == "betting_open"
                                 and s["betting_seconds_left"] is not None, "betting open")
        assert 0 <= state["betting_seconds_left"] <= 2.0
        assert state["view"]["betting_closes_at"] is not None
        closed = table.wait_state(lambda s: s["view"]["phase"] != "betting_open", "closed")
        assert closed["betting_seconds_left"] is None


def bad_requests(table: WheelDisplay) -> None:
    status, answer = table.request("POST", "/api/supervisor/action", b"\xff{not json")
    assert status in (400, 422) and "xff" not in json.dumps(answer), answer
    status, answer = table.request("POST", "/api/supervisor/action", {"supervisor": SUPERVISOR})
    assert status == 422 and {tuple(e["loc"]) for e in answer["detail"]} == {
        ("body", "pin"), ("body", "action")}
    status, _ = table.request("GET", "/api/state", headers={"Host": "evil.example"})
    assert status == 400
    status, _ = table.request("POST", "/api/supervisor/action",
                              {"supervisor": SUPERVISOR, "pin": PIN, "action": "clear"},
                              headers={"Origin": "http://evil.example"})
    assert status == 403


def test_bad_requests_get_a_clear_answer_and_change_nothing(tmp_path: Path) -> None:
    with wheel_display(tmp_path, seed=10) as table:
        bad_requests(table)
        assert table.get("/").startswith("<!doctype html>")
    assert supervisor_records(table.journal) == []
