"""``shoe sim``: run the software shoe (or, with ``--wheel``, the roulette wheel) on a
pseudo-terminal or a TCP port.

    shoe sim --pty                       # prints "PTY /dev/pts/N": open that as the serial port
    shoe sim --tcp 127.0.0.1:0           # prints "TCP 127.0.0.1:PORT": socket://127.0.0.1:PORT
    shoe sim --wheel --pty --speed 10    # a roulette wheel, ten times faster than a real one
    shoe sim --wheel --tcp 127.0.0.1:0 --replay wheel.log   # play a real wheel's log back

The first line on stdout says where the shoe is (flushed at once, so a script can read it);
everything else is logged to stderr. The shoe keeps running like a real one, through dropped
connections, until SIGINT or SIGTERM (exit 0), or with ``--exit-when-empty`` once the last card
has been acknowledged by the host.
"""

from __future__ import annotations

import argparse
import logging
import sys
import threading

from shoe_controller.cards import Card, new_shoe, read_shoe_file
from shoe_controller.errors import ConfigError
from shoe_controller.stop_signal import stopped_by_signals
from simulators.dealer import VirtualDealer, parse_mistakes
from simulators.wheel import GAME_FAULTS
from wheel_protocol.messages import ARCADE_AUTOMATIC

log = logging.getLogger("shoe.sim")


def _host_port(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT (port 0..65535), got {text!r}")
    return host, int(port)


def _non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text}")
    return value


def _rate(text: str) -> float:
    value = _non_negative_float(text)
    if value > 1:
        raise argparse.ArgumentTypeError(f"a rate is between 0 and 1, got {text}")
    return value


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return int(text)


