"""``shoe demo``: a whole shoe, software shoe and controller, over a real pseudo-terminal.

The software shoe runs on the pty's master side in a thread; the controller opens the slave
side through pyserial exactly as it opens ``/dev/ttyUSB0`` at a real table, journals every card,
prompts the (virtual) dealer and locks the exit between rounds. Reproducible with ``--seed``;
``--pace`` slows the dealer down for watching.

The demo has a supervisor too: an id and a PIN made up at start and printed, which unlock the
supervisor panel (``--http``). A card the shoe cannot read (``--misread-rate``) is entered by
the demo's virtual supervisor under that id (``simulators/supervisor.py``), after
``--supervisor-delay`` seconds, and journalled as that supervisor's action.

``--game blackjack`` plays a blackjack shoe (profile ``blackjack-8d`` unless ``--profile``
names another): the built-in players bet, decide by basic strategy (taking ``--pace`` to
think) and sometimes insure; each round is printed as ``shoe replay`` prints it.

``--game roulette`` plays games on the software roulette wheel instead (profile
``roulette-single-zero``): ``--games``, ``--speed``, ``--wheel-fault``; see
:mod:`shoe_controller.commands.demo_roulette`.

With ``--http`` the dealer display stays up after the shoe, showing it finished, until Ctrl-C
or SIGTERM. A signal during the shoe stops it: the summary says how far it got, the exit
status is 128 + the signal's number, and the temporary directory is removed either way.
"""

from __future__ import annotations

import argparse
import random
import secrets
import signal
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from shoe_controller.cards import new_shoe
from shoe_controller.config import (
    LOG_LEVELS,
    MIN_PIN_DIGITS,
    MIN_PIN_ITERATIONS,
    hash_pin,
    load_run_config,
)
from shoe_controller.display.console import Console
from shoe_controller.errors import ConfigError
from shoe_controller.live.startup import StopSignals
from shoe_controller.logs import setup_logging
from shoe_controller.web.binding import add_http_options, http_from_args

GAMES = {"baccarat": "punto-banco-8d", "blackjack": "blackjack-8d",
         "roulette": "roulette-single-zero"}
"""The games the demo plays, with the profile each plays by default."""

DEMO_SUPERVISOR = "demo-pit"
"""The demo supervisor's id (a config's ``[supervisors]`` id; not a reserved name)."""


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def _non_negative(text: str) -> float:
    value = _number(text)
    if not value >= 0:  # NaN too
        raise argparse.ArgumentTypeError(f"must not be negative, got {text}")
    return value


def _rate(text: str) -> float:
    value = _number(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"a rate is between 0 and 1 (0.05 = 5%), got {text}")
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, metavar="N",
                        help="shuffle seed (default: a random one, printed)")
    parser.add_argument("--pace", type=_non_negative, default=0.0, metavar="SECONDS",
                        help="the virtual dealer's time between cards (0: full speed)")
    parser.add_argument("--game", choices=GAMES, default="baccarat",
                        help="the game to play (its default profile: "
                        + ", ".join(f"{g} {p}" for g, p in GAMES.items()) + ")")
    parser.add_argument("--profile", metavar="NAME",
                        help="table profile name or TOML file (see shoe odds --list-profiles); "
                        "its game must be --game's")
    parser.add_argument("--betting-seconds", type=_non_negative, metavar="SECONDS",
                        help="betting window (default: 0, or 4 x pace when pacing)")
    parser.add_argument("--misread-rate", type=_rate, default=0.0, metavar="RATE",
                        help="share of cards the shoe cannot read, 0..1; the demo supervisor "
                        "enters them")
    parser.add_argument("--supervisor-delay", type=_non_negative, metavar="SECONDS",
                        help="how long the demo supervisor takes to enter a misread card "
                        "(default: 10 x pace, at least 0.5)")
    parser.add_argument("--journal", type=Path, metavar="FILE",
                        help="keep the journal in this new file (default: a temporary one)")
    wheel = parser.add_argument_group("roulette", "with --game roulette: the software wheel")
    wheel.add_argument("--games", type=_games, metavar="N",
                       help="games to play (default: 12)")
    wheel.add_argument("--speed", type=_speed, default=10.0, metavar="FACTOR",
                       help="the wheel this many times faster than a real one (a real game "
                       "takes about 65 s)")
    wheel.add_argument("--wheel-fault", action="append", default=[], metavar="KIND@GAME",
                       help="a fault in game N, as shoe sim --wheel's (e.g. misspin@3, "
                       "no-ball@5, sensor@7); the demo supervisor clears what latches")
    add_http_options(parser, example="8080 --pace 0.3")
    parser.add_argument("--log-level", choices=LOG_LEVELS, default="warning",
                        help="log messages of this level and above, on stderr")


