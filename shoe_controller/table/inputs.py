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
from shoe_controller.live.inputs import (
    BettingCommand,
    LinkChanged,
    SessionStarted,
    SupervisorAction,
    TableInput,
)


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
class CameraDeclined(TableInput):
    """The camera fallback could not read the pending misread card (``counter``):
    ``outcome`` is ``declined`` (it saw the card but was not sure enough) or ``no_frame``
    (the camera gave no picture); ``reason`` says why, for the log and the journal. The
    card stays pending for a supervisor; the dealer is told so."""

    KIND: ClassVar[str] = "camera_declined"
    counter: int
    outcome: str = "declined"
    reason: str = ""


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
class DeviceFault(TableInput):
    KIND: ClassVar[str] = "fault"
    code: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class PlayerDecision(TableInput):
    """A seat's decision for one of its hands (blackjack): hit, stand, double or split.

    ``origin`` is who decided: ``table-system``, ``player`` (the built-in players), or
    ``timeout`` (no answer within the profile's decision time: the hand stands). ``key`` names
    the wait it answers (:class:`shoe_controller.table.game.Awaiting`): an answer meant for an
    earlier wait is late and refused."""

    KIND: ClassVar[str] = "decision"
    seat: int
    hand: int
    action: str
    origin: str = "table-system"
    key: str = ""


@dataclass(frozen=True, slots=True)
class InsuranceDecision(TableInput):
    """The answer to an insurance offer: the seats that insure (blackjack, an ace up).
    ``origin`` and ``key`` as for :class:`PlayerDecision` (a timeout: nobody insures)."""

    KIND: ClassVar[str] = "insurance"
    seats: list[int]
    origin: str = "table-system"
    key: str = ""


@dataclass(frozen=True, slots=True)
class DeviceConnected(TableInput):
    """The shoe answered the handshake with a new session: first contact after the controller
    started, or the shoe restarted (``restarted``). Its identity is journalled so that a shoe
    swapped for another, even within the link's grace, leaves a trace and is noticed."""

    KIND: ClassVar[str] = "device"
    serial: str
    vendor: str = ""
    model: str = ""
    firmware: str = ""
    capabilities: int = 0
    session: int = 0
    restarted: bool = False


@dataclass(frozen=True, slots=True)
class ShoeStatus(TableInput):
    """The shoe's own report of its state (StatusReport), journalled when it tells the table
    something it did not know: a card counter ahead of the table's (cards left unreported) or
    behind it, or a lid state that disagrees."""

    KIND: ClassVar[str] = "shoe_status"
    counter: int
    exit_locked: bool = True
    lid_open: bool = False
    loaded: bool = True
    fault: str = "none"


@dataclass(frozen=True, slots=True)
class MessageRefused(TableInput):
    """The shoe sent a reliable message the controller could not read (bad payload, unknown
    type, bad length). The link acknowledged and skipped it, so whatever it said is lost: if it
    was a card, the card has left the shoe unreported."""

    KIND: ClassVar[str] = "message_refused"
    code: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class ShoeUnresponsive(TableInput):
    """The liveness guard: the shoe's reported state kept disagreeing with the commands sent
    to it, even after they were sent again."""

    KIND: ClassVar[str] = "shoe_unresponsive"
    detail: str


INPUT_TYPES: dict[str, type[TableInput]] = {
    cls.KIND: cls
    for cls in (
        CardDrawn,
        CardMisread,
        CameraRead,
        CameraDeclined,
        CameraCheck,
        ShoeEventInput,
        ButtonPressed,
        LinkChanged,
        DeviceFault,
        BettingCommand,
        PlayerDecision,
        InsuranceDecision,
        SupervisorAction,
        SessionStarted,
        DeviceConnected,
        ShoeStatus,
        MessageRefused,
        ShoeUnresponsive,
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
