"""Assembling a running wheel table from the run configuration (``shoe run`` with a roulette
profile, ``shoe demo --game roulette`` and the end-to-end tests run the same code).

The journal's lock, key and chain check, the table-system reporter and the services' frame
are every live table's (:mod:`shoe_controller.live.startup`): shared, not copied.
"""

from __future__ import annotations

import contextlib
import time
import urllib.parse
from collections.abc import Callable, Iterator
from typing import Any

import serial

from shoe_controller import __version__
from shoe_controller.config import RunConfig
from shoe_controller.errors import ConfigError
from shoe_controller.games.registry import read_profile
from shoe_controller.games.roulette.profile import profile_from_toml
from shoe_controller.journal import Journal
from shoe_controller.live.startup import (
    Services,
    check_journal_chain,
    check_journal_path,
    journal_key,
    journal_lock,
    table_system_reporter,
)
from shoe_controller.wheel_table.connection import BAUDRATE, WheelConnection
from shoe_controller.wheel_table.controller import WheelController
from shoe_controller.wheel_table.machine import WheelSettings, WheelTable
from shoe_controller.wheel_table.settings import bias_config, tracker_config

#: ``shoe run`` options that only a card table has (refused, by name, with a roulette profile).
CARD_TABLE_ONLY = ("camera", "deck", "models", "camera_cross_check")


def wheel_settings(config: RunConfig) -> WheelSettings:
    section = config.wheel
    return WheelSettings(table_id=config.table_id, wheel=str(section.get("name", "wheel-1")),
                         tracker=tracker_config(section), bias=bias_config(section))


def check_wheel_url(url: str) -> None:
    """A wheel URL pyserial can open: checked before the journal is touched (the port itself
    may be absent: the controller keeps trying, and the dealer sees "wheel not connected")."""
    if url.startswith("usb://"):
        raise ConfigError(f"{url}: a wheel speaks RS-232: use its serial port (/dev/ttyS0, "
                          "/dev/ttyUSB0, socket://HOST:PORT, ...)")
    parts = urllib.parse.urlsplit(url)
    if parts.scheme in ("socket", "rfc2217") and (not parts.hostname or not parts.port):
        raise ConfigError(f"{url}: a {parts.scheme}:// URL needs the host and port, e.g. "
                          f"{parts.scheme}://192.168.1.40:7001")
    try:
        serial.serial_for_url(url, do_not_open=True)
    except (ValueError, serial.SerialException) as exc:
        raise ConfigError(f"{url}: not a serial port URL pyserial knows: {exc}") from None


@contextlib.contextmanager
def running_wheel_table(config: RunConfig, *, begin_session: bool = True,
                        connection: WheelConnection | None = None,
                        clock: Callable[[], float] = time.time,
                        record_taps: Any = ()) -> Iterator[WheelController]:
    """A started wheel controller (journal verified and replayed) reading ``config.device``;
    closes all on exit."""
    profile = read_profile(config.profile)
    profile_from_toml(profile.text, profile.origin)  # the roulette profile, validated
    settings = wheel_settings(config)
    reporter = table_system_reporter(config)
    if connection is None:
        check_wheel_url(config.device)
    check_journal_path(config.journal)
    key = journal_key(config)
    with contextlib.ExitStack() as stack:
        stack.enter_context(journal_lock(config.journal))
        journal = stack.enter_context(Journal(config.journal, durability=config.durability,
                                              key=key))
        check_journal_chain(journal)
        if reporter is not None:
            stack.enter_context(reporter.attach_journal(journal))
        if connection is None:
            connection = WheelConnection(config.device,
                                         baudrate=int(config.wheel.get("baudrate", BAUDRATE)))
        controller = WheelController(
            journal=journal, table=WheelTable(settings), profile=config.profile,
            connection=connection, betting_seconds=config.betting_seconds,
            supervisors=config.supervisors, clock=clock, version=__version__,
            reporter=reporter, down_policy=config.table_down_policy,
            profile_toml=profile.text,
        )
        controller.record_taps.extend(record_taps)
        controller.start(begin_session=False)  # replayed before the line is opened
        stack.enter_context(connection)
        if begin_session:
            controller.begin_session()
        if reporter is not None:
            reporter.start()
            stack.callback(reporter.close)
        yield controller


@contextlib.contextmanager
def wheel_services(controller: WheelController, *, http: Any = None, console: Any = None,
                   metrics: tuple[str, int] | None = None, mqtt: Any = None) -> Iterator[Any]:
    """The dealer display (``http``), the supervisor console (``console``: the lines to
    read), the Prometheus metrics on a port of their own (``metrics``: host and port) and the
    MQTT publisher (``mqtt``: unstarted, its ``on_record`` among the controller's record
    taps; it never stops the table) beside a wheel controller; a failure of either in its own thread stops the loop of
    ``should_stop`` and is re-raised there (as a card table's)."""
    started = Services()
    with contextlib.ExitStack() as stack:
        if metrics is not None:
            from shoe_controller.metrics import serve_metrics

            scraped = serve_metrics(controller.metrics, *metrics)  # type: ignore[arg-type]
            stack.callback(scraped.close)
            print(f"metrics: {scraped.url}", flush=True)
        if mqtt is not None:
            stack.callback(mqtt.close)
            mqtt.start(controller)
            print(f"mqtt: {mqtt.settings.describe()} as {mqtt.topics.base}", flush=True)
        if http:
            from shoe_controller.web.binding import http_settings
            from shoe_controller.web.wheel_app import serve_wheel

            settings = http_settings(http) if isinstance(http, str) else http
            web = serve_wheel(controller, settings)
            stack.callback(web.close)
            started.checks.append(web)
            print(f"dealer display: {web.url}", flush=True)
        if console is not None:
            from shoe_controller.display.supervisor_console import (
                WHEEL_COMMANDS,
                WHEEL_HELP,
                SupervisorConsole,
            )

            typed = SupervisorConsole(controller, console,  # type: ignore[arg-type]
                                      commands=WHEEL_COMMANDS, usage=WHEEL_HELP).start()
            stack.callback(typed.close)
            started.checks.append(typed)
        yield started
