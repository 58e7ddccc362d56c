"""``shoe run``: the table controller on the dealer PC.

Connects to the shoe at ``--device``, replays the journal (so a restart after a crash resumes
exactly where the table was), then follows every card. Without a table system it runs its own
betting window (``--betting-seconds``) and takes the shoe's button as the dealer's confirmation.
Stops on SIGINT/SIGTERM, or after ``--shoes N`` finished shoes.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from shoe_controller.config import (
    DURABILITIES,
    LOG_LEVELS,
    TABLE_DOWN_POLICIES,
    durability_warning,
    load_run_config,
)
from shoe_controller.display.console import Console
from shoe_controller.errors import ConfigError
from shoe_controller.live.startup import StopSignals
from shoe_controller.logs import setup_logging
from shoe_controller.web.binding import add_http_options, http_from_args

log = logging.getLogger("shoe_controller.run")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", metavar="URL", help="shoe URL: /dev/ttyUSB0, socket://HOST:PORT, "
                        "hwgrep://VID:PID, usb://VID:PID[/SERIAL], ...")
    parser.add_argument("--profile", metavar="NAME", help="table profile name or TOML file "
                        "(see shoe odds)")
    parser.add_argument("--journal", type=Path, metavar="FILE",
                        help="SQLite journal file (created if absent; its directory must exist)")
    parser.add_argument("--config", type=Path, metavar="FILE", help="TOML config file "
                        "(docs/config.md); command-line options override it")
    parser.add_argument("--betting-seconds", type=float, metavar="SECONDS",
                        help="own betting window when no table system drives it; 0 allowed "
                        "(default: 15)")
    parser.add_argument("--shoes", type=int, metavar="N",
                        help="exit after N finished shoes (default: run until stopped)")
    parser.add_argument("--games", type=int, metavar="N",
                        help="roulette: exit after N finished games (default: run until "
                        "stopped)")
    parser.add_argument("--log-json", action="store_true", default=None,
                        help="logs as one JSON object a line on stderr")
    parser.add_argument("--log-level", choices=LOG_LEVELS,
                        help="least severe log lines shown on stderr (default: info)")
    parser.add_argument("--durability", choices=DURABILITIES,
                        help="journal fsync policy: full fsyncs every record before it has "
                        "effect (default: full)")
    parser.add_argument("--journal-key-file", type=Path, metavar="FILE",
                        help="file holding the journal's HMAC key: a new journal is created "
                        "keyed, an existing keyed one needs it (docs/journal.md)")
    parser.add_argument("--quiet", action="store_true", help="no prompts on stdout")
    parser.add_argument("--table-url", metavar="URL", help="the table system: ws://HOST:PORT/PATH or wss://...")
    parser.add_argument("--table-token", metavar="TOKEN", help="token the controller authenticates with")
    parser.add_argument("--table-key-file", type=Path, metavar="FILE",
                        help="file holding the HMAC key shared with the table system")
    parser.add_argument("--table-down-policy", choices=TABLE_DOWN_POLICIES,
                        help="while the table system is unreachable: keep dealing on the own "
                        "betting window (default) or stop once the round is over")
    parser.add_argument("--console", action="store_true",
                        help="accept supervisor commands on stdin (clear, void, enter, end, burn)")
    add_http_options(parser)
    parser.add_argument("--metrics", metavar="[HOST:]PORT",
                        help="serve Prometheus metrics on a port of their own; PORT alone "
                        "listens on 127.0.0.1 (docs/metrics.md; --http serves them at "
                        "/metrics too)")
    parser.add_argument("--mqtt", metavar="URL",
                        help="publish the table's state and events to this MQTT broker: "
                        "mqtt://HOST[:PORT] or mqtts://[USER@]HOST[:PORT] (login and TLS "
                        "files in the config file; docs/fleet.md)")
    parser.add_argument("--mqtt-prefix", metavar="PREFIX",
                        help="topic prefix: <prefix>/tables/<table_id>/... (default: shoe)")
    parser.add_argument("--camera", metavar="SOURCE",
                        help="camera fallback for misread cards: camera index, video file or URL")
    parser.add_argument("--deck", metavar="NAME", help="enrolled deck the camera reads (shoe vision enroll)")
    parser.add_argument("--models", metavar="DIR", help="folder of enrolled decks (docs/vision.md)")
    parser.add_argument("--camera-cross-check", action="store_true",
                        help="also read every scanned card with the camera and compare")


def run(args: argparse.Namespace) -> int:
    if args.log_json:  # so that even a configuration error is one JSON line
        setup_logging(True, args.log_level or "info")
    config = load_run_config(args.config, {
        "device": args.device, "profile": args.profile, "journal": args.journal,
        "betting_seconds": args.betting_seconds, "shoes": args.shoes,
        "log_json": args.log_json, "log_level": args.log_level,
        "durability": args.durability, "table_url": args.table_url,
        "table_token": args.table_token, "table_key_file": args.table_key_file,
        "table_down_policy": args.table_down_policy,
        "journal_key_file": args.journal_key_file, "metrics": args.metrics,
        "mqtt": args.mqtt, "mqtt_prefix": args.mqtt_prefix, "games": args.games,
    })
    setup_logging(config.log_json, config.log_level)
    http = http_from_args(args)  # an unsafe --http stops here, before the journal is opened
    if (warning := durability_warning(config)) is not None:
        log.warning(warning, extra={"durability": config.durability})
    from shoe_controller.games.registry import profile_game

    if profile_game(config.profile) == "roulette":  # a wheel table, not a card table
        from shoe_controller.commands.run_wheel import run_wheel

        return run_wheel(args, config, http)
    if config.games is not None or config.wheel:
        given = "--games" if config.games is not None else "[wheel]"
        raise ConfigError(f"{given}: only for a roulette table (a roulette profile); "
                          f"{config.profile} is a card table's")
    from shoe_controller.table.runtime import check_services, running_table, services

    extras_options = {"http": http, "camera": args.camera, "deck": args.deck,
                      "models": args.models, "cross_check": args.camera_cross_check}
    # Every option is checked before the journal is touched: a start that fails leaves
    # neither a new journal nor a session record in an existing one.
    from shoe_controller.fleet.publisher import publisher_for

    publisher = publisher_for(config)  # the broker's URL and files are checked here too
    checked = check_services(**extras_options, metrics=config.metrics_address())
    extras_options["camera"] = checked.camera  # opened once: services reads from it

    stopping = StopSignals().install()
    stop, stopped_by = stopping.event, stopping.names
    taps = () if publisher is None else (publisher.on_record,)
    with checked, running_table(config, begin_session=False, record_taps=taps) as controller, \
            services(controller, **extras_options, console=sys.stdin if args.console else None,
                     metrics=config.metrics_address(), mqtt=publisher) as extras:
        console: Any = None  # Console, or BlackjackConsole
        if not args.quiet:
            console = Console()
            if controller.table.game.name == "blackjack":  # its rounds, as shoe replay prints
                from shoe_controller.games.blackjack.live_console import BlackjackConsole

                console = BlackjackConsole()
            controller.listeners.append(console)
        controller.begin_session()  # journalled only now that everything has started
        log.info("table running", extra={"device": config.device, "profile": config.profile,
                                          "journal": str(config.journal)})
        reason = "error"
        try:
            controller.run(extras.should_stop(stop.is_set), shoes=config.shoes)
            reason = (stopped_by[0] if stopped_by
                      else f"{controller.shoes_finished} shoe(s) finished")
        finally:
            # One line whatever ended the run (a failure is also reported by its own line).
            log.info("table stopped (%s)", reason, extra={"reason": reason})
        if console is not None and controller.shoes_finished:
            print(console.summary())
    return 0
