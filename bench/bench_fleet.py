"""A floor of tables publishing through one Mosquitto to one ``shoe pit`` (issue 19).

    .venv/bin/python bench/bench_fleet.py [--tables 100] [--alone 20] [--workers 4]
                                          [--pace 0.5] [--decks 1] [--durability full]
                                          [--in-step]

Each table is the real thing in-process (``running_table``: journal, table, controller in its
own thread; the software shoe on an in-memory wire; a virtual dealer drawing a card every
``--pace`` seconds once the exit opens). ``--alone`` of the ``--tables`` each run in a process
of their own, as ``shoe run`` does on a floor (one table, one interpreter); the others are
packed into ``--workers`` processes, because a hundred processes' own overhead swamps a
2-core machine (``--workers 0``: every table alone). Tables sharing a process share its
interpreter lock: a table thread woken by its shoe waits while another table's (or
publisher's) thread holds it, a cost no floor has. Card -> prompt is reported for both groups;
"no table slowed down" is judged on the tables alone, the floor's layout, with the packed
tables' figures beside them. Every process sets its tables up, then all start together; each
table opens at its own seeded moment within one pace (a floor's dealers are not in step), or
all at once with ``--in-step``. The same tables (same seeds, same layout) are dealt twice in
one run:

1. **without MQTT**, then
2. **with MQTT**: each table with its own ``MqttPublisher`` (as ``shoe run --mqtt``) to one
   private Mosquitto on loopback, read by one real ``shoe pit`` process, whose
   ``/api/stream`` (what the pit page gets) this script reads.

Figures:

* **card -> prompt**: from the shoe's first transmission of a card to the controller's
  listener seeing the prompt it caused (journal, with ``--durability``, included), p50/p99,
  without and with MQTT, for the tables alone and the tables packed: publishing must not slow
  a table down.
* **card -> pit data**: from a card's journal time (its event's ``at``) to the pit's stream
  carrying a tile whose ``last_event_seq`` includes that card's event (a browser's data), p99
  against the 200 ms target. Card event numbers are derived afterwards from each journal with
  the same ``EventStream`` the publisher uses (no extra work on the tables while dealing).
* **every state and event at the pit**: the pit's final tile of each table carries the
  publisher's last state version and event seq, with no published state or event missed
  (``state_gaps``, ``event_gaps``), nothing dropped by the publishers, and shows the table as
  its controller last saw it (state, prompt, cards dealt). States are coalesced (at most one
  per table every 0.1 s, docs/mqtt/README.md): a change is "at the pit" when a state holding
  it is, so the check is that every state published arrives and the last one is the table's
  final view; the changes coalesced are counted and shown. Events are never coalesced.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

TARGET_PIT_P99_MS = 200.0
#: "Unchanged within noise": p99 card -> prompt with MQTT at most this much above without.
NOISE_RATIO, NOISE_MS = 1.25, 2.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


# ---------------------------------------------------------------------- one worker process
def deal_tables(spec: dict[str, Any], ready: Any, results: Any) -> None:
    """Deal one shoe at each of ``spec["tables"]`` (in this process) once every process is
    ready (``ready``: a barrier of all of them and the parent); puts the figures, or the
    error, on ``results``."""
    try:
        results.put(("ok", _deal_tables(spec, ready)))
    except BaseException as error:  # noqa: BLE001 - the parent reports it and stops
        ready.abort()  # the others stop waiting for this one
        results.put(("error", f"{type(error).__name__}: {error}"))


def _deal_tables(spec: dict[str, Any], ready: Any) -> dict[str, Any]:
    import contextlib
    import logging

    logging.disable(logging.WARNING)  # link losses as the tables are closed, and the like
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - "mqtt: ..." lines of every table

    from bench_fast_recovery import CardTimes

    from shoe_controller.cards import new_shoe
    from shoe_controller.config import load_run_config
    from shoe_controller.device import ShoeConnection
    from shoe_controller.fleet.broker import Topics, broker_settings
    from shoe_controller.fleet.publisher import MqttPublisher
    from shoe_controller.table.runtime import running_table, services
    from shoe_controller.transports.memory import memory_pair
    from simulators.dealer import VirtualDealer
    from simulators.shoe import ShoeRunner, SimulatedShoe
    from simulators.shoe_model import ShoeModel

    class OneShoeDealer(VirtualDealer):
        def _watch_shuffle(self, view: Any) -> list[Any]:
            return []  # leaves the table after its shoe

    directory = Path(spec["directory"])
    broker = broker_settings(spec["mqtt"]) if spec["mqtt"] else None
    out: dict[str, Any] = {"latencies": [], "seconds": [], "tables": {},
                           "alone": spec["alone"]}
    with contextlib.ExitStack() as stack:
        running = []
        for table_id, seed in spec["tables"]:
            journal = directory / f"{table_id}.sqlite"
            config = load_run_config(None, {
                "device": "memory://bench", "profile": spec["profile"], "journal": journal,
                "betting_seconds": 0, "durability": spec["durability"], "table_id": table_id,
                "log_level": "warning"})
            times = CardTimes()
            shoe = SimulatedShoe(ShoeModel(new_shoe(spec["decks"], seed), cut_card=14),
                                 dealer=OneShoeDealer(pace=spec["pace"], button_delay=0.05),
                                 rng=random.Random(seed), announce_loaded=True)
            host, device = memory_pair()
            stack.enter_context(ShoeRunner(shoe, times.watch_writes(device)).start())
            publisher = None if broker is None else MqttPublisher(
                broker, Topics("shoe", table_id), pit=f"pit-{seed % 5 + 1}")
            controller = stack.enter_context(running_table(
                config, connection=ShoeConnection(host, link_config=config.link_config()),
                record_taps=() if publisher is None else (publisher.on_record,),
                begin_session=False))
            stack.enter_context(services(controller, mqtt=publisher))
            times.table = controller.table
            controller.listeners.append(times.listener)
            connected_by = time.monotonic() + 10
            while publisher is not None and not publisher.connected:  # so none is dropped
                if time.monotonic() > connected_by:
                    raise SystemExit(f"{table_id}: the publisher did not connect in 10 s")
                time.sleep(0.01)
            controller.begin_session()
            running.append((table_id, controller, times, publisher, journal))
        # Every process's tables start together, none while others are still importing.
        ready.wait(timeout=spec["timeout"])
        started = time.perf_counter()
        cpu_started = time.process_time()  # this process: every table, publisher and shoe
        threads = []
        deadline = time.monotonic() + spec["timeout"]
        for (table_id, controller, *_), (_, seed) in zip(running, spec["tables"],
                                                          strict=True):
            # Each table opens at its own moment within one dealer's pace (the same in every
            # phase: seeded), as the tables of a floor do; --in-step opens all at once.
            offset = 0.0 if spec["in_step"] else random.Random(seed).uniform(0, spec["pace"])
            thread = threading.Thread(target=open_table, name=table_id, daemon=True,
                                      args=(controller, started + offset, deadline))
            thread.start()
            threads.append(thread)
        for (table_id, controller, times, publisher, journal), thread in zip(running, threads,
                                                                              strict=True):
            thread.join(max(0.0, deadline - time.monotonic()) + 5)
            if not controller.shoes_finished:
                raise SystemExit(f"{table_id}: the shoe did not finish in {spec['timeout']} s")
            out["seconds"].append(time.perf_counter() - started)
            out["latencies"].extend(times.latencies_ms())
            view = controller.view  # the last the publisher was handed (the table stopped)
            out["tables"][table_id] = {"final": {"state": view.state, "prompt": view.prompt,
                                                 "cards_dealt": view.cards_dealt}}
        out["cpu"] = time.process_time() - cpu_started
    # Closed: each publisher has published all it had (then said "stopped").
    for table_id, _controller, _times, publisher, journal in running:
        if publisher is not None:
            stats = publisher.stats
            out["tables"][table_id].update({
                "version": publisher.version, "journal": str(journal),
                "states_published": stats.states_published,
                "states_dropped": stats.states_dropped,
                "states_coalesced": stats.states_coalesced,
                "events_published": stats.events_published,
                "events_dropped": stats.events_dropped, "inbox_dropped": stats.inbox_dropped,
                "refused": stats.refused, "failed": stats.failed})
        else:
            del out["tables"][table_id]
    return out


def open_table(controller: Any, at: float, deadline: float) -> None:
    """Run ``controller`` for one shoe from ``at`` (``time.perf_counter``)."""
    time.sleep(max(0.0, at - time.perf_counter()))
    controller.run(lambda: time.monotonic() > deadline, shoes=1)


def deal_floor(args: argparse.Namespace, directory: Path, mqtt: str | None) -> dict[str, Any]:
    directory.mkdir(parents=True, exist_ok=True)
    # Each phase its own table ids: the pit's floor keeps the tables of earlier phases.
    tables = [(f"{directory.name}-t{n:03d}", n) for n in range(1, args.tables + 1)]
    alone, packed = split_tables(tables, args.alone)
    workers = min(args.workers or len(packed), len(packed))
    groups = [(group, True) for group in ([table] for table in alone)]
    groups += [(packed[w::workers], False) for w in range(workers)]
    specs = [{"tables": group, "alone": is_alone, "directory": str(directory), "mqtt": mqtt,
              "pace": args.pace, "decks": args.decks, "profile": args.profile,
              "durability": args.durability, "timeout": args.timeout,
              "in_step": args.in_step}
             for group, is_alone in groups]
    context = multiprocessing.get_context("spawn")
    ready = context.Barrier(len(specs) + 1)
    queue = context.Queue()
    processes = [context.Process(target=deal_tables, args=(spec, ready, queue), daemon=True)
                 for spec in specs]
    for process in processes:
        process.start()
    try:
        ready.wait(timeout=args.timeout)
    except threading.BrokenBarrierError:
        pass  # a worker failed: its error is on the queue
    results = []
    for _ in processes:
        status, result = queue.get(timeout=2 * args.timeout)
        if status != "ok":
            for process in processes:
                process.kill()
            raise SystemExit(f"a dealing process failed: {result}")
        results.append(result)
    for process in processes:
        process.join(30)
    merged: dict[str, Any] = {"latencies": {True: [], False: []}, "seconds": [], "tables": {},
                              "cpu": 0.0, "cards": 0}
    for result in results:
        merged["cpu"] += result["cpu"]
        merged["cards"] += len(result["latencies"])
        merged["latencies"][result["alone"]] += result["latencies"]
        merged["seconds"] += result["seconds"]
        merged["tables"].update(result["tables"])
    return merged


def split_tables(tables: list[Any], alone: int) -> tuple[list[Any], list[Any]]:
    """``alone`` of ``tables`` spread evenly over the list (each to run in a process of its
    own), and the rest (to be packed)."""
    alone = max(0, min(alone, len(tables)))
    picked = {round(i * len(tables) / alone) for i in range(alone)} if alone else set()
    return ([t for i, t in enumerate(tables) if i in picked],
            [t for i, t in enumerate(tables) if i not in picked])


# ---------------------------------------------------------------------- the pit's stream
class StreamReader:
    """Reads the pit's ``/api/stream`` as a browser would; notes when each table's
    ``last_event_seq`` first reached each value."""

    def __init__(self, url: str) -> None:
        host_port = url.split("//", 1)[1].strip("/")
        host, port = host_port.rsplit(":", 1)
        self.connection = http.client.HTTPConnection(host, int(port), timeout=120)
        self.arrivals: dict[str, list[tuple[int, float]]] = {}
        self.stop = False
        self.thread = threading.Thread(target=self._read, daemon=True)

    def start(self) -> StreamReader:
        self.connection.request("GET", "/api/stream")
        self.response = self.connection.getresponse()
        self.thread.start()
        return self

    def _read(self) -> None:
        event, data = "", ""
        while not self.stop:
            try:
                line = self.response.readline()
            except (OSError, AttributeError, ValueError):  # closed by close()
                return
            if not line:
                return
            received = time.time()
            text = line.decode().rstrip("\n")
            if text.startswith("event: "):
                event = text[7:]
            elif text.startswith("data: "):
                data = text[6:]
            elif not text and data:
                if event in ("tables", "floor"):
                    for tile in json.loads(data)["tables"]:
                        seen = self.arrivals.setdefault(tile["table_id"], [])
                        if not seen or tile["last_event_seq"] > seen[-1][0]:
                            seen.append((tile["last_event_seq"], received))
                event, data = "", ""

    def close(self) -> None:
        self.stop = True
        self.connection.close()


def card_events(journal: Path, table_id: str) -> list[tuple[int, float]]:
    """(seq, at) of every card event the publisher numbered from this journal."""
    from shoe_controller.journal import Journal
    from shoe_controller.reporting.stream import EventStream
    from shoe_controller.table.fold import replay_records

    stream = EventStream(table_id)
    cards: list[tuple[int, float]] = []

    def on_record(record: Any, _item: Any, events: list[dict[str, Any]]) -> None:
        for out in stream.add(record.seq, record.wall_time, events):
            if out.type == "card":
                cards.append((out.seq, out.at))

    with Journal(journal, readonly=True) as store:
        replay_records(store, on_record=on_record)
    return cards


def pit_latencies(reader: StreamReader, tables: dict[str, Any]) -> tuple[list[float], int]:
    latencies, missing = [], 0
    for table_id, figures in tables.items():
        arrivals = reader.arrivals.get(table_id, [])
        for seq, at in card_events(Path(figures["journal"]), table_id):
            first = next((t for s, t in arrivals if s >= seq), None)
            if first is None:
                missing += 1
            else:
                latencies.append((first - at) * 1000)
    return latencies, missing


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def deal_with_mqtt(args: argparse.Namespace, directory: Path, broker_url: str,
                   pit_url: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """One phase with MQTT: the dealing, and what reached the pit's stream."""
    reader = StreamReader(pit_url).start()
    try:
        published = deal_floor(args, directory, broker_url)
        expected = published["tables"]
        deadline = time.monotonic() + 30
        while True:
            with urllib.request.urlopen(pit_url + "api/floor", timeout=10) as response:
                floor = {t["table_id"]: t for t in json.load(response)["tables"]}
            if all(t in floor and floor[t]["state_version"] == f["version"]
                   and floor[t]["last_event_seq"] == f["events_published"]
                   for t, f in expected.items()) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    finally:
        reader.close()
    to_pit, missing = pit_latencies(reader, expected)
    short = [(t, {k: floor.get(t, {}).get(k) for k in ("state_version", "states_seen",
                                                         "last_event_seq")},
              {k: f[k] for k in ("version", "states_published", "events_published")})
             for t, f in expected.items()
             if t not in floor or floor[t]["state_version"] != f["version"]
             or floor[t]["states_seen"] != f["version"]
             or floor[t]["last_event_seq"] != f["events_published"]
             or not shows(floor[t], f["final"])]
    gaps = sum(floor[t]["state_gaps"] + floor[t]["event_gaps"] for t in expected if t in floor)
    dropped = sum(f["states_dropped"] + f["events_dropped"] + f["inbox_dropped"]
                  for f in expected.values())
    failed = [t for t, f in expected.items() if f["failed"] or f["refused"]]
    coalesced = sum(f["states_coalesced"] for f in expected.values())
    states = sum(f["states_published"] for f in expected.values())
    return published, {"to_pit": to_pit, "missing": missing, "short": short, "gaps": gaps,
                       "dropped": dropped, "failed": failed, "tables": len(expected),
                       "states": states, "coalesced": coalesced}


