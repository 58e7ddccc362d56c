"""``shoe journal export`` and ``shoe journal recall`` for a wheel table's journal.

Both replay the journal's inputs (each wheel line, timer tick, betting command, supervisor
action and link change, at its journal time) into a fresh
:class:`~shoe_controller.wheel_table.machine.WheelTable`, the table the live controller runs,
so what they print is what the table decided: never the messages it reported (a table system
may have missed some), never the wheel's raw lines read anew.

The game tracker's grace periods decide games (how long a missing ball is tolerated, how long
a lone report waits for a second): a replay must use the ones the controller ran with. The
controller journals them with each session (``SessionStarted.settings``), and the replay
takes them from there; ``--config FILE`` (its ``[wheel]`` section) gives them for a journal
written before sessions carried them, until its first session record that does.

Export (docs/roulette.md, schema docs/roulette/export.schema.json, version 1): one line per
finished round, ``{"type": "round", "round", "number", "colour", "wheel_spin", "void"}``;
a void round has ``number`` and ``colour`` null and ``void`` its reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeGuard

from shoe_controller.errors import ConfigError, ShoeError

#: Version of the export's lines (docs/roulette/export.schema.json).
EXPORT_SCHEMA_VERSION = 1

_FACTS = ("number", "colour", "dozen", "column", "parity", "half", "source", "dealer")


def wheel_settings_from_config(path: Path | None) -> Any:
    """The :class:`WheelSettings` of a run configuration's ``[wheel]`` section (the defaults
    when ``path`` is None). Only that section is read: the rest of the file (the device, the
    table system) does not matter to a replay."""
    from shoe_controller.config import parse_toml
    from shoe_controller.wheel_table.machine import WheelSettings
    from shoe_controller.wheel_table.settings import bias_config, tracker_config, wheel_problems

    if path is None:
        return WheelSettings()
    try:
        data = parse_toml(path.read_bytes())
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the run configuration: "
                          f"{exc.strerror or exc}") from None
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    section = data.get("wheel", {})
    problems = wheel_problems(section)
    if problems:
        raise ConfigError(f"{len(problems)} problem(s) in the [wheel] section of {path}:\n  "
                          + "\n  ".join(f"wheel{problem}" for problem in problems))
    return WheelSettings(wheel=str(section.get("name", "wheel-1")),
                         tracker=tracker_config(section), bias=bias_config(section))


def replay_wheel_journal(path: str | Path, settings: Any = None
                         ) -> Iterator[tuple[float, list[dict[str, Any]]]]:
    """Each journal record's time and the events the table gave for it, in order."""
    from shoe_controller.journal import Journal
    from shoe_controller.wheel_table.inputs import wheel_input_from_record
    from shoe_controller.wheel_table.machine import WheelTable

    table = WheelTable(settings)
    with Journal(path, readonly=True) as journal:
        for record in journal.records():
            try:
                item = wheel_input_from_record(record.kind, record.data)
            except ValueError as exc:
                raise ShoeError(f"{path}: journal record {record.seq} ({record.kind}): {exc}; "
                                "the journal is damaged (see shoe journal verify)") from None
            yield record.wall_time, table.handle(item, record.wall_time).events