def _games(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of games >= 1, got {text!r}")
    return int(text)


def _speed(text: str) -> float:
    value = _number(text)
    if not 0 < value <= 1000:  # NaN too
        raise argparse.ArgumentTypeError(f"a speed factor more than 0, at most 1000, got {text}")
    return value


ROULETTE_ONLY: dict[str, Any] = {"games": None, "speed": 10.0, "wheel_fault": []}
"""The roulette options and their defaults (refused by name with a card game)."""


def run(args: argparse.Namespace) -> int:
    from shoe_controller.games.registry import create_game
    from shoe_controller.table.runtime import running_table, services
    from simulators.dealer import VirtualDealer
    from simulators.pty import open_pty_pair
    from simulators.shoe import ShoeRunner, SimulatedShoe
    from simulators.shoe_model import ShoeModel
    from simulators.supervisor import VirtualSupervisor

    stopping = StopSignals().install()
    stop, signals = stopping.event, stopping.received
    http = http_from_args(args)  # an unsafe --http stops here, before anything starts
    _check_new_journal(args.journal)
    setup_logging(False, args.log_level)
    profile_name = args.profile or GAMES[args.game]
    if args.game == "roulette":
        return _roulette(args, http, profile_name)
    for name, default in ROULETTE_ONLY.items():
        if getattr(args, name) != default:
            raise ConfigError(f"--{name.replace('_', '-')}: a roulette option; add "
                              "--game roulette")
    game = create_game(profile_name)
    if game.name != args.game:
        raise ConfigError(f"--profile {profile_name}: a {game.name} profile; --game is "
                          f"{args.game}")
    blackjack = game.name == "blackjack"
    profile: Any = game.profile  # type: ignore[attr-defined]
    decks = profile.rules.decks if blackjack else profile.decks
    cut_card = profile.shoe.cut_card if blackjack else profile.shoe_rules.cut_card
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1_000_000)
    cards = new_shoe(decks, seed)
    betting = args.betting_seconds if args.betting_seconds is not None else 4 * args.pace
    pin = "".join(secrets.choice("0123456789") for _ in range(MIN_PIN_DIGITS))
    delay = (args.supervisor_delay if args.supervisor_delay is not None
             else max(0.5, 10 * args.pace))  # slow enough to watch, quick enough to finish

    with tempfile.TemporaryDirectory(prefix="shoe-demo-") as scratch:
        journal = args.journal or Path(scratch) / "journal.sqlite"
        pty = open_pty_pair()
        shoe = SimulatedShoe(
            ShoeModel(cards, cut_card=cut_card,
                      misread_rate=args.misread_rate, seed=seed),
            dealer=VirtualDealer(pace=args.pace, button_delay=args.pace),
            rng=random.Random(seed),
            announce_loaded=True,
        )
        config = load_run_config(None, {
            "device": pty.slave_path, "profile": profile_name, "journal": journal,
            "betting_seconds": betting, "shoes": 1,
            # The fewest iterations a config accepts: the PIN is shown on screen anyway.
            "supervisors": {DEMO_SUPERVISOR: hash_pin(pin, iterations=MIN_PIN_ITERATIONS)},
        })
        print(f"shoe demo: {profile.name}, {len(cards)} cards, seed {seed}")
        print(f"software shoe on {pty.slave_path}; journal {journal}")
        print(f"demo supervisor: id {DEMO_SUPERVISOR}, PIN {pin} (the supervisor panel, "
              f"with --http); enters misread cards after {delay:g} s",
              flush=True)
        started = time.monotonic()
        with ShoeRunner(shoe, pty.device_side), running_table(config) as controller, services(
            controller, http=http
        ) as extras:
            console: Any = Console(progress=True, shoe_cards=len(cards))
            if blackjack:
                from shoe_controller.games.blackjack.live_console import BlackjackConsole
                from shoe_controller.games.blackjack.live_players import BuiltInPlayers

                controller.players_seed, controller.player_seconds = seed, args.pace
                console = BlackjackConsole(shoe_cards=len(cards), table=controller.table,
                                           players=BuiltInPlayers(profile.rules, seed))
            supervisor = VirtualSupervisor(controller, DEMO_SUPERVISOR, pin, cards,
                                           delay=delay)
            controller.listeners.extend([console, supervisor])
            try:
                controller.run(extras.should_stop(stop.is_set), shoes=1)
            finally:
                supervisor.close()
            elapsed = time.monotonic() - started
            finished = bool(controller.shoes_finished)
            print(console.summary())
            if finished:
                print(f"Shoe played in {elapsed:.1f} s (pace {args.pace:g} s).")
            else:
                why = signal.Signals(signals[0]).name if signals else "stopped"
                print(f"Stopped ({why}) after {elapsed:.1f} s: the shoe was not finished.")
            if args.journal:
                print(f"Check it: shoe journal verify {journal}; shoe journal recall {journal}")
            if finished and http:
                # The display shows "Shoe finished" for as long as anyone wants to look.
                keep_display_up(stop, extras)
    return exit_status(finished, signals)


def keep_display_up(stop: threading.Event, extras: Any) -> None:
    """After a finished demo with a display: keep it up until a signal (or a service's
    failure, re-raised here)."""
    if stop.is_set():
        return
    print("The dealer display stays up: press Ctrl-C (or send SIGTERM) to stop.", flush=True)
    check = extras.should_stop(stop.is_set)
    while not check():
        stop.wait(0.2)


def exit_status(finished: bool, signals: list[int]) -> int:
    """0 for a finished demo; 128 + the signal that stopped it; 1 otherwise."""
    if finished:
        return 0
    return 128 + signals[0] if signals else 1


def _roulette(args: argparse.Namespace, http: Any, profile_name: str) -> int:
    from shoe_controller.commands.demo_roulette import run_roulette
    from shoe_controller.games.registry import profile_game

    game = profile_game(profile_name)
    if game != "roulette":
        raise ConfigError(f"--profile {profile_name}: a {game} profile; --game is roulette")
    return run_roulette(args, http, profile_name)


def _check_new_journal(path: Path | None) -> None:
    """The demo deals one new shoe into a new journal. A journal carries on where it stopped,
    so an old one would be resumed (a finished shoe: nothing left to play; a shoe in play:
    the software shoe's fresh load would not match it): refused with a clear reason."""
    if path is None:
        return
    if path.is_dir():
        raise ConfigError(f"--journal {path}: is a directory; name a new file")
    if path.exists() and path.stat().st_size > 0:
        raise ConfigError(f"--journal {path}: already exists (it holds an earlier shoe); the "
                          "demo plays a new shoe into a new journal: give a new file name, "
                          "or leave out --journal")
