"""Card-to-table-system latency on loopback, and catching up after a 5-minute outage.

In one process: the controller's reporter (its own thread, as in ``shoe run``) and the
reference table system (``simulators/table_system.py``, recording to a file, as
``shoe table-sim``). Latency is measured from the moment the controller hands a card's events
to the reporter (right after journalling it, where its listeners are told) to the moment the
table system has recorded the event and is about to acknowledge it.

Catch-up: a 5-minute outage at a brisk real pace (1 card/s, a round every ~7 s: about 300
cards and 43 rounds, with their round_opened, betting_closed, round_result and
round_confirmed events) is built up while the table system is down; then it comes back and
we time until everything is acknowledged.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from shoe_controller.reporting.client import TableSystemConfig, TableSystemReporter  # noqa: E402
from simulators.table_system import TableSystem, TableSystemOptions  # noqa: E402

KEY = b"bench-key-0123456789abcdef"
TOKEN = "bench-token"


def reporter(port: int) -> TableSystemReporter:
    return TableSystemReporter(TableSystemConfig(
        url=f"ws://127.0.0.1:{port}/", token=TOKEN, key=KEY, table_id="bench",
        backoff_initial=0.01, backoff_max=0.05))


def card(round_: int, position: int) -> dict:
    return {"type": "card", "round": round_, "target": "player" if position % 2 else "banker",
            "position": position, "card": "9H", "source": "scanner", "counter": position}


def latency(directory: Path, cards: int = 400) -> list[float]:
    options = TableSystemOptions(token=TOKEN, key=KEY, record=directory / "lat.jsonl",
                                 drives_betting=False)
    with TableSystem("127.0.0.1", 0, options) as system:
        rep = reporter(system.port)
        rep.start()
        assert system.wait_for(lambda s: bool(s.connections), 5)
        samples = []
        for i in range(1, cards + 1):
            t0 = time.perf_counter()
            rep.add(i, time.time(), [card(1 + i // 6, 1 + i % 6)])
            assert system.wait_for(lambda s, i=i: s.tables["bench"].last_seq >= i, 5)
            samples.append(system_recorded_at(system, i) - t0)
            time.sleep(0.002)  # cards come one by one, not in a burst
        rep.close()
    return samples


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


def main() -> None:
    import simulators.table_system as ts

    original = ts.TableRecord.accept

    def stamped(self, event, now):  # type: ignore[no-untyped-def]
        event["_perf"] = time.perf_counter()
        original(self, event, now)

    ts.TableRecord.accept = stamped  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory() as tmp:
        samples = sorted(latency(Path(tmp)))
        events, elapsed = outage_catch_up(Path(tmp))
    p50 = statistics.median(samples) * 1000
    p99 = samples[int(len(samples) * 0.99) - 1] * 1000
    print(f"{'measure':<48}{'measured':>12}{'target':>12}")
    print(f"{'card -> table system recorded, p50 (ms)':<48}{p50:>12.2f}{'< 10':>12}")
    print(f"{'card -> table system recorded, p99 (ms)':<48}{p99:>12.2f}{'< 50':>12}")
    print(f"{f'catch-up after 5-min outage ({events} events), s':<48}{elapsed:>12.2f}"
          f"{'< 5':>12}")


if __name__ == "__main__":
    main()