def _non_negative_int(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 0, got {text!r}")
    return int(text)


def configure(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--pty", action="store_true", help="serve on a new pseudo-terminal")
    where.add_argument("--tcp", type=_host_port, metavar="HOST:PORT",
                       help="listen on TCP (port 0 picks a free port); reconnects are accepted")
    cards = parser.add_mutually_exclusive_group()
    cards.add_argument("--seed", type=int, metavar="N", help="shuffle seed (default: random)")
    cards.add_argument("--cards", metavar="SHOEFILE", help="exact card order from a shoe file")
    parser.add_argument("--decks", type=_positive_int, default=8, metavar="N",
                        help="decks in the shoe (with --seed or a random shuffle)")
    parser.add_argument("--cut-card", type=_non_negative_int, default=14, metavar="N",
                        help="cut card N cards from the end (0 = none)")
    parser.add_argument("--pace", type=_non_negative_float, default=0.0, metavar="SECONDS",
                        help="dealer's time between cards (0 = as fast as the link allows)")
    parser.add_argument("--misread-rate", type=_rate, default=0.0, metavar="RATE",
                        help="share of cards whose face is not read (0..1)")
    parser.add_argument("--button-delay", type=_non_negative_float, default=0.5,
                        metavar="SECONDS", help="dealer's delay before confirming a result")
    parser.add_argument("--mistake", action="append", default=[], metavar="KIND@N",
                        help="dealer mistake after N cards: extra-card, early-pull, "
                        "forced-pull, lid-open (repeat or separate with commas)")
    parser.add_argument("--careless-reload", action="store_true",
                        help="the dealer reloads on any lit SHUFFLE light, even a stale one "
                        "(reproduces issue 20; default: only when asked after this shoe)")
    parser.add_argument("--faults", default="", metavar="SPEC",
                        help="wire faults, e.g. 'corrupt=0.01,drop_frame=0.005,seed=7'")
    parser.add_argument("--serial-number", default="SIM-0001", metavar="SERIAL",
                        help="the serial number the shoe reports (DeviceInfo)")
    parser.add_argument("--exit-when-empty", action="store_true",
                        help="exit once the shoe is dealt out (every card drawn, or the host "
                        "asked for a new shoe after the cut card) and every card acknowledged")
    parser.add_argument("--quiet", action="store_true", help="log warnings only")
    wheel = parser.add_argument_group(
        "roulette wheel", "with --wheel: a wheel speaking wheel_protocol/PROTOCOL.md instead of "
        "a shoe (--seed draws its numbers; --faults adds byte noise to its line)")
    wheel.add_argument("--wheel", action="store_true",
                       help="run the software roulette wheel instead of the shoe")
    wheel.add_argument("--speed", type=_positive_float, default=1.0, metavar="FACTOR",
                       help="run the wheel this many times faster than a real one")
    wheel.add_argument("--mode", type=_wheel_mode, default=ARCADE_AUTOMATIC, metavar="BITS",
                       help="operating mode (*o): 1157 runs games by itself with status every "
                       "500 ms, 1159 waits for the host's *u, 1029 answers *X polls only")
    wheel.add_argument("--wheel-fault", action="append", default=[], metavar="KIND@GAME",
                       help=f"fault in game N: {', '.join(GAME_FAULTS)} (repeat or separate "
                       "with commas)")
    wheel.add_argument("--line-faults", default="", metavar="SPEC",
                       help="lost and repeated lines, e.g. 'drop-status=0.2,drop-line=0.1,"
                       "repeat-line=0.5,seed=3'")
    wheel.add_argument("--no-result-line", action="store_true",
                       help="send no bare winning-number line (only the state-5 status)")
    wheel.add_argument("--stuck-spin", action="store_true",
                       help="keep the spin counter the same across games (a wheel in "
                       "self-test mode)")
    wheel.add_argument("--games", type=_positive_int, metavar="N",
                       help="stop after N games (default: run on)")
    wheel.add_argument("--replay", metavar="LOGFILE",
                       help="play a recorded wheel log (one received line per line, optionally "
                       "'SECONDS<TAB>line'); starts when the host first sends, or over TCP when "
                       "it connects")
    wheel.add_argument("--wait-for-host", action="store_true",
                       help="with --tcp: start the wheel (its first game) once a host has "
                       "connected, as a replay does; later hosts find it running")
    wheel.add_argument("--exit-when-done", action="store_true",
                       help="exit once the games (--games) or the replay are done")
    wheel.add_argument("--log", metavar="FILE",
                       help="write the wheel's own record of its games to this new file, a JSON "
                       "line per game as it ends: {game, spin, number (null: none), fault "
                       "(planned, or null), began, ended (Unix times)}")


def _positive_float(text: str) -> float:
    value = _non_negative_float(text)
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    return value


def _wheel_mode(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"expected a mode 0..65535, got {text!r}")
    return int(text)


_SHOE_ONLY = ("cards", "pace", "misread_rate", "mistake", "careless_reload", "exit_when_empty")
_WHEEL_ONLY = ("wheel_fault", "line_faults", "no_result_line", "stuck_spin", "games", "replay",
               "wait_for_host", "exit_when_done", "log")


def _check_wheel_options(args: argparse.Namespace, parser_defaults: dict[str, object]) -> None:
    """Refuse options of the other device, rather than ignore them."""
    if args.wheel:
        used = [name for name in _SHOE_ONLY if getattr(args, name) != parser_defaults[name]]
        used += [name for name in ("decks", "cut_card", "button_delay", "serial_number")
                 if getattr(args, name) != parser_defaults[name]]
        if used:
            raise ConfigError(f"--{used[0].replace('_', '-')} is a shoe option; not with --wheel")
        if args.exit_when_done and not (args.games or args.replay):
            raise ConfigError("--exit-when-done needs --games N or --replay LOGFILE")
        if args.wait_for_host and not args.tcp:
            raise ConfigError("--wait-for-host waits for a host over --tcp; over a "
                              "pseudo-terminal the wheel cannot tell that one is there")
        if args.replay and (args.wheel_fault or args.line_faults or args.games or args.log):
            raise ConfigError("--replay plays the log as it is: no --wheel-fault, "
                              "--line-faults, --games or --log with it")
        return
    used = [name for name in _WHEEL_ONLY if getattr(args, name) != parser_defaults[name]]
    used += [name for name in ("speed", "mode") if getattr(args, name) != parser_defaults[name]]
    if used:
        raise ConfigError(f"--{used[0].replace('_', '-')} is a wheel option: add --wheel")


def shoe_cards(args: argparse.Namespace) -> list[Card]:
    """The card order the options ask for (shoe file, or ``--decks`` shuffled by ``--seed``)."""
    if args.cards:
        cards = read_shoe_file(args.cards)
        if not cards:
            raise ConfigError(f"{args.cards}: the shoe file holds no cards")
        return cards
    return new_shoe(args.decks, args.seed)


def dealer_from_args(args: argparse.Namespace) -> VirtualDealer:
    plan = [m for text in args.mistake for m in parse_mistakes(text)]
    return VirtualDealer(pace=args.pace, mistakes=plan, button_delay=args.button_delay,
                         careless_reload=args.careless_reload)


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=logging.WARNING if args.quiet else logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    _check_wheel_options(args, _defaults())
    if args.wheel:
        return _run_wheel(args)
    from simulators.sim_server import serve  # the I/O half: imported only when running

    cards = shoe_cards(args)
    if args.cut_card > len(cards):
        raise ConfigError(f"--cut-card {args.cut_card} is beyond the {len(cards)} cards loaded")
    stop = threading.Event()
    with stopped_by_signals(stop, log):
        return serve(args, cards, dealer_from_args(args), stop)


def _defaults() -> dict[str, object]:
    parser = argparse.ArgumentParser()
    configure(parser)
    return {action.dest: action.default for action in parser._actions}


def _run_wheel(args: argparse.Namespace) -> int:
    from simulators.wheel_server import serve  # the I/O half: imported only when running

    stop = threading.Event()
    with stopped_by_signals(stop, log):
        return serve(args, stop)