def shows(tile: dict[str, Any], final: dict[str, Any]) -> bool:
    """Whether the pit's tile shows the table as its controller last saw it."""
    return (tile["state"] == final["state"] and tile["prompt"]["text"] == final["prompt"]
            and tile["shoe"]["cards_dealt"] == final["cards_dealt"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--alone", type=int, default=20,
                        help="tables each in a process of its own, as shoe run on a floor "
                        "(default 20; the verdict on card -> prompt is theirs)")
    parser.add_argument("--workers", type=int, default=4,
                        help="processes the other tables are packed into (default 4; 0: "
                        "every table alone, too many processes for a 2-core machine)")
    parser.add_argument("--pace", type=float, default=0.5,
                        help="each dealer's seconds between cards (default 0.5)")
    parser.add_argument("--decks", type=int, default=1, help="decks per shoe (default 1)")
    parser.add_argument("--profile", default="punto-banco-1d")
    parser.add_argument("--durability", choices=("full", "normal"), default="full")
    parser.add_argument("--in-step", action="store_true",
                        help="every table opens at the same moment, so their cards (and "
                        "their publishers' work) come together: the worst case (default: "
                        "each opens at a seeded moment within one pace, as on a floor)")
    parser.add_argument("--repeats", type=int, default=2,
                        help="each phase (without, with MQTT) this many times, alternating, "
                        "so that other load on the machine falls on both (default 2)")
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    if args.workers == 0:
        args.alone = args.tables
    args.alone = max(0, min(args.alone, args.tables))
    from simulators.mosquitto import Mosquitto

    packed = args.tables - args.alone
    print(f"{args.tables} tables: {args.alone} each in a process of its own, {packed} in "
          f"{min(args.workers, packed)} processes; {args.decks}-deck shoes, a card every "
          f"{args.pace} s per table "
          f"({'all in step' if args.in_step else 'each table from its own moment'}), "
          f"journal durability {args.durability}; phases "
          f"without/with MQTT alternating x{args.repeats}; the broker and the pit on the same "
          "machine (on a floor they have machines of their own)", flush=True)
    # Card -> prompt of each phase, per group (True: the tables alone, False: packed).
    plain: dict[bool, list[list[float]]] = {True: [], False: []}
    mqtt: dict[bool, list[list[float]]] = {True: [], False: []}
    cpu_per_card: dict[bool, list[float]] = {False: [], True: []}
    seconds: dict[bool, list[float]] = {False: [], True: []}
    checks: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
        root = Path(tmp)
        with Mosquitto(root / "broker") as broker:
            pit = subprocess.Popen([sys.executable, "-m", "shoe_controller", "pit", "--broker",
                                    broker.url, "--http", "0", "--log-level", "warning"],
                                   stdout=subprocess.PIPE, text=True)
            assert broker.process is not None
            try:
                pit_url = pit.stdout.readline().split()[1]  # type: ignore[union-attr]
                cpu_before = {"pit": cpu_seconds(pit.pid),
                              "broker": cpu_seconds(broker.process.pid)}
                mqtt_wall = 0.0
                for repeat in range(args.repeats):
                    result = deal_floor(args, root / f"without-{repeat}", None)
                    for group, latencies in result["latencies"].items():
                        plain[group].append(latencies)
                    seconds[False] += result["seconds"]
                    cpu_per_card[False].append(1000 * result["cpu"] / result["cards"])
                    print(f"  without MQTT: {result['cards']} cards", flush=True)
                    started = time.monotonic()
                    result, check = deal_with_mqtt(args, root / f"with-{repeat}", broker.url,
                                                   pit_url)
                    mqtt_wall += time.monotonic() - started
                    for group, latencies in result["latencies"].items():
                        mqtt[group].append(latencies)
                    seconds[True] += result["seconds"]
                    cpu_per_card[True].append(1000 * result["cpu"] / result["cards"])
                    checks.append(check)
                    print(f"  with MQTT:    {result['cards']} cards", flush=True)
                cpu = {"pit": cpu_seconds(pit.pid) - cpu_before["pit"],
                       "broker": cpu_seconds(broker.process.pid) - cpu_before["broker"]}
            finally:
                pit.terminate()
                pit.wait(10)
    report(args, plain, mqtt, seconds, checks, cpu, mqtt_wall)
    print(f"{'tables processes CPU per card (ms)':36} "
          f"{statistics.median(cpu_per_card[False]):9.2f} "
          f"{statistics.median(cpu_per_card[True]):10.2f}  (table, journal, shoe, and "
          "with MQTT the publisher)")
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} "
          "cores (other work on the machine included)")


