"""What can happen at a wheel table, as journal inputs.

A wheel's status stream is journalled line by line, as received: the table's state is the
fold of its inputs, and the game tracker takes time as an input, so every line and every
timer tick that the tracker acted on carries the journal record's wall time as its clock.
Replaying the records into a fresh table rebuilds exactly the same games.

The inputs a wheel table shares with a card table (session, link, betting, supervisor) are
every live table's (:mod:`shoe_controller.live.inputs`), with the same journal kinds and fields
(docs/journal.md); two kinds are a wheel's:

* ``wheel_line``: one line from the wheel (``line``: its bytes as Latin-1 text, without the
  line end, so any byte survives the JSON of the record), or a stretch of noise the line
  splitter gave up on (``noise``: why);
* ``wheel_tick``: the tracker's next deadline passed with nothing received (a grace period,
  a confirmation window, silence, a status poll).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from shoe_controller.live.inputs import (
    BettingCommand,
    LinkChanged,
    SessionStarted,
    SupervisorAction,
    TableInput,
)

__all__ = [
    "WHEEL_INPUT_KINDS",
    "BettingCommand",
    "LinkChanged",
    "SessionStarted",
    "SupervisorAction",
    "WheelLine",
    "WheelTick",
    "wheel_input_from_record",
]

#: Supervisor actions at a wheel table: clear latched irregularities, void the game in
#: progress (with a reason), start a new bias-monitoring period (the wheel was serviced), put
#: a dealer on the table (``reason``: the dealer's name; the bias report's dealer breakdown).
WHEEL_SUPERVISOR_ACTIONS = ("clear", "void_round", "reset_bias", "dealer")


@dataclass(frozen=True, slots=True)
class WheelLine(TableInput):
    KIND: ClassVar[str] = "wheel_line"
    line: str = ""
    noise: str = ""

    @classmethod
    def of(cls, raw: bytes) -> WheelLine:
        return cls(line=raw.decode("latin-1"))

    @property
    def raw(self) -> bytes:
        return self.line.encode("latin-1")


@dataclass(frozen=True, slots=True)
class WheelTick(TableInput):
    KIND: ClassVar[str] = "wheel_tick"


_OWN: dict[str, type[TableInput]] = {WheelLine.KIND: WheelLine, WheelTick.KIND: WheelTick}
_SHARED = (SessionStarted, LinkChanged, BettingCommand, SupervisorAction)
WHEEL_INPUT_KINDS = frozenset({*_OWN, *(cls.KIND for cls in _SHARED)})


def wheel_input_from_record(kind: str, data: Mapping[str, Any]) -> TableInput:
    """Rebuild a wheel table's input from a journal record; ``ValueError`` for a kind a wheel
    table does not journal (a shoe's record in a wheel's journal) or a malformed body."""
    if kind not in WHEEL_INPUT_KINDS:
        raise ValueError(f"journal record kind {kind!r} is not a wheel table's")
    cls = _OWN.get(kind) or next(shared for shared in _SHARED if shared.KIND == kind)
    types = {f.name: str(f.type) for f in fields(cls)}
    for key, value in data.items():
        if key not in types:
            raise ValueError(f"journal record kind {kind!r} has unknown field {key!r}")
        if not _is(types[key], value):
            raise ValueError(f"journal record kind {kind!r}: {key} must be {types[key]}, "
                             f"got {value!r:.40}")
    if kind == WheelLine.KIND and not all(ord(c) < 256 for c in data.get("line", "")):
        raise ValueError(f"journal record kind {kind!r}: line must be bytes as Latin-1 text")
    try:
        return cls(**data)
    except TypeError as exc:  # a required field is missing
        raise ValueError(f"journal record kind {kind!r}: {exc}") from None


def _is(annotation: str, value: Any) -> bool:
    """Whether a record's value has its field's type (a wheel table's record has no card)."""
    if annotation == "str":
        return isinstance(value, str)
    if annotation == "bool":
        return isinstance(value, bool)
    if annotation == "dict[str, Any] | None":
        return value is None or isinstance(value, dict)
    if annotation == "list[int] | None":
        return value is None or (isinstance(value, list) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value))
    return value is None  # "Card | None": no cards at a wheel table
