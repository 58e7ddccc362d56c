"""What every live table's supervision shares: the table system's reporter as the controller
sees it, the actor its commands are journalled under, and a supervisor's action from the PIN
check to the table's decision (:class:`SupervisorTicket`)."""

from __future__ import annotations

import logging
import threading
from typing import Any, Protocol

from shoe_controller.errors import ShoeError

log = logging.getLogger("shoe_controller.table")


class Reporter(Protocol):
    """The table-system reporter (``shoe_controller.reporting.client.TableSystemReporter``).

    It gets the events of every journal record (``live`` False while the journal is replayed
    at start: numbers already assigned are read back from the journal's outbox, the rest are
    assigned after them), says whether the table system is connected and
    drives betting, and hands over the table system's commands for this thread to apply.
    """

    @property
    def connected(self) -> bool: ...

    @property
    def drives_betting(self) -> bool: ...

    def add(self, record_seq: int, at: float, events: list[dict[str, Any]], *,
            live: bool = True) -> None: ...

    def take_commands(self) -> list[Any]: ...

    def reject(self, command: Any, reason: str) -> None: ...

    def check(self) -> None: ...


TABLE_SYSTEM = "table-system"
"""The actor journalled for the table system's commands (origin of its betting commands)."""


class SupervisorAuthError(ShoeError, PermissionError):
    """Unknown supervisor or wrong PIN (also: a reserved id, a PIN too short: the same answer).

    Too many wrong PINs raise :class:`shoe_controller.access.SupervisorHeldOffError` instead
    (also a ``ShoeError`` and ``PermissionError``): that try was not checked at all."""


class SupervisorTicket:
    """What became of one supervisor action, for the panel or console that sent it.

    ``status`` is ``"queued"`` until the controller's thread has journalled the action (a
    queued action is lost if the controller stops first), then ``"journalled"``; from then on
    ``accepted`` says whether the table carried it out and ``message`` why not (or what it
    did). Thread-safe: the controller's thread settles it, any thread may :meth:`wait`.
    """

    def __init__(self, action: str, supervisor: str) -> None:
        self.action = action
        self.supervisor = supervisor
        self.record: int | None = None
        self.accepted: bool | None = None
        self.message = ""
        self._done = threading.Event()

    @property
    def status(self) -> str:
        return "journalled" if self._done.is_set() else "queued"

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the action is journalled (True) or ``timeout`` seconds pass (False)."""
        return self._done.wait(timeout)

    def settle(self, record: int, refusal: str, notice: str) -> None:
        self.record = record
        self.accepted = not refusal
        self.message = refusal or notice
        self._done.set()


def authorised_ticket(access: Any, action: str, supervisor: str, pin: str,
                      client: str | None) -> SupervisorTicket:
    """Check a supervisor's PIN through the table's access guard (``access``: its
    ``AccessGuard``, which also holds off a client after too many wrong PINs) and open the
    action's ticket. Raises :class:`SupervisorAuthError` for an unknown id or a wrong PIN."""
    if not access.verify(supervisor, pin, client):
        log.warning("supervisor action refused: bad id or PIN",
                    extra={"supervisor": supervisor, "action": action})
        raise SupervisorAuthError(f"supervisor {supervisor!r}: unknown id or wrong PIN")
    return SupervisorTicket(action, supervisor)


def own_betting(reporter: Reporter | None, down_policy: str) -> bool:
    """Whether a table's own timer runs the betting window now: without a table system; with
    one that does not drive betting; and, while it is unreachable, under the ``keep-dealing``
    down policy (with ``stop-after-round`` the table waits for it to come back)."""
    if reporter is None:
        return True
    if reporter.connected:
        return not reporter.drives_betting
    return down_policy == "keep-dealing"
