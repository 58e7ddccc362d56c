"""``shoe demo``: a whole shoe, software shoe and controller, over a real pseudo-terminal.

The software shoe runs on the pty's master side in a thread; the controller opens the slave
side through pyserial exactly as it opens ``/dev/ttyUSB0`` at a real table, journals every card,
prompts the (virtual) dealer and locks the exit between rounds. Reproducible with ``--seed``;
``--pace`` slows the dealer down for watching.
"""

from __future__ import annotations

import argparse
import random
import signal
import tempfile
import threading
import time
from pathlib import Path

from shoe_controller.cards import new_shoe
from shoe_controller.config import LOG_LEVELS, load_run_config
from shoe_controller.display.console import Console
from shoe_controller.logs import setup_logging
from shoe_controller.web.binding import add_http_options, http_from_args


def _non_negative(text: str) -> float:
    value = float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text}")
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, help="shuffle seed (default: a random one, printed)")
    parser.add_argument("--pace", type=_non_negative, default=0.0, metavar="SECONDS",
                        help="the virtual dealer's time between cards (default 0: full speed)")
    parser.add_argument("--profile", default="punto-banco-8d", help="table profile")
    parser.add_argument("--betting-seconds", type=_non_negative, metavar="SECONDS",
                        help="betting window (default: 0, or 4 x pace when pacing)")
    parser.add_argument("--misread-rate", type=float, default=0.0,
                        help="share of cards the shoe cannot read (a supervisor is needed)")
    parser.add_argument("--journal", type=Path, help="keep the journal here (default: temporary)")
    add_http_options(parser, example="8080 --pace 0.3")
    parser.add_argument("--log-level", choices=LOG_LEVELS, default="warning")


def run(args: argparse.Namespace) -> int:
    from shoe_controller.games.baccarat.profile import load_profile
    from shoe_controller.table.runtime import running_table, services
    from simulators.dealer import VirtualDealer
    from simulators.pty import open_pty_pair
    from simulators.shoe import ShoeRunner, SimulatedShoe
    from simulators.shoe_model import ShoeModel

    http = http_from_args(args)  # an unsafe --http stops here, before anything starts
    setup_logging(False, args.log_level)
    profile = load_profile(args.profile)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1_000_000)
    cards = new_shoe(profile.decks, seed)
    betting = args.betting_seconds if args.betting_seconds is not None else 4 * args.pace
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    with tempfile.TemporaryDirectory(prefix="shoe-demo-") as scratch:
        journal = args.journal or Path(scratch) / "journal.sqlite"
        pty = open_pty_pair()
        shoe = SimulatedShoe(
            ShoeModel(cards, cut_card=profile.shoe_rules.cut_card,
                      misread_rate=args.misread_rate, seed=seed),
            dealer=VirtualDealer(pace=args.pace, button_delay=args.pace),
            rng=random.Random(seed),
            announce_loaded=True,
        )
        config = load_run_config(None, {
            "device": pty.slave_path, "profile": args.profile, "journal": journal,
            "betting_seconds": betting, "shoes": 1,
        })
        print(f"shoe demo: {profile.name}, {len(cards)} cards, seed {seed}")
        print(f"software shoe on {pty.slave_path}; journal {journal}")
        started = time.monotonic()
        with ShoeRunner(shoe, pty.device_side), running_table(config) as controller, services(
            controller, http=http
        ) as extras:
            console = Console(progress=True, shoe_cards=len(cards))
            controller.listeners.append(console)
            controller.run(extras.should_stop(stop.is_set), shoes=1)
        elapsed = time.monotonic() - started
        print(console.summary())
        print(f"Shoe played in {elapsed:.1f} s (pace {args.pace:g} s).")
        if args.journal:
            print(f"Check it: shoe journal verify {journal}; shoe journal recall {journal}")
    return 0 if controller.shoes_finished else 1