def report(args: argparse.Namespace, plain: dict[bool, list[list[float]]],
           mqtt: dict[bool, list[list[float]]], seconds: dict[bool, list[float]],
           checks: list[dict[str, Any]], cpu: dict[str, float], mqtt_wall: float) -> None:
    print()
    print(f"{'figure':36} {'without':>9} {'with MQTT':>10}  target")
    for alone in (True, False):
        if not any(plain[alone]):
            continue
        if alone:
            print(f"tables alone ({args.alone}, each in its own process, as on a floor):")
        else:
            print(f"tables packed ({args.tables - args.alone}, up to "
                  f"{-(-(args.tables - args.alone) // max(1, args.workers))} to a process, "
                  "sharing its interpreter lock: no floor's layout):")
        card_to_prompt(plain[alone], mqtt[alone], verdict=alone or not args.alone)
    print(f"{'shoe dealt, median (s)':36} {statistics.median(seconds[False]):9.2f} "
          f"{statistics.median(seconds[True]):10.2f}")
    to_pit = [v for c in checks for v in c["to_pit"]]
    missing = sum(c["missing"] for c in checks)
    if to_pit:
        pit_p99 = percentile(to_pit, 99)
        print(f"{'card -> pit data p50 (ms)':36} {'':9} {percentile(to_pit, 50):10.2f}")
        print(f"{'card -> pit data p99 (ms)':36} {'':9} {pit_p99:10.2f}  < "
              f"{TARGET_PIT_P99_MS:g} ms: {'ok' if pit_p99 < TARGET_PIT_P99_MS else 'NOT MET'}")
        print(f"{'card -> pit data max (ms)':36} {'':9} {max(to_pit):10.2f}")
    print(f"{'cards at the pit / cards dealt':36} {'':9} {len(to_pit):>5}/{len(to_pit) + missing:<5}"
          f" all: {'ok' if not missing else 'NOT MET'}")
    tables = sum(c["tables"] for c in checks)
    short = [t for c in checks for t in c["short"]]
    gaps = sum(c["gaps"] for c in checks)
    dropped = sum(c["dropped"] for c in checks)
    failed = [t for c in checks for t in c["failed"]]
    every = not short and not gaps and not dropped and not failed
    print(f"{'tables with every state at the pit':36} {'':9} {tables - len(short):>5}/{tables:<5}"
          f" every state and event, none dropped, the final view shown: "
          f"{'ok' if every else 'NOT MET'}")
    if not every:
        print(f"  short: {short[:5]} gaps: {gaps} dropped: {dropped} failed/refused: {failed[:5]}")
    states = sum(c["states"] for c in checks)
    coalesced = sum(c["coalesced"] for c in checks)
    print(f"{'states published / changes coalesced':36} {'':9} {states:>10} {coalesced} (each "
          "coalesced change is in the next state; the final state at the pit is checked)")
    print(f"{'CPU of a core, with MQTT: pit, broker':36} {'':9} {cpu['pit'] / mqtt_wall:10.0%}"
          f" {cpu['broker'] / mqtt_wall:.0%}  (the phases' wall time, process start-up "
          "included)")


