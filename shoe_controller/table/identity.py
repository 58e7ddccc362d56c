"""Card identity end to end: (shoe device, its load, the card counter). Pure, no I/O.

A shoe numbers the cards of each load 1, 2, 3, ... (SPEC section 10) and starts again at every
load; another shoe device has counters of its own. So a card message is a repeat of one the
journal holds only if it comes from the same device, in the same load, with the same counter
and the same face. Anything else that reuses a counter is no repeat: it is journalled and the
table decides what it means (a reload, a confused shoe).

:class:`ShoeIdentity` keeps, per device serial number, where its counter stands in its current
load (:class:`LoadCounters`); the table asks it whether an input is a repeat and tells it what
each card, load, device and status report says.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Capability bit of a shoe that numbers its loads (SPEC 6.2, revision 1.1); the value of
#: ``firmware_protocol.messages.Capability.LOAD_NUMBER`` (the table does not import the wire).
LOAD_NUMBER_CAPABILITY = 0x100


@dataclass
class LoadCounters:
    """One device's counters since its last load.

    ``faces`` holds what the shoe reported for each counter (a card code, None for unread),
    ``missing`` the counters that left the shoe without a report (a gap). ``known`` is False
    until the table knows where the device's counter stands (a load, a card or a status)."""

    load: int = 0
    last_counter: int = 0
    known: bool = False
    faces: dict[int, str | None] = field(default_factory=dict)
    missing: set[int] = field(default_factory=set)

    def restart(self, load: int) -> None:
        self.load, self.last_counter, self.known = load, 0, True
        self.faces, self.missing = {}, set()

    def snapshot(self) -> tuple[Any, ...]:
        return (self.load, self.last_counter, self.known, sorted(self.faces.items()),
                sorted(self.missing))


class ShoeIdentity:
    """The connected shoe device and every device's counters (see the module docstring)."""

    def __init__(self) -> None:
        self.serial = ""  # "" until a device says who it is (journals from before that)
        self.capabilities = 0
        self._loads: dict[str, LoadCounters] = {"": LoadCounters()}

    @property
    def counters(self) -> LoadCounters:
        """The connected device's counters."""
        return self._loads.setdefault(self.serial, LoadCounters())

    @property
    def numbers_loads(self) -> bool:
        return bool(self.capabilities & LOAD_NUMBER_CAPABILITY)

    def connect(self, serial: str, capabilities: int, *, adopt_anonymous: bool) -> None:
        """Device ``serial`` is connected. ``adopt_anonymous``: the counters kept before any
        device said who it was are this device's (a journal older than device records)."""
        if adopt_anonymous and serial:
            self._loads[serial] = self._loads.pop("", LoadCounters())
        self.serial, self.capabilities = serial, capabilities

    def is_repeat_card(self, counter: int, face: str | None) -> bool:
        """The same device, load, counter and face were journalled before."""
        counters = self.counters
        return counter in counters.faces and counters.faces[counter] == face

    def is_repeat_load(self, load: int) -> bool:
        """A SHOE_LOADED naming the load in play (only a LOAD_NUMBER shoe says which)."""
        counters = self.counters
        return self.numbers_loads and load != 0 and counters.known and load == counters.load

    def new_load(self, load: int) -> None:
        self.counters.restart(load if self.numbers_loads else 0)

    def snapshot(self) -> dict[str, Any]:
        return {"serial": self.serial, "capabilities": self.capabilities,
                "loads": {serial: c.snapshot() for serial, c in self._loads.items()}}
