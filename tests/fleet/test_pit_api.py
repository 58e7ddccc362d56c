"""``shoe pit`` against hostile input: garbage published on the broker under the tables'
topics, unknown tables, foreign Host headers. It refuses each with a reason and keeps going."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt

from tests.e2e.processes import ProcessKeeper, shoe_command

from .rig import Mosquitto, wait_for


def get(url: str, path: str, host: str | None = None) -> tuple[int, Any]:
    where = url.split("//", 1)[1].strip("/")
    name, port = where.rsplit(":", 1)
    connection = http.client.HTTPConnection(name, int(port), timeout=5)
    try:
        connection.request("GET", path, headers={"Host": host} if host else {})
        response = connection.getresponse()
        body = response.read()
    finally:
        connection.close()
    try:
        return response.status, json.loads(body)
    except ValueError:
        return response.status, body.decode(errors="replace")


def test_the_pit_refuses_garbage_and_keeps_going(tmp_path: Path) -> None:
    broker = Mosquitto(tmp_path / "broker").start()
    try:
        with ProcessKeeper(tmp_path) as procs:
            pit = procs.start(shoe_command("pit", "--broker", broker.url, "--http", "0",
                                           "--log-level", "warning"), "pit")
            url = pit.first_line(20).split()[1]
            wait_for(lambda: get(url, "/api/floor")[1]["broker"], "the pit's subscription")
            rogue = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="rogue")
            rogue.connect("127.0.0.1", broker.port)
            rogue.loop_start()
            garbage = [b"\xff" * 100, b"{}", b"[]", b'{"v": 1, "table_id": "t-9"}',
                       json.dumps({"v": 1, "table_id": "other"}).encode(), b"x" * 300_000,
                       json.dumps({"v": 2, "table_id": "t-9"}).encode()]
            for payload in garbage:
                for kind in ("state", "events", "status"):
                    rogue.publish(f"shoe/tables/t-9/{kind}", payload, qos=1).wait_for_publish(5)
            wait_for(lambda: get(url, "/api/floor")[1]["rejected"] >= 3 * len(garbage),
                     "every message refused")
            rogue.disconnect()
            rogue.loop_stop()
            status, floor = get(url, "/api/floor")
            assert status == 200 and floor["tables"] == []  # none of it made a table
            assert any("not JSON" in reason for reason in floor["reasons"])
            assert get(url, "/api/tables/t-9")[0] == 404
            assert get(url, "/api/tables/%2e%2e%2fetc")[0] == 404
            assert get(url, "/static/..%2fpit_app.py")[0] == 404
            assert get(url, "/api/floor", host="evil.example")[0] == 400  # DNS rebinding
            assert get(url, "/")[0] == 200
            assert pit.alive(), pit.stderr()
            assert "Traceback" not in pit.stderr()
    finally:
        broker.stop()
