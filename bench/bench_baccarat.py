"""Baccarat engine benchmarks: exact odds on an 8-deck composition, and rounds replayed per second.

Run: .venv/bin/python bench/bench_baccarat.py
"""

from __future__ import annotations

import statistics
import time

from shoe_controller.cards import new_shoe
from shoe_controller.games.baccarat.odds import exact_odds, full_shoe, remaining
from shoe_controller.games.baccarat.profile import load_profile
from shoe_controller.games.baccarat.replay import replay_shoe


def time_call(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    """Median seconds per call over ``repeat`` calls (the median shrugs off a noisy machine)."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    profile = load_profile("ez-baccarat-8d")  # five bets, including the variant ones
    full = full_shoe(8)
    exact_odds(full, profile)  # build the rule tables once, as a running table would have
    full_ms = time_call(lambda: exact_odds(full, profile), 200) * 1000

    shoe = new_shoe(8, 1)
    part = remaining(8, shoe[:200])
    part_ms = time_call(lambda: exact_odds(part, profile), 200) * 1000

    shoes = [new_shoe(8, seed) for seed in range(300)]
    start = time.perf_counter()
    rounds = 0
    for cards in shoes:
        for line in replay_shoe(cards, profile):
            rounds += line["type"] == "round"
    replay_rate = rounds / (time.perf_counter() - start)

    # After every round of a live shoe: the edges of every bet on what is left.
    dealt = [line for line in replay_shoe(shoe, profile) if line["type"] == "round"]
    start = time.perf_counter()
    used = 0
    for line in dealt:
        used += len(line["player"]) + len(line["banker"])
        exact_odds(remaining(8, shoe[:used]), profile)
    per_round_ms = (time.perf_counter() - start) / len(dealt) * 1000

    rows = [
        ("exact odds, full 8-deck shoe, 5 bets", f"{full_ms:.2f} ms", "< 10 ms"),
        ("exact odds, 8-deck shoe after 200 cards", f"{part_ms:.2f} ms", "< 10 ms"),
        ("edges recomputed after each round of a shoe", f"{per_round_ms:.2f} ms/round", "< 10 ms"),
        ("shoe replay (8 decks, JSON-ready lines)", f"{replay_rate:,.0f} rounds/s", "-"),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'benchmark':<{width}}  {'measured':>16}  target")
    for name, measured, target in rows:
        print(f"{name:<{width}}  {measured:>16}  {target}")


if __name__ == "__main__":
    main()
