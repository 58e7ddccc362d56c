"""The table is the fold of its journal: the one place that replays journal records.

Used by the controller at start (to resume exactly where the table was), by ``shoe journal
export`` and ``recall``, and by the dealer display's history, so that none of them can rebuild
a different table from the same journal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shoe_controller.errors import JournalReplayError
from shoe_controller.journal import Journal
from shoe_controller.journal.records import Record
from shoe_controller.table.inputs import SessionStarted, TableInput, input_from_record
from shoe_controller.table.machine import Table, TableSettings

OnRecord = Callable[[Record, TableInput, list[dict[str, Any]]], None]
"""Called for every record replayed, with the input it held and the events it caused."""


def replay_records(journal: Journal, table: Table | None = None, *,
                   settings: TableSettings | None = None,
                   on_record: OnRecord | None = None) -> tuple[Table | None, int]:
    """Feed every record of ``journal`` into ``table`` (or a table built for the game of the
    journal's first session record); returns the table and how many records were read.

    The game comes from what the session records journalled (the profile's text), never
    from a profile file that may have changed since.
    """
    count = 0
    for record in journal.records():
        count += 1
        try:
            item = input_from_record(record.kind, record.data)
        except (ValueError, TypeError) as exc:
            raise JournalReplayError(
                f"{journal.path}: record {record.seq} cannot be replayed: {exc} "
                "(written by a newer controller?)"
            ) from exc
        if table is None:
            if not isinstance(item, SessionStarted):
                raise JournalReplayError(
                    f"{journal.path}: record {record.seq} ({record.kind}) comes before any "
                    "session record, so the table profile is unknown"
                )
            table = Table(game_for_session(item), settings)
        events = table.handle(item)
        if on_record is not None:
            on_record(record, item, events)
    return table, count


def game_for_session(item: SessionStarted) -> Any:
    """The game a session record names: its journalled profile text, or (journals written
    before profiles were journalled) the profile of that name."""
    from shoe_controller.games.registry import create_game, game_from_toml

    if item.profile_toml:
        return game_from_toml(item.profile_toml, item.profile)
    return create_game(item.profile)
