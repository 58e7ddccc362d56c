"""The software wheel and the log replay as pure models (no process, a clock the test moves)."""

from __future__ import annotations

import pytest

from shoe_controller.errors import ConfigError
from simulators.wheel import LineFaults, SimulatedWheel, WheelTimings, parse_game_faults
from simulators.wheel_replay import LogLine, WheelReplay, parse_wheel_log
from wheel_protocol import Reply, Status, WheelParser, WheelState, WinningNumberLine

FAST = WheelTimings().scaled(100)


def lines(wheel: SimulatedWheel, command: bytes = b"", now: float = 0.0) -> list[object]:
    if command:
        wheel.receive(command, now)
    return WheelParser().feed(wheel.data_to_send(now))


def test_commands_are_answered_as_the_guide_says() -> None:
    wheel = SimulatedWheel(seed=1, timings=FAST, mode=1029)  # no auto status
    assert lines(wheel, b"*K\r\n") == [Reply("K", "CAM")]
    assert lines(wheel, b"*V\r\n") == [Reply("V", "SIM 2.10")]
    assert lines(wheel, b"*S\r\n") == [Reply("S", "SIM 2.10")]
    (status,) = lines(wheel, b"*X\r\n")
    assert isinstance(status, Status) and status.state is WheelState.BEFORE_GAME
    assert lines(wheel, b"*T G 40\r\n") == [Reply("T", "OK")]
    assert lines(wheel, b"*F\r\n") == [Reply("F", "0")]
    assert lines(wheel, b"*o 1159\r\n") == [Reply("o", "OK")]
    assert wheel.host_starts and wheel.auto_status
    assert lines(wheel, b"*P 0\r\n") == [Reply("P", "OK")]
    assert wheel.state is WheelState.TABLE_CLOSED
    assert lines(wheel, b"*Q\r\n*P 7\r\n") == []  # unknown commands are not answered


def test_a_running_game_refuses_changes() -> None:
    wheel = SimulatedWheel(seed=1, timings=FAST)
    now = 0.0
    while wheel.state is not WheelState.BALL_IN_RIM:
        now += 0.01
        wheel.step(now)
    wheel.data_to_send(now)
    assert lines(wheel, b"*T G 40\r\n*o 1157\r\n*P 0\r\n", now) == [
        Reply("o", "BUSY"), Reply("o", "BUSY"), Reply("P", "NO")]


def test_games_draw_the_seeded_numbers_and_send_both_reports() -> None:
    wheel = SimulatedWheel(seed=5, timings=FAST, games=3)
    got: list[object] = []
    parser, now = WheelParser(), 0.0
    while not wheel.finished:
        got += parser.feed(wheel.data_to_send(now))
        now += 0.01
    import random

    rng = random.Random(5)
    assert wheel.numbers == [rng.randrange(37) for _ in range(3)]
    assert [m.number for m in got if isinstance(m, WinningNumberLine)] == wheel.numbers
    fives = [m for m in got if isinstance(m, Status) and m.state is WheelState.WINNING_NUMBER]
    assert {m.last_number for m in fives} == set(wheel.numbers)
    assert [m.spin for m in got if isinstance(m, Status)][-1] == 3


def test_stuck_spin_counter() -> None:
    wheel = SimulatedWheel(seed=5, timings=FAST, games=3, stuck_spin=True)
    spins, parser, now = set(), WheelParser(), 0.0
    while not wheel.finished:
        spins |= {m.spin for m in parser.feed(wheel.data_to_send(now)) if isinstance(m, Status)}
        now += 0.01
    assert spins == {0, 1}


@pytest.mark.parametrize(("text", "message"), [
    ("drop-status=1.5", "rate in 0..1"), ("drop-line=x", "needs a number"),
    ("seed=x", "needs a number"), ("wobble=1", "unknown item"), ("drop-line", "unknown item"),
])
def test_line_fault_spec_errors(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        LineFaults.parse(text)


def test_line_fault_spec() -> None:
    assert LineFaults.parse("drop-status=0.2, repeat-line=1,seed=4") == LineFaults(0.2, 0, 1, 4)
    assert parse_game_faults(["misspin@2,sensor@5", "no-ball@9"]) == {
        2: "misspin", 5: "sensor", 9: "no-ball"}
    with pytest.raises(ConfigError, match="game number"):
        parse_game_faults(["misspin@0"])


def test_speed_must_be_positive() -> None:
    with pytest.raises(ConfigError, match="more than 0"):
        WheelTimings().scaled(0)


def test_log_with_and_without_timestamps() -> None:
    log = parse_wheel_log(b"# a comment\n\n1.5\t*X;1;001;  ;0;250;0\r\n 6\n3.0\t27\n\xff\xfe*K\n")
    assert log == [LogLine(1.5, b"*X;1;001;  ;0;250;0"), LogLine(None, b" 6"),
                   LogLine(3.0, b"27"), LogLine(None, b"\xff\xfe*K")]
    replay = WheelReplay(log, speed=2.0, interval=0.5)
    assert replay.data_to_send(10.0) == b""  # not started: the host has not spoken
    replay.receive(b"*K\r\n", 100.0)
    assert replay.data_to_send(100.0) == b"*X;1;001;  ;0;250;0\r\n"
    assert replay.next_deadline() == pytest.approx(100.25)  # half a second, twice as fast
    assert replay.data_to_send(100.25) == b" 6\r\n"
    assert replay.data_to_send(100.7) == b""
    assert replay.data_to_send(100.75) == b"27\r\n"  # (3.0 - 1.5) / 2 after the start
    assert replay.data_to_send(101.0) == b"\xff\xfe*K\r\n" and replay.finished


@pytest.mark.parametrize(("data", "message"), [
    (b"", "holds no lines"), (b"# only a comment\n", "holds no lines"),
    (b"2\tx\n1\ty\n", "line 2: timestamp 1 is before"),
])
def test_bad_logs(data: bytes, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_wheel_log(data)
