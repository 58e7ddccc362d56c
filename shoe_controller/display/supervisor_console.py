"""A supervisor's commands typed at the controller's terminal (``shoe run --console``).

Until the web panel exists this is how a pit supervisor clears a latched error at the table:

    clear alice            void alice [reason]      enter alice QS      end alice

The PIN is asked without echo; a wrong PIN is refused and logged. Commands are handed to the
controller's thread with :meth:`TableController.supervisor`, so they are journalled in order
with everything else.
"""

from __future__ import annotations

import getpass
import logging
import threading
from collections.abc import Callable
from typing import TextIO

from shoe_controller.errors import ShoeError
from shoe_controller.table.controller import TableController

log = logging.getLogger("shoe_controller.supervisor")

COMMANDS = {"clear": "clear", "void": "void_round", "enter": "enter_card", "end": "end_shoe"}
HELP = "commands: clear ID | void ID [reason] | enter ID CARD | end ID | help"


def parse_command(line: str) -> tuple[str, str, str | None, str] | None:
    """``(action, supervisor, card, reason)`` for a command line; None for a blank line.

    Raises :class:`ShoeError` with the usage for anything else.
    """
    words = line.split()
    if not words:
        return None
    verb, args = words[0].lower(), words[1:]
    if verb not in COMMANDS or not args:
        raise ShoeError(HELP)
    supervisor = args[0]
    if verb == "enter":
        if len(args) != 2:
            raise ShoeError("usage: enter ID CARD (e.g. enter alice QS)")
        return COMMANDS[verb], supervisor, args[1], ""
    return COMMANDS[verb], supervisor, None, " ".join(args[1:])


class SupervisorConsole:
    """Reads commands from ``stream`` in a daemon thread until end of input."""

    def __init__(self, controller: TableController, stream: TextIO,
                 ask_pin: Callable[[str], str] = getpass.getpass,
                 out: Callable[[str], None] = print) -> None:
        self.controller = controller
        self.stream = stream
        self.ask_pin = ask_pin
        self.out = out
        self.thread = threading.Thread(target=self._run, name="supervisor-console", daemon=True)

    def start(self) -> SupervisorConsole:
        self.out(HELP)
        self.thread.start()
        return self

    def handle(self, line: str) -> None:
        try:
            parsed = parse_command(line)
            if parsed is None:
                return
            action, supervisor, card, reason = parsed
            pin = self.ask_pin(f"PIN for {supervisor}: ")
            self.controller.supervisor(action, supervisor, pin, card=card, reason=reason)
            self.out(f"{action} queued for {supervisor}")
        except ShoeError as exc:
            self.out(str(exc))

    def _run(self) -> None:
        for line in self.stream:
            self.handle(line)
