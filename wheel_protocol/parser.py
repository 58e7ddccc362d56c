"""Streaming parsers for the wheel protocol: bytes in, typed messages out, never an exception.

::

    ... noise | * X ; 5 ; 0 1 2 ; 1 7 ; 0 ; 2 5 0 ; 0 | CR LF |   2 7 | CR LF | * K   C A M | LF ...
              '-------------- status line -----------'  '-- bare number --'  '--- reply ---'

Lines end at CR or LF (any mix; empty lines are skipped). A ``*`` always starts a new line:
whatever came before it on the same line is noise and comes out as :class:`Unparsed`, so the
parser resynchronises on the next packet even without a line end between. Recovery cases:

* noise before a packet (``\\x00\\xff*X;...``): the noise is one :class:`Unparsed`, the packet
  is parsed;
* noise inside a packet (a flipped digit, a lost ``;``): the line fails its field checks and
  comes out as one :class:`Unparsed` naming the first bad field; nothing is guessed;
* a line longer than :data:`MAX_LINE` bytes (a cable full of noise): dropped up to the next
  line end and reported once with its first bytes;
* a packet split across any number of reads: the same messages as in one read (state is
  only the unfinished line).

The host side uses :class:`WheelParser`; the simulator reads commands with
:class:`CommandParser`. Both share :class:`LineSplitter`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Generic, TypeVar

from wheel_protocol.messages import (
    AcknowledgeVoid,
    Command,
    Direction,
    GetVersion,
    Identify,
    Reply,
    Rotor,
    SelfTest,
    SetMode,
    SetParameter,
    StartGame,
    Status,
    StatusPoll,
    Unparsed,
    WarningFlag,
    WheelMessage,
    WheelState,
    WinningNumberLine,
)

MAX_LINE = 96
"""Longest line kept (a status is 24 bytes; replies are short). Longer ones are noise."""

_BOUNDARY = re.compile(rb"[\r\n*]")
_NUMBER = re.compile(r"(?: [0-9]|[1-3][0-9])")
_DIGITS3 = re.compile(r"[0-9]{3}")

T = TypeVar("T")


class LineSplitter:
    """Cuts a byte stream into lines (CR/LF ended, ``*`` starting) and overlong noise.

    :meth:`feed` returns each complete line (bytes, no line end) or an :class:`Unparsed` for
    noise before a ``*`` and for an overlong line, in stream order.
    """

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self.max_line = max_line
        self._line = bytearray()
        self._overlong = 0  # bytes dropped from the current line once it grew too long

    def feed(self, data: bytes) -> list[bytes | Unparsed]:
        out: list[bytes | Unparsed] = []
        start = 0
        for match in _BOUNDARY.finditer(data):
            self._append(data[start : match.start()])
            start = match.end()
            if match.group() == b"*":
                self._end_line(out, noise=True)
                self._line.append(0x2A)
            else:
                self._end_line(out, noise=False)
        self._append(data[start:])
        return out

    @property
    def pending(self) -> bytes:
        """The unfinished line (for diagnostics)."""
        return bytes(self._line)

    def _append(self, chunk: bytes) -> None:
        if not chunk:
            return
        room = self.max_line - len(self._line)
        if self._overlong or len(chunk) > room:
            keep = max(room, 0)
            self._line += chunk[:keep]
            self._overlong += len(chunk) - keep
        else:
            self._line += chunk

    def _end_line(self, out: list[bytes | Unparsed], *, noise: bool) -> None:
        if self._overlong:
            size = len(self._line) + self._overlong
            out.append(Unparsed(bytes(self._line), f"line of {size} bytes is longer than "
                                f"{self.max_line}: dropped"))
        elif self._line:
            line = bytes(self._line)
            out.append(Unparsed(line, "noise before '*'") if noise else line)
        self._line.clear()
        self._overlong = 0


class _Parser(Generic[T]):
    def __init__(self, parse_line: Callable[[str], T | str], max_line: int) -> None:
        self._splitter = LineSplitter(max_line)
        self._parse_line = parse_line
        self.lines = 0
        self.unparsed = 0

    def feed(self, data: bytes) -> list[T | Unparsed]:
        """Every complete message (or :class:`Unparsed`) in ``data`` and what came before it."""
        out: list[T | Unparsed] = []
        for item in self._splitter.feed(bytes(data)):
            if isinstance(item, Unparsed):
                out.append(item)
            else:
                self.lines += 1
                out.append(_parse(item, self._parse_line))
        self.unparsed += sum(isinstance(item, Unparsed) for item in out)
        return out


def _parse(line: bytes, parse_line: Callable[[str], T | str]) -> T | Unparsed:
    try:
        text = line.decode("ascii")
    except UnicodeDecodeError:
        return Unparsed(line, "not ASCII")
    if not text.isprintable():
        return Unparsed(line, "control characters in the line")
    try:
        result = parse_line(text)
    except ValueError as exc:  # a message refusing a field value (its own checks)
        return Unparsed(line, str(exc))
    return Unparsed(line, result) if isinstance(result, str) else result


class WheelParser(_Parser[WheelMessage]):
    """Host side: bytes from the wheel in, :class:`Status`, :class:`WinningNumberLine`,
    :class:`Reply` or :class:`Unparsed` out."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        super().__init__(parse_wheel_line, max_line)


