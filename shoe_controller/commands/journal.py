"""``shoe journal``: verify a table journal, export its rounds, recall the last rounds.

``verify`` needs only the journal package; ``export`` and ``recall`` replay the journal through
the table that wrote it, imported only when asked for: a card table
(``shoe_controller.table.history``) or, when the journal's session record says ``game =
"roulette"``, a wheel table (:mod:`shoe_controller.commands.roulette_journal`). They are the
tools to investigate a journal that fails ``verify``, so they still work on one, but first
they run the same check and print a WARNING on stderr when the hash chain is broken.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TextIO

from shoe_controller.errors import JournalError, ShoeError

_SENSOR_SOURCES = (None, "shoe", "scanner")  # read by the shoe itself: no mark needed
_FLAG_NAMES = {
    "natural": "natural",
    "player_pair": "P pair",
    "banker_pair": "B pair",
    "banker_three_card_7": "B 3-card 7",
    "player_three_card_8": "P 3-card 8",
    "banker_wins_with_6": "B wins on 6",
}


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    verify_help = ("check the hash chain; name every edited, deleted, inserted or reordered "
                   "record (exit 1 if any)")
    verify = actions.add_parser("verify", help=verify_help, description=verify_help)
    verify.add_argument("path", metavar="PATH", type=Path, help="the journal file")
    verify.add_argument("--json", action="store_true", help="one JSON object")
    _key_file_option(verify)

    export_help = ("the journal's rounds as JSON lines (the `shoe replay` schema; a wheel "
                   "table's: one round line per game, docs/roulette.md)")
    export = actions.add_parser("export", help=export_help, description=export_help + (
        "; warns on stderr if the hash chain is broken (see verify)"))
    export.add_argument("path", metavar="PATH", type=Path, help="the journal file")
    export.add_argument(
        "--json",
        action="store_true",
        help="JSON lines (the only format; accepted for symmetry with replay)",
    )
    export.add_argument(
        "-o", "--output", metavar="FILE", type=Path, help="write to FILE instead of standard output"
    )
    _key_file_option(export)
    _config_option(export)

    recall_help = "the last rounds, card by card (game recall), the round in play included"
    recall = actions.add_parser("recall", help=recall_help, description=recall_help + (
        "; warns on stderr if the hash chain is broken (see verify)"))
    recall.add_argument("path", metavar="PATH", type=Path, help="the journal file")
    recall.add_argument(
        "--last", metavar="N", type=_positive_int, default=10, help="how many rounds"
    )
    recall.add_argument("--json", action="store_true", help="one JSON object per round")
    _key_file_option(recall)
    _config_option(recall)


def _key_file_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--key-file",
        metavar="FILE",
        type=Path,
        help="HMAC key of a keyed journal (the file's bytes, whitespace stripped)",
    )


def _config_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        metavar="FILE",
        type=Path,
        help="wheel tables: the run configuration the controller ran with (its [wheel] "
             "grace periods decide games; default: shoe run's defaults)",
    )


def run(args: argparse.Namespace) -> int:
    handlers: dict[str, Callable[[argparse.Namespace], int]] = {
        "verify": _verify,
        "export": _export,
        "recall": _recall,
    }
    return handlers[args.action](args)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


# -- verify -------------------------------------------------------------------------------


def _read_key(args: argparse.Namespace) -> bytes | None:
    if args.key_file is None:
        return None
    try:
        key = args.key_file.read_bytes().strip()
    except OSError as exc:
        raise ShoeError(f"{args.key_file}: cannot read the key file: "
                        f"{exc.strerror or exc}") from None
    if not key:
        raise ShoeError(f"{args.key_file}: the key file is empty")
    return key


def _verify(args: argparse.Namespace) -> int:
    from shoe_controller.journal import verify_journal

    report = verify_journal(args.path, key=_read_key(args))
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False))
    else:
        print(report.summary())
        for problem in report.problems:
            print(f"  {problem.kind:<12} {problem.message}")
    return 0 if report.ok else 1


# -- export and recall --------------------------------------------------------------------


def _history() -> Any:
    try:
        history = importlib.import_module("shoe_controller.table.history")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("shoe_controller"):
            raise ShoeError(f"export not available: {exc.name} is not installed") from exc
        raise
    return history


def _warn_if_tampered(args: argparse.Namespace) -> None:
    """``verify``'s check, run first: a broken chain is named on stderr, then the command
    goes on (it is how a supervisor looks into what the journal holds)."""
    from shoe_controller.journal import verify_journal

    key = _read_key(args)
    try:
        report = verify_journal(args.path, key=key)
    except JournalError as exc:
        if key is None and "keyed" in str(exc):  # cannot check without the key: say so
            print(f"WARNING: {exc}; the hash chain was not checked (give --key-file)",
                  file=sys.stderr)
            return
        raise
    if not report.ok:
        first = report.problems[0]
        print(f"WARNING: {args.path}: the hash chain is broken ({len(report.problems)} "
              f"problem(s); the first: {first.message}): what follows may not be what was "
              f"journalled; see shoe journal verify {args.path}", file=sys.stderr)


def _journal_game(path: Path) -> str:
    """The game the journal's table plays: its first session record's ``game``
    (``baccarat`` for a journal written before sessions named it)."""
    from shoe_controller.journal import Journal

    with Journal(path, readonly=True) as journal:
        for record in journal.records():
            if record.kind == "session":
                game = record.data.get("game", "baccarat")
                return game if isinstance(game, str) else "baccarat"
    return "baccarat"


def _wheel_tools(args: argparse.Namespace) -> tuple[Any, Any] | None:
    """For a wheel table's journal, the roulette module and the replay's settings (from
    ``--config``); None for a card table's."""
    if _journal_game(args.path) != "roulette":
        if args.config is not None:
            raise ShoeError(f"{args.path}: --config is for a wheel table's journal; this one "
                            "is a card table's")
        return None
    from shoe_controller.commands import roulette_journal

    return roulette_journal, roulette_journal.wheel_settings_from_config(args.config)


