"""The ``shoe`` command line: one sub-command per module, registered in :data:`COMMANDS`.

Each command module exposes ``configure(parser)`` (adds its arguments) and ``run(args) -> int``
(the exit status). Modules are imported only when argparse needs them, so ``shoe --help`` does
not pay for OpenCV. Exit status: 0 success, 1 the command failed (a clear message on stderr),
2 bad usage.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from shoe_controller import __version__
from shoe_controller.errors import ShoeError

# name -> (module, one-line help). Order is the order shown in ``shoe --help``.
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("shoe_controller.commands.demo", "play a whole shoe against the software shoe"),
    "run": ("shoe_controller.commands.run", "run the table controller against a shoe"),
    "sim": ("simulators.cli", "run the software shoe (pseudo-terminal or TCP)"),
    "ports": ("shoe_controller.commands.ports", "list serial ports and USB shoes"),
    "odds": ("shoe_controller.commands.odds", "exact baccarat odds for a shoe composition"),
    "replay": ("shoe_controller.commands.replay", "deal a shoe file through the baccarat engine"),
    "journal": ("shoe_controller.commands.journal", "verify, export or recall a table journal"),
    "vision": ("shoe_controller.commands.vision", "camera fallback: enrol a deck, read cards"),
    "table-sim": ("simulators.table_sim_cli", "run the reference table system (game server)"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="shoe", description="Card-scanning shoe controller for live baccarat tables."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module_name, help_text) in COMMANDS.items():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue  # a command whose module is not built yet is simply not offered
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        module.configure(sub)
        sub.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except ShoeError as exc:
        from shoe_controller.logs import log_fatal_as_json

        if not log_fatal_as_json(f"shoe {args.command}: error: {exc}"):
            print(f"shoe {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
