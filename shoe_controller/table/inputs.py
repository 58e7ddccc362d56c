"""Everything that can happen at the table, as immutable values.

Each input is journalled (made durable) before the table sees it, and the table's whole state is
the fold of its inputs, so replaying the journal rebuilds the table exactly. ``kind`` is the
journal record kind and ``to_data()``/``input_from_record()`` the record's JSON body; both are
part of the journal format (``docs/journal.md``): add fields with defaults, never rename.
"""

from __future__ import annotations

from collections.abc import Mapping
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
class CardDrawn(TableInput):
    """The shoe read a card. ``counter`` is the shoe's running card number (its identity)."""

    KIND: ClassVar[str] = "card"
    card: Card
    counter: int
    sensor: str = "scanner"
    confidence: int = 100
    drawn_while_locked: bool = False
    source: str = "scanner"  # "scanner", "camera" or "supervisor"


@dataclass(frozen=True, slots=True)
class CardMisread(TableInput):
    """A card left the shoe but its scanner could not read it."""

    KIND: ClassVar[str] = "misread"
    counter: int
    sensor: str = "scanner"
    drawn_while_locked: bool = False


@dataclass(frozen=True, slots=True)
class CameraRead(TableInput):
    """The camera fallback read the pending misread card (``counter``) with this confidence."""

    KIND: ClassVar[str] = "camera_read"
    counter: int
    card: Card
    confidence: float


@dataclass(frozen=True, slots=True)
class CameraCheck(TableInput):
    """Cross-check mode: the camera confidently read card ``counter`` as ``camera`` where
    the scanner read ``card``."""

    KIND: ClassVar[str] = "camera_check"
    counter: int
    card: Card
    camera: str
    confidence: float


@dataclass(frozen=True, slots=True)
class ShoeEventInput(TableInput):
    """A shoe state change: lid_opened, lid_closed, shoe_loaded, shoe_empty, cut_card,
    card_at_exit, pull_refused."""

    KIND: ClassVar[str] = "shoe_event"
    event: str
    counter: int = 0


@dataclass(frozen=True, slots=True)
class ButtonPressed(TableInput):
    KIND: ClassVar[str] = "button"
    button: int = 0


@dataclass(frozen=True, slots=True)
class LinkChanged(TableInput):
    """The device link came up or was lost (``up`` False)."""

    KIND: ClassVar[str] = "link"
    up: bool
    reason: str = ""


@dataclass(frozen=True, slots=True)
class DeviceFault(TableInput):
    KIND: ClassVar[str] = "fault"
    code: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class BettingCommand(TableInput):
    """Open or close betting (``action`` "open" or "close"), from the table system or the
    controller's own betting timer (``origin``)."""

    KIND: ClassVar[str] = "betting"
    action: str
    origin: str = "timer"


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
    """The controller (re)started on this journal with this game profile and version."""

    KIND: ClassVar[str] = "session"
    profile: str
    game: str = "baccarat"
    version: str = ""


INPUT_TYPES: dict[str, type[TableInput]] = {
    cls.KIND: cls
    for cls in (
        CardDrawn,
        CardMisread,
        CameraRead,
        CameraCheck,
        ShoeEventInput,
        ButtonPressed,
        LinkChanged,
        DeviceFault,
        BettingCommand,
        SupervisorAction,
        SessionStarted,
    )
}


def input_from_record(kind: str, data: Mapping[str, Any]) -> TableInput:
    """Rebuild an input from a journal record; raises ``ValueError`` for unknown kinds/fields."""
    try:
        cls = INPUT_TYPES[kind]
    except KeyError:
        raise ValueError(f"unknown journal record kind {kind!r}") from None
    known = {f.name: f for f in fields(cls)}
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known:
            raise ValueError(f"journal record kind {kind!r} has unknown field {key!r}")
        if key == "card" and value is not None:
            if not isinstance(value, str):
                raise ValueError(f"journal record kind {kind!r}: card must be a code, got {value!r}")
            value = Card.from_code(value)
        values[key] = value
    try:
        return cls(**values)
    except TypeError as exc:  # a required field is missing
        raise ValueError(f"journal record kind {kind!r}: {exc}") from None
