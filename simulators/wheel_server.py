"""The I/O half of ``shoe sim --wheel``: serve the software wheel (or a log replay) on a
pseudo-terminal or a TCP port, with optional byte noise (``--faults``) on the wire.

Like the shoe, the first line on stdout says where the wheel is (``PTY /dev/pts/N`` or
``TCP HOST:PORT``); the wheel keeps running through hosts that come and go until SIGINT or
SIGTERM, or with ``--exit-when-done`` once its games (``--games``) or the replay are done.

``--log FILE`` writes the wheel's own record of its games, a JSON line per game as it ends:
``{"game", "spin", "number" (null: none), "fault" (the planned fault or null), "began",
"ended"}`` (Unix times: state 2, and the number drawn or the game given up); the schema is
docs/roulette/sim-game-log.schema.json (version 1).
"""

from __future__ import annotations

import argparse
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import IO, Protocol

from shoe_controller.errors import ConfigError, TransportError
from shoe_controller.transports.base import Transport
from shoe_controller.transports.tcp import TcpServerTransport
from simulators.faults import FaultConfig, FaultInjector, FaultyTransport
from simulators.pty import open_pty_pair
from simulators.wheel import (
    LineFaults,
    PlayedGame,
    SimulatedWheel,
    WheelTimings,
    parse_game_faults,
)
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


def game_logger(file: IO[str]) -> Callable[[PlayedGame], None]:
    """Writes each finished game as a JSON line, its times on the wall clock (the wheel's
    clock is the monotonic one), flushed at once so a reader sees every game ended."""
    def write(played: PlayedGame) -> None:
        to_wall = time.time() - time.monotonic()
        line = {**played.to_json_dict(), "began": round(played.began + to_wall, 6),
                "ended": round(played.ended + to_wall, 6)}
        file.write(json.dumps(line) + "\n")
        file.flush()
    return write


def run_wheel(device: WheelDevice, transport: Transport, stop: threading.Event, *,
              clock: Callable[[], float] = time.monotonic, exit_when_done: bool = False,
              connected: Callable[[], bool] | None = None,
              wait_for_host: bool = False) -> None:
    """Drive ``device`` over ``transport`` until ``stop`` (or, if asked, it is done).
    ``connected``: whether a host is there (TCP), which starts a replay; with
    ``wait_for_host``, any wheel: its clock starts when the first host has connected."""
    done_at: float | None = None
    try:
        while wait_for_host and connected is not None and not connected():
            if stop.is_set():
                return
            data = transport.read(4096, MAX_WAIT)  # (a TCP server accepts its host here)
            if data:
                device.receive(data, clock())
        while not stop.is_set():
            now = clock()
            if connected is not None and isinstance(device, WheelReplay) \
                    and not device.started and connected():
                device.start(now)
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
    if not getattr(args, "log", None) or not isinstance(device, SimulatedWheel):
        return _serve(args, device, faults, stop)
    try:  # a new file: an old wheel's games must not be read as this one's
        log_file = open(args.log, "x", encoding="utf-8")  # noqa: SIM115 (closed below)
    except OSError as exc:
        raise ConfigError(f"--log {args.log}: cannot create it: "
                          f"{exc.strerror or exc}") from None
    with log_file:
        device.on_game = game_logger(log_file)
        return _serve(args, device, faults, stop)


def _serve(args: argparse.Namespace, device: WheelDevice, faults: FaultConfig,
           stop: threading.Event) -> int:
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
        run_wheel(device, _with_faults(server, faults), stop, exit_when_done=args.exit_when_done,
                  connected=lambda: server.has_client, wait_for_host=args.wait_for_host)
    finally:
        server.close()
    return 0


def _announce(line: str) -> None:
    print(line, flush=True)  # the first line on stdout: where to connect
