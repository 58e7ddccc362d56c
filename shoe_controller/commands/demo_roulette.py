"""``shoe demo --game roulette``: the software wheel and the wheel table over a real pty.

The software wheel (:mod:`simulators.wheel`) runs its games by itself on the pty's master
side, in a thread, as a SlingShot in arcade mode does; the wheel table opens the slave side
through pyserial exactly as it opens ``/dev/ttyS0`` at a real table, journals every line the
wheel sends, and prints each round as ``shoe run`` does. ``--speed`` compresses the wheel's
times (a real game takes about 65 s; the default of 10 makes it 6.5 s, watchable);
``--seed`` draws the numbers (the summary compares them with what the table accepted).

``--wheel-fault KIND@GAME`` (as ``shoe sim --wheel``) puts a misspin, a ball not detected,
a sensor fault... in a game. A fault that latches is cleared by the demo's supervisor (an id
and a PIN made up at start and printed: they also unlock the supervisor panel of
``--http``) after ``--supervisor-delay`` seconds, once the wheel is back in play.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import random
import secrets
import signal
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Self

from shoe_controller.commands.demo import exit_status, keep_display_up
from shoe_controller.config import MIN_PIN_DIGITS, MIN_PIN_ITERATIONS, hash_pin, load_run_config
from shoe_controller.errors import ConfigError, ShoeError
from shoe_controller.live.startup import StopSignals

log = logging.getLogger("shoe_controller.demo")

ROULETTE_DEFAULT_GAMES = 12
#: Card-game options the roulette demo has no use for (refused by name, not ignored).
CARD_ONLY = {"pace": 0.0, "misread_rate": 0.0, "betting_seconds": None}


class DemoPitBoss:
    """The demo's supervisor: clears a latched irregularity ``delay`` seconds after it
    latched, once the wheel is connected and no longer reports the fault (a clear is refused
    while it idles or reports no ball). A table listener; acts from its own thread (the
    controller's own must never wait on itself). ``check()`` re-raises its failure."""

    def __init__(self, controller: Any, supervisor: str, pin: str, *, delay: float,
                 out: Any = print) -> None:
        self.controller, self.supervisor, self.pin = controller, supervisor, pin
        self.delay, self.out = delay, out
        self.cleared = 0
        self._view: dict[str, Any] | None = None
        self._latched_since: float | None = None
        self._error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="demo-supervisor", daemon=True)
        self._thread.start()

    def __call__(self, view: dict[str, Any], events: list[dict[str, Any]]) -> None:
        self._view = view  # one reference swapped: read by the thread below

    def _run(self) -> None:
        try:
            while not self._stop.wait(0.1):
                self._step(time.monotonic())
        except BaseException as exc:  # noqa: BLE001 - handed to the owner by check()
            self._error = exc

    def _step(self, now: float) -> None:
        view = self._view
        if view is None or not view["latched"]:
            self._latched_since = None
            return
        if self._latched_since is None:
            self._latched_since = now
        wheel = view["wheel"]
        if (now < self._latched_since + self.delay or not wheel["connected"]
                or wheel["state"] in (6, 7)):
            return
        ticket = self.controller.supervisor("clear", self.supervisor, self.pin, reason="")
        ticket.wait(2.0)
        if ticket.status == "journalled" and ticket.accepted:
            self.cleared += 1
            kinds = ", ".join(latched["kind"] for latched in view["latched"])
            self.out(f"demo supervisor {self.supervisor}: cleared {kinds}", flush=True)
            self._latched_since = None
        else:  # refused (the wheel went idle again meanwhile): tried again later
            self._latched_since = now

    def check(self) -> None:
        if self._error is not None:
            raise ShoeError(f"demo supervisor failed: {self._error}") from self._error

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2.0)


class WheelThread:
    """The software wheel on the pty's master side, in a thread; ``check()`` re-raises."""

    def __init__(self, device: Any, transport: Any) -> None:
        self.stop = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(device, transport),
                                        name="software-wheel", daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self._thread.join(5.0)

    def _run(self, device: Any, transport: Any) -> None:
        from simulators.wheel_server import run_wheel

        try:
            run_wheel(device, transport, self.stop)
        except BaseException as exc:  # noqa: BLE001 - handed to the owner by check()
            self._error = exc

    def check(self) -> None:
        if self._error is not None:
            raise ShoeError(f"the software wheel failed: {self._error}") from self._error


def check_roulette_options(args: argparse.Namespace) -> None:
    """Refuse the card demo's options that mean nothing at a wheel."""
    for name, default in CARD_ONLY.items():
        if getattr(args, name, default) != default:
            option = "--" + name.replace("_", "-")
            why = ("the wheel opens and closes betting itself (state 2 to 4)"
                   if name == "betting_seconds" else "it is a card game's option; the wheel's "
                   "pace is --speed")
            raise ConfigError(f"{option}: not with --game roulette: {why}")


