"""What tables cost the dealer PC while no card is dealt.

    .venv/bin/python bench/bench_idle.py [--tables 20] [--seconds 5]

``--tables`` real tables in this process (``running_table``: journal, table, the
``ShoeConnection`` and its I/O thread; the software shoe on an in-memory wire, its dealer far
too slow to deal within the run), measured twice, each for ``--seconds``:

1. **set up, not yet running**: connected, the shoe's first messages delivered and not yet
   taken by a controller loop (as while a table starts up or replays its journal). The link
   holds their acknowledgement for the owner's commit; it used to look again every
   millisecond (``ack_delay``) for as long as that lasted.
2. **running, waiting for a card**: each controller's loop running, no card coming.

The figure is this process's CPU time over wall time (100 % = one core), per table, beside
our own target: an idle table costs at most 0.5 % of a core, so a floor PC's CPU goes to the
tables that deal. Measure on a quiet machine; the ratio between the two phases is the
comparison that holds on a noisy one.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from shoe_controller.cards import new_shoe
from shoe_controller.config import load_run_config
from shoe_controller.device import ShoeConnection
from shoe_controller.table.runtime import running_table, services
from shoe_controller.transports.memory import memory_pair
from simulators.dealer import VirtualDealer
from simulators.shoe import ShoeRunner, SimulatedShoe
from simulators.shoe_model import ShoeModel

TARGET_PERCENT_PER_TABLE = 0.5


def cpu_percent(seconds: float) -> float:
    """This process's CPU over ``seconds`` of wall time, in per cent of one core."""
    cpu, wall = time.process_time(), time.perf_counter()
    time.sleep(seconds)
    return 100 * (time.process_time() - cpu) / (time.perf_counter() - wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    if args.tables < 1 or args.seconds <= 0:
        parser.error("--tables must be at least 1 and --seconds positive")
    logging.disable(logging.WARNING)  # the link's loss as the tables are closed
    stop = threading.Event()
    with tempfile.TemporaryDirectory() as scratch, contextlib.ExitStack() as stack:
        controllers = []
        for n in range(args.tables):
            config = load_run_config(None, {
                "device": "memory://bench", "profile": "punto-banco-1d",
                "journal": Path(scratch) / f"t{n}.sqlite", "betting_seconds": 0,
                "table_id": f"idle-{n}", "log_level": "warning"})
            shoe = SimulatedShoe(ShoeModel(new_shoe(1, n), cut_card=14),
                                 dealer=VirtualDealer(pace=3600.0), rng=random.Random(n),
                                 announce_loaded=True)
            host, device = memory_pair()
            stack.enter_context(ShoeRunner(shoe, device).start())
            controller = stack.enter_context(running_table(
                config, connection=ShoeConnection(host, link_config=config.link_config())))
            stack.enter_context(services(controller))
            controllers.append(controller)
        time.sleep(1.0)  # every shoe connected and announced
        not_running = cpu_percent(args.seconds)
        threads = [threading.Thread(target=controller.run, args=(stop.is_set,),
                                    kwargs={"shoes": 1}, daemon=True)
                   for controller in controllers]
        for thread in threads:
            thread.start()
        time.sleep(1.0)
        running = cpu_percent(args.seconds)
        stop.set()
        for thread in threads:
            thread.join(5)
    print(f"{args.tables} tables, {args.seconds:g} s each phase; CPU in % of one core "
          f"(this process: tables, I/O threads, software shoes)")
    print(f"{'phase':34s} {'all tables':>10s} {'per table':>10s} {'target':>8s}  met")
    for name, value in (("set up, not yet running", not_running),
                        ("running, waiting for a card", running)):
        per_table = value / args.tables
        print(f"{name:34s} {value:9.1f}% {per_table:9.2f}% {TARGET_PERCENT_PER_TABLE:7.2f}%  "
              f"{'yes' if per_table <= TARGET_PERCENT_PER_TABLE else 'NO'}")


if __name__ == "__main__":
    main()
