"""Assembling a running table from its parts: config -> journal, game, shoe link, controller.

Shared by ``shoe run``, ``shoe demo`` and the end-to-end tests, so all three run the same code.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from firmware_protocol.link import LinkConfig
from shoe_controller import __version__
from shoe_controller.config import RunConfig
from shoe_controller.device import ShoeConnection
from shoe_controller.games.registry import create_game
from shoe_controller.journal import Journal
from shoe_controller.table.controller import TableController
from shoe_controller.table.machine import Table, TableSettings
from shoe_controller.transports import transport_for_url


def link_config(config: RunConfig) -> LinkConfig:
    return LinkConfig(heartbeat_interval=config.heartbeat_seconds,
                      link_timeout=config.link_timeout_seconds)


@contextlib.contextmanager
def running_table(config: RunConfig, *, usb_backend: Any = None,
                  connection: ShoeConnection | None = None) -> Iterator[TableController]:
    """A started controller (journal replayed) connected to ``config.device``; closes all."""
    game = create_game(config.profile)  # a bad profile fails before anything is opened
    with contextlib.ExitStack() as stack:
        journal = stack.enter_context(Journal(config.journal, durability=config.durability))
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
        )
        controller.start()
        yield controller
