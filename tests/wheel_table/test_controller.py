"""The wheel controller on a real line: the software wheel served on loopback TCP in this
process, the controller reading it through pyserial's ``socket://`` URL, a real journal.

A restart rebuilds the table from the journal exactly; host-started games run on the
controller's own betting window; a wheel switched on late is waited for; supervisors' PINs
are checked by the card table's access guard."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from shoe_controller.config import MIN_PIN_ITERATIONS, hash_pin
from shoe_controller.journal import Journal
from shoe_controller.live.supervision import SupervisorAuthError
from shoe_controller.transports.tcp import TcpServerTransport
from shoe_controller.wheel_table.connection import WheelConnection
from shoe_controller.wheel_table.controller import WheelController
from shoe_controller.wheel_table.inputs import wheel_input_from_record
from shoe_controller.wheel_table.machine import WheelSettings, WheelTable
from simulators.wheel import SimulatedWheel, WheelTimings
from simulators.wheel_server import run_wheel
from wheel_protocol import TrackerConfig

pytestmark = pytest.mark.timeout(60)

SPEED = 80.0
ALICE = hash_pin("471100", salt=bytes(range(16)), iterations=MIN_PIN_ITERATIONS)


@contextmanager
def served_wheel(wheel: SimulatedWheel, port: int = 0) -> Iterator[str]:
    server = TcpServerTransport("127.0.0.1", port)
    server.open()
    stop = threading.Event()
    thread = threading.Thread(target=run_wheel, args=(wheel, server, stop), daemon=True)
    thread.start()
    try:
        host, bound = server.address
        yield f"socket://{host}:{bound}"
    finally:
        stop.set()
        server.close()
        thread.join(5)


def settings(host_starts: bool = False) -> WheelSettings:
    return WheelSettings(tracker=TrackerConfig(
        host_starts=host_starts, ball_not_detected_grace=5 / SPEED, launch_fail_grace=3 / SPEED,
        confirm_window=1.2 / SPEED, status_timeout=2.0, start_timeout=1.0))  # a busy machine


@contextmanager
def controller(journal_path: Path, url: str, *, host_starts: bool = False,
               betting_seconds: float = 0.1) -> Iterator[WheelController]:
    with Journal(journal_path, durability="normal") as journal, WheelConnection(url, retry_seconds=0.05) as line:
        ctl = WheelController(journal=journal, table=WheelTable(settings(host_starts)),
                              profile="roulette-single-zero", connection=line,
                              betting_seconds=betting_seconds, result_seconds=0.05,
                              supervisors={"alice": ALICE})
        ctl.start()
        yield ctl


def run_until(ctl: WheelController, done: Any, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, f"not done in {seconds} s: {ctl.view()['prompt']}"
        ctl.step(0.02)


def numbers(events: list[dict[str, Any]]) -> list[int]:
    return [e["number"] for e in events if e["type"] == "winning_number"]


def test_a_restart_resumes_exactly_and_takes_each_number_once(tmp_path: Path) -> None:
    wheel = SimulatedWheel(seed=11, timings=WheelTimings().scaled(SPEED))
    seen: list[dict[str, Any]] = []
    path = tmp_path / "wheel.db"
    with served_wheel(wheel) as url:
        with controller(path, url) as ctl:
            ctl.listeners.append(lambda _view, events: seen.extend(events))
            run_until(ctl, lambda: ctl.table.numbers_accepted >= 2
                      and ctl.table.current is not None)  # killed mid-game
            before = ctl.table.view()
        with controller(path, url) as ctl:
            assert ctl.table.view() | {"wheel": None} == before | {"wheel": None}
            ctl.listeners.append(lambda _view, events: seen.extend(events))
            run_until(ctl, lambda: ctl.table.numbers_accepted >= 4)
    taken = numbers(seen)
    assert len(taken) >= 4
    # each number the wheel drew, in order, none twice (a game the controller missed while
    # it was away may be absent: the wheel ran it with nobody listening)
    position = 0
    for number in taken:
        position = wheel.numbers.index(number, position) + 1
    rounds = [e["round"] for e in seen if e["type"] == "round_opened"]
    assert rounds == list(range(rounds[0], rounds[0] + len(rounds)))
    # the journal alone rebuilds the same table
    with Journal(path, readonly=True) as journal:
        rebuilt = WheelTable(settings())
        for record in journal.records():
            rebuilt.handle(wheel_input_from_record(record.kind, record.data), record.wall_time)
    assert rebuilt.numbers_accepted >= 4
    assert [r["number"] for r in rebuilt.recent][::-1][-len(taken):] == taken


def test_host_started_games_run_on_the_own_betting_window(tmp_path: Path) -> None:
    wheel = SimulatedWheel(seed=5, timings=WheelTimings().scaled(SPEED), mode=1157 | 2)
    seen: list[dict[str, Any]] = []
    with served_wheel(wheel) as url, controller(tmp_path / "j.db", url, host_starts=True) as ctl:
        ctl.listeners.append(lambda _view, events: seen.extend(events))
        run_until(ctl, lambda: ctl.table.numbers_accepted >= 3)
    assert numbers(seen) == wheel.numbers[:3]  # the wheel launched only when told to
    kinds = [e["type"] for e in seen if e["type"] in ("round_opened", "betting_closed",
                                                       "winning_number")]
    assert kinds[:9] == ["round_opened", "betting_closed", "winning_number"] * 3


def test_a_wheel_switched_on_late_is_waited_for(tmp_path: Path) -> None:
    probe = TcpServerTransport("127.0.0.1", 0)
    probe.open()
    port = probe.address[1]
    probe.close()
    with controller(tmp_path / "j.db", f"socket://127.0.0.1:{port}") as ctl:
        ctl.step(0.1)
        assert ctl.view()["prompt"].startswith("Wheel not connected")
        assert ctl.view()["level"] == "error"
        wheel = SimulatedWheel(seed=2, timings=WheelTimings().scaled(SPEED))
        with served_wheel(wheel, port):
            run_until(ctl, lambda: ctl.table.numbers_accepted >= 1)
            assert ctl.view()["wheel"]["connected"]


def test_supervisors_pins_are_checked_and_actions_journalled(tmp_path: Path) -> None:
    wheel = SimulatedWheel(seed=3, timings=WheelTimings().scaled(SPEED))
    with served_wheel(wheel) as url, controller(tmp_path / "j.db", url) as ctl:
        with pytest.raises(SupervisorAuthError):
            ctl.supervisor("clear", "alice", "000000")
        with pytest.raises(Exception, match="needs a reason"):
            ctl.supervisor("void_round", "alice", "471100")
        with pytest.raises(Exception, match="unknown supervisor action"):
            ctl.supervisor("enter_card", "alice", "471100")
        ticket = ctl.supervisor("clear", "alice", "471100")
        ctl.step(0.02)
        assert ticket.wait(1) and ticket.accepted is False
        assert ticket.message == "nothing to clear"
        run_until(ctl, lambda: ctl.table.current is not None)
        void = ctl.supervisor("void_round", "alice", "471100", reason="ball jumped out")
        run_until(ctl, lambda: void.status == "journalled")
        assert void.accepted
        assert ctl.table.last_result is not None
        assert ctl.table.last_result["void"] == "supervisor"
        last = ctl.journal.last()
        assert last is not None


def test_the_console_speaks_a_wheel_tables_commands(tmp_path: Path) -> None:
    from shoe_controller.display.supervisor_console import (
        WHEEL_COMMANDS,
        WHEEL_HELP,
        SupervisorConsole,
    )

    wheel = SimulatedWheel(seed=4, timings=WheelTimings().scaled(SPEED))
    printed: list[str] = []
    with served_wheel(wheel) as url, controller(tmp_path / "j.db", url) as ctl:
        console = SupervisorConsole(ctl, [], ask_pin=lambda _prompt: "471100",  # type: ignore[arg-type]
                                    out=printed.append, wait=0.0,
                                    commands=WHEEL_COMMANDS, usage=WHEEL_HELP)
        console.handle("enter alice QS")
        assert printed[-1] == WHEEL_HELP  # a card table's verb: the wheel's usage
        console.handle("reset-bias alice")
        assert printed[-1].startswith("usage: reset-bias ID REASON")
        console.handle("reset-bias alice wheel levelled")
        console.handle("clear alice")
        console.handle("dealer alice Maria Lopez")
        ctl.step(0.02)
        assert ctl.table.dealer == "Maria Lopez"
        kinds = [r.kind for r in ctl.journal.records()]
        actions = [r.data["action"] for r in ctl.journal.records() if r.kind == "supervisor"]
        assert actions == ["reset_bias", "clear", "dealer"] and kinds[0] == "session"


def test_a_babbling_wheel_holds_back_neither_a_supervisors_action_nor_a_stop(
        tmp_path: Path) -> None:
    """A wheel line that brings statuses faster than the journal takes them (each is a
    commit; on a real pseudo-terminal, as fast as it carries them): the controller applies a
    bounded number of lines a step, so a clear handed over meanwhile is journalled within
    seconds (before: once the line fell silent), and the run stops when asked."""
    status = b"*X;6;003; 7;0;250;0\r\n"
    wheel_side, controller_side = os.openpty()
    os.set_blocking(wheel_side, False)
    babbling = threading.Event()
    written = [0]  # bytes

    def babble(lines: int = 200_000) -> None:  # minutes of work for the journal
        stream = memoryview(status * lines)
        while written[0] < len(stream) and not babbling.is_set():
            try:
                written[0] += os.write(wheel_side, stream[written[0]:written[0] + 4096])
            except BlockingIOError:  # the terminal's buffer is full: the controller reads
                time.sleep(0.001)

    babbler = threading.Thread(target=babble, daemon=True)
    journal_path = tmp_path / "j.db"
    stopping = threading.Event()
    try:
        with controller(journal_path, os.ttyname(controller_side)) as ctl:
            babbler.start()
            runner = threading.Thread(target=ctl.run, args=(stopping.is_set,), daemon=True)
            runner.start()
            with Journal(journal_path, readonly=True) as seen:
                deadline = time.monotonic() + 20
                while seen.count() < 500:  # the controller deep in the babble
                    assert time.monotonic() < deadline and runner.is_alive()
                    time.sleep(0.01)
            ticket = ctl.supervisor("clear", "alice", "471100")
            assert ticket.wait(5), "the clear waited behind the babbling line"
            stopping.set()
            runner.join(5)
            assert not runner.is_alive(), "the run did not stop while the line babbled"
            records = list(ctl.journal.records())
            sent = written[0] // len(status)
    finally:
        babbling.set()
        babbler.join(5)
        os.close(wheel_side)
        os.close(controller_side)
    at = next(i for i, r in enumerate(records) if r.kind == "supervisor")
    assert sum(r.kind != "session" for r in records[:at]) >= 500  # handed over mid-babble
    applied = sum(r.kind == "wheel_line" for r in records)
    assert applied + 1000 < sent, (applied, sent)  # served with lines still waiting
