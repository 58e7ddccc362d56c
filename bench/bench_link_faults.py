"""Time to deal a whole 8-deck shoe (416 cards) to the host over a bad line vs a clean one.

    .venv/bin/python bench/bench_link_faults.py [--repeat N]

Host: the real ShoeConnection; shoe: the real SimulatedShoe, dealer at pace 0 (a card as soon as
the previous one is acknowledged). Bad line, in both directions: 1 % of bytes corrupted, 0.5 %
of frames dropped, 0.5 % duplicated, a dropped connection about every 90 cards. Each run must
deliver every card exactly once, in order (checked); the table shows the median time.
"""

from __future__ import annotations

import argparse
import logging
import statistics

from shoe_controller.cards import new_shoe
from simulators.faults import FaultConfig
from simulators.scenarios import ShoeRun, deal_shoe

BAD_LINE = "corrupt=0.01,drop-frame=0.005,dup-frame=0.005,disconnect=0.0002,seed=39"
TARGET = "416/416 once, in order"


def timed(kind: str, faults: FaultConfig | None, repeat: int) -> tuple[float, ShoeRun]:
    cards = new_shoe(8, seed=416)
    times: list[float] = []
    run: ShoeRun | None = None
    for _ in range(repeat):
        run = deal_shoe(kind, cards, faults=faults, timeout=120)
        if run.received_cards() != cards or [m.counter for m in run.cards] != list(range(1, 417)):
            raise SystemExit(f"{kind}: cards lost, repeated or out of order")
        times.append(run.elapsed)
    assert run is not None
    return statistics.median(times), run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="runs per cell (median)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)  # the shoe's "host lost" warnings are expected
    bad = FaultConfig.parse(BAD_LINE)
    print(f"bad line: {BAD_LINE}")
    print(f"{'transport':<10} {'clean s':>8} {'faulty s':>9} {'ratio':>7} {'drops':>6} "
          f"{'corrupt B':>10} {'result':<24} target")
    for kind, label in (("memory", "in-process"), ("tcp", "tcp")):
        clean, _ = timed(kind, None, args.repeat)
        faulty, run = timed(kind, bad, args.repeat)
        corrupt = run.host_to_shoe.corrupted_bytes + run.shoe_to_host.corrupted_bytes
        result = f"{len(run.cards)}/416 once, in order"  # timed() exits if it was not
        print(f"{label:<10} {clean:>8.3f} {faulty:>9.3f} {faulty / clean:>6.0f}x "
              f"{run.disconnects:>6} {corrupt:>10} {result:<24} {TARGET}")


if __name__ == "__main__":
    main()
