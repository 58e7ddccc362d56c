"""The ``shoe`` command line: one sub-command per module, registered in :data:`COMMANDS`.

Each command module exposes ``configure(parser)`` (adds its arguments) and ``run(args) -> int``
(the exit status). Only the module of the command given is imported, so ``shoe --help`` does
not pay for OpenCV, nor ``shoe sim`` for the controller. Exit status: 0 success, 1 the
command failed (a clear message on stderr), 2 bad usage.
"""

from __future__ import annotations

import argparse
import importlib
import sqlite3
import sys
from collections.abc import Collection, Iterator, Sequence

from shoe_controller import __version__
from shoe_controller.errors import ShoeError

# name -> (module, one-line help). Order is the order shown in ``shoe --help``.
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("shoe_controller.commands.demo", "play a whole shoe against the software shoe"),
    "run": ("shoe_controller.commands.run", "run the table controller against a shoe"),
    "sim": ("simulators.cli", "run the software shoe (pseudo-terminal or TCP)"),
    "ports": ("shoe_controller.commands.ports", "list serial ports and USB shoes"),
    "odds": ("shoe_controller.commands.odds", "exact baccarat odds for a shoe composition"),
    "replay": (
        "shoe_controller.commands.replay",
        "deal a shoe file through the baccarat or blackjack engine",
    ),
    "journal": ("shoe_controller.commands.journal", "verify, export or recall a table journal"),
    "vision": ("shoe_controller.commands.vision", "camera fallback: enrol a deck, read cards"),
    "table-sim": ("simulators.table_sim_cli", "run the reference table system (game server)"),
    "hash-pin": ("shoe_controller.commands.hash_pin", "hash a supervisor PIN for the config file"),
    "pit": ("shoe_controller.commands.pit", "pit and floor view of every table on an MQTT broker"),
}


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every option's help ends with its default, the same way everywhere: ``(default: X)``.

    argparse's own formatter also prints ``(default: None)``, ``(default: False)`` and
    ``(default: )``, which say nothing; those are left out, as is a default the help text
    already states."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if action.default in (None, False, "", [], argparse.SUPPRESS) or "default" in text:
            return text
        return super()._get_help_string(action)


def iter_parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """``(("journal", "verify"), parser)`` for the parser and every sub-command under it,
    depth first in the order ``--help`` shows them (the root is ``((), parser)``)."""
    yield path, parser
    for action in parser._actions:  # argparse has no public walk of its sub-parsers
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from iter_parsers(sub, (*path, name))


def build_parser(commands: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line; with ``commands`` (names of :data:`COMMANDS`), only their
    modules are imported and configured, the others listed by name and help (``shoe --help``
    and a mistyped name read the same). A ``shoe`` process then pays for its own command's
    imports only: ``shoe sim`` for the simulator, not the controller's."""
    parser = argparse.ArgumentParser(
        prog="shoe", description="Card-scanning shoe controller for live baccarat tables."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module_name, help_text) in COMMANDS.items():
        if commands is not None and name not in commands:
            subparsers.add_parser(name, help=help_text, description=help_text)
            continue
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue  # a command whose module is not built yet is simply not offered
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        module.configure(sub)
        sub.set_defaults(_run=module.run)
    for _, each in iter_parsers(parser):  # nested ones too (journal verify, vision enroll)
        each.formatter_class = HelpFormatter
        each.set_defaults(_parser=each)  # the innermost one wins: it reports stray arguments
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    # The command is the first word that is not an option (the top level's only options are
    # --help and --version, which take no value).
    named = next((word for word in words if not word.startswith("-")), None)
    parser = build_parser({named} & COMMANDS.keys() if named else ())
    # argparse reports an unknown option with the top-level usage ("shoe [-h] COMMAND"),
    # which does not help: the command's own parser reports it, with the command's usage.
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        args._parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        return int(args._run(args) or 0)
    except ShoeError as exc:
        from shoe_controller.logs import log_fatal_as_json

        if not log_fatal_as_json(f"shoe {args.command}: error: {exc}"):
            print(f"shoe {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except (OSError, sqlite3.DatabaseError) as exc:
        # A file or port the operator named that a command did not check itself: still what
        # and why in one line, never a traceback.
        from shoe_controller.logs import log_fatal_as_json

        message = f"shoe {args.command}: error: {_os_error(exc)}" if isinstance(
            exc, OSError) else f"shoe {args.command}: error: not a readable journal: {exc}"
        if not log_fatal_as_json(message):
            print(message, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _os_error(exc: OSError) -> str:
    """``PATH: reason`` for an OSError (its ``str()`` starts with ``[Errno N]``)."""
    reason = exc.strerror or str(exc)
    names = [str(name) for name in (exc.filename, exc.filename2) if name is not None]
    return ": ".join([*names, reason]) if names else reason


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
