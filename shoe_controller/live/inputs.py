"""The inputs every live table journals, whatever its device: the base of every journal
input, the session, the device link, the betting window and supervisors' actions.

A card table (:mod:`shoe_controller.table.inputs`) and a wheel table
(:mod:`shoe_controller.wheel_table.inputs`) add their device's own. ``kind`` is the journal
record kind and ``to_data()`` the record's JSON body; both are part of the journal format
(``docs/journal.md``): add fields with defaults, never rename.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from shoe_controller.cards import Card


@dataclass(frozen=True, slots=True)
class TableInput:
    KIND: ClassVar[str] = ""

    def to_data(self) -> dict[str, Any]:
        """The journal record's body: plain JSON values, cards as codes."""
        data: dict[str, Any] = {}
        for item in fields(self):
            value = getattr(self, item.name)
            data[item.name] = value.code if isinstance(value, Card) else value
        return data


@dataclass(frozen=True, slots=True)
class LinkChanged(TableInput):
    """The device link came up or was lost (``up`` False)."""

    KIND: ClassVar[str] = "link"
    up: bool
    reason: str = ""


@dataclass(frozen=True, slots=True)
class BettingCommand(TableInput):
    """Open or close betting (``action`` "open" or "close"), from the table system or the
    controller's own betting timer (``origin``)."""

    KIND: ClassVar[str] = "betting"
    action: str
    origin: str = "timer"
    #: Blackjack: the seats with a bet, named when betting closes (None for baccarat).
    seats: list[int] | None = None

    def to_data(self) -> dict[str, Any]:
        data = TableInput.to_data(self)
        if self.seats is None:
            del data["seats"]  # a baccarat record reads as it always did
        return data


@dataclass(frozen=True, slots=True)
class SupervisorAction(TableInput):
    """An authorised supervisor action: clear, void_round, enter_card, end_shoe."""

    KIND: ClassVar[str] = "supervisor"
    action: str
    supervisor: str
    card: Card | None = None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class SessionStarted(TableInput):
    """The controller (re)started on this journal with this game profile and version.

    ``profile_toml`` is the profile's whole text and ``profile_sha256`` its hash: a replay
    rebuilds the game from what was journalled, never from a file that may have changed since
    (journals written before this field replay the named profile)."""

    KIND: ClassVar[str] = "session"
    profile: str
    game: str = "baccarat"
    version: str = ""
    profile_sha256: str = ""
    profile_toml: str = ""
    #: What else decides the table's outcomes from this session on and is not in the
    #: profile: a wheel table's tracker settings (``{"tracker": {...}}``, its ``[wheel]``
    #: grace periods and confirmations). None (and absent from the record) at a card table.
    settings: dict[str, Any] | None = None

    def to_data(self) -> dict[str, Any]:
        data = TableInput.to_data(self)
        if self.settings is None:
            del data["settings"]  # a card table's session record reads as it always did
        return data


def session_record(profile: str, game: str, version: str, profile_toml: str,
                   settings: dict[str, Any] | None = None) -> SessionStarted:
    """This run's session record: the profile's whole text with its hash."""
    sha256 = hashlib.sha256(profile_toml.encode("utf-8")).hexdigest() if profile_toml else ""
    return SessionStarted(profile, game, version, sha256, profile_toml, settings)
