"""Every message of protocol version 1 as a typed, immutable, validated value.

One frozen dataclass per message type, all subclasses of :class:`Message`. A message knows its
``TYPE`` (the header's message-type byte) and how to turn its fields into the frame payload and
back; the frame header, CRC and byte stuffing are the codec's job (``codec.py``).

Construction validates every field and raises :class:`ValueError` naming the field, so a bad
value built by our own code fails where it is made. ``decode_payload`` raises
:class:`ValueError` too; the frame decoder catches it and counts the frame as a bad payload, so
bytes from the line can never raise out of the decoder. Byte layouts are in SPEC.md section 6.

Multi-byte integers are little-endian. Strings are one length byte followed by that many bytes of
UTF-8 (no terminator).
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass
from typing import ClassVar, Self, TypeVar

PROTOCOL_VERSION = 1
MAX_IDENTITY_TEXT = 32
"""Maximum UTF-8 bytes of vendor, model, serial number and firmware version."""
MAX_DETAIL_TEXT = 200
"""Maximum UTF-8 bytes of a free-text ``detail`` (ErrorReport, DeviceFault)."""
MAX_BEEP_MS = 5000


class MessageType(enum.IntEnum):
    """Header byte 1. Ranges: 0x01-0x0F link, 0x10-0x2F shoe to host, 0x30-0x4F host to shoe."""

    HOST_HELLO = 0x01
    DEVICE_INFO = 0x02
    ACK = 0x03
    HEARTBEAT = 0x04
    ERROR_REPORT = 0x05
    NAK = 0x06
    LINK_OPTIONS = 0x07
    CARD_DRAWN = 0x10
    CARD_MISREAD = 0x11
    SHOE_STATE_CHANGED = 0x12
    BUTTON_PRESSED = 0x13
    DEVICE_FAULT = 0x14
    STATUS_REPORT = 0x15
    SET_EXIT_LOCK = 0x30
    SET_INDICATORS = 0x31
    STATUS_REQUEST = 0x32
    SET_CLOCK = 0x33
    RESET = 0x34
    SET_STATE = 0x35


class Sensor(enum.IntEnum):
    """Which reader of the shoe identified (or failed to identify) the card."""

    OPTICAL_PRIMARY = 1
    OPTICAL_SECONDARY = 2
    BARCODE = 3
    RFID = 4


class MisreadReason(enum.IntEnum):
    """Why a drawn card could not be identified."""

    UNKNOWN = 0
    NO_IMAGE = 1
    LOW_CONFIDENCE = 2
    SENSORS_DISAGREE = 3
    DOUBLE_CARD = 4


class ShoeEvent(enum.IntEnum):
    """A change of the shoe's physical state."""

    LID_OPENED = 1
    LID_CLOSED = 2
    SHOE_LOADED = 3
    SHOE_EMPTY = 4
    CUT_CARD_REACHED = 5
    CARD_AT_EXIT = 6
    PULL_REFUSED = 7
    """The dealer tried to pull a card while the exit was locked; the card stop held it."""


class Button(enum.IntEnum):
    DEALER = 1
    AUXILIARY = 2


class FaultCode(enum.IntEnum):
    NONE = 0
    JAM = 1
    SENSOR_FAULT = 2
    EXIT_LOCK_FAULT = 3
    POWER_FAULT = 4
    STORAGE_FAULT = 5
    OVERHEAT = 6
    INTERNAL = 0xFF


class ErrorCode(enum.IntEnum):
    """Why a receiver refused a frame or a command (ErrorReport.code)."""

    UNSUPPORTED_VERSION = 1
    NOT_CONNECTED = 2
    UNKNOWN_MESSAGE_TYPE = 3
    BAD_PAYLOAD = 4
    BAD_LENGTH = 5
    UNSUPPORTED_COMMAND = 6
    INVALID_STATE = 7
    QUEUE_FULL = 8
    INTERNAL = 0xFF


