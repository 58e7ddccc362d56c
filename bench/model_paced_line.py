"""The paced bad line of ``bench_fast_recovery.py`` as a model on a simulated clock: noise-free.

    .venv/bin/python bench/model_paced_line.py [--seeds N] [--first-seed S] [--revision 1.2]
    .venv/bin/python bench/model_paced_line.py --causes [--seeds N]

The real ``TableController``, the real links and the real software shoe (dealer at pace 0),
joined by a model of a 115200 8N1 line (each byte takes 86.8 us; a frame is delivered when its
last byte has arrived) with the bench's faults, on a simulated clock: no threads, no scheduler,
no shared machine. What the model leaves out is the host's real processing, which it takes as a
fixed ``HOST_DELAY`` per committed item (the journal's fsync and the table). Its figures are
the model's, not a measurement: use it to compare link rules seed by seed (the same seeds give
the same figures every run), and the real bench for the figures of issue 14. ``--revision``
picks the link revision of both ends (1.3: frame copies, the default; 1.2: without them);
``--causes`` shows where the bad shoe's extra time goes.
"""

from __future__ import annotations

import argparse
import dataclasses
import heapq
import itertools
import random
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from firmware_protocol import messages as wire
from firmware_protocol.codec import FrameDecoder
from firmware_protocol.link import Link, LinkConfig, LinkStats, Role
from shoe_controller.cards import new_shoe
from shoe_controller.device import HostEndpoint
from shoe_controller.errors import ShoeTimeoutError
from shoe_controller.games.registry import game_from_toml, read_profile
from shoe_controller.journal import Journal
from shoe_controller.table.controller import TableController, Update
from shoe_controller.table.machine import Table, TableSettings
from simulators.dealer import VirtualDealer
from simulators.faults import FaultConfig, FaultInjector
from simulators.shoe import SimulatedShoe
from simulators.shoe_model import ShoeModel

BYTE_TIME = 10 / 115200  # 8N1: ten bits a byte
HOST_DELAY = 0.0007
"""Seconds the host takes per committed item (journal append with fsync, and the table)."""
BAD_LINE = "corrupt=0.01,drop-frame=0.005,dup-frame=0.005"
PROFILE = "punto-banco-8d"
REVISIONS = {"1.3": LinkConfig(), "1.2": LinkConfig(frame_copies=False)}


class FrameClassFaults:
    """An injector that acts only on the frames of one class (``--causes``): the rest pass.

    Classes: ``data`` (a reliable frame's first transmission), ``copy`` (its proactive copy,
    SPEC 8.9), ``resend`` (a later transmission), ``ack``, ``nak``, ``other`` (heartbeats,
    handshake, error reports, the bursts' leading 0x00)."""

    def __init__(self, injector: FaultInjector, frame_class: str) -> None:
        self.injector = injector
        self.frame_class = frame_class
        self.hit = 0  # frames of the class the injector changed
        self._seen: set[tuple[int, int]] = set()  # (type, seq) of reliable frames sent

    def classify(self, frame: bytes) -> str:
        decoded = FrameDecoder().feed(frame)
        if not decoded:
            return "other"
        f = decoded[0]
        if f.is_copy:
            return "copy"
        if f.reliable:
            key = (f.message.TYPE, f.seq)
            if key in self._seen:
                return "resend"
            self._seen.add(key)
            return "data"
        if isinstance(f.message, wire.Ack):
            return "ack"
        if isinstance(f.message, wire.Nak):
            return "nak"
        return "other"

    def __call__(self, data: bytes) -> list[bytes]:
        out: list[bytes] = []
        start = 0
        while start < len(data):
            end = data.find(b"\0", start)
            end = len(data) if end < 0 else end + 1
            frame = data[start:end]
            start = end
            if self.classify(frame) == self.frame_class:
                faulted = self.injector(frame)
                self.hit += faulted != [frame]
                out += faulted
            else:
                out.append(frame)
        return out


