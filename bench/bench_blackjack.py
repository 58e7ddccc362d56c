"""Blackjack engine benchmarks: rounds replayed per second (``shoe replay`` with a decisions
file), the exact dealer table, and basic strategy's house edge by simulation.

Run: .venv/bin/python bench/bench_blackjack.py [--hands N]

Target: a day of one table's journal (about 500 shoes x 25 rounds = 12,500 rounds) replays in
under 10 s, i.e. at least 1,250 rounds/s with all seven seats betting. The house edge is
printed beside the published figure (../shared/REFERENCE-NUMBERS.md: 0.4877 % for 8 decks S17
with double after split and the peek); the simulation's standard error is shown with it.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import time
from decimal import Decimal

from shoe_controller.cards import new_shoe
from shoe_controller.games.blackjack.decisions import parse_decisions
from shoe_controller.games.blackjack.odds import dealer_table
from shoe_controller.games.blackjack.profile import load_profile
from shoe_controller.games.blackjack.replay import replay_blackjack
from shoe_controller.games.blackjack.simulate import play_shoe
from shoe_controller.games.blackjack.strategy import RemotePlayers


def replay_rate(profile, shoes: int) -> float:  # type: ignore[no-untyped-def]
    """Rounds per second through replay_blackjack, 7 seats, basic-strategy decisions."""
    work = []
    for seed in range(shoes):
        cards = new_shoe(profile.rules.decks, seed)
        rng = random.Random(seed)
        players = RemotePlayers(profile.rules, rng)
        lines = [p.decisions for p in play_shoe(cards, profile, players, rng, min_seats=7)]
        text = "\n".join(json.dumps(line) for line in lines)
        work.append((cards, parse_decisions(text)))
    start = time.perf_counter()
    rounds = 0
    for cards, decisions in work:
        for record in replay_blackjack(cards, profile, decisions):
            rounds += record["type"] == "round"
    return rounds / (time.perf_counter() - start)


def house_edge(profile, hands: int, seed: int = 17) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Basic strategy's loss per initial unit bet, and its standard error (no insurance)."""
    rng = random.Random(seed)
    players = RemotePlayers(profile.rules, rng, insurance_rate=0.0)
    results: list[float] = []
    while len(results) < hands:
        cards = new_shoe(profile.rules.decks, rng.randrange(2**32))
        for played in play_shoe(cards, profile, players, rng, min_seats=7):
            for seat in played.result.seats:
                results.append(float(sum((h.payout for h in played.result.hands[seat]),
                                         Decimal(0))))
    mean = statistics.fmean(results)
    return -mean, statistics.pstdev(results) / math.sqrt(len(results))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=200_000,
                        help="seat hands simulated for the house edge (default 200000)")
    args = parser.parse_args()
    profile = load_profile("blackjack-8d")

    rate = statistics.median(replay_rate(profile, 40) for _ in range(3))
    start = time.perf_counter()
    dealer_table(8, hits_soft_17=False)
    table_ms = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    edge, se = house_edge(profile, args.hands)
    sim_s = time.perf_counter() - start

    rows = [
        ("shoe replay, 8 decks, 7 seats, basic strategy", f"{rate:,.0f} rounds/s",
         ">= 1,250 rounds/s"),
        ("exact dealer table, 8 decks, all up cards", f"{table_ms:.0f} ms", "-"),
        (f"basic strategy edge, {args.hands:,} hands ({sim_s:.0f} s)",
         f"{edge * 100:.3f} % +- {se * 100:.3f}", "0.4877 % (published)"),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'benchmark':<{width}}  {'measured':>22}  target")
    for name, measured, target in rows:
        print(f"{name:<{width}}  {measured:>22}  {target}")


if __name__ == "__main__":
    main()