def _export(args: argparse.Namespace) -> int:
    _warn_if_tampered(args)
    wheel = _wheel_tools(args)
    if wheel is not None:
        module, settings = wheel
        lines = module.export_lines(args.path, settings)
    else:
        lines = _history().export_lines(args.path)
    if args.output is None:
        _write_lines(lines, sys.stdout)
        return 0
    try:
        out = open(args.output, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise ShoeError(f"{args.output}: cannot write the export: "
                        f"{exc.strerror or exc}") from None
    with out:
        _write_lines(lines, out)
    return 0


def _recall(args: argparse.Namespace) -> int:
    _warn_if_tampered(args)
    wheel = _wheel_tools(args)
    if wheel is not None:
        module, settings = wheel
        rounds = module.recall(args.path, args.last, settings)
        if args.json:
            _write_lines(rounds, sys.stdout)
        else:
            lines = module.format_roulette_rounds(rounds) or ["no rounds in the journal"]
            sys.stdout.write("\n".join(lines) + "\n")
        return 0
    rounds = _history().recall(args.path, args.last)
    if args.json:
        _write_lines(rounds, sys.stdout)
    else:
        sys.stdout.write(format_recall(rounds))
    return 0


def _write_lines(lines: Iterable[Mapping[str, Any]], out: TextIO) -> None:
    try:
        for line in lines:
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
            out.flush()  # lines already written stay visible if a later record fails
    except BrokenPipeError:
        # The reader (``| head``) went away: not our error. Point stdout at devnull so the
        # interpreter's final flush does not complain again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out.fileno())


def format_recall(rounds: list[Mapping[str, Any]]) -> str:
    """A dealer/supervisor-readable table of rounds, one line per round, cards in deal order.

    Blackjack rounds get one block each instead
    (:mod:`shoe_controller.commands.blackjack_recall`).

    Each round is a ``recall()`` dict: ``shoe``, ``round``, ``cards`` (``target``,
    ``position``, ``card``, ``source``, ``counter``), ``result`` (the ``round`` line of the
    replay schema plus the side facts), ``irregularities`` and ``void`` when voided. Cards not
    read by the shoe's own sensor are marked with their source, e.g. ``5C(supervisor)``.
    """
    if not rounds:
        return "no rounds in the journal\n"
    from shoe_controller.commands.blackjack_recall import (
        format_blackjack_rounds,
        is_blackjack_round,
    )

    # A journal may change games between shoes: each run of one game's rounds in its form.
    games = _fill_gaps([is_blackjack_round(r) for r in rounds])
    out: list[str] = []
    start = 0
    for end in range(1, len(rounds) + 1):
        if end == len(rounds) or games[end] != games[start]:
            run = rounds[start:end]
            out.extend(format_blackjack_rounds(run) if games[start]
                       else _baccarat_table(run))
            start = end
    return "\n".join(out) + "\n"


def _fill_gaps(games: list[bool | None]) -> list[bool]:
    """A round with nothing that tells its game (no card yet, voided at once) is taken as
    the game of the round before it (or after it, at the start); baccarat if none tells."""
    known = next((g for g in games if g is not None), False)
    filled = []
    for game in games:
        known = known if game is None else game
        filled.append(known)
    return filled


def _baccarat_table(rounds: list[Mapping[str, Any]]) -> list[str]:
    header = ("shoe", "round", "player", "banker", "P", "B", "outcome", "flags")
    rows = [header] + [_recall_row(r) for r in rounds]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header) - 1)]
    lines = []
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=True)]
        lines.append("  ".join(cells + [row[-1]]).rstrip())
    lines.insert(1, "-" * len(lines[0]))
    return lines


def _recall_row(round_: Mapping[str, Any]) -> tuple[str, ...]:
    result: Mapping[str, Any] = round_.get("result") or {}
    hands = {"player": _cards(round_, result, "player"), "banker": _cards(round_, result, "banker")}
    flags = [label for key, label in _FLAG_NAMES.items() if result.get(key)]
    flags += [str(kind) for kind in round_.get("irregularities", ())]
    void = round_.get("void")
    if void:
        by = f" by {void['supervisor']}" if void.get("supervisor") else ""
        reason = f": {void['reason']}" if void.get("reason") else ""
        outcome = "VOID"
        flags.append(f"voided{by}{reason}")
    elif result:
        outcome = str(result.get("outcome", "?"))
    else:
        outcome = "(in play)"
    return (
        str(round_.get("shoe", "")),
        str(round_.get("round", "?")),
        hands["player"] or "-",
        hands["banker"] or "-",
        _total(result, "player"),
        _total(result, "banker"),
        outcome,
        ", ".join(flags),
    )


def _cards(round_: Mapping[str, Any], result: Mapping[str, Any], hand: str) -> str:
    """The hand's cards in the order dealt, each marked with its source unless the shoe."""
    dealt = [c for c in round_.get("cards", ()) if str(c.get("target", "")).lower() == hand]
    if dealt:
        dealt.sort(key=lambda c: c.get("position") or 0)
        return " ".join(_card_text(c) for c in dealt)
    return " ".join(str(code) for code in result.get(hand, ()))


def _card_text(card: Mapping[str, Any]) -> str:
    code = str(card.get("card") or "??")
    source = card.get("source")
    return code if source in _SENSOR_SOURCES else f"{code}({source})"


def _total(result: Mapping[str, Any], hand: str) -> str:
    total = result.get(f"{hand}_total")
    return "" if total is None else str(total)