class LineModel:
    """Both ends and the line between them, on one simulated clock. As in the bench, the
    faults act at the host's end: before the line towards the shoe, after it from the shoe.
    ``cause`` (direction, frame class, fault): only those faults, for ``--causes``."""

    def __init__(self, seed: int, bad: bool, cause: tuple[str, str, str] | None = None,
                 config: LinkConfig | None = None) -> None:
        self.now = 0.0
        self._arrivals: list[tuple[float, int, str, bytes]] = []  # (time, order, to, piece)
        self._order = itertools.count()
        self._line_free = {"shoe": 0.0, "host": 0.0}
        config = config or LinkConfig()
        self.host = HostEndpoint(Link(Role.HOST, config, random.Random(seed).getrandbits(32)))
        self.shoe = SimulatedShoe(
            ShoeModel(new_shoe(8, seed), cut_card=14), link_config=config,
            dealer=VirtualDealer(pace=0.0, button_delay=0.0),
            rng=random.Random(seed), announce_loaded=True)
        self._to_shoe_faults: Callable[[bytes], list[bytes]] | None = None
        self._to_host_faults: Callable[[bytes], list[bytes]] | None = None
        self.cause_faults: FrameClassFaults | None = None
        if cause is not None:
            direction, frame_class, fault = cause
            only = ",".join(part for part in BAD_LINE.split(",") if part.startswith(fault))
            injector = FaultInjector(FaultConfig.parse(f"{only},seed={seed}"))
            self.cause_faults = FrameClassFaults(injector, frame_class)
            if direction == "shoe":
                self._to_shoe_faults = self.cause_faults
            else:
                self._to_host_faults = self.cause_faults
        elif bad:
            faults = FaultConfig.parse(f"{BAD_LINE},seed={seed}")
            self._to_shoe_faults = FaultInjector(faults)
            self._to_host_faults = FaultInjector(dataclasses.replace(faults, seed=seed + 1))
        self.card_sent: dict[int, float] = {}  # counter -> first transmission
        self._shoe_frames = FrameDecoder()

    def _write(self, to: str, data: bytes) -> None:
        if to == "shoe" and self._to_shoe_faults is not None:
            data = b"".join(self._to_shoe_faults(data))
        if to == "host":
            for frame in self._shoe_frames.feed(data):
                if isinstance(frame.message, wire.CardDrawn):
                    self.card_sent.setdefault(frame.message.counter, self.now)
        start = max(self.now, self._line_free[to])
        piece = bytearray()
        for index, byte in enumerate(data):
            piece.append(byte)
            if byte == 0 or index == len(data) - 1:  # a frame is whole at its delimiter
                heapq.heappush(self._arrivals, (start + (index + 1) * BYTE_TIME,
                                                next(self._order), to, bytes(piece)))
                piece = bytearray()
        self._line_free[to] = start + len(data) * BYTE_TIME

    def flush(self) -> None:
        """Both ends write what they have now; the shoe's dealer acts."""
        if out := self.host.data_to_send(self.now):
            self._write("shoe", out)
        self.shoe.step(self.now)
        if out := self.shoe.data_to_send(self.now):
            self._write("host", out)

    def next_event(self) -> float | None:
        times = [self._arrivals[0][0]] if self._arrivals else []
        for deadline in (self.host.next_deadline(), self.shoe.next_deadline()):
            if deadline is not None:
                times.append(max(deadline, self.now))
        return min(times) if times else None

    def advance(self, until: float) -> None:
        self.now = max(self.now, until)
        while self._arrivals and self._arrivals[0][0] <= self.now:
            _, _, to, data = heapq.heappop(self._arrivals)
            if to == "host":
                if self._to_host_faults is not None:
                    data = b"".join(self._to_host_faults(data))
                if data:
                    self.host.receive(data, self.now)
            else:
                self.shoe.receive(data, self.now)
        self.host.poll(self.now)
        self.flush()


class ModelConnection:
    """The controller's shoe connection (as ``ShoeConnection``: commits on ``get``) on the
    model's clock: waiting for input runs the model."""

    def __init__(self, model: LineModel) -> None:
        self.model = model

    def get(self, timeout: float | None = None) -> object:
        model = self.model
        self.commit_now()
        end = model.now + (timeout or 0.0)
        while (item := model.host.take()) is None:
            when = model.next_event()
            if when is None or when > end:
                model.advance(end)
                if (item := model.host.take()) is not None:
                    return item
                raise ShoeTimeoutError("nothing from the shoe")
            model.advance(max(when, model.now + 1e-7))
        return item

    def send(self, message: wire.Message) -> None:
        self.model.host.send(message, self.model.now)
        self.model.flush()

    def commit(self) -> None:
        self.model.advance(self.model.now + HOST_DELAY)
        self.commit_now()

    def commit_now(self) -> None:
        self.model.host.commit(self.model.now)
        self.model.flush()


