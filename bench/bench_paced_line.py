"""Time to deal a whole 8-deck shoe over a line that takes wire time, beside the instant wire.

    .venv/bin/python bench/bench_paced_line.py [--repeat N] [--baud B] [--pty]

Host: the real ShoeConnection; shoe: the real SimulatedShoe, dealer at pace 0 (a card as soon
as the previous one is acknowledged); the in-process memory wire, instant (``baud`` None) and
paced at ``--baud`` (default 115200, 8N1: 86.8 us per byte, a 23-byte CardDrawn frame 2.0 ms).
``--pty`` adds the paced pseudo-terminal pair. Bad line, in both directions, at the host's end:
1 % of bytes corrupted, 0.5 % of frames dropped, 0.5 % duplicated (no disconnects). Each run
must deliver every card exactly once, in order (checked); the table shows the median time.

Columns: ``bytes h>s`` / ``s>h`` are the bytes each direction carried (after the injector on
the way out, before it on the way in: what crossed the line); ``floor`` is the busier
direction's bytes at the line rate, the least time the shoe can take on that line; ``busy`` is
floor / time, how much of the run the busier direction was sending.
"""

from __future__ import annotations

import argparse
import logging
import statistics

from shoe_controller.cards import new_shoe
from shoe_controller.transports.paced import DEFAULT_BAUD
from simulators.faults import FaultConfig
from simulators.scenarios import ShoeRun, deal_shoe

BAD_LINE = "corrupt=0.01,drop-frame=0.005,dup-frame=0.005,seed=39"
CLEAN = FaultConfig(seed=39)  # no faults; the injectors only count the bytes


def timed(kind: str, baud: int | None, faults: FaultConfig, repeat: int) -> tuple[float, ShoeRun]:
    cards = new_shoe(8, seed=416)
    times: list[float] = []
    run: ShoeRun | None = None
    for _ in range(repeat):
        run = deal_shoe(kind, cards, baud=baud, faults=faults, timeout=120)
        if run.received_cards() != cards or [m.counter for m in run.cards] != list(range(1, 417)):
            raise SystemExit(f"{kind} at {baud}: cards lost, repeated or out of order")
        times.append(run.elapsed)
    assert run is not None
    return statistics.median(times), run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per cell (median)")
    parser.add_argument("--baud", type=int, default=DEFAULT_BAUD, help="paced line's rate")
    parser.add_argument("--pty", action="store_true", help="also the paced pty pair")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    bad = FaultConfig.parse(BAD_LINE)
    rate = args.baud / 10
    print(f"bad line: {BAD_LINE}; 416 cards; median of {args.repeat}")
    print(f"{'wire':<16} {'line':<6} {'time s':>7} {'ms/card':>8} {'bytes h>s':>10} "
          f"{'s>h':>7} {'floor s':>8} {'busy':>5} {'corrupt B':>10} {'frames -/+':>10}")
    cells: list[tuple[str, str, int | None]] = [("memory", "memory", None),
                                                 (f"memory@{args.baud}", "memory", args.baud)]
    if args.pty:
        cells.append((f"pty@{args.baud}", "pty", args.baud))
    for label, kind, baud in cells:
        for line_label, faults in (("clean", CLEAN), ("bad", bad)):
            elapsed, run = timed(kind, baud, faults, args.repeat)
            up, down = run.host_to_shoe.bytes_out, run.shoe_to_host.bytes_in
            floor = max(up, down) / rate
            busy = f"{floor / elapsed:>5.0%}" if baud is not None else f"{'-':>5}"
            floor_text = f"{floor:>8.3f}" if baud is not None else f"{'-':>8}"
            corrupt = run.host_to_shoe.corrupted_bytes + run.shoe_to_host.corrupted_bytes
            dropped = run.host_to_shoe.dropped_frames + run.shoe_to_host.dropped_frames
            doubled = run.host_to_shoe.duplicated_frames + run.shoe_to_host.duplicated_frames
            print(f"{label:<16} {line_label:<6} {elapsed:>7.3f} {elapsed / 416 * 1e3:>8.2f} "
                  f"{up:>10} {down:>7} {floor_text} {busy} {corrupt:>10} "
                  f"{f'{dropped}/{doubled}':>10}")


if __name__ == "__main__":
    main()
