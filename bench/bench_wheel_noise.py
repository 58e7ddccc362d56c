"""The wheel table on a noisy line: how many games keep their number when bytes are corrupted.

    .venv/bin/python bench/bench_wheel_noise.py [--games 40] [--seeds 5]

The software wheel (``simulators/wheel.py``, 20 times faster than a real one, status every
500 ms of its time) talks to a ``WheelTable`` on a simulated clock through the fault injector
of ``shoe sim --faults corrupt=RATE`` (each byte corrupted with that probability; the wheel
protocol has no checksum, so a flipped bit can make another well-formed status). A latched
irregularity is cleared at once, as a supervisor would. For each rate and both ways of
running games (the wheel's own, host-started), over ``--seeds`` wheels of ``--games`` games:

* **right**: games settled with the number the wheel drew (target: every game the line let
  through), **wrong**: settled with another number, with the number of a game another
  round was settled with already, or with that of a ball launched before the round opened
  (target: 0, whatever the noise);
* voids and latched irregularities, by kind, and line-noise warnings.

No timing: the figures depend only on the seeds.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from shoe_controller.wheel_table.inputs import (
    BettingCommand,
    LinkChanged,
    SupervisorAction,
    WheelLine,
    WheelTick,
)
from shoe_controller.wheel_table.machine import WheelSettings, WheelTable
from simulators.faults import FaultConfig, FaultInjector
from simulators.wheel import SimulatedWheel, WheelTimings
from wheel_protocol import LineSplitter, TrackerConfig, encode_line

SPEED = 20.0
STEP = 0.005


def run(seed: int, games: int, corrupt: float, host_starts: bool) -> Counter[str]:
    wheel = SimulatedWheel(seed=seed, timings=WheelTimings().scaled(SPEED), games=games,
                           mode=1157 | 2 if host_starts else 1157)
    table = WheelTable(WheelSettings(tracker=TrackerConfig(
        host_starts=host_starts, ball_not_detected_grace=5 / SPEED,
        launch_fail_grace=3 / SPEED, confirm_window=1.2 / SPEED, status_timeout=3 / SPEED,
        start_timeout=10 / SPEED)))
    noise = FaultInjector(FaultConfig.parse(f"corrupt={corrupt},seed={seed}")) if corrupt \
        else None
    splitter, tally, now = LineSplitter(), Counter[str](), 0.0
    settled: set[int] = set()
    opened_at: dict[int, float] = {}
    # from a game's start (state 2) to its launch, on the wheel's clock (the bench's)
    to_launch = wheel.timings.launching if host_starts else wheel.timings.bets_open
    closes_at: float | None = None

    def apply(item: object) -> None:
        outcome = table.handle(item, now)  # type: ignore[arg-type]
        for command in outcome.commands:
            wheel.receive(encode_line(command), now)
        for event in outcome.events:
            kind = event["type"]
            if kind == "round_opened":
                opened_at[event["round"]] = now
            elif kind == "winning_number":
                # The game the wheel finished last, each settled once, and launched after
                # the round opened: a round that took the number of a game another round
                # was settled with, or of a ball already running when its bets were taken,
                # is wrong.
                game = wheel.played[-1] if wheel.played else None
                right = (game is not None and game.number == event["number"]
                         and game.game not in settled
                         and opened_at[event["round"]] <= game.began + to_launch)
                if game is not None:
                    settled.add(game.game)
                tally["right" if right else "wrong"] += 1
            elif kind == "round_void":
                tally[f"void {event['reason']}"] += 1
            elif kind == "irregularity" and event.get("latched"):
                tally[f"latch {event['kind']}"] += 1
            elif kind == "wheel_warning" and event["kind"] == "line_noise":
                tally["noise warnings"] += 1

    apply(LinkChanged(True))
    while not wheel.finished or now < 2.0:
        now += STEP
        wheel.step(now)
        data = wheel.data_to_send(now)
        if noise is not None and data:
            data = b"".join(noise(data))
        for line in splitter.feed(data):
            apply(WheelLine.of(line) if isinstance(line, bytes)
                  else WheelLine(line.raw.decode("latin-1"), line.reason or "noise"))
        deadline = table.next_deadline()
        if deadline is not None and now >= deadline:
            apply(WheelTick())
        if table.latched:
            apply(SupervisorAction("clear", "bench"))
        if host_starts:
            current = table.current
            if current is not None and current.phase == "betting_open":
                closes_at = closes_at or now + 5 / SPEED
                if now >= closes_at:
                    closes_at = None
                    apply(BettingCommand("close", "bench"))
            elif table.waiting_for_round and not wheel.finished:
                apply(BettingCommand("open", "bench"))
        if now > games * 120 / SPEED:
            break
    tally["games"] = len(wheel.numbers)
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    print(f"software wheel x{SPEED:g}, {args.seeds} wheels x {args.games} games per row; "
          "latches cleared at once")
    print(f"{'mode':13} {'corrupt':>7} {'numbers':>7} {'right':>6} {'wrong':>6}  "
          "voids / latches / warnings")
    wrong = 0
    for host_starts in (False, True):
        for corrupt in (0.0, 0.002, 0.01, 0.03):
            total: Counter[str] = Counter()
            for seed in range(1, args.seeds + 1):
                total += run(seed, args.games, corrupt, host_starts)
            wrong += total["wrong"]
            others = ", ".join(f"{k} {v}" for k, v in sorted(total.items())
                               if k not in ("games", "right", "wrong"))
            print(f"{'host-started' if host_starts else 'wheel runs':13} {corrupt:7.1%} "
                  f"{total['games']:7} {total['right']:6} {total['wrong']:6}  {others or '-'}")
    print(f"\nwrong numbers: {wrong} (target 0) {'ok' if wrong == 0 else 'NOT MET'}")


if __name__ == "__main__":
    main()