def one(seed: int, bad: bool, cause: tuple[str, str, str] | None = None,
        config: LinkConfig | None = None) -> tuple[float, list[float], LinkStats, LinkStats]:
    """One whole shoe: its simulated seconds, card -> prompt latencies (ms), link stats."""
    model = LineModel(seed, bad, cause, config)
    _last_model[:] = [model]
    source = read_profile(PROFILE)
    prompted: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as tmp, \
            Journal(Path(tmp) / "table.sqlite", durability="normal") as journal:
        controller = TableController(
            journal=journal, table=Table(game_from_toml(source.text, source.origin),
                                         TableSettings()),
            profile=PROFILE, connection=ModelConnection(model), betting_seconds=0,
            clock=lambda: model.now, profile_toml=source.text)
        controller.start()

        def listener(update: Update) -> None:
            if update.input_kind == "card":
                prompted.setdefault(controller.table.last_counter, model.now)

        controller.listeners.append(listener)
        controller.run(lambda: model.now > 300, shoes=1)
        if not controller.shoes_finished:
            raise SystemExit(f"seed {seed}: the shoe did not finish within 300 s")
    latencies = [(prompted[c] - model.card_sent[c]) * 1000 for c in prompted
                 if c in model.card_sent]
    return model.now, latencies, model.host.link.stats, model.shoe.link.stats


_last_model: list[LineModel] = []


def causes(seeds: range, config: LinkConfig) -> None:
    """Where the bad shoe's extra time goes: each fault, on one direction's frames of one
    class alone, against the clean shoe of the same seed (mean over the seeds)."""
    clean = {seed: one(seed, False, config=config)[0] for seed in seeds}
    full = statistics.mean(one(seed, True, config=config)[0] - clean[seed] for seed in seeds)
    print(f"all faults: +{full * 1000:.0f} ms a shoe (mean over {len(seeds)} seeds)\n")
    print(f"{'towards':8} {'frames':7} {'fault':11} {'+ms/shoe':>9} {'hits/shoe':>9} "
          f"{'ms/hit':>7}")
    total = 0.0
    for direction in ("host", "shoe"):
        for frame_class in ("data", "copy", "resend", "ack", "nak", "other"):
            for fault in ("corrupt", "drop-frame", "dup-frame"):
                extra, hits = [], []
                for seed in seeds:
                    seconds = one(seed, True, (direction, frame_class, fault), config)[0]
                    extra.append(seconds - clean[seed])
                    hits.append(_last_model[0].cause_faults.hit)  # type: ignore[union-attr]
                mean_extra, mean_hits = statistics.mean(extra), statistics.mean(hits)
                total += mean_extra
                if mean_hits:
                    print(f"{direction:8} {frame_class:7} {fault:11} {mean_extra * 1000:9.0f} "
                          f"{mean_hits:9.1f} {mean_extra * 1000 / mean_hits:7.1f}", flush=True)
    print(f"\nsum of the parts: +{total * 1000:.0f} ms a shoe (all at once: +{full * 1000:.0f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="shoes per line (default 20)")
    parser.add_argument("--first-seed", type=int, default=1,
                        help="first seed (default 1; the bench uses 1..runs)")
    parser.add_argument("--revision", choices=sorted(REVISIONS), default="1.3",
                        help="link revision of both ends (default 1.3)")
    parser.add_argument("--causes", action="store_true",
                        help="where the extra time goes: each fault on one class of frames")
    args = parser.parse_args()
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    config = REVISIONS[args.revision]
    if args.causes:
        causes(seeds, config)
        return
    print(f"model of a 115200 8N1 line, host {HOST_DELAY * 1000:g} ms per committed item; "
          f"bad line: {BAD_LINE}; pace 0; link revision {args.revision}")
    ratios, latencies = [], []
    for seed in seeds:
        clean = one(seed, False, config=config)[0]
        bad, lat, host, shoe = one(seed, True, config=config)
        ratios.append(bad / clean)
        latencies += lat
        print(f"  seed {seed:2}: clean {clean:.3f} s, bad {bad:.3f} s ({bad / clean:.2f}x); "
              f"timer expiries host {host.retransmissions} shoe {shoe.retransmissions}, "
              f"resent for a Nak host {host.fast_retransmissions} shoe "
              f"{shoe.fast_retransmissions}, copies used host {host.copies_used} shoe "
              f"{shoe.copies_used}", flush=True)
    latencies.sort()
    print(f"\nbad line: x clean median {statistics.median(ratios):.3f}, mean "
          f"{statistics.mean(ratios):.3f} (target < 1.5); card -> prompt p50 "
          f"{latencies[len(latencies) // 2]:.2f} ms (< 5), p99 "
          f"{latencies[int(len(latencies) * 0.99)]:.2f} ms (< 25)")


if __name__ == "__main__":
    main()
