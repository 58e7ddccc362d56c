"""The tracker following the software wheel, in process on a simulated clock: whatever the
faults and lost or repeated lines, it accepts exactly the numbers the wheel drew, in order,
and voids exactly the games the wheel could not finish."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from simulators.wheel import GAME_FAULTS, LineFaults, SimulatedWheel, WheelTimings
from wheel_protocol import (
    GameTracker,
    GameVoided,
    NumberAccepted,
    SendCommand,
    TrackerConfig,
    VoidReason,
    WheelParser,
    encode_line,
)

SPEED = 100.0
NO_NUMBER = {"no-ball": VoidReason.BALL_NOT_DETECTED, "sensor": VoidReason.FAULT,
             "silent-idle": VoidReason.WHEEL_IDLE}


def follow(wheel: SimulatedWheel, config: TrackerConfig, step: float = 0.004) -> list[object]:
    parser, tracker = WheelParser(), GameTracker(config)
    events: list[object] = []
    now = 0.0
    while not wheel.finished and now < 120:
        outputs = [o for m in parser.feed(wheel.data_to_send(now)) for o in
                   tracker.receive(m, now)]
        outputs += tracker.poll(now)
        for output in outputs:
            if isinstance(output, SendCommand):
                wheel.receive(encode_line(output.command), now)
        events += outputs
        now += step
    for _ in range(100):  # let a last lone report be confirmed
        now += step
        events += tracker.poll(now)
    return events


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    faults=st.dictionaries(st.integers(1, 6), st.sampled_from(GAME_FAULTS), max_size=3),
    drop_status=st.sampled_from([0.0, 0.1, 0.3]),
    drop_line=st.sampled_from([0.0, 0.5, 1.0]),
    repeat_line=st.sampled_from([0.0, 0.5]),
    polled=st.booleans(),
)
def test_tracker_takes_exactly_what_the_wheel_drew(seed: int, faults: dict[int, str],
                                                   drop_status: float, drop_line: float,
                                                   repeat_line: float, polled: bool) -> None:
    speed = SPEED / 10 if polled else SPEED  # polls are 100 ms apart at the least
    timings = WheelTimings().scaled(speed)
    wheel = SimulatedWheel(seed=seed, timings=timings, faults=faults, games=6,
                           mode=1029 if polled else 1157,
                           line_faults=LineFaults(drop_status, drop_line, repeat_line, seed))
    config = TrackerConfig(ball_not_detected_grace=5 / speed, launch_fail_grace=3 / speed,
                           confirm_window=1.2 / speed, status_timeout=0,
                           poll_interval=0.1 if polled else None)
    events = follow(wheel, config, step=0.004 if not polled else 0.02)
    assert wheel.finished and wheel.game == 6
    accepted = [e.number for e in events if isinstance(e, NumberAccepted)]
    assert accepted == wheel.numbers
    voids = [e.reason for e in events if isinstance(e, GameVoided)]
    expected = []
    for game in range(1, 7):
        kind = faults.get(game)
        if kind == "misspin":
            expected.append(VoidReason.MISSPIN)
        elif kind in NO_NUMBER:
            expected.append(NO_NUMBER[kind])
    assert voids == expected