def card_to_prompt(plain: list[list[float]], mqtt: list[list[float]], *,
                   verdict: bool) -> None:
    """Card -> prompt without and with MQTT (``verdict``: the target's line for this group)."""
    all_plain = [v for run in plain for v in run]
    all_mqtt = [v for run in mqtt for v in run]
    p99_plain_runs = [percentile(run, 99) for run in plain]
    p99_mqtt = percentile(all_mqtt, 99)
    print(f"{'  card -> prompt p50 (ms)':36} {percentile(all_plain, 50):9.2f} "
          f"{percentile(all_mqtt, 50):10.2f}")
    noise = max(max(p99_plain_runs) * NOISE_RATIO, max(p99_plain_runs) + NOISE_MS)
    if verdict:
        ok = p99_mqtt <= noise
        target = (f"unchanged within noise (<= {noise:.1f}: the worst run without "
                  f"x{NOISE_RATIO:g} or +{NOISE_MS:g} ms): {'ok' if ok else 'NOT MET'}")
    else:
        target = f"(the noise limit would be {noise:.1f}; not the floor's layout)"
    print(f"{'  card -> prompt p99 (ms)':36} {percentile(all_plain, 99):9.2f} {p99_mqtt:10.2f}"
          f"  {target}")
    print(f"{'    p99 of each run (ms)':36} {' '.join(f'{v:.1f}' for v in p99_plain_runs):>9} "
          f"{' '.join(f'{percentile(run, 99):.1f}' for run in mqtt):>10}")
    print(f"{'    cards':36} {len(all_plain):9} {len(all_mqtt):10}")


if __name__ == "__main__":
    main()
