"""Rounds out of a journal: ``shoe journal export`` and ``shoe journal recall``.

Both replay the journal's inputs through the same :class:`~shoe_controller.table.machine.Table`
the live controller runs, so what they print is exactly what the table decided, including the
voided rounds and the cards a supervisor entered or the camera read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shoe_controller.journal import Journal
from shoe_controller.table.fold import JournalReplayError, replay_records
from shoe_controller.table.machine import Table
from shoe_controller.table.secrecy import Withheld

#: Version of the export's JSON lines; the round lines are those of ``shoe replay``
#: (docs/replay-schema.md) and ``round_void`` lines are added for voided rounds.
EXPORT_SCHEMA_VERSION = 1

__all__ = ["EXPORT_SCHEMA_VERSION", "JournalReplayError", "ReplayedJournal", "export_lines",
           "recall", "replay_journal"]


@dataclass
class ReplayedJournal:
    table: Table | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    records: int = 0


def replay_journal(path: str | Path) -> ReplayedJournal:
    """Feed every input record of the journal at ``path`` into a fresh table."""
    result = ReplayedJournal()
    with Journal(path, readonly=True) as journal:
        result.table, result.records = replay_records(
            journal, on_record=lambda _record, _item, events: result.events.extend(events))
    return result


def export_lines(path: str | Path) -> Iterator[dict[str, Any]]:
    """The journal's shoes as JSON-ready lines in the ``shoe replay`` schema.

    Per shoe: ``burn``, one ``round`` per completed round (``round_void`` for voided ones), and
    ``shoe_end`` once the shoe finished.
    """
    replayed = replay_journal(path)
    rounds = 0
    for event in replayed.events:
        kind = event["type"]
        if kind == "shoe_loaded":
            rounds = 0
        elif kind == "burn":
            yield {"type": "burn", "cards": list(event["cards"])}
        elif kind == "round_result":
            rounds += 1
            keys = _BLACKJACK_ROUND_KEYS if "dealer" in event else _ROUND_KEYS
            yield {"type": "round"} | {key: event[key] for key in keys}
        elif kind == "round_void":
            yield {"type": "round_void", "round": event["round"],
                   "supervisor": event.get("supervisor"), "reason": event.get("reason", "")}
        elif kind == "shoe_finished":
            # Every card drawn from the shoe: burn, rounds, voided rounds and cards set aside.
            yield {"type": "shoe_end", "rounds": rounds, "cards_used": event["cards_used"]}


#: The replay schema's round line, after its "type" (docs/replay-schema.md).
_ROUND_KEYS = (
    "round", "player", "banker", "player_total", "banker_total", "outcome", "natural",
    "player_pair", "banker_pair",
)
#: Blackjack's (docs/blackjack.md, replay output version 1).
_BLACKJACK_ROUND_KEYS = ("round", "dealer", "seats", "insurance")


def recall(path: str | Path, last: int = 10) -> list[dict[str, Any]]:
    """The last ``last`` rounds, card by card, each with how its cards were read.

    The round in play is included, so a blackjack hole card is left out until the dealer
    turned it over (:class:`~shoe_controller.table.secrecy.Withheld`)."""
    replayed = replay_journal(path)
    rounds: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    shoe = 0
    for event in Withheld().visible(replayed.events):
        kind = event["type"]
        if kind == "shoe_loaded":
            shoe = event["shoe"]
        elif kind == "round_opened":
            current = {"shoe": shoe, "round": event["round"], "cards": [], "irregularities": []}
            rounds.append(current)
        elif current is None:
            continue
        elif kind == "card":
            current["cards"].append({key: event[key] for key in
                                     ("target", "position", "card", "source", "counter")})
        elif kind == "irregularity":
            current["irregularities"].append(event["kind"])
        elif kind == "round_result":
            current["result"] = {key: value for key, value in event.items()
                                 if key not in ("type", "round")}
        elif kind == "round_void":
            current["void"] = {"supervisor": event.get("supervisor"),
                               "reason": event.get("reason", "")}
    return rounds[-last:] if last > 0 else []
