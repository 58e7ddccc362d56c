"""Holding back what must not be seen yet (the dealer's hole card), for local outputs.

A game marks an event ``hold: KEY`` (the hole card's ``card`` event) and a later one
``reveal: KEY``. The table-system stream (:mod:`shoe_controller.reporting.stream`) and the
MQTT feed hold such events themselves; :class:`Withheld` does the same for everything the
controller hands to its listeners (the dealer display and its read-only API, the console,
the demo), so that none of them shows a hole card before the dealer turns it over.

Pure: the controller feeds it each record's events in journal order (also those replayed at
start, so a restart between the hole card and its reveal holds it again).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


class Withheld:
    """Events held until their reveal; :meth:`visible` is what may be shown now."""

    def __init__(self) -> None:
        self._held: dict[str, list[dict[str, Any]]] = {}

    def visible(self, events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """``events`` as they may be shown: held ones left out, released ones (in their
        original order) just before the event that reveals them; control keys removed."""
        out: list[dict[str, Any]] = []
        for event in events:
            reveal = event.get("reveal")
            for key in (reveal if isinstance(reveal, list) else [reveal] if reveal else []):
                out.extend(self._held.pop(str(key), []))
            plain = {k: v for k, v in event.items() if k not in ("hold", "reveal")}
            hold = event.get("hold")
            if hold:
                self._held.setdefault(str(hold), []).append(plain)
            else:
                out.append(plain)
        return out

    @property
    def held(self) -> int:
        return sum(len(events) for events in self._held.values())