def wheel_rounds(records: Iterable[tuple[float, list[dict[str, Any]]]]
                 ) -> list[dict[str, Any]]:
    """Every round the table opened, in order: what ``recall --json`` prints.

    A round: ``round``, ``wheel_spin``, ``respin_of``, ``respun_as``, ``phase``
    (``betting_open``, ``betting_closed``, ``number`` or ``void``), ``opened_at``,
    ``closed_at``, ``finished_at`` (journal times, Unix seconds), the number's facts
    (``number``, ``colour``, ``dozen``, ``column``, ``parity``, ``half``, ``source``,
    ``dealer``; null until it is known), ``void`` (null, or ``reason``, ``detail``,
    ``supervisor``), ``irregularities`` (latched: ``kind``, ``detail``, ``cleared_by``) and
    ``warnings`` (``kind``, ``detail``) that concern the round.
    """
    rounds: dict[int, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    for at, events in records:
        for event in events:
            kind = event["type"]
            number: Any = event.get("round")
            if kind == "round_opened":
                current = rounds[number] = {
                    "round": number, "wheel_spin": event.get("wheel_spin"),
                    "respin_of": event.get("respin_of"), "respun_as": None,
                    "phase": "betting_open", "opened_at": at, "closed_at": None,
                    "finished_at": None, **dict.fromkeys(_FACTS), "void": None,
                    "irregularities": [], "warnings": []}
                if event.get("respin_of") in rounds:
                    rounds[event["respin_of"]]["respun_as"] = number
            elif kind == "betting_closed" and number in rounds:
                rounds[number].update(phase="betting_closed", closed_at=at)
            elif kind == "winning_number" and number in rounds:
                rounds[number].update({key: event.get(key) for key in _FACTS}, phase="number",
                                      finished_at=at)
                if event.get("wheel_spin") is not None:
                    rounds[number]["wheel_spin"] = event["wheel_spin"]
                current = None
            elif kind == "round_void" and number in rounds:
                rounds[number].update(phase="void", finished_at=at, void={
                    "reason": event["reason"], "detail": event.get("detail", ""),
                    "supervisor": event.get("supervisor")})
                current = None
            elif kind in ("irregularity", "wheel_warning"):
                concerned = rounds.get(number) if number is not None else current
                if concerned is not None:
                    facts = {"kind": event["kind"], "detail": event.get("detail", "")}
                    if kind == "wheel_warning" or not event.get("latched", True):
                        concerned["warnings"].append(facts)
                    else:
                        concerned["irregularities"].append({**facts, "cleared_by": None})
            elif kind == "irregularity_cleared":
                for round_ in rounds.values():
                    for latched in round_["irregularities"]:
                        if latched["kind"] == event["kind"] and latched["cleared_by"] is None:
                            latched["cleared_by"] = event.get("supervisor")
    return list(rounds.values())


def export_lines(path: str | Path, settings: Any = None) -> Iterator[dict[str, Any]]:
    """One ``round`` line per finished round (a number or a void), in round order; a round
    still in play at the journal's end has no line."""
    for round_ in wheel_rounds(replay_wheel_journal(path, settings)):
        if round_["phase"] in ("number", "void"):
            void = round_["void"]
            yield {"type": "round", "round": round_["round"], "number": round_["number"],
                   "colour": round_["colour"], "wheel_spin": round_["wheel_spin"],
                   "void": None if void is None else void["reason"]}


def recall(path: str | Path, last: int = 10, settings: Any = None) -> list[dict[str, Any]]:
    """The last ``last`` rounds (the one in play included), as :func:`wheel_rounds`."""
    rounds = wheel_rounds(replay_wheel_journal(path, settings))
    return rounds[-last:] if last > 0 else []


# ---------------------------------------------------------------------------- in words
_ORDINAL: dict[Any, str] = {1: "1st", 2: "2nd", 3: "3rd"}
_IN_PLAY = {"betting_open": "in play: betting open",
            "betting_closed": "in play: no more bets, waiting for the number"}
_SOURCES = {"status": "the wheel's status", "line": "the wheel's result line",
            "both": "the wheel's status and result line"}


def format_roulette_rounds(rounds: list[Mapping[str, Any]]) -> list[str]:
    """A supervisor's account of each round, a heading line then indented details, e.g.::

        round 57  spin 143  17 BLACK  (2nd dozen, column 2, odd, 1-18)
          opened 2024-06-10 16:20:00 UTC, no more bets +25.0 s, number +46.0 s
          read from the wheel's status and result line; dealer Maria
    """
    lines: list[str] = []
    for round_ in rounds:
        lines.append(_heading(round_))
        lines.extend(f"  {line}" for line in _details(round_))
    return lines


def _heading(round_: Mapping[str, Any]) -> str:
    spin = round_.get("wheel_spin")
    where = f"round {round_.get('round', '?')}" + (f"  spin {spin:03d}"
                                                  if isinstance(spin, int) else "")
    phase = round_.get("phase")
    void = round_.get("void")
    if phase == "number":
        return f"{where}  {_number_text(round_)}"
    if phase == "void" and void:
        return f"{where}  VOID: {str(void.get('reason', '?')).replace('_', ' ')}"
    return f"{where}  ({_IN_PLAY.get(str(phase), 'in play')})"


def _number_text(round_: Mapping[str, Any]) -> str:
    number, colour = round_.get("number"), str(round_.get("colour") or "?")
    if number == 0:
        return "0 GREEN  (zero)"
    facts = [f"{_ORDINAL.get(round_.get('dozen'), '?')} dozen",
             f"column {round_.get('column', '?')}", str(round_.get("parity", "?")),
             "1-18" if round_.get("half") == "low" else "19-36"]
    return f"{number} {colour.upper()}  ({', '.join(facts)})"


def _details(round_: Mapping[str, Any]) -> list[str]:
    opened = round_.get("opened_at")
    times = [f"opened {_clock(opened)} UTC"]
    for key, label in (("closed_at", "no more bets"), ("finished_at", "number"
                                                      if round_.get("phase") == "number"
                                                      else "void")):
        at = round_.get(key)
        if _is_number(at) and _is_number(opened):
            times.append(f"{label} {at - opened:+.1f} s")
    lines = [", ".join(times)]
    if round_.get("respin_of") is not None:
        lines.append(f"respin of round {round_['respin_of']} (its bets stand)")
    if round_.get("phase") == "number":
        said = [f"read from {_SOURCES.get(str(round_.get('source')), round_.get('source'))}"]
        if round_.get("dealer"):
            said.append(f"dealer {round_['dealer']}")
        lines.append("; ".join(said))
    void = round_.get("void")
    if void:
        what = str(void.get("detail") or void.get("reason"))
        who = void.get("supervisor")
        if who:  # a supervisor's void: the detail is "<who>: <their reason>"
            what = f"voided by {who}: {what.removeprefix(f'{who}: ')}"
        lines.append(what)
        if round_.get("respun_as") is not None:
            lines.append(f"respun as round {round_['respun_as']}")
    for latched in round_.get("irregularities") or ():
        cleared = (f"cleared by {latched['cleared_by']}" if latched.get("cleared_by")
                   else "NOT CLEARED")
        lines.append(f"irregularity: {latched['kind']} ({latched.get('detail', '')}); "
                     f"{cleared}")
    for warning in round_.get("warnings") or ():
        lines.append(f"warning: {warning['kind']} ({warning.get('detail', '')})")
    return lines


def _is_number(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _clock(at: Any) -> str:
    import datetime

    if not _is_number(at):
        return "?"
    moment = datetime.datetime.fromtimestamp(at, datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S")