class CommandParser(_Parser[Command]):
    """Wheel side (the simulator): bytes from the host in, :class:`Command` values out."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        super().__init__(parse_command_line, max_line)


def parse_wheel_bytes(line: bytes) -> WheelMessage | Unparsed:
    """One complete line from the wheel (no line end), read as :class:`WheelParser` reads
    it: a journal keeps the lines as received and reads them again with this."""
    return _parse(line, parse_wheel_line)


def parse_wheel_line(text: str) -> WheelMessage | str:
    """One line from the wheel (printable ASCII, no line end): a message, or why not."""
    if text.startswith("*X"):
        return _status(text)
    if text.startswith("*"):
        letter, _, rest = text[1:].partition(" ")
        if len(letter) != 1 or not letter.isalpha():
            return f"unknown packet {text[:8]!r}"
        if rest != rest.strip():
            return "reply text has extra spaces"
        return Reply(letter, rest)
    if _NUMBER.fullmatch(text):
        return WinningNumberLine(int(text))
    return "neither a packet ('*...') nor a winning number (two characters)"


def _status(text: str) -> Status | str:
    fields = text.split(";")
    if fields[0] != "*X" or len(fields) < 7:
        return f"status needs 7 ';'-separated fields, got {len(fields)}"
    _, state, spin, number, warnings, rotor, direction, *extra = fields
    if len(state) != 1 or state not in "1234567":
        return f"state {state!r} is not 1..7"
    if not _DIGITS3.fullmatch(spin) or int(spin) > 256:
        return f"spin {spin!r} is not three digits 000..256"
    if number == "  ":
        last: int | None = None
    elif _NUMBER.fullmatch(number):
        last = int(number)
        if last > 36:
            return f"winning number {number!r} is not 0..36"
    else:
        return f"winning number {number!r} is not two characters 0..36"
    if len(warnings) != 1 or warnings not in "0123456789abcdefABCDEF":
        return f"warning flags {warnings!r} are not one hex digit"
    if not _DIGITS3.fullmatch(rotor):
        return f"rotor speed {rotor!r} is not three digits"
    if direction not in ("0", "1"):
        return f"direction {direction!r} is not 0 or 1"
    return Status(WheelState(int(state)), int(spin), last, WarningFlag(int(warnings, 16)),
                  int(rotor), Direction(int(direction)), tuple(extra))


_SIMPLE: dict[str, Callable[[], Command]] = {
    "*K": Identify,
    "*V": lambda: GetVersion("V"),
    "*S": lambda: GetVersion("S"),
    "*F": SelfTest,
    "*R": AcknowledgeVoid,
    "*X": StatusPoll,
}


def parse_command_line(text: str) -> Command | str:
    """One line from the host (printable ASCII, no line end): a command, or why not."""
    if text in _SIMPLE:
        return _SIMPLE[text]()
    head, _, rest = text.partition(" ")
    args = rest.split(" ") if rest else []
    if head == "*P" and args in (["0"], ["1"]):
        return Rotor(args == ["1"])
    if head == "*u" and args in (["1"], ["3"]):
        return StartGame(Direction.CLOCKWISE if args == ["1"] else Direction.ANTICLOCKWISE)
    if head == "*o" and len(args) == 1 and args[0].isdigit() and len(args[0]) <= 5:
        return SetMode(int(args[0]))
    if head == "*T" and len(args) == 2 and args[1].isdigit() and len(args[1]) <= 5:
        return SetParameter(args[0], int(args[1]))
    return f"unknown or malformed command {text[:16]!r}"