def run_roulette(args: argparse.Namespace, http: Any, profile_name: str) -> int:
    """Play ``--games`` rounds on the software wheel; 0, or 128 + the signal that stopped it."""
    from shoe_controller.wheel_table.console import WheelConsole
    from shoe_controller.wheel_table.runtime import running_wheel_table, wheel_services
    from simulators.pty import open_pty_pair
    from simulators.wheel import SimulatedWheel, WheelTimings, parse_game_faults

    check_roulette_options(args)
    faults = parse_game_faults(args.wheel_fault)
    timings = WheelTimings().scaled(args.speed)
    games = args.games if args.games is not None else ROULETTE_DEFAULT_GAMES
    stopping = StopSignals().install()
    stop, signals = stopping.event, stopping.received
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1_000_000)
    pin = "".join(secrets.choice("0123456789") for _ in range(MIN_PIN_DIGITS))
    delay = args.supervisor_delay if args.supervisor_delay is not None else 2.0
    from shoe_controller.commands.demo import DEMO_SUPERVISOR

    with contextlib.ExitStack() as stack:
        scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="shoe-demo-"))
        journal = args.journal or Path(scratch) / "journal.sqlite"
        pty = stack.enter_context(open_pty_pair())
        wheel = SimulatedWheel(seed=seed, timings=timings, faults=faults)
        config = load_run_config(None, {
            "device": pty.slave_path, "profile": profile_name, "journal": journal,
            # The fewest iterations a config accepts: the PIN is shown on screen anyway.
            "supervisors": {DEMO_SUPERVISOR: hash_pin(pin, iterations=MIN_PIN_ITERATIONS)},
        })
        print(f"shoe demo: {profile_name}, {games} games, seed {seed}, the wheel "
              f"{args.speed:g}x a real one's speed")
        print(f"software wheel on {pty.slave_path}; journal {journal}")
        print(f"demo supervisor: id {DEMO_SUPERVISOR}, PIN {pin} (the supervisor panel, "
              f"with --http); clears latched faults after {delay:g} s", flush=True)
        started = time.monotonic()
        # The table first: the wheel runs its games for nobody, and its first game must be
        # the table's first round.
        with running_wheel_table(config) as controller, \
                wheel_services(controller, http=http) as extras, \
                WheelThread(wheel, pty.device_side) as wheel_thread:
            console, numbers = WheelConsole(), NumberCheck(wheel)
            supervisor = DemoPitBoss(controller, DEMO_SUPERVISOR, pin, delay=delay)
            controller.listeners.extend([console, numbers, supervisor])
            extras.checks.extend([wheel_thread, supervisor])
            try:
                controller.run(extras.should_stop(stop.is_set), games=games)
            finally:
                supervisor.close()
                wheel_thread.stop.set()  # nobody reads the line any more
            elapsed = time.monotonic() - started
            table = controller.table
            finished = table.rounds_finished >= games
            print(console.summary(table))
            print(numbers.summary())
            if finished:
                print(f"Played in {elapsed:.1f} s (the wheel at {args.speed:g}x).")
            else:
                why = signal.Signals(signals[0]).name if signals else "stopped"
                print(f"Stopped ({why}) after {elapsed:.1f} s: {table.rounds_finished} of "
                      f"{games} games finished.")
            if args.journal:
                print(f"Check it: shoe journal verify {journal}; shoe journal recall {journal}")
            if finished and http:
                keep_display_up(stop, extras)
    return exit_status(finished, signals)


class NumberCheck:
    """A table listener comparing each number the table accepts with the one the software
    wheel drew for that game (the wheel's last game with that spin: the wheel logs a game's
    number before it sends it, so it is there when the table takes it)."""

    def __init__(self, wheel: Any) -> None:
        self.wheel = wheel
        self.agreed = 0
        self.disagreed: list[str] = []

    def __call__(self, view: dict[str, Any], events: list[dict[str, Any]]) -> None:
        for event in events:
            if event["type"] != "winning_number":
                continue
            drawn = next((game.number for game in reversed(self.wheel.played)
                          if game.spin == event["wheel_spin"]), None)
            if drawn == event["number"]:
                self.agreed += 1
            else:
                self.disagreed.append(f"round {event['round']}: table {event['number']}, "
                                      f"wheel {drawn}")

    def summary(self) -> str:
        played = len(self.wheel.played)
        if self.disagreed:
            return (f"The wheel played {played} game(s); the table's numbers DIFFER from the "
                    f"wheel's: {'; '.join(self.disagreed)}")
        return (f"The wheel played {played} game(s); each of the {self.agreed} number(s) the "
                "table accepted is the one the wheel drew for that game.")