class ResetKind(enum.IntEnum):
    CLEAR_FAULTS = 1
    """Clear latched faults; keep the card counter and everything queued."""
    NEW_SHOE = 2
    """A new shoe is being loaded: the card counter restarts at 0."""
    REBOOT = 3
    """Restart the firmware (it comes back with a new session id)."""


class Indicator(enum.IntFlag):
    """Lights on the shoe (SetIndicators.lights, StatusReport.indicators)."""

    PLAYER = 0x01
    BANKER = 0x02
    STOP = 0x04
    TIE = 0x08
    SHUFFLE = 0x10
    ERROR = 0x20
    RESULT = 0x40  # a result is shown: the dealer confirms it with the button


class Capability(enum.IntFlag):
    """What a shoe can do (DeviceInfo.capabilities). Unknown bits from newer shoes are kept."""

    CARD_RECOGNITION = 0x01
    EXIT_LOCK = 0x02
    INDICATORS = 0x04
    BEEPER = 0x08
    CLOCK = 0x10
    DEALER_BUTTON = 0x20
    LID_SENSOR = 0x40
    CUT_CARD_SENSOR = 0x80
    LOAD_NUMBER = 0x100
    """SHOE_LOADED carries the shoe's load number in ``counter`` (SPEC 6.3, revision 1.1)."""
    FAST_RECOVERY = 0x200
    """The shoe's link speaks Nak and LinkOptions (SPEC 8.8, revision 1.2)."""
    STATE_COMMAND = 0x400
    """The shoe takes SetState: lights and exit lock in one command (SPEC 6.3, revision 1.2)."""
    FRAME_COPIES = 0x800
    """The shoe's link sends and takes proactive frame copies (SPEC 8.9, revision 1.3)."""


class LinkFeature(enum.IntFlag):
    """What a host's link handles (LinkOptions.features). Unknown bits are kept and ignored."""

    FAST_RECOVERY = 0x01
    """The host takes Nak: the shoe may send it."""
    FRAME_COPIES = 0x02
    """The host takes proactive frame copies (COPY flag) and sends them (SPEC 8.9, rev. 1.3)."""


E = TypeVar("E", bound=enum.IntEnum)


def _check_uint(name: str, value: object, bits: int) -> None:
    if type(value) is not int or not 0 <= value < (1 << bits):
        raise ValueError(f"{name} must be an integer 0..{(1 << bits) - 1}, got {value!r}")


def _check_bool(name: str, value: object) -> None:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be a bool, got {value!r}")  # noqa: TRY004 - one error type for bad fields


def _as_enum(owner: object, name: str, enum_type: type[E]) -> None:
    """Coerce field ``name`` to ``enum_type`` in place (frozen dataclass), or raise ValueError."""
    value = getattr(owner, name)
    if isinstance(value, enum_type):
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a {enum_type.__name__}, got {value!r}")  # noqa: TRY004 - one error type for bad fields  # noqa: TRY004
    try:
        object.__setattr__(owner, name, enum_type(value))
    except ValueError:
        raise ValueError(f"{name}: {value!r} is not a valid {enum_type.__name__}") from None


def _as_flag(owner: object, name: str, flag_type: type[enum.IntFlag], bits: int) -> None:
    value = getattr(owner, name)
    _check_uint(name, int(value) if isinstance(value, enum.IntFlag) else value, bits)
    if not isinstance(value, flag_type):
        object.__setattr__(owner, name, flag_type(value))


def _check_text(name: str, value: object, limit: int) -> None:
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a str, got {value!r}")  # noqa: TRY004 - one error type for bad fields  # noqa: TRY004
    size = len(value.encode("utf-8"))
    if size > limit:
        raise ValueError(f"{name} is {size} bytes of UTF-8; the limit is {limit}")


def _pack_text(value: str) -> bytes:
    raw = value.encode("utf-8")
    return bytes((len(raw),)) + raw


def _unpack_text(payload: bytes, offset: int, name: str) -> tuple[str, int]:
    """Read a length-prefixed UTF-8 string at ``offset``; return it and the next offset."""
    if offset >= len(payload):
        raise ValueError(f"{name}: payload ends before the length byte")
    end = offset + 1 + payload[offset]
    if end > len(payload):
        raise ValueError(f"{name}: string runs past the end of the payload")
    return payload[offset + 1 : end].decode("utf-8"), end


