"""``shoe run`` with a roulette profile: the wheel table on the dealer PC.

Opens the wheel's serial line at ``--device`` (any pyserial URL; the wheel may be switched on
later: the dealer sees "wheel not connected" until it speaks), replays the journal, then
follows every game. Stops on SIGINT/SIGTERM, or after ``--games N`` finished games.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from shoe_controller.config import RunConfig
from shoe_controller.errors import ConfigError
from shoe_controller.live.startup import StopSignals
from shoe_controller.wheel_table.console import WheelConsole
from shoe_controller.wheel_table.runtime import (
    CARD_TABLE_ONLY,
    running_wheel_table,
    wheel_services,
)

log = logging.getLogger("shoe_controller.run")


def run_wheel(args: argparse.Namespace, config: RunConfig, http: Any) -> int:
    given = [f"--{name.replace('_', '-')}" for name in CARD_TABLE_ONLY
             if getattr(args, name, None) or getattr(config, name, None)]
    if config.shoes is not None:
        given.append("--shoes (use --games N)")
    if given:
        raise ConfigError(f"{', '.join(given)}: not for a wheel table ({config.profile} is a "
                          "roulette profile)")
    if http:
        from shoe_controller.live.startup import check_http

        check_http(http)  # before the journal is touched
    if config.metrics_address() is not None:
        from shoe_controller.metrics import check_metrics_port

        check_metrics_port(*config.metrics_address())  # type: ignore[misc]
    stopping = StopSignals().install()
    stop, stopped_by = stopping.event, stopping.names
    from shoe_controller.fleet.publisher import publisher_for

    publisher = publisher_for(config)  # the broker's URL and files are checked here too
    taps = () if publisher is None else (publisher.on_record,)
    with running_wheel_table(config, begin_session=False, record_taps=taps) as controller, \
            wheel_services(controller, http=http, console=sys.stdin if args.console else None,
                           metrics=config.metrics_address(), mqtt=publisher) as extras:
        console = None
        if not args.quiet:
            console = WheelConsole()
            controller.listeners.append(console)
        controller.begin_session()
        log.info("wheel table running", extra={"device": config.device,
                                                "profile": config.profile,
                                                "journal": str(config.journal)})
        reason = "error"
        try:
            controller.run(extras.should_stop(stop.is_set), games=config.games)
            reason = stopped_by[0] if stopped_by else f"{config.games} game(s) finished"
        finally:
            log.info("table stopped (%s)", reason, extra={"reason": reason})
        if console is not None:
            print(console.summary(controller.table), flush=True)
    return 0
