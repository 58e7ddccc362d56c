"""A live wheel table with its dealer display, in one process, for the display tests.

Everything is the product's code on real parts: the software wheel served on loopback TCP
(as ``shoe sim --wheel --tcp``), a :class:`WheelController` reading it through pyserial's
``socket://`` URL with a real journal, running in its own thread as in ``shoe run`` (with the
same services check), and :func:`serve_wheel` on a loopback port. The tests talk HTTP to it.

What the tests expect is worked out from the wheel's own draw (``wheel.numbers``) and the
colour table below, written from the rule sheet, never from the table's functions.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shoe_controller.config import MIN_PIN_ITERATIONS, hash_pin
from shoe_controller.journal import Journal
from shoe_controller.live.startup import Services
from shoe_controller.web.binding import http_settings
from shoe_controller.web.wheel_app import WheelWebServer, serve_wheel
from shoe_controller.wheel_table.connection import WheelConnection
from shoe_controller.wheel_table.controller import WheelController
from shoe_controller.wheel_table.machine import WheelSettings, WheelTable
from simulators.wheel import SimulatedWheel, WheelTimings
from wheel_protocol import TrackerConfig
from wheel_protocol.messages import ARCADE_AUTOMATIC, Mode

from .test_controller import served_wheel

#: The software wheel runs this many times faster than a real one (a game in under a second).
SPEED = 80.0

SUPERVISOR = "alice"
PIN = "471100"
PIN_HASH = hash_pin(PIN, salt=b"wheel-display-tests", iterations=MIN_PIN_ITERATIONS)

#: The red pockets of a single-zero wheel (rule sheet 003; ../shared/RULES.md); 0 is green,
#: every other number black.
RED = frozenset({1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36})


def settings(host_starts: bool) -> WheelSettings:
    """The tracker's graces at the wheel's speed; its watchdogs (silence, a start that does
    not happen) at a second or two: a loaded test machine must not pass for a silent wheel."""
    return WheelSettings(tracker=TrackerConfig(
        host_starts=host_starts, ball_not_detected_grace=5 / SPEED,
        launch_fail_grace=3 / SPEED, confirm_window=1.2 / SPEED, status_timeout=2.0,
        start_timeout=1.0))


def colour(number: int) -> str:
    return "green" if number == 0 else "red" if number in RED else "black"


@dataclass
class WheelDisplay:
    controller: WheelController
    wheel: SimulatedWheel
    web: WheelWebServer
    journal: Path

    @property
    def url(self) -> str:
        return self.web.url

    def request(self, method: str, path: str, body: Any = None,
                headers: Mapping[str, str] | None = None) -> tuple[int, Any]:
        """One HTTP request; the answer's status and its JSON (or text) body."""
        host, port = self.web._sock.getsockname()[:2]
        connection = http.client.HTTPConnection(host, port, timeout=10)
        try:
            data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
            connection.request(method, path, body=data, headers={
                "Content-Type": "application/json", **(headers or {})})
            response = connection.getresponse()
            text = response.read().decode("utf-8", "replace")
        finally:
            connection.close()
        try:
            return response.status, json.loads(text)
        except ValueError:
            return response.status, text

    def get(self, path: str) -> Any:
        status, data = self.request("GET", path)
        assert status == 200, (path, status, data)
        return data

    def state(self) -> dict[str, Any]:
        return self.get("/api/state")  # type: ignore[no-any-return]

    def wait(self, condition: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
        end = time.monotonic() + timeout
        while not condition():
            assert time.monotonic() < end, f"not within {timeout} s: {what}"
            self.web.check()
            time.sleep(0.02)

    def wait_state(self, condition: Callable[[dict[str, Any]], bool], what: str,
                   timeout: float = 15.0) -> dict[str, Any]:
        """Poll ``/api/state`` until ``condition(state)``; that state."""
        found: list[dict[str, Any]] = []

        def check() -> bool:
            state = self.state()
            if condition(state):
                found.append(state)
                return True
            return False

        self.wait(check, what, timeout)
        return found[0]

    def action(self, action: str, *, pin: str = PIN, reason: str = "") -> tuple[int, Any]:
        return self.request("POST", "/api/supervisor/action", {
            "supervisor": SUPERVISOR, "pin": pin, "action": action, "reason": reason})


@contextmanager
def wheel_display(tmp_path: Path, *, seed: int = 7, host_starts: bool = False,
                  faults: Mapping[int, str] | None = None, games: int | None = None,
                  betting_seconds: float = 0.1) -> Iterator[WheelDisplay]:
    mode = ARCADE_AUTOMATIC | (Mode.HOST_STARTS_GAME if host_starts else 0)
    wheel = SimulatedWheel(seed=seed, timings=WheelTimings().scaled(SPEED), mode=mode,
                           faults=faults, games=games)
    path = tmp_path / "wheel.db"
    with served_wheel(wheel) as url, Journal(path, durability="normal") as journal, \
            WheelConnection(url, retry_seconds=0.05) as line:
        controller = WheelController(
            journal=journal, table=WheelTable(settings(host_starts)),
            profile="roulette-single-zero", connection=line, betting_seconds=betting_seconds,
            result_seconds=0.05, supervisors={SUPERVISOR: PIN_HASH})
        controller.start()
        web = serve_wheel(controller, http_settings(("127.0.0.1", 0)))
        services = Services()
        services.checks.append(web)
        stop = threading.Event()
        failures: list[BaseException] = []

        def run() -> None:
            try:
                controller.run(services.should_stop(stop.is_set))
            except BaseException as exc:  # noqa: BLE001 - re-raised in the test
                failures.append(exc)

        thread = threading.Thread(target=run, name="wheel-controller", daemon=True)
        thread.start()
        try:
            yield WheelDisplay(controller, wheel, web, path)
        finally:
            stop.set()
            thread.join(10)
            web.close()
        web.check()
        if failures:
            raise failures[0]
