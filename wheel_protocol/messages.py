"""Typed messages of the Cammegh-style wheel protocol, both directions, and their encodings.

Every message is a frozen dataclass that knows its own line (``encode()``, without the line
end); :mod:`wheel_protocol.parser` turns lines back into these values. The layouts are in
PROTOCOL.md (next to this file). Field values are validated on construction, so a message
that exists can always be encoded, and an encoded message always parses back to itself.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import ClassVar

PROTOCOL_REVISION = "1.1"
"""Revision of PROTOCOL.md (our reading of the vendor's Developers Guide v2.07/v2.10)."""

LINE_END = b"\r\n"
"""What both ends send after a line (a receiver accepts CR, LF or both)."""

MAX_NUMBER = 36
SPIN_MAX = 256
"""The spin counter runs 1..256 and wraps (000 is accepted: seen before a wheel's first game)."""
MIN_POLL_INTERVAL = 0.1
"""The guide asks for status polls (``*X``) at least 100 ms apart."""


class WheelState(enum.IntEnum):
    """The ``<state>`` field of a status line."""

    BEFORE_GAME = 1
    BETS_OPEN = 2  # "place your bets" / launching
    BALL_IN_RIM = 3
    NO_MORE_BETS = 4
    WINNING_NUMBER = 5  # the three rim sensors agree
    TABLE_CLOSED = 6  # idle; also where a fault without mode 256 silently lands
    BALL_NOT_DETECTED = 7  # newer firmware


class WarningFlag(enum.IntFlag):
    """The ``<warning flags>`` hex digit of a status line (OR-ed)."""

    NONE = 0
    BALL_NOT_DETECTED = 1
    MISSPIN = 2  # the ball moves the same way as the rotor: the game must be voided
    HARDWARE_FAULT = 4  # sensor, motor or encoder
    LAUNCH_FAILED = 8  # the wheel retries by itself


class Direction(enum.IntEnum):
    """Rotor direction in a status line; ``*u 1`` / ``*u 3`` start a game this way."""

    CLOCKWISE = 0
    ANTICLOCKWISE = 1

    @property
    def start_code(self) -> int:
        return 1 if self is Direction.CLOCKWISE else 3


class Mode(enum.IntFlag):
    """Operating-mode bits for ``*o <mode>`` (kept by the wheel across power cycles)."""

    ALTERNATE_DIRECTION = 1
    HOST_STARTS_GAME = 2
    AUTO_STATUS = 128  # a status line every 500 ms without polling
    REPORT_FAULTS = 256  # ``*F`` lines during play


ARCADE_AUTOMATIC = 1157
"""Vendor preset: the wheel runs games by itself and sends status by itself."""
GAME_SERVER = 1159
"""Vendor preset for game-server integration (adds host-started games)."""


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


# --------------------------------------------------------------------------- wheel -> host


@dataclass(frozen=True, slots=True)
class WheelMessage:
    """Something the wheel sent."""

    def encode(self) -> bytes:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class Status(WheelMessage):
    """``*X;<state>;<spin>;<last number>;<warnings>;<rotor rpm x10>;<direction>``.

    ``last_number`` is the *previous* game's number in every state but 5 (None when the field
    is blank). ``extra`` keeps fields a newer firmware appends, so nothing is lost.
    """

    state: WheelState
    spin: int
    last_number: int | None
    warnings: WarningFlag
    rotor_rpm_x10: int
    direction: Direction
    extra: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _check(0 <= self.spin <= SPIN_MAX, f"spin {self.spin} outside 0..{SPIN_MAX}")
        _check(self.last_number is None or 0 <= self.last_number <= MAX_NUMBER,
               f"number {self.last_number} outside 0..{MAX_NUMBER}")
        _check(0 <= self.warnings <= 15, f"warning flags {self.warnings} outside 0..15")
        _check(0 <= self.rotor_rpm_x10 <= 999, f"rotor speed {self.rotor_rpm_x10} outside 0..999")
        _check(all(";" not in f and f.isprintable() for f in self.extra), "bad extra field")

    @property
    def rotor_rpm(self) -> float:
        return self.rotor_rpm_x10 / 10

    def encode(self) -> bytes:
        fields = [
            "*X", str(int(self.state)), f"{self.spin:03d}", number_field(self.last_number),
            f"{int(self.warnings):X}", f"{self.rotor_rpm_x10:03d}", str(int(self.direction)),
            *self.extra,
        ]
        return ";".join(fields).encode("ascii")


@dataclass(frozen=True, slots=True)
class WinningNumberLine(WheelMessage):
    """The bare result line the wheel may send when a game ends: `` 6``, ``27``."""

    number: int

    def __post_init__(self) -> None:
        _check(0 <= self.number <= MAX_NUMBER, f"number {self.number} outside 0..{MAX_NUMBER}")

    def encode(self) -> bytes:
        return number_field(self.number).encode("ascii")


@dataclass(frozen=True, slots=True)
class Reply(WheelMessage):
    """A command's answer: ``*K CAM``, ``*P OK``, ``*T OK``, ``*o BUSY``, ``*F 0``, ``*V ...``.

    ``command`` is the letter after ``*``; ``text`` the rest of the line after one space.
    The helpers below name the answers the guide documents.
    """

    command: str
    text: str

    def __post_init__(self) -> None:
        _check(len(self.command) == 1 and self.command.isalpha() and self.command != "X",
               f"reply letter must be one letter other than X, got {self.command!r}")
        _check(_printable(self.text) and self.text == self.text.strip(),
               f"reply text must be printable ASCII without edge spaces, got {self.text!r}")

    @property
    def ok(self) -> bool:
        return self.text == "OK"

    @property
    def busy(self) -> bool:
        return self.text == "BUSY"

    def encode(self) -> bytes:
        return (f"*{self.command} {self.text}" if self.text else f"*{self.command}").encode()


# --------------------------------------------------------------------------- host -> wheel


@dataclass(frozen=True, slots=True)
class Command:
    """Something the host sends; ``encode()`` gives the line without its end."""

    LETTER: ClassVar[str] = ""

    def encode(self) -> bytes:
        return f"*{self.LETTER}".encode("ascii")


@dataclass(frozen=True, slots=True)
class Identify(Command):
    """``*K``: answered ``*K CAM``."""

    LETTER: ClassVar[str] = "K"


@dataclass(frozen=True, slots=True)
class GetVersion(Command):
    """``*V`` (or ``*S`` on older firmware): the firmware version."""

    LETTER: ClassVar[str] = "V"
    letter: str = "V"

    def __post_init__(self) -> None:
        _check(self.letter in ("V", "S"), f"version command is *V or *S, got *{self.letter}")

    def encode(self) -> bytes:
        return f"*{self.letter}".encode("ascii")


@dataclass(frozen=True, slots=True)
class SelfTest(Command):
    """``*F``: answered with ``*F <code>`` lines."""

    LETTER: ClassVar[str] = "F"


@dataclass(frozen=True, slots=True)
class Rotor(Command):
    """``*P 1`` / ``*P 0``: start / stop the rotor; answered ``*P OK`` or ``*P NO``."""

    LETTER: ClassVar[str] = "P"
    on: bool

    def encode(self) -> bytes:
        return f"*P {int(self.on)}".encode("ascii")


@dataclass(frozen=True, slots=True)
class StartGame(Command):
    """``*u 1`` / ``*u 3``: start a game clockwise / anticlockwise (host-started mode)."""

    LETTER: ClassVar[str] = "u"
    direction: Direction

    def encode(self) -> bytes:
        return f"*u {self.direction.start_code}".encode("ascii")


@dataclass(frozen=True, slots=True)
class AcknowledgeVoid(Command):
    """``*R``: the host has seen a void game; the wheel spins again."""

    LETTER: ClassVar[str] = "R"


@dataclass(frozen=True, slots=True)
class StatusPoll(Command):
    """``*X``: ask for one status line (at least :data:`MIN_POLL_INTERVAL` apart)."""

    LETTER: ClassVar[str] = "X"


@dataclass(frozen=True, slots=True)
class SetMode(Command):
    """``*o <mode>``: operating-mode bits (:class:`Mode`, or a preset like 1159)."""

    LETTER: ClassVar[str] = "o"
    mode: int

    def __post_init__(self) -> None:
        _check(0 <= self.mode <= 65535, f"mode {self.mode} outside 0..65535")

    def encode(self) -> bytes:
        return f"*o {self.mode}".encode("ascii")


@dataclass(frozen=True, slots=True)
class SetParameter(Command):
    """``*T <letter> <value>``: a parameter (e.g. games per hour); answered ``*T OK`` or
    ``*o BUSY`` while a game runs."""

    LETTER: ClassVar[str] = "T"
    name: str
    value: int

    def __post_init__(self) -> None:
        _check(len(self.name) == 1 and self.name.isascii() and self.name.isalpha(),
               f"parameter is one letter, got {self.name!r}")
        _check(0 <= self.value <= 99999, f"parameter value {self.value} outside 0..99999")

    def encode(self) -> bytes:
        return f"*T {self.name} {self.value}".encode("ascii")


COMMANDS: tuple[type[Command], ...] = (
    Identify, GetVersion, SelfTest, Rotor, StartGame, AcknowledgeVoid, StatusPoll, SetMode,
    SetParameter,
)


# --------------------------------------------------------------------------- not understood


@dataclass(frozen=True, slots=True)
class Unparsed:
    """A line (or stretch of bytes) that is not a message: kept, with why, for the log.

    The parser never raises; what it cannot read comes out as one of these, in its place in
    the stream, so a caller can count noise and log it without losing order.
    """

    raw: bytes
    reason: str = field(default="")


def number_field(number: int | None) -> str:
    """A winning number as the wheel writes it: two characters, space-padded (blank: None)."""
    return "  " if number is None else f"{number:>2d}"


def _printable(text: str) -> bool:
    return text.isascii() and (text == "" or text.isprintable())


def encode_line(message: WheelMessage | Command) -> bytes:
    """A whole line for the wire: the message and ``CR LF``."""
    return message.encode() + LINE_END
