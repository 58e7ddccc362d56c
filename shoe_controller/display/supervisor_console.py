"""A supervisor's commands typed at the controller's terminal (``shoe run --console``).

Beside the web panel, this is how a pit supervisor clears a latched error at the table:

    clear alice            void alice REASON        enter alice QS      end alice
    burn alice             (blackjack: burn the profile's cards after a game error)

and at a wheel table (roulette) ``clear alice``, ``void alice REASON``, ``reset-bias alice
REASON``, ``dealer alice NAME``.

The PIN is asked without echo. Commands go to the controller's thread through
:meth:`TableController.supervisor` with the client ``"console"``, so the console's wrong PINs
are limited by the same access guard as the web panel's (:mod:`shoe_controller.access`), and
actions are journalled in order with everything else. After each command the console waits
briefly for the table's decision and prints it: done, refused (and why), or still queued.

When its input ends (stdin closed, the service started without a terminal) it says so once,
on stdout and in the log, and stops reading: the table runs on, and the web panel still
works. Any other failure of its thread is kept and re-raised by :meth:`check`, which the
owner calls in its loop (``Services.should_stop``), so it never dies silently.
"""

from __future__ import annotations

import getpass
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from shoe_controller.access import CONSOLE_CLIENT, SupervisorHeldOffError
from shoe_controller.errors import ShoeError
from shoe_controller.table.controller import TableController

log = logging.getLogger("shoe_controller.supervisor")

COMMANDS = {"clear": "clear", "void": "void_round", "enter": "enter_card", "end": "end_shoe",
            "burn": "error_burn"}
"""Typed verb -> the controller's supervisor action (the web panel's names)."""
HELP = ("commands: clear ID | void ID REASON | enter ID CARD | end ID | burn ID (blackjack: "
        "burn after a game error, between rounds) | help")
WAIT_SECONDS = 2.0
"""How long the console waits for the table's decision before saying "queued"."""
STOPPED = ("supervisor console: input ended ({why}): typed supervisor commands are no longer "
           "read; the table runs on (use the web panel, or restart with a terminal)")


class SupervisorConsoleError(ShoeError, RuntimeError):
    """The supervisor console's thread failed (re-raised to the owner by ``check()``)."""


WHEEL_COMMANDS = {"clear": "clear", "void": "void_round", "reset-bias": "reset_bias",
                  "dealer": "dealer"}
"""A wheel table's typed verbs (``shoe run --console`` with a roulette profile)."""
WHEEL_HELP = ("commands: clear ID | void ID REASON | reset-bias ID REASON (a new bias-"
              "monitoring period: the wheel was levelled, repaired or replaced) | dealer ID NAME "
              "(the dealer going on the table) | help")


def parse_command(line: str, commands: Mapping[str, str] = COMMANDS,
                  usage: str = HELP) -> tuple[str, str, str | None, str] | None:
    """``(action, supervisor, card, reason)`` for a command line; None for a blank line.

    Raises :class:`ShoeError` with the usage for anything else.
    """
    words = line.split()
    if not words:
        return None
    verb, args = words[0].lower(), words[1:]
    if verb not in commands or not args:
        raise ShoeError(usage)
    supervisor = args[0]
    if verb == "enter":
        if len(args) != 2:
            raise ShoeError("usage: enter ID CARD (e.g. enter alice QS)")
        return commands[verb], supervisor, args[1], ""
    if verb == "burn" and len(args) != 1:
        raise ShoeError("usage: burn ID (e.g. burn alice: the profile's cards burned after a "
                        "game error, with your PIN)")
    if verb == "void" and len(args) < 2:
        # Asked before the PIN: a void is journalled with why it was done.
        raise ShoeError("usage: void ID REASON (a void needs a reason, e.g. void alice "
                        "dealer exposed a card)")
    if verb == "reset-bias" and len(args) < 2:
        raise ShoeError("usage: reset-bias ID REASON (e.g. reset-bias alice wheel levelled)")
    if verb == "dealer" and len(args) < 2:
        raise ShoeError("usage: dealer ID NAME (e.g. dealer alice Maria)")
    return commands[verb], supervisor, None, " ".join(args[1:])


def describe(ticket: Any) -> str:
    """One line for a :class:`~shoe_controller.table.controller.SupervisorTicket`."""
    what = f"{ticket.action} by {ticket.supervisor}"
    if ticket.status != "journalled":
        return (f"{what}: queued, not yet journalled: the table applies it in order; it is "
                "lost if the controller stops first")
    if not ticket.accepted:
        return f"{what}: REFUSED by the table: {ticket.message} (journalled as tried)"
    return f"{what}: done (journal record {ticket.record})" + (
        f": {ticket.message}" if ticket.message else "")


class SupervisorConsole:
    """Reads commands from ``stream`` in a daemon thread until the end of its input.

    ``ask_pin`` asks for a PIN (``getpass``; ``EOFError`` counts as the end of input),
    ``out`` prints a line; ``wait`` is how long to wait for the table's decision.
    """

    def __init__(self, controller: TableController, stream: Iterable[str],
                 ask_pin: Callable[[str], str] = getpass.getpass,
                 out: Callable[[str], None] = print, *, wait: float = WAIT_SECONDS,
                 commands: Mapping[str, str] = COMMANDS, usage: str = HELP) -> None:
        self.controller = controller
        self.commands = commands
        self.usage = usage
        self.stream = stream
        self.ask_pin = ask_pin
        self.out = out
        self.wait = wait
        self.ended: str | None = None
        self._error: BaseException | None = None
        self._closed = False
        self.thread = threading.Thread(target=self._run, name="supervisor-console", daemon=True)

    def start(self) -> SupervisorConsole:
        self.out(self.usage)
        self.thread.start()
        return self

    def handle(self, line: str) -> None:
        """Carry out one command line (refusals are printed, not raised)."""
        try:
            parsed = parse_command(line, self.commands, self.usage)
            if parsed is None:
                return
            action, supervisor, card, reason = parsed
            pin = self.ask_pin(f"PIN for {supervisor}: ")
            ticket = self.controller.supervisor(action, supervisor, pin, card=card,
                                                reason=reason, client=CONSOLE_CLIENT)
        except SupervisorHeldOffError as exc:
            self.out(f"refused: {exc}")
            return
        except ShoeError as exc:
            self.out(str(exc))
            return
        ticket.wait(self.wait)
        self.out(describe(ticket))

    def _run(self) -> None:
        try:
            for line in self.stream:
                if self._closed:
                    return
                self.handle(line)
            self._end("end of input")
        except EOFError:
            self._end("end of input while asking for a PIN")
        except BaseException as exc:
            self._error = exc
            log.error("supervisor console failed: %s", exc, exc_info=exc)
            self.out(f"supervisor console failed: {exc}")

    def _end(self, why: str) -> None:
        if self._closed:
            return
        self.ended = why
        message = STOPPED.format(why=why)
        self.out(message)
        log.warning(message, extra={"reason": why})

    # ------------------------------------------------------------------ owner side
    @property
    def failed(self) -> bool:
        return self._error is not None

    def check(self) -> None:
        """Re-raise a failure of the console's thread (the end of its input is not one)."""
        if self._error is not None:
            raise SupervisorConsoleError(
                f"supervisor console failed: {self._error}") from self._error

    def close(self) -> None:
        """Stop handling lines (idempotent; a thread blocked reading stdin stays a daemon)."""
        self._closed = True
