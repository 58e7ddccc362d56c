"""The I/O half of ``shoe sim --wheel``: serve the software wheel (or a log replay) on a
pseudo-terminal or a TCP port, with optional byte noise (``--faults``) on the wire.

Like the shoe, the first line on stdout says where the wheel is (``PTY /dev/pts/N`` or
``TCP HOST:PORT``); the wheel keeps running through hosts that come and go until SIGINT or
SIGTERM, or with ``--exit-when-done`` once its games (``--games``) or the replay are done.
"""

from __future__ import annotations

import argparse
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Protocol

from shoe_controller.errors import ConfigError, TransportError
from shoe_controller.transports.base import Transport
from shoe_controller.transports.tcp import TcpServerTransport
from simulators.faults import FaultConfig, FaultInjector, FaultyTransport
from simulators.pty import open_pty_pair
from simulators.wheel import LineFaults, SimulatedWheel, WheelTimings, parse_game_faults
from simulators.wheel_replay import WheelReplay, read_wheel_log

log = logging.getLogger("shoe.sim.wheel")

MAX_WAIT = 0.05
LINGER = 0.5
"""Seconds the wheel stays up after ``--exit-when-done`` is met, so the last lines drain."""


class WheelDevice(Protocol):
    def receive(self, data: bytes, now: float) -> None: ...
    def data_to_send(self, now: float) -> bytes: ...
    def next_deadline(self) -> float | None: ...
    @property
    def finished(self) -> bool: ...


def build_device(args: argparse.Namespace) -> WheelDevice:
    """The wheel the options describe (a generated one, or a replay); ConfigError if wrong."""
    if args.replay:
        return WheelReplay(read_wheel_log(args.replay), speed=args.speed)
    timings = WheelTimings().scaled(args.speed)
    return SimulatedWheel(
        seed=args.seed, timings=timings, mode=args.mode,
        faults=parse_game_faults(args.wheel_fault), line_faults=LineFaults.parse(args.line_faults),
        result_line=not args.no_result_line, stuck_spin=args.stuck_spin, games=args.games,
    )


def run_wheel(device: WheelDevice, transport: Transport, stop: threading.Event, *,
              clock: Callable[[], float] = time.monotonic, exit_when_done: bool = False) -> None:
    """Drive ``device`` over ``transport`` until ``stop`` (or, if asked, it is done)."""
    done_at: float | None = None
    try:
        while not stop.is_set():
            now = clock()
            out = device.data_to_send(now)
            if out:
                transport.write(out)
            if exit_when_done and device.finished:
                done_at = now if done_at is None else done_at
                if now >= done_at + LINGER:
                    return
            deadline = device.next_deadline()
            wait = MAX_WAIT if deadline is None else min(MAX_WAIT, max(0.0, deadline - clock()))
            data = transport.read(4096, wait)
            if data:
                device.receive(data, clock())
    except TransportError:
        if stop.is_set():
            return
        raise


def _with_faults(device: Transport, faults: FaultConfig) -> Transport:
    if not faults.active:
        return device
    return FaultyTransport(
        device, tx=FaultInjector(faults), rx=FaultInjector(replace(faults, seed=faults.seed + 1))
    )


def serve(args: argparse.Namespace, stop: threading.Event) -> int:
    faults = FaultConfig.parse(args.faults)
    if faults.disconnect_rate > 0:
        raise ConfigError("'disconnect' faults are for the shoe's link; the wheel's line has "
                          "none (use corrupt, drop, dup or delay)")
    if faults.drop_frame_rate > 0 or faults.duplicate_frame_rate > 0:
        # Frames end at a 0x00 byte, which the wheel never sends: the injector would hold
        # every byte back waiting for one. Lost and repeated lines are --line-faults.
        raise ConfigError("'drop-frame' and 'dup-frame' are for the shoe's frames; for the "
                          "wheel use --line-faults (drop-status, drop-line, repeat-line)")
    device = build_device(args)
    if args.pty:
        with open_pty_pair() as pair:
            _announce(f"PTY {pair.slave_path}")
            run_wheel(device, _with_faults(pair.device_side, faults), stop,
                      exit_when_done=args.exit_when_done)
        return 0
    host, port = args.tcp
    server = TcpServerTransport(host, port)
    server.open()
    try:
        host, port = server.address
        _announce(f"TCP {host}:{port}")
        run_wheel(device, _with_faults(server, faults), stop, exit_when_done=args.exit_when_done)
    finally:
        server.close()
    return 0


def _announce(line: str) -> None:
    print(line, flush=True)  # the first line on stdout: where to connect
