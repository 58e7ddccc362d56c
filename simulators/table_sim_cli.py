"""``shoe table-sim``: the reference table system (docs/table-protocol, version 2) as a process.

    shoe table-sim --listen 127.0.0.1:0 --record events.jsonl --token T --key-file KEY

The first line on stdout is ``LISTEN host:port`` (flushed at once, so a script can read it);
logs go to stderr (at a wheel table, a line per round: its number or why it is void). Every accepted event is appended to ``--record`` as a JSON line; started
again on the same file it carries on where it stopped. Runs until SIGINT or SIGTERM (exit 0),
or until it meets a bug of its own (logged with its traceback; exit 1).
"""

from __future__ import annotations

import argparse
import logging
import socket
import sys
import threading
from pathlib import Path

from shoe_controller.errors import ConfigError
from shoe_controller.reporting.protocol import read_key_file
from shoe_controller.stop_signal import stopped_by_signals
from simulators.table_system import TableSystem, TableSystemOptions

log = logging.getLogger("shoe.table_sim")


def _host_port(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT (port 0..65535), got {text!r}")
    return host, int(port)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text}")
    return value


def _seq(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a seq number >= 1, got {text!r}")
    return int(text)


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"a rate is between 0 and 1, got {text}")
    return value


def _down(text: str) -> tuple[int, float]:
    seq, sep, seconds = text.partition(":")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected SEQ:SECONDS, got {text!r}")
    return _seq(seq), _seconds(seconds)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--listen", type=_host_port, required=True, metavar="HOST:PORT",
                        help="where to listen for controllers (port 0 picks a free port)")
    parser.add_argument("--record", type=Path, required=True, metavar="FILE",
                        help="JSON lines of every accepted event (appended; reloaded on start)")
    parser.add_argument("--token", required=True, metavar="TOKEN",
                        help="the controllers' bearer token")
    parser.add_argument("--key-file", type=Path, required=True, metavar="FILE",
                        help="file holding the shared HMAC key (at least 16 bytes)")
    parser.add_argument("--betting-seconds", type=_seconds, default=1.0, metavar="SECONDS",
                        help="how long betting stays open")
    parser.add_argument("--open-delay", type=_seconds, default=0.0, metavar="SECONDS",
                        help="pause between a round's end and opening the next")
    parser.add_argument("--no-betting", action="store_true",
                        help="do not drive betting (the controller runs its own window)")
    parser.add_argument("--drop-at", type=_seq, action="append", default=[], metavar="SEQ",
                        help="drop the connection after accepting event SEQ (repeatable)")
    parser.add_argument("--down-at", type=_down, action="append", default=[],
                        metavar="SEQ:SECONDS",
                        help="after accepting event SEQ, stay down SECONDS (repeatable)")
    parser.add_argument("--fsync", action="store_true", help="fsync the record per event")
    parser.add_argument("--game", choices=("baccarat", "blackjack", "roulette"),
                        default="baccarat",
                        help="blackjack: close betting with the seats that bet and answer "
                             "every decision_due with built-in players (basic strategy, "
                             "some insurance); roulette: a wheel table (shoe 0): betting "
                             "driven for a host-started wheel, the respin awaited after a "
                             "misspin (a wheel that runs its own games: --no-betting)")
    parser.add_argument("--players-seed", type=int, default=0, metavar="N",
                        help="blackjack: seed of the players' seats and insurance")
    parser.add_argument("--insurance-rate", type=_rate, default=0.3, metavar="RATE",
                        help="blackjack: the share of seats that insure when an ace is up")
    parser.add_argument("--answer-delay", type=_seconds, default=0.0, metavar="SECONDS",
                        help="blackjack: how long the players take to answer")
    parser.add_argument("--silent-every", type=_seq, default=0, metavar="N",
                        help="blackjack: leave every Nth decision unanswered, so that it "
                             "times out (default: answer all)")
    parser.add_argument("--quiet", action="store_true", help="log warnings only")


def _check_can_listen(host: str, port: int) -> None:
    """Bind the address once, the way the server will, and let go: a busy port or an unknown
    host is a one-line error here. Without it the server thread failed with a logged
    traceback, and its event loop's shutdown raced the CLI's clean-up ("Event loop is
    closed"). A port taken between this check and the server's bind still fails, later."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    for family, kind, proto, _, address in infos:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as asyncio does
            try:
                probe.bind(address)
            except OSError as exc:
                raise ConfigError(f"cannot listen on {host}:{port}: "
                                  f"{exc.strerror or exc}") from None


def run(args: argparse.Namespace) -> int:
    _check_can_listen(*args.listen)
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    options = TableSystemOptions(
        token=args.token, key=read_key_file(args.key_file), record=args.record,
        betting_seconds=args.betting_seconds, open_delay=args.open_delay,
        drives_betting=not args.no_betting, fsync=args.fsync, drop_at=tuple(args.drop_at),
        down_at=tuple(args.down_at), game=args.game, players_seed=args.players_seed,
        answer_delay=args.answer_delay, silent_every=args.silent_every,
        insurance_rate=args.insurance_rate,
    )
    try:
        system = TableSystem(*args.listen, options)
    except OSError as exc:
        raise ConfigError(f"{args.record}: cannot open the record: {exc.strerror}") from None
    stop = threading.Event()
    with stopped_by_signals(stop):
        try:
            try:
                host, port = system.start()
            except RuntimeError as exc:
                raise ConfigError(f"cannot listen on {args.listen[0]}:{args.listen[1]}: "
                                  f"{system.error or exc}") from None
            print(f"LISTEN {host}:{port}", flush=True)
            while not stop.wait(0.2):
                if system.error is not None:
                    raise ConfigError(f"table system failed: {system.error!r}")
                if system.faults:
                    raise ConfigError(f"table system failed: {system.faults[0]!r} (a bug; "
                                      "see the log above)")
            log.info("stopping: %d event(s) recorded", len(system.accepted))
            return 0
        finally:
            system.close()
