"""``shoe sim --wheel``: the real process over a real pty and loopback TCP into the tracker.

The recorded-log test replays tests/wheel/data/slingshot-session.log (a status stream written
by hand from the vendor guide's examples) through ``shoe sim --wheel --replay`` and checks that
the game tracker accepts exactly the numbers the log shows, once each, in order, and none from
a stale status. The generated-wheel test runs seeded games with faults and line noise and
checks every game ends once, as the wheel played it.
"""

from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shoe_controller.cli import main
from shoe_controller.errors import TransportError
from shoe_controller.transports.serial_port import SerialTransport
from wheel_protocol import (
    FaultCode,
    GameTracker,
    GameVoided,
    NumberAccepted,
    RoundOpened,
    SendCommand,
    Status,
    TrackerConfig,
    VoidReason,
    WheelFault,
    WheelParser,
    WheelState,
    encode_line,
)

pytestmark = pytest.mark.timeout(60)

LOG = Path(__file__).with_name("data") / "slingshot-session.log"
LOG_NUMBERS = [17, 32, 32, 5, 0, 26]  # what the log's comment says, read off by hand


def start(argv: list[str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "shoe_controller", "sim", "--wheel", *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    where = proc.stdout.readline().strip()
    if not where:
        proc.wait(5)
        pytest.fail(f"shoe sim --wheel did not start: {proc.stderr.read() if proc.stderr else ''}")
    kind, _, address = where.partition(" ")
    return proc, (address if kind == "PTY" else f"socket://{address}")


def host(url: str, proc: subprocess.Popen[str], speed: float, **config: object) -> list[object]:
    """A host on the wheel's port: identify (which starts a replay), then follow the stream
    with the tracker, sending what it asks, until the simulator has exited."""
    tracker = GameTracker(TrackerConfig(
        ball_not_detected_grace=5 / speed, launch_fail_grace=3 / speed,
        confirm_window=1.2 / speed, status_timeout=0, **config))  # type: ignore[arg-type]
    parser = WheelParser()
    events: list[object] = []
    with SerialTransport(url) as port:
        port.write(b"*K\r\n")
        quiet_since = None
        while True:
            try:
                data = port.read(4096, 0.01)
            except TransportError:  # the pty went with the simulator
                assert proc.wait(5) == 0
                break
            now = time.monotonic()
            outputs = [o for m in parser.feed(data) for o in tracker.receive(m, now)]
            outputs += tracker.poll(now)
            for output in outputs:
                if isinstance(output, SendCommand):
                    port.write(encode_line(output.command))
            events += outputs
            if data:
                quiet_since = None
            elif proc.poll() is not None:
                quiet_since = quiet_since or now
                if now - quiet_since > 0.3:
                    break
    return events


def stop(proc: subprocess.Popen[str]) -> str:
    if proc.poll() is None:
        proc.terminate()
    _, err = proc.communicate(timeout=10)
    return err


@pytest.mark.parametrize("where", ["--pty", "--tcp"])
def test_recorded_log_replayed_gives_exactly_its_numbers_once_in_order(where: str) -> None:
    speed = 20.0
    argv = [where] + (["127.0.0.1:0"] if where == "--tcp" else [])
    proc, url = start([*argv, "--replay", str(LOG), "--speed", str(speed), "--exit-when-done"])
    try:
        # The tracker's grace periods only 4x shorter than a real wheel's: a host slowed
        # down by a busy machine must not stretch the log's brief flags past them.
        events = host(url, proc, speed / 5)
    finally:
        err = stop(proc)
    assert proc.returncode == 0, err
    accepted = [e for e in events if isinstance(e, NumberAccepted)]
    assert [e.number for e in accepted] == LOG_NUMBERS
    assert [e.game for e in accepted] == [1, 2, 3, 5, 6, 7]  # game 4 was the misspin
    voids = [e for e in events if isinstance(e, GameVoided)]
    assert [(v.game, v.reason) for v in voids] == [(4, VoidReason.MISSPIN)]
    respins = [e.respin_of for e in events if isinstance(e, RoundOpened) and e.respin_of]
    assert respins == [4]
    assert not [e for e in events if isinstance(e, WheelFault) and e.latch]


def _expected_draws(seed: int, count: int) -> list[int]:
    """The simulator's documented draw: random.Random(seed).randrange(37), one per number."""
    rng = random.Random(seed)
    return [rng.randrange(37) for _ in range(count)]


def test_generated_wheel_with_faults_and_noise_over_a_pty() -> None:
    speed = 100.0
    proc, url = start(["--pty", "--seed", "7", "--speed", str(speed), "--games", "6",
                       "--wheel-fault", "misspin@2,no-ball@4", "--wheel-fault", "sensor@5",
                       "--line-faults", "repeat-line=0.5,drop-status=0.2,seed=1",
                       "--faults", "corrupt=0.0005,seed=3", "--exit-when-done"])
    try:
        events = host(url, proc, speed)
    finally:
        err = stop(proc)
    assert proc.returncode == 0, err
    draws = _expected_draws(7, 4)  # games 1, 2 (respun), 3 and 6 reach a number
    accepted = [e.number for e in events if isinstance(e, NumberAccepted)]
    voids = [e.reason for e in events if isinstance(e, GameVoided)]
    noise_voids = voids.count(VoidReason.NUMBER_MISMATCH)
    assert [r for r in voids if r is not VoidReason.NUMBER_MISMATCH] == [
        VoidReason.MISSPIN, VoidReason.BALL_NOT_DETECTED, VoidReason.FAULT]
    assert len(accepted) + noise_voids == len(draws)
    it = iter(draws)
    assert all(n in it for n in accepted)  # in order, never a number the wheel did not draw
    latched = {e.code for e in events if isinstance(e, WheelFault) and e.latch}
    assert {FaultCode.BALL_NOT_DETECTED, FaultCode.HARDWARE} <= latched


def test_generated_wheel_host_started_over_tcp() -> None:
    """Mode 1159: the host opens and closes betting and starts each game with *u."""
    speed = 100.0
    proc, url = start(["--tcp", "127.0.0.1:0", "--seed", "11", "--speed", str(speed),
                       "--mode", "1159", "--games", "3", "--exit-when-done"])
    tracker = GameTracker(TrackerConfig(host_starts=True, confirm_window=1.2 / speed,
                                        start_timeout=2.0, status_timeout=0))
    parser = WheelParser()
    accepted = []
    try:
        with SerialTransport(url) as port:
            deadline = time.monotonic() + 20
            outputs = tracker.open_betting(time.monotonic())
            while len(accepted) < 3 and time.monotonic() < deadline:
                data = port.read(4096, 0.01)
                now = time.monotonic()
                outputs += [o for m in parser.feed(data) for o in tracker.receive(m, now)]
                outputs += tracker.poll(now)
                if tracker.phase.value == "betting":
                    outputs += tracker.close_betting(now)  # the table system closes betting
                elif not tracker.in_progress:
                    outputs += tracker.open_betting(now)
                for output in outputs:
                    if isinstance(output, SendCommand):
                        port.write(encode_line(output.command))
                    if isinstance(output, NumberAccepted):
                        accepted.append(output.number)
                    assert not isinstance(output, GameVoided), output
                outputs = []
    finally:
        stop(proc)
    assert accepted == _expected_draws(11, 3)


def test_a_wheel_told_to_wait_for_its_host_starts_its_first_game_when_one_connects() -> None:
    """``--wait-for-host``: at 100 times a wheel's speed a game lasts about 0.6 s; after 2 s
    without a host, the host that connects still sees the wheel before its first game (spin
    0, state 1) and then game 1 begin (state 2 with spin 1), none played before it came."""
    proc, url = start(["--tcp", "127.0.0.1:0", "--seed", "3", "--speed", "100", "--games",
                       "3", "--exit-when-done", "--wait-for-host"])
    try:
        time.sleep(2.0)
        parser = WheelParser()
        statuses = []
        with SerialTransport(url) as port:
            deadline = time.monotonic() + 20
            while not any(s.state is WheelState.BETS_OPEN for s in statuses):
                assert time.monotonic() < deadline, statuses[-5:]
                statuses += [m for m in parser.feed(port.read(4096, 0.05))
                             if isinstance(m, Status)]
    finally:
        err = stop(proc)
    assert (statuses[0].spin, statuses[0].state) == (0, WheelState.BEFORE_GAME), (statuses[:3],
                                                                                  err)
    assert next(s.spin for s in statuses if s.state is WheelState.BETS_OPEN) == 1


@pytest.mark.parametrize(("argv", "message"), [
    (["--wheel-fault", "wobble@3"], "unknown fault 'wobble'"),
    (["--wheel-fault", "misspin"], "needs the game number"),
    (["--line-faults", "drop-status=2"], "rate in 0..1"),
    (["--line-faults", "jitter=0.1"], "unknown item"),
    (["--replay", "/nonexistent/wheel.log"], "cannot read wheel log"),
    (["--exit-when-done"], "needs --games N or --replay"),
    (["--decks", "6"], "--decks is a shoe option"),
    (["--faults", "disconnect=0.1"], "'disconnect' faults are for the shoe"),
    (["--faults", "drop-frame=0.1"], "use --line-faults"),
])
def test_wheel_config_errors_are_one_line_and_exit_1(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sim", "--wheel", "--pty", *argv]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_wheel_options_need_wheel(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "--pty", "--games", "3"]) == 1
    assert "--games is a wheel option: add --wheel" in capsys.readouterr().err


def test_a_log_whose_time_goes_back_is_refused(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "bad.log"
    log.write_bytes(b"1.0\t*X;1;001;  ;0;250;0\n0.5\t*X;2;001;  ;0;250;0\n")
    assert main(["sim", "--wheel", "--pty", "--replay", str(log)]) == 1
    assert "line 2: timestamp 0.5 is before the previous one" in capsys.readouterr().err


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("bad")
    (root / "empty.log").write_bytes(b"")
    return {"directory": root, "empty": root / "empty.log"}


@pytest.mark.parametrize(("args", "message"), [
    (["--replay", "{directory}"], "cannot read wheel log"),
    (["--replay", "{empty}"], "holds no lines"),
    (["--speed", "0"], "must be more than 0"),
    (["--mode", "70000"], "expected a mode 0..65535"),
    (["--replay", "{empty}", "--games", "2"], "--replay plays the log as it is"),
])
def test_bad_wheel_arguments_as_an_operator_types_them(args: list[str], message: str,
                                                         bad_files: dict[str, Path]) -> None:
    """A real process each: a one-line ``shoe sim: error: ...``, never a traceback."""
    argv = [a.format(**bad_files) for a in args]
    result = subprocess.run([sys.executable, "-m", "shoe_controller", "sim", "--wheel", "--pty",
                             *argv], capture_output=True, text=True, timeout=20, check=False)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("shoe sim: error: ") and message in last, result.stderr
