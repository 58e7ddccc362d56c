"""The decisions file (version 1): the players' choices that ``shoe replay`` applies to a shoe.

JSON Lines, one object per round in order (docs/blackjack.md)::

    {"round": 1, "seats": [1, 4, 7], "insurance": [4],
     "actions": {"1": ["hit", "stand"], "4": ["split", "hit", "stand", "double"], "7": []}}

Everything that can be checked without the cards is checked here, with the file, line and round
in the message; what depends on the cards (an action the hand may not take) is checked by the
replay as it deals.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shoe_controller.errors import ShoeError
from shoe_controller.games.blackjack.rules import Action

SCHEMA_VERSION = 1
_KEYS = ("schema", "round", "seats", "insurance", "actions")


class DecisionsError(ShoeError, ValueError):
    """The decisions file is malformed or does not fit the shoe; the message says where."""


@dataclass(frozen=True, slots=True)
class RoundDecisions:
    round: int
    seats: tuple[int, ...]
    insurance: frozenset[int]
    #: Seat -> its actions in play order across its hands.
    actions: Mapping[int, tuple[Action, ...]]
    #: Where the round was written, for error messages ("decisions.jsonl:3").
    where: str


def read_decisions_file(path: str | Path, seats: int = 7) -> list[RoundDecisions]:
    try:
        text = Path(path).read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise DecisionsError(f"{path}: cannot read decisions file: {exc.strerror or exc}") \
            from exc
    except UnicodeDecodeError as exc:
        raise DecisionsError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") \
            from None
    return parse_decisions(text, str(path), seats)


def parse_decisions(text: str, source: str = "<decisions>", seats: int = 7) -> list[RoundDecisions]:
    """Every round of a decisions file; blank lines are skipped."""
    rounds: list[RoundDecisions] = []
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        if line.strip():
            rounds.append(_parse_line(line, f"{source}:{number}", len(rounds) + 1, seats))
    return rounds


def _parse_line(line: str, where: str, expected: int, max_seat: int) -> RoundDecisions:
    try:
        data = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise DecisionsError(f"{where}: not a JSON object: {_short(str(exc))}") from None
    if not isinstance(data, dict):
        raise DecisionsError(f"{where}: each line must be a JSON object, got {_short(line)}")
    unknown = [key for key in data if key not in _KEYS]
    if unknown:
        raise DecisionsError(f"{where}: unknown key {_short(repr(unknown[0]))} "
                             f"(allowed: {', '.join(_KEYS)})")
    schema = data.get("schema", SCHEMA_VERSION)
    if not _is_int(schema) or schema != SCHEMA_VERSION:
        raise DecisionsError(f"{where}: schema {_short(repr(schema))} is not supported "
                             f"(this version reads {SCHEMA_VERSION})")
    number = data.get("round")
    if not _is_int(number) or number != expected:
        raise DecisionsError(f"{where}: expected round {expected} (rounds are numbered from 1 "
                             f"in order), got {_short(repr(number))}")
    where = f"{where}: round {expected}"
    seats = _seats(data.get("seats"), where, max_seat)
    insurance = frozenset(_seat_list(data.get("insurance", []), f"{where}: insurance",
                                     max_seat, allow_empty=True))
    strangers = sorted(insurance - set(seats))
    if strangers:
        raise DecisionsError(f"{where}: insurance for seat {strangers[0]}, which has no bet "
                             f"(seats: {list(seats)})")
    return RoundDecisions(expected, seats, insurance, _actions(data.get("actions", {}), where,
                                                               seats), where)


def _seats(raw: Any, where: str, max_seat: int) -> tuple[int, ...]:
    if raw is None:
        raise DecisionsError(f"{where}: \"seats\" is required (the seats with a bet)")
    return tuple(sorted(_seat_list(raw, f"{where}: seats", max_seat, allow_empty=False)))


def _seat_list(raw: Any, what: str, max_seat: int, allow_empty: bool) -> list[int]:
    if not isinstance(raw, list) or (not raw and not allow_empty):
        need = "a list of seat numbers" + ("" if allow_empty else ", at least one")
        raise DecisionsError(f"{what}: must be {need}, got {_short(repr(raw))}")
    for seat in raw:
        if isinstance(seat, bool) or not isinstance(seat, int) or not 1 <= seat <= max_seat:
            raise DecisionsError(f"{what}: {_short(repr(seat))} is not a seat "
                                 f"(1 to {max_seat})")
    if len(set(raw)) != len(raw):
        raise DecisionsError(f"{what}: a seat is listed twice: {_short(repr(raw))}")
    return list(raw)


def _actions(raw: Any, where: str, seats: tuple[int, ...]) -> dict[int, tuple[Action, ...]]:
    if not isinstance(raw, dict):
        raise DecisionsError(f"{where}: actions must be an object of seat -> list of actions, "
                             f"got {_short(repr(raw))}")
    actions: dict[int, tuple[Action, ...]] = {}
    by_name = {str(seat): seat for seat in seats}  # "1", never "01" or " 1"
    for key, words in raw.items():
        seat = by_name.get(key)
        if seat is None:
            raise DecisionsError(f"{where}: actions for seat {_short(repr(key))}, which has no "
                                 f"bet (seats: {list(seats)})")
        if not isinstance(words, list):
            raise DecisionsError(f"{where}, seat {seat}: actions must be a list, "
                                 f"got {_short(repr(words))}")
        parsed = []
        for word in words:
            try:
                parsed.append(Action(word))
            except ValueError:
                known = ", ".join(a.value for a in Action)
                raise DecisionsError(f"{where}, seat {seat}: unknown action "
                                     f"{_short(repr(word))} (known: {known})") from None
        actions[seat] = tuple(parsed)
    return actions


def _is_int(value: Any) -> bool:
    # JSON's 1.0 and true are not round numbers (Python would compare them equal to 1).
    return isinstance(value, int) and not isinstance(value, bool)


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
