"""Card-to-table-system latency on loopback, and catching up after a 5-minute outage.

In one process: the controller's reporter (its own thread, as in ``shoe run``) and the
reference table system (``simulators/table_system.py``, recording to a file, as
``shoe table-sim``). Latency is measured from the moment the controller hands a card's events
to the reporter (right after journalling it, where its listeners are told) to the moment the
table system has recorded the event and is about to acknowledge it. It is measured twice:
with the reporter alone (in memory), and as ``shoe run`` has it, with the journal attached (each
card journalled with durability "full", its event stored in the journal file's outbox by the
client thread before it is sent). The journal append itself is timed in both, to show that the
outbox does not slow the controller's hot path. Run with ``--dir`` on the disk the controller
uses (the default temporary folder may be tmpfs, where fsync costs nothing).

Catch-up: a 5-minute outage at a brisk real pace (1 card/s, a round every ~7 s: about 300
cards and 43 rounds, with their round_opened, betting_closed, round_result and
round_confirmed events) is built up while the table system is down; then it comes back and
we time until everything is acknowledged.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from shoe_controller.journal import Journal
from shoe_controller.reporting.client import TableSystemConfig, TableSystemReporter
from simulators.table_system import TableSystem, TableSystemOptions

KEY = b"bench-key-0123456789abcdef"
TOKEN = "bench-token"


def reporter(port: int) -> TableSystemReporter:
    return TableSystemReporter(TableSystemConfig(
        url=f"ws://127.0.0.1:{port}/", token=TOKEN, key=KEY, table_id="bench",
        backoff_initial=0.01, backoff_max=0.05))


def card(round_: int, position: int) -> dict:
    return {"type": "card", "round": round_, "target": "player" if position % 2 else "banker",
            "position": position, "card": "9H", "source": "scanner", "counter": position}


def latency(directory: Path, cards: int = 400, *, outbox: bool = False
            ) -> tuple[list[float], list[float]]:
    """(card -> recorded, journal append) latencies in seconds, ``cards`` of each."""
    name = "outbox" if outbox else "memory"
    options = TableSystemOptions(token=TOKEN, key=KEY, record=directory / f"lat-{name}.jsonl",
                                 drives_betting=False)
    with TableSystem("127.0.0.1", 0, options) as system, \
            Journal(directory / f"lat-{name}.db", durability="full") as journal:
        rep = reporter(system.port)
        detach = rep.attach_journal(journal) if outbox else None
        rep.start()
        assert system.wait_for(lambda s: bool(s.connections), 5)
        samples, appends = [], []
        for i in range(1, cards + 1):
            event = card(1 + i // 6, 1 + i % 6)
            a0 = time.perf_counter()
            record = journal.append("card", event)
            t0 = time.perf_counter()
            appends.append(t0 - a0)
            rep.add(record.seq, record.wall_time, [event])
            assert system.wait_for(lambda s, i=i: s.tables["bench"].last_seq >= i, 5)
            samples.append(system_recorded_at(system, i) - t0)
            time.sleep(0.002)  # cards come one by one, not in a burst
        rep.close()
        if detach is not None:
            detach.close()
    return samples, appends


def system_recorded_at(system: TableSystem, seq: int) -> float:
    return system.accepted[seq - 1]["_perf"]


def outage_catch_up(directory: Path, seconds: float = 300.0) -> tuple[int, float]:
    options = TableSystemOptions(token=TOKEN, key=KEY, record=directory / "out.jsonl",
                                 drives_betting=False)
    system = TableSystem("127.0.0.1", 0, options)
    port = system.start()[1]
    system.close()  # the outage starts
    rep = reporter(port)
    rep.start()  # nothing listens yet: the outage
    record = 0
    round_ = 0
    t = 0.0
    while t < seconds:  # ~1 card/s, 6-7 cards a round with its four round events
        round_ += 1
        record += 1
        rep.add(record, t, [{"type": "round_opened", "round": round_}])
        record += 1
        rep.add(record, t, [{"type": "betting_closed", "round": round_, "origin": "timer"}])
        for position in range(1, 6):
            record += 1
            rep.add(record, t, [card(round_, position)])
            t += 1.0
        record += 1
        rep.add(record, t, [{"type": "round_result", "round": round_},
                            {"type": "result_confirmed", "round": round_}])
        t += 2.0
    events = rep.stream.head
    system = TableSystem("127.0.0.1", port, options)
    start = time.perf_counter()
    system.start()
    assert rep.wait_acked(60), "not caught up in 60 s"
    elapsed = time.perf_counter() - start
    rep.close()
    system.close()
    return events, elapsed


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[max(0, int(len(ordered) * q) - 1)] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=None,
                        help="where the journals and records go (default: a temporary folder)")
    args = parser.parse_args()
    import simulators.table_system as ts

    original = ts.TableRecord.accept

    def stamped(self, event, now):  # type: ignore[no-untyped-def]
        event["_perf"] = time.perf_counter()
        original(self, event, now)

    ts.TableRecord.accept = stamped  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        samples, appends = latency(Path(tmp))
        kept, kept_appends = latency(Path(tmp), outbox=True)
        events, elapsed = outage_catch_up(Path(tmp))
    rows = [
        ("card -> table system recorded, p50 (ms)", statistics.median(samples) * 1000, "< 10"),
        ("card -> table system recorded, p99 (ms)", percentile(samples, 0.99), "< 50"),
        ("  with the outbox (as shoe run), p50 (ms)", statistics.median(kept) * 1000, "< 10"),
        ("  with the outbox (as shoe run), p99 (ms)", percentile(kept, 0.99), "< 50"),
        ("journal append (full), p50 / p99 (ms)", None,
         f"{statistics.median(appends) * 1000:.2f} / {percentile(appends, 0.99):.2f}"),
        ("  with the outbox being written, p50 / p99 (ms)", None,
         f"{statistics.median(kept_appends) * 1000:.2f} / {percentile(kept_appends, 0.99):.2f}"),
        (f"catch-up after 5-min outage ({events} events), s", elapsed, "< 5"),
    ]
    print(f"{'measure':<52}{'measured':>14}{'target':>10}")
    for label, value, target in rows:
        if value is None:  # a comparison, no target
            print(f"{label:<52}{target:>14}{'':>10}")
        else:
            print(f"{label:<52}{value:>14.2f}{target:>10}")


if __name__ == "__main__":
    main()
