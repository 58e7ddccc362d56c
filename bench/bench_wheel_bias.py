"""Wheel bias monitor: false alarms on fair wheels, and games to flag a biased arc.

Simulates wheels with the monitor's own decision rule (``first_alert``: the alert as it would
be raised checking after every game), seeded, so the figures can be reproduced:

* fair wheels (every pocket 1/37) over 10,000 games each: the share that ever raise the
  alert (the false-alarm rate per wheel per 10,000 games);
* biased wheels, one arc of 9 neighbouring pockets each 1.5x (and 1.25x) as likely as the
  others: the games until the alert (median, 95th percentile) and the share flagged in time.

Run: .venv/bin/python bench/bench_wheel_bias.py [--fair N] [--biased N] [--seed S]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from shoe_controller.games.roulette.bias import BiasConfig, biased_weights, first_alert
from shoe_controller.games.roulette.layout import WHEEL_ORDER

GAMES = 10_000
HOT_ARC = WHEEL_ORDER[10:19]
FALSE_ALARM_TARGET = 0.01  # at most 1 % of fair wheels alarmed in 10,000 games
DETECTION_TARGET = 2_500  # 95 % of 1.5x-arc wheels flagged within this many games


def fair_run(wheels: int, rng: np.random.Generator, config: BiasConfig) -> tuple[int, float]:
    alarms = sum(first_alert(rng.integers(0, 37, GAMES), config) is not None
                 for _ in range(wheels))
    return alarms, alarms / wheels


def biased_run(wheels: int, factor: float, rng: np.random.Generator,
               config: BiasConfig) -> list[float]:
    weights = biased_weights(HOT_ARC, factor)
    found = [first_alert(rng.choice(37, GAMES, p=weights), config) for _ in range(wheels)]
    return [math.inf if f is None else float(f) for f in found]


def upper_95(successes: int, trials: int) -> float:
    """One-sided 95 % upper bound of a rate (exact Clopper-Pearson; 3/n when none seen)."""
    from scipy import stats

    if successes == trials:
        return 1.0
    return float(stats.beta.ppf(0.95, successes + 1, trials - successes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fair", type=int, default=2000, metavar="N", help="fair wheels")
    parser.add_argument("--biased", type=int, default=1000, metavar="N", help="biased wheels")
    parser.add_argument("--seed", type=int, default=18, metavar="S", help="random seed")
    args = parser.parse_args()
    config = BiasConfig()
    rng = np.random.default_rng(args.seed)
    print(f"alert: p < {config.alert_p:g} after >= {config.min_games} games; chi-square on 37 "
          f"numbers and on {config.sector_size}-pocket sectors at {config.rotations} rotations "
          f"(Bonferroni); checked after every game; seed {args.seed}")
    start = time.perf_counter()
    alarms, rate = fair_run(args.fair, rng, config)
    bound = upper_95(alarms, args.fair)
    rows = [("false alarms, fair wheels x 10,000 games",
             f"{alarms}/{args.fair} = {rate:.2%} (95 % upper bound {bound:.2%})",
             f"<= {FALSE_ALARM_TARGET:.0%}", "met" if bound <= FALSE_ALARM_TARGET else "NOT met")]
    for factor in (1.5, 1.25):
        found = np.array(biased_run(args.biased, factor, rng, config))
        flagged = np.isfinite(found)
        median = float(np.median(found))
        p95 = float(np.percentile(found, 95))
        within = float(np.mean(found <= DETECTION_TARGET))
        label = f"9-pocket arc {factor}x: games to alert"
        value = (f"median {median:.0f}, 95th pct {p95:.0f}" if math.isfinite(p95) else
                 f"median {median:.0f}, 95th pct > {GAMES}")
        value += f"; flagged in {GAMES}: {flagged.mean():.1%}; within {DETECTION_TARGET}: " \
                 f"{within:.1%}"
        target = f"95 % within {DETECTION_TARGET}" if factor == 1.5 else "(no target)"
        verdict = ("met" if within >= 0.95 else "NOT met") if factor == 1.5 else "-"
        rows.append((label, value, target, verdict))
    elapsed = time.perf_counter() - start
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'measured':<70}  {'target':<20}  verdict")
    for label, value, target, verdict in rows:
        print(f"{label:<{width}}  {value:<70}  {target:<20}  {verdict}")
    print(f"({args.fair} fair + {2 * args.biased} biased wheels simulated in {elapsed:.1f} s)")


if __name__ == "__main__":
    main()
