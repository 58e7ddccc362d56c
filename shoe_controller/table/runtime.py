"""Assembling a running table from its parts: config -> journal, game, shoe link, controller.

Shared by ``shoe run``, ``shoe demo`` and the end-to-end tests, so all three run the same code.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Self

from firmware_protocol.link import LinkConfig
from shoe_controller import __version__
from shoe_controller.config import RunConfig
from shoe_controller.device import ShoeConnection
from shoe_controller.errors import ConfigError
from shoe_controller.games.registry import game_from_toml, read_profile
from shoe_controller.journal import Journal
from shoe_controller.live.startup import (
    Services,
    check_http,
    check_journal_chain,
    check_journal_path,
    journal_key,
    journal_lock,
    table_system_reporter,
)
from shoe_controller.table.controller import TableController
from shoe_controller.table.inputs import CameraCheck
from shoe_controller.table.machine import Table, TableSettings
from shoe_controller.transports import check_device_url, transport_for_url


def check_before_journal(config: RunConfig, *, device: bool = True) -> bytes | None:
    """Everything in ``config`` that can be checked without touching the journal or the
    shoe; raises on the first problem. Returns the journal key (or None)."""
    if device:
        check_device_url(config.device)
    check_journal_path(config.journal)
    return journal_key(config)


def link_config(config: RunConfig) -> LinkConfig:
    return config.link_config()


@contextlib.contextmanager
def running_table(config: RunConfig, *, usb_backend: Any = None,
                  connection: ShoeConnection | None = None,
                  begin_session: bool = True,
                  record_taps: Any = ()) -> Iterator[TableController]:
    """A started controller (journal verified and replayed) connected to ``config.device``;
    closes all. ``begin_session=False``: the caller journals the session record
    (:meth:`TableController.begin_session`) once its other services have started.
    ``record_taps``: added to ``controller.record_taps`` before the journal is replayed."""
    profile = read_profile(config.profile)  # a bad profile fails before anything is opened
    game = game_from_toml(profile.text, profile.origin)  # exactly the text journalled
    reporter = table_system_reporter(config)  # so does a missing key file
    key = check_before_journal(config, device=connection is None)  # and a bad device URL
    with contextlib.ExitStack() as stack:
        # Two controllers on one journal (an overlapping service restart) would interleave
        # two tables' inputs in one chain: the second one stops here.
        stack.enter_context(journal_lock(config.journal))
        journal = stack.enter_context(Journal(config.journal, durability=config.durability,
                                              key=key))
        check_journal_chain(journal)
        if reporter is not None:  # the numbers its events got are kept in the journal's file
            stack.enter_context(reporter.attach_journal(journal))
        if connection is None:
            url = config.device
            connection = ShoeConnection(
                lambda: transport_for_url(url, usb_backend=usb_backend),
                link_config=link_config(config),
            )
        stack.enter_context(connection)
        controller = TableController(
            journal=journal,
            table=Table(game, TableSettings(table_id=config.table_id)),
            profile=config.profile,
            connection=connection,
            betting_seconds=config.betting_seconds,
            supervisors=config.supervisors,
            version=__version__,
            reporter=reporter,
            down_policy=config.table_down_policy,
            profile_toml=profile.text,
        )
        controller.record_taps.extend(record_taps)
        # Replays the journal, which also rebuilds the reported events.
        controller.start(begin_session=begin_session)
        if reporter is not None:
            reporter.start()
            stack.callback(reporter.close)  # lets the table system acknowledge the last ones
        yield controller


@dataclass
class CheckedServices:
    """What :func:`check_services` opened to check and leaves open for :func:`services`:
    the camera, its first frame checked, and the deck it reads. Opened once, not closed
    and opened again at once: a camera's start (its exposure settling, a stream's
    connection) is paid once, and a driver slow to release the device is never asked for
    it again; the deck is loaded once. Closing it (on leaving ``with``) closes the camera;
    closing it after :func:`services` has closed the camera too is harmless."""

    camera: OpenedCamera | None = None

    def close(self) -> None:
        if self.camera is not None:
            self.camera.source.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class OpenedCamera:
    """A camera source opened and checked against its deck (``model``): ``spec`` as given."""

    spec: str
    source: Any  # vision.capture.FrameSource (vision is imported only with --camera)
    model: Any  # vision.model.DeckModel


def check_services(*, http: Any = None, camera: str | None = None, deck: str | None = None,
                   models: str | None = None, cross_check: bool = False,
                   metrics: tuple[str, int] | None = None) -> CheckedServices:
    """What :func:`services` would fail on at start, checked before the journal is opened:
    options that go together, the enrolled deck, the camera source and its first frame
    (one of the deck's camera), the web listener, the metrics listener (``metrics``: host
    and port). The camera is left open for :func:`services` (``camera=checked.camera``);
    close the result if the start goes no further."""
    checked = CheckedServices()
    try:
        if camera is None:
            given = [name for name, value in (("--deck", deck), ("--models", models),
                                              ("--camera-cross-check", cross_check)) if value]
            if given:
                raise ConfigError(f"{', '.join(given)}: only used with --camera")
        elif not deck:
            raise ConfigError("--camera needs --deck NAME (an enrolled deck: shoe vision enroll)")
        else:
            from vision.capture import open_source
            from vision.model import DeckModel, models_dir
            from vision.recognise import other_camera

            model = DeckModel.load(deck, models_dir(models))
            checked.camera = OpenedCamera(camera, open_source(camera), model)
            # One frame now: a camera that gives none, or gives frames of another size than
            # the deck was enrolled from (another camera, another resolution), would have
            # every card declined at the table.
            other = other_camera(checked.camera.source.capture(), model)
            if other is not None:
                raise ConfigError(f"--camera {camera}: {other}")
        if http:
            check_http(http)
        if metrics is not None:
            from shoe_controller.metrics import check_metrics_port

            check_metrics_port(*metrics)
    except BaseException:
        checked.close()
        raise
    return checked


@contextlib.contextmanager
def services(controller: TableController, *, http: Any = None,
             camera: str | OpenedCamera | None = None, deck: str | None = None,
             models: str | None = None, cross_check: bool = False, console: Any = None,
             metrics: tuple[str, int] | None = None, mqtt: Any = None) -> Iterator[Services]:
    """Start the dealer display (``http``: validated ``HttpSettings``, as
    ``RunConfig.http_settings()`` gives them, or an ``--http`` text served on loopback
    without TLS), the camera fallback (``camera`` source with an enrolled ``deck``, or the
    camera :func:`check_services` opened) and the
    supervisor console (``console``: the lines to read, e.g. ``sys.stdin``) and the Prometheus
    metrics on a port of their own (``metrics``: host and port; the display serves them at
    ``/metrics`` anyway) and the MQTT publisher (``mqtt``: an unstarted
    ``shoe_controller.fleet.publisher.MqttPublisher`` whose ``on_record`` was in the
    ``record_taps`` of :func:`running_table`; it never stops the table) for ``controller``;
    stop them on exit. A failure of any of them in its own thread stops the
    loop of :meth:`Services.should_stop` and is re-raised there."""
    started = Services()
    with contextlib.ExitStack() as stack:
        if metrics is not None:
            from shoe_controller.metrics import serve_metrics

            scraped = serve_metrics(controller.metrics, *metrics)
            stack.callback(scraped.close)
            print(f"metrics: {scraped.url}", flush=True)
        if mqtt is not None:
            controller.metrics.watch_mqtt(mqtt.stats)
            stack.callback(mqtt.close)
            mqtt.start(controller)
            print(f"mqtt: {mqtt.settings.describe()} as {mqtt.topics.base}", flush=True)
        if http:
            from shoe_controller.web.app import serve
            from shoe_controller.web.binding import http_settings

            settings = http_settings(http) if isinstance(http, str) else http
            # The profile the table plays (journalled), not the file as it may be now.
            web = serve(controller, settings,
                        profile=controller.table.game.profile)  # type: ignore[attr-defined]
            stack.callback(web.close)
            started.checks.append(web)
            print(f"dealer display: {web.url}", flush=True)
        if camera:
            from shoe_controller.camera_fallback import CameraFallback
            from vision.capture import open_source
            from vision.cores import read_on_one_core
            from vision.model import DeckModel, models_dir
            from vision.recognise import Recogniser

            read_on_one_core()  # (a read spinning on the second core: twice the CPU)

            if isinstance(camera, OpenedCamera):  # opened and checked by check_services
                recogniser, source = Recogniser(camera.model), camera.source
            elif not deck:
                raise ConfigError("--camera needs --deck NAME (an enrolled deck: shoe vision enroll)")
            else:
                recogniser = Recogniser(DeckModel.load(deck, models_dir(models)))
                source = open_source(camera)
            stack.callback(source.close)
            def disagreement(found: Any) -> None:
                controller.submit(CameraCheck(found.counter, found.scanner, found.camera.code,
                                              found.confidence))

            fallback = CameraFallback(source, recogniser, None, controller,
                                      cross_check=cross_check,
                                      on_disagreement=disagreement,
                                      metrics=controller.metrics).attach()
            stack.callback(fallback.close)
            controller.table.settings.camera_fallback = True  # the misread remedy says so
            started.checks.append(fallback)
        if console is not None:
            from shoe_controller.display.supervisor_console import SupervisorConsole

            typed = SupervisorConsole(controller, console).start()
            stack.callback(typed.close)
            started.checks.append(typed)
        yield started