def _check_size(cls: type, payload: bytes, expected: int) -> None:
    if len(payload) != expected:
        raise ValueError(f"{cls.__name__}: payload is {len(payload)} bytes, expected {expected}")


def _byte_bool(name: str, value: int) -> bool:
    if value > 1:
        raise ValueError(f"{name}: boolean byte must be 0 or 1, got {value}")
    return value == 1


@dataclass(frozen=True, slots=True)
class Message:
    """Base of every message. Subclasses set ``TYPE`` and implement the payload coding."""

    TYPE: ClassVar[MessageType]
    CARRY_OVER: ClassVar[bool] = False
    """Whether the link keeps this message, if unacknowledged, when the peer restarts.

    True only for facts about physical cards and the shoe's state, which must reach the host
    (the safety rule); commands and button presses are stale intent after a restart and are
    dropped (SPEC.md section 8.5)."""

    def encode_payload(self) -> bytes:
        return b""

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        _check_size(cls, payload, 0)
        return cls()


# ----------------------------------------------------------------------------- link messages


@dataclass(frozen=True, slots=True)
class HostHello(Message):
    """Host to shoe, opens (or re-opens) the link. Unsequenced; repeated until answered."""

    TYPE: ClassVar[MessageType] = MessageType.HOST_HELLO
    _LAYOUT: ClassVar[struct.Struct] = struct.Struct("<BI")

    protocol_version: int
    session_id: int

    def __post_init__(self) -> None:
        _check_uint("protocol_version", self.protocol_version, 8)
        _check_uint("session_id", self.session_id, 32)

    def encode_payload(self) -> bytes:
        return self._LAYOUT.pack(self.protocol_version, self.session_id)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        _check_size(cls, payload, cls._LAYOUT.size)
        return cls(*cls._LAYOUT.unpack(payload))


@dataclass(frozen=True, slots=True)
class DeviceIdentity:
    """What a shoe says about itself in the handshake (not a message; part of DeviceInfo)."""

    vendor: str
    model: str
    serial_number: str
    firmware_version: str
    capabilities: Capability

    def __post_init__(self) -> None:
        for name in ("vendor", "model", "serial_number", "firmware_version"):
            _check_text(name, getattr(self, name), MAX_IDENTITY_TEXT)
        _as_flag(self, "capabilities", Capability, 32)


@dataclass(frozen=True, slots=True)
class DeviceInfo(Message):
    """Shoe to host, the answer to HostHello. Unsequenced."""

    TYPE: ClassVar[MessageType] = MessageType.DEVICE_INFO
    _HEAD: ClassVar[struct.Struct] = struct.Struct("<BII")

    protocol_version: int
    session_id: int
    capabilities: Capability
    vendor: str
    model: str
    serial_number: str
    firmware_version: str

    def __post_init__(self) -> None:
        _check_uint("protocol_version", self.protocol_version, 8)
        _check_uint("session_id", self.session_id, 32)
        _as_flag(self, "capabilities", Capability, 32)
        for name in ("vendor", "model", "serial_number", "firmware_version"):
            _check_text(name, getattr(self, name), MAX_IDENTITY_TEXT)

    @classmethod
    def from_identity(cls, identity: DeviceIdentity, session_id: int) -> DeviceInfo:
        return cls(
            PROTOCOL_VERSION,
            session_id,
            identity.capabilities,
            identity.vendor,
            identity.model,
            identity.serial_number,
            identity.firmware_version,
        )

    @property
    def identity(self) -> DeviceIdentity:
        return DeviceIdentity(
            self.vendor, self.model, self.serial_number, self.firmware_version, self.capabilities
        )

    def encode_payload(self) -> bytes:
        head = self._HEAD.pack(self.protocol_version, self.session_id, int(self.capabilities))
        texts = (self.vendor, self.model, self.serial_number, self.firmware_version)
        return head + b"".join(_pack_text(text) for text in texts)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        if len(payload) < cls._HEAD.size:
            raise ValueError(f"DeviceInfo: payload is {len(payload)} bytes, too short")
        version, session_id, capabilities = cls._HEAD.unpack_from(payload)
        offset = cls._HEAD.size
        texts: list[str] = []
        for name in ("vendor", "model", "serial_number", "firmware_version"):
            text, offset = _unpack_text(payload, offset, name)
            texts.append(text)
        if offset != len(payload):
            raise ValueError(f"DeviceInfo: {len(payload) - offset} unexpected trailing bytes")
        return cls(version, session_id, Capability(capabilities), *texts)


