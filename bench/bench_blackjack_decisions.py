"""Live blackjack: a player's decision arriving at the controller -> the dealer's next prompt.

    .venv/bin/python bench/bench_blackjack_decisions.py [--shoes N]

The real controller (``running_table``: journal on a real disk, durability ``full``, table,
``ShoeConnection``) plays a blackjack-8d shoe against the real software shoe (dealer at pace
0) over the in-process memory wire. A thread stands in for the table system: when the dealer
display's update says a decision (or insurance) is awaited, it picks the answer (basic
strategy, the built-in players' choices) and hands it to the controller with ``submit`` -- the
same door the table-system client's commands go through -- noting the time. The listener notes
when the ``Update`` carrying that decision's new prompt is emitted. The difference covers the
hand-over to the controller's thread, the journal append (fsync), the table and the prompt.
"""

from __future__ import annotations

import argparse
import os
import queue
import random
import threading
import time
from pathlib import Path

from bench_table import disk_directory, filesystem_type, percentile

from shoe_controller.cards import new_shoe
from shoe_controller.config import load_run_config
from shoe_controller.device import ShoeConnection
from shoe_controller.games.blackjack.live_players import BuiltInPlayers
from shoe_controller.games.registry import create_game
from shoe_controller.table.controller import Update
from shoe_controller.table.runtime import link_config, running_table
from shoe_controller.transports.memory import memory_pair
from simulators.dealer import VirtualDealer
from simulators.shoe import ShoeRunner, SimulatedShoe
from simulators.shoe_model import ShoeModel

PROFILE = "blackjack-8d"
TARGET_P99_MS = 100.0
"""A dealer waits for the prompt after a player's decision: a tenth of a second is unnoticed."""


def play_shoe(directory: Path, seed: int) -> tuple[list[float], float]:
    game = create_game(PROFILE)
    profile = game.profile  # type: ignore[attr-defined]
    cards = new_shoe(profile.rules.decks, seed)
    host, device = memory_pair()
    shoe = SimulatedShoe(ShoeModel(cards, cut_card=profile.shoe.cut_card, seed=seed),
                         dealer=VirtualDealer(pace=0.0, button_delay=0.0),
                         rng=random.Random(seed), announce_loaded=True)
    config = load_run_config(None, {
        "device": "memory://bench", "profile": PROFILE,
        "journal": directory / f"journal-{seed}.sqlite", "betting_seconds": 0, "shoes": 1,
        "durability": "full", "log_level": "warning"})
    connection = ShoeConnection(host, link_config=link_config(config))
    players = BuiltInPlayers(profile.rules, seed)
    asked: queue.Queue[tuple[str, object]] = queue.Queue()
    sent: dict[str, float] = {}
    prompted: dict[str, float] = {}

    def listener(update: Update) -> None:
        now = time.perf_counter()
        if update.input_kind in ("decision", "insurance"):
            for event in update.events:
                if event["type"] in ("decision", "insurance"):
                    prompted.setdefault(event["key"], now)
        if update.view.awaiting is not None:
            asked.put((update.view.awaiting.key, update.view.awaiting))

    started = time.perf_counter()
    with ShoeRunner(shoe, device).start() as runner, \
            running_table(config, connection=connection) as controller:
        controller.player_seconds = 3600.0  # the bench's "table system" answers, not them
        controller.listeners.append(listener)
        stop = threading.Event()

        def table_system() -> None:
            while not stop.is_set():
                try:
                    key, awaiting = asked.get(timeout=0.1)
                except queue.Empty:
                    continue
                if key in sent:
                    continue
                table = controller.table
                answer = players.answer(table.game, awaiting,  # type: ignore[arg-type]
                                        table.shoe_number, table.round_number)
                sent[key] = time.perf_counter()
                controller.submit(answer)

        helper = threading.Thread(target=table_system, daemon=True)
        helper.start()
        deadline = time.monotonic() + 300
        try:
            controller.run(lambda: time.monotonic() > deadline, shoes=1)
        finally:
            stop.set()
            helper.join(5)
        runner.check()
        if not controller.shoes_finished:
            raise SystemExit("the shoe did not finish within 300 s")
    elapsed = time.perf_counter() - started
    return [(prompted[k] - sent[k]) * 1000 for k in prompted if k in sent], elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shoes", type=int, default=2, help="shoes to play (default 2)")
    args = parser.parse_args()
    latencies: list[float] = []
    seconds = 0.0
    with disk_directory() as directory:
        print(f"journal directory: {directory} ({filesystem_type(directory)}); "
              f"cpus: {os.cpu_count()}; durability full")
        for n in range(args.shoes):
            shoe_latencies, elapsed = play_shoe(directory, 2000 + n)
            latencies += shoe_latencies
            seconds += elapsed
    p50, p99 = percentile(latencies, 50), percentile(latencies, 99)
    print(f"{len(latencies)} decisions in {args.shoes} shoe(s), {seconds:.1f} s")
    print()
    print(f"| {'measure':<32} | {'measured':<28} | {'target':<14} | verdict |")
    print(f"|{'-' * 34}|{'-' * 30}|{'-' * 16}|---------|")
    verdict = "ok" if p99 < TARGET_P99_MS else "MISSED"
    print(f"| {'decision -> prompt':<32} | p50 {p50:6.2f} ms  p99 {p99:6.2f} ms"
          f" | {f'p99 < {TARGET_P99_MS:.0f} ms':<14} | {verdict:<7} |")
    print(f"| {'(max)':<32} | {max(latencies):6.2f} ms{'':<19} | {'':<14} | {'':<7} |")


if __name__ == "__main__":
    main()