@dataclass(frozen=True, slots=True)
class Ack(Message):
    """Carries only the header's acknowledgement; sent when there is no other frame to carry it."""

    TYPE: ClassVar[MessageType] = MessageType.ACK


@dataclass(frozen=True, slots=True)
class Heartbeat(Message):
    """Sign of life, sent by both sides when they have sent nothing for the heartbeat interval.

    ``time_ms`` is the sender's monotonic clock in milliseconds modulo 2**32, for diagnostics
    (round-trip and drift estimates); receivers need not interpret it.
    """

    TYPE: ClassVar[MessageType] = MessageType.HEARTBEAT
    _LAYOUT: ClassVar[struct.Struct] = struct.Struct("<I")

    time_ms: int = 0

    def __post_init__(self) -> None:
        _check_uint("time_ms", self.time_ms, 32)

    def encode_payload(self) -> bytes:
        return self._LAYOUT.pack(self.time_ms)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        _check_size(cls, payload, cls._LAYOUT.size)
        return cls(*cls._LAYOUT.unpack(payload))


@dataclass(frozen=True, slots=True)
class Nak(Message):
    """Link, both directions, unsequenced (revision 1.2, only between FAST_RECOVERY peers):
    what the receiver is missing, sent as soon as it sees damage. The header's ``ack``
    (ACK_VALID) is the first sequence number missing; bit ``i`` of ``received`` says that the
    frame ``ack + 1 + i`` has arrived (it waits in the receiver's buffer). The sender resends at
    once each frame it holds that is neither acknowledged nor marked (SPEC 8.8)."""

    TYPE: ClassVar[MessageType] = MessageType.NAK
    MAX_SIZE: ClassVar[int] = 8

    received: int = 0

    def __post_init__(self) -> None:
        _check_uint("received", self.received, 64)

    def encode_payload(self) -> bytes:
        # As few bytes as the bitmap needs (none when nothing waits): a Nak is sent on a line
        # that damages frames, and every byte is one more to damage and to wait for.
        return self.received.to_bytes((self.received.bit_length() + 7) // 8, "little")

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        if len(payload) > cls.MAX_SIZE:
            raise ValueError(f"Nak payload is {len(payload)} bytes, at most {cls.MAX_SIZE}")
        return cls(int.from_bytes(payload, "little"))


@dataclass(frozen=True, slots=True)
class LinkOptions(Message):
    """Host to shoe, link, reliable (revision 1.2): the link features the host handles
    (:class:`LinkFeature`). Sent by a host to a shoe that announced FAST_RECOVERY, as its
    first reliable message of each session; the shoe's link consumes it (its application
    never sees it). Until it arrives the shoe sends no Nak."""

    TYPE: ClassVar[MessageType] = MessageType.LINK_OPTIONS
    _LAYOUT: ClassVar[struct.Struct] = struct.Struct("<I")

    features: LinkFeature = LinkFeature.FAST_RECOVERY

    def __post_init__(self) -> None:
        raw = self.features
        _check_uint("features", int(raw) if isinstance(raw, LinkFeature) else raw, 32)
        object.__setattr__(self, "features", LinkFeature(int(raw)))

    def encode_payload(self) -> bytes:
        return self._LAYOUT.pack(int(self.features))

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        _check_size(cls, payload, cls._LAYOUT.size)
        return cls(LinkFeature(cls._LAYOUT.unpack(payload)[0]))


@dataclass(frozen=True, slots=True)
class ErrorReport(Message):
    """Either direction: a frame or command was refused. Link-generated reports are unsequenced."""

    TYPE: ClassVar[MessageType] = MessageType.ERROR_REPORT

    code: ErrorCode
    detail: str = ""

    def __post_init__(self) -> None:
        _as_enum(self, "code", ErrorCode)
        _check_text("detail", self.detail, MAX_DETAIL_TEXT)

    def encode_payload(self) -> bytes:
        return bytes((self.code,)) + _pack_text(self.detail)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        if not payload:
            raise ValueError("ErrorReport: empty payload")
        detail, end = _unpack_text(payload, 1, "detail")
        if end != len(payload):
            raise ValueError("ErrorReport: unexpected trailing bytes")
        return cls(ErrorCode(payload[0]), detail)


# ----------------------------------------------------------------------------- shoe to host


@dataclass(frozen=True, slots=True)
class CardDrawn(Message):
    """A card left the shoe and was identified. ``counter`` is its end-to-end identity."""

    TYPE: ClassVar[MessageType] = MessageType.CARD_DRAWN
    CARRY_OVER: ClassVar[bool] = True
    _LAYOUT: ClassVar[struct.Struct] = struct.Struct("<IBBBBB")

    counter: int
    rank: int
    suit: int
    sensor: Sensor
    confidence: int
    drawn_while_locked: bool = False

    def __post_init__(self) -> None:
        _check_uint("counter", self.counter, 32)
        if type(self.rank) is not int or not 1 <= self.rank <= 13:
            raise ValueError(f"rank must be 1..13 (A..K), got {self.rank!r}")
        # Accept an IntEnum such as shoe_controller.cards.Suit, but store a plain int.
        if isinstance(self.suit, bool) or not isinstance(self.suit, int) or not 0 <= self.suit <= 3:
            raise ValueError(f"suit must be 0..3 (S,H,D,C), got {self.suit!r}")
        object.__setattr__(self, "suit", int(self.suit))
        _as_enum(self, "sensor", Sensor)
        if type(self.confidence) is not int or not 0 <= self.confidence <= 100:
            raise ValueError(f"confidence must be 0..100 (%), got {self.confidence!r}")
        _check_bool("drawn_while_locked", self.drawn_while_locked)

    def encode_payload(self) -> bytes:
        return self._LAYOUT.pack(
            self.counter,
            self.rank,
            self.suit,
            self.sensor,
            self.confidence,
            1 if self.drawn_while_locked else 0,
        )

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        _check_size(cls, payload, cls._LAYOUT.size)
        counter, rank, suit, sensor, confidence, flags = cls._LAYOUT.unpack(payload)
        if flags > 1:
            raise ValueError(f"CardDrawn: reserved flag bits set ({flags:#04x})")
        return cls(counter, rank, suit, Sensor(sensor), confidence, flags == 1)


@dataclass(frozen=True, slots=True)
class CardMisread(Message):
    """A card left the shoe but could not be identified; it still consumed a counter value."""

    TYPE: ClassVar[MessageType] = MessageType.CARD_MISREAD
    CARRY_OVER: ClassVar[bool] = True
    _LAYOUT: ClassVar[struct.Struct] = struct.Struct("<IBBB")

    counter: int
    sensor: Sensor
    reason: MisreadReason
    drawn_while_locked: bool = False

    def __post_init__(self) -> None:
        _check_uint("counter", self.counter, 32)
        _as_enum(self, "sensor", Sensor)
        _as_enum(self, "reason", MisreadReason)
        _check_bool("drawn_while_locked", self.drawn_while_locked)

    def encode_payload(self) -> bytes:
        return self._LAYOUT.pack(
            self.counter, self.sensor, self.reason, 1 if self.drawn_while_locked else 0
        )

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        _check_size(cls, payload, cls._LAYOUT.size)
        counter, sensor, reason, flags = cls._LAYOUT.unpack(payload)
        if flags > 1:
            raise ValueError(f"CardMisread: reserved flag bits set ({flags:#04x})")
        return cls(counter, Sensor(sensor), MisreadReason(reason), flags == 1)


@dataclass(frozen=True, slots=True)
class ShoeStateChanged(Message):
    """Lid, load, cut card, card waiting at the exit, refused pull; ``counter`` dates it."""

    TYPE: ClassVar[MessageType] = MessageType.SHOE_STATE_CHANGED
    CARRY_OVER: ClassVar[bool] = True
    _LAYOUT: ClassVar[struct.Struct] = struct.Struct("<BI")

    event: ShoeEvent
    counter: int

    def __post_init__(self) -> None:
        _as_enum(self, "event", ShoeEvent)
        _check_uint("counter", self.counter, 32)

    def encode_payload(self) -> bytes:
        return self._LAYOUT.pack(self.event, self.counter)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        _check_size(cls, payload, cls._LAYOUT.size)
        event, counter = cls._LAYOUT.unpack(payload)
        return cls(ShoeEvent(event), counter)


@dataclass(frozen=True, slots=True)
class ButtonPressed(Message):
    """The dealer pressed a button; ``counter`` is the card counter at that moment."""

    TYPE: ClassVar[MessageType] = MessageType.BUTTON_PRESSED
    _LAYOUT: ClassVar[struct.Struct] = struct.Struct("<BI")

    button: Button
    counter: int

    def __post_init__(self) -> None:
        _as_enum(self, "button", Button)
        _check_uint("counter", self.counter, 32)

    def encode_payload(self) -> bytes:
        return self._LAYOUT.pack(self.button, self.counter)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        _check_size(cls, payload, cls._LAYOUT.size)
        button, counter = cls._LAYOUT.unpack(payload)
        return cls(Button(button), counter)


@dataclass(frozen=True, slots=True)
class DeviceFault(Message):
    """The shoe detected a fault (jam, sensor...). ``detail`` is text for the operator."""

    TYPE: ClassVar[MessageType] = MessageType.DEVICE_FAULT
    CARRY_OVER: ClassVar[bool] = True

    code: FaultCode
    detail: str = ""

    def __post_init__(self) -> None:
        _as_enum(self, "code", FaultCode)
        if self.code is FaultCode.NONE:
            raise ValueError("code: a DeviceFault cannot carry FaultCode.NONE")
        _check_text("detail", self.detail, MAX_DETAIL_TEXT)

    def encode_payload(self) -> bytes:
        return bytes((self.code,)) + _pack_text(self.detail)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        if not payload:
            raise ValueError("DeviceFault: empty payload")
        detail, end = _unpack_text(payload, 1, "detail")
        if end != len(payload):
            raise ValueError("DeviceFault: unexpected trailing bytes")
        return cls(FaultCode(payload[0]), detail)


@dataclass(frozen=True, slots=True)
class StatusReport(Message):
    """The shoe's whole state, sent in answer to StatusRequest (and when the shoe sees fit)."""

    TYPE: ClassVar[MessageType] = MessageType.STATUS_REPORT
    _LAYOUT: ClassVar[struct.Struct] = struct.Struct("<BIBQHB")

    exit_locked: bool
    lid_open: bool
    loaded: bool
    counter: int
    indicators: Indicator
    clock_unix_ms: int
    """The shoe's wall clock (ms since 1970-01-01 UTC); 0 if never set."""
    unacked_cards: int
    """Card messages the shoe holds that the host has not acknowledged yet."""
    fault: FaultCode = FaultCode.NONE

    def __post_init__(self) -> None:
        for name in ("exit_locked", "lid_open", "loaded"):
            _check_bool(name, getattr(self, name))
        _check_uint("counter", self.counter, 32)
        _as_flag(self, "indicators", Indicator, 8)
        _check_uint("clock_unix_ms", self.clock_unix_ms, 64)
        _check_uint("unacked_cards", self.unacked_cards, 16)
        _as_enum(self, "fault", FaultCode)

    def encode_payload(self) -> bytes:
        state = (
            (1 if self.exit_locked else 0) | (2 if self.lid_open else 0) | (4 if self.loaded else 0)
        )
        return self._LAYOUT.pack(
            state,
            self.counter,
            int(self.indicators),
            self.clock_unix_ms,
            self.unacked_cards,
            self.fault,
        )

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        _check_size(cls, payload, cls._LAYOUT.size)
        state, counter, indicators, clock, unacked, fault = cls._LAYOUT.unpack(payload)
        if state & ~0x07:
            raise ValueError(f"StatusReport: reserved state bits set ({state:#04x})")
        return cls(
            bool(state & 1),
            bool(state & 2),
            bool(state & 4),
            counter,
            Indicator(indicators),
            clock,
            unacked,
            FaultCode(fault),
        )


# ----------------------------------------------------------------------------- host to shoe


@dataclass(frozen=True, slots=True)
class SetExitLock(Message):
    """Lock (card stop engaged: no card can leave) or unlock the card exit.

    ``cards`` (with ``locked`` False): the exit relocks by itself after that many cards have
    left, 0 = stays unlocked until told. The host unlocks for exactly the card that is due
    (``cards=1``), so a command lost on a bad line can never let a second card out.
    ``for_card`` (with an unlock, optional): the counter the next card must have; the shoe
    ignores the unlock if a card has left since the host sent it (an unlock retransmitted
    after a reconnect, then sent again, must not let two cards out). 0 = unconditional; the
    payload is then the 2-byte form.
    """

    TYPE: ClassVar[MessageType] = MessageType.SET_EXIT_LOCK
    _LAYOUT: ClassVar[struct.Struct] = struct.Struct("<BB")
    _LAYOUT_FOR_CARD: ClassVar[struct.Struct] = struct.Struct("<BBI")

    locked: bool
    cards: int = 0
    for_card: int = 0

    def __post_init__(self) -> None:
        _check_bool("locked", self.locked)
        _check_uint("cards", self.cards, 8)
        _check_uint("for_card", self.for_card, 32)
        if self.locked and (self.cards or self.for_card):
            raise ValueError("cards and for_card must be 0 when locking the exit")

    def encode_payload(self) -> bytes:
        if self.for_card:
            return self._LAYOUT_FOR_CARD.pack(0, self.cards, self.for_card)
        return self._LAYOUT.pack(1 if self.locked else 0, self.cards)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        if len(payload) == cls._LAYOUT_FOR_CARD.size:
            locked, cards, for_card = cls._LAYOUT_FOR_CARD.unpack(payload)
        elif len(payload) == cls._LAYOUT.size:
            (locked, cards), for_card = cls._LAYOUT.unpack(payload), 0
        else:
            raise ValueError(f"{cls.__name__}: payload is {len(payload)} bytes, expected "
                             f"{cls._LAYOUT.size} or {cls._LAYOUT_FOR_CARD.size}")
        return cls(_byte_bool("locked", locked), cards, for_card)


@dataclass(frozen=True, slots=True)
class SetIndicators(Message):
    """Set the lights (absolute, not a toggle) and optionally beep for ``beep_ms``."""

    TYPE: ClassVar[MessageType] = MessageType.SET_INDICATORS
    _LAYOUT: ClassVar[struct.Struct] = struct.Struct("<BH")

    lights: Indicator
    beep_ms: int = 0

    def __post_init__(self) -> None:
        _as_flag(self, "lights", Indicator, 8)
        if type(self.beep_ms) is not int or not 0 <= self.beep_ms <= MAX_BEEP_MS:
            raise ValueError(f"beep_ms must be 0..{MAX_BEEP_MS}, got {self.beep_ms!r}")

    def encode_payload(self) -> bytes:
        return self._LAYOUT.pack(int(self.lights), self.beep_ms)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        _check_size(cls, payload, cls._LAYOUT.size)
        lights, beep_ms = cls._LAYOUT.unpack(payload)
        return cls(Indicator(lights), beep_ms)


@dataclass(frozen=True, slots=True)
class SetState(Message):
    """Host to shoe (revision 1.2, to a STATE_COMMAND shoe): the lights and the exit lock in
    one command, applied together (lights first), so the shoe can never hold an exit state
    of one host state with the lights of another, and a bad line has one frame to damage, not
    two. ``locked``, ``cards`` and ``for_card`` mean what they mean in :class:`SetExitLock`."""

    TYPE: ClassVar[MessageType] = MessageType.SET_STATE
    _LAYOUT: ClassVar[struct.Struct] = struct.Struct("<BBBI")

    lights: Indicator
    locked: bool
    cards: int = 0
    for_card: int = 0

    def __post_init__(self) -> None:
        _as_flag(self, "lights", Indicator, 8)
        _check_bool("locked", self.locked)
        _check_uint("cards", self.cards, 8)
        _check_uint("for_card", self.for_card, 32)
        if self.locked and (self.cards or self.for_card):
            raise ValueError("cards and for_card must be 0 when locking the exit")

    def encode_payload(self) -> bytes:
        return self._LAYOUT.pack(int(self.lights), 1 if self.locked else 0, self.cards,
                                 self.for_card)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        _check_size(cls, payload, cls._LAYOUT.size)
        lights, locked, cards, for_card = cls._LAYOUT.unpack(payload)
        return cls(Indicator(lights), _byte_bool("locked", locked), cards, for_card)


@dataclass(frozen=True, slots=True)
class StatusRequest(Message):
    """Ask the shoe for a StatusReport."""

    TYPE: ClassVar[MessageType] = MessageType.STATUS_REQUEST


@dataclass(frozen=True, slots=True)
class SetClock(Message):
    """Set the shoe's wall clock (ms since 1970-01-01 UTC), used to time-stamp its own log."""

    TYPE: ClassVar[MessageType] = MessageType.SET_CLOCK
    _LAYOUT: ClassVar[struct.Struct] = struct.Struct("<Q")

    unix_ms: int

    def __post_init__(self) -> None:
        _check_uint("unix_ms", self.unix_ms, 64)

    def encode_payload(self) -> bytes:
        return self._LAYOUT.pack(self.unix_ms)

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        _check_size(cls, payload, cls._LAYOUT.size)
        return cls(*cls._LAYOUT.unpack(payload))


@dataclass(frozen=True, slots=True)
class Reset(Message):
    TYPE: ClassVar[MessageType] = MessageType.RESET

    kind: ResetKind

    def __post_init__(self) -> None:
        _as_enum(self, "kind", ResetKind)

    def encode_payload(self) -> bytes:
        return bytes((self.kind,))

    @classmethod
    def decode_payload(cls, payload: bytes) -> Self:
        _check_size(cls, payload, 1)
        return cls(ResetKind(payload[0]))


MESSAGE_CLASSES: dict[MessageType, type[Message]] = {
    cls.TYPE: cls
    for cls in (
        HostHello,
        DeviceInfo,
        Ack,
        Heartbeat,
        ErrorReport,
        Nak,
        LinkOptions,
        CardDrawn,
        CardMisread,
        ShoeStateChanged,
        ButtonPressed,
        DeviceFault,
        StatusReport,
        SetExitLock,
        SetIndicators,
        StatusRequest,
        SetClock,
        Reset,
        SetState,
    )
}

UNSEQUENCED_TYPES = frozenset(
    {MessageType.HOST_HELLO, MessageType.DEVICE_INFO, MessageType.ACK, MessageType.HEARTBEAT,
     MessageType.NAK}
)
"""Types that never occupy a sequence number (the link sends them itself)."""


def decode_message(type_code: int, payload: bytes) -> Message:
    """Decode a payload of the given type byte; raises ValueError (incl. unknown type)."""
    try:
        message_type = MessageType(type_code)
    except ValueError:
        raise ValueError(f"unknown message type {type_code:#04x}") from None
    return MESSAGE_CLASSES[message_type].decode_payload(payload)
