"""The outbox: every numbered message, kept in the journal's own SQLite file.

A message's ``seq`` and ``id`` are given once, stored here, and only then sent; after that
they are read back, never derived again. So a release that reports one more event type, or
numbers a record's events differently, cannot renumber what the table system already has
(it would answer ``conflict``). Rules:

* A message is sent only after its row is committed (:attr:`EventStream.sendable`).
* Rows are written in ``seq`` order, each journal record's messages in one transaction, so the
  outbox always holds every message of every record up to its *coverage* (the greatest
  ``released_by``), and nothing of a later record.
* Held events are not stored until released (see :mod:`.stream`).

The table lives in the journal file (format version 2, :mod:`shoe_controller.journal.store`),
outside the hash chain, written through the journal's side connection (``synchronous=NORMAL``,
no fsync of its own). A power cut can lose the last rows together with the journal records
after them, never a row without its record: the WAL is cut at the tail.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from shoe_controller.errors import ConfigError, JournalError
from shoe_controller.journal.store import Journal
from shoe_controller.reporting.protocol import canonical_json
from shoe_controller.reporting.stream import Outgoing

_COLUMNS = "seq, id, record_seq, released_by, type, at, shoe, data"


class Outbox:
    """The stored messages of one journal (an :class:`~.stream.Archive`). Thread-safe.

    ``head`` and ``covered`` are as found when opened (what :meth:`EventStream.resume` needs).
    """

    def __init__(self, journal: Journal, table_id: str) -> None:
        version = journal.meta.get("format_version", "")
        if not version.isdigit() or int(version) < 2:
            raise JournalError(f"{journal.path}: a journal of format version {version} has no "
                               "outbox; open it writable to upgrade it")
        self.path = journal.path
        self._side = journal.side_connection()
        try:
            head, count, covered = self._side.query(
                "SELECT max(seq), count(*), max(released_by) FROM outbox")[0]
            head, count, covered = int(head or 0), int(count), int(covered or 0)
            if head != count:
                raise JournalError(f"{self.path}: the outbox holds {count} messages but numbers "
                                   f"up to {head}: rows were removed")
            first = self._side.query("SELECT id FROM outbox ORDER BY seq LIMIT 1")
            if first and not str(first[0][0]).startswith(f"{table_id}:"):
                raise ConfigError(
                    f"{self.path}: this journal's events were reported as table "
                    f"{str(first[0][0]).rsplit(':', 2)[0]!r}, not {table_id!r}; use that "
                    "table id (the table system knows the events by it) or a new journal")
        except BaseException:
            self._side.close()
            raise
        self.head = head
        self.covered = covered

    def append(self, messages: Sequence[Outgoing]) -> None:
        """Store ``messages`` (the next seqs, whole records) in one transaction."""
        if not messages:
            return
        rows = [(m.seq, m.id, m.record_seq, m.released_by, m.type, float(m.at), m.shoe,
                 canonical_json(dict(m.data))) for m in messages]
        with self._side.transaction() as conn:
            last = conn.execute("SELECT max(seq) FROM outbox").fetchone()[0] or 0
            if rows[0][0] != last + 1:
                raise JournalError(f"{self.path}: outbox continues at {last + 1}, "
                                   f"not {rows[0][0]}")
            conn.executemany(f"INSERT INTO outbox ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                             rows)

    def read(self, from_seq: int, stop: int) -> list[Outgoing]:
        """The stored messages with ``from_seq <= seq < stop``, in order."""
        rows = self._side.query(f"SELECT {_COLUMNS} FROM outbox WHERE seq >= ? AND seq < ? "
                                "ORDER BY seq", (from_seq, stop))
        return [_outgoing(row) for row in rows]

    def has_id(self, id_: str) -> bool:
        return bool(self._side.query("SELECT 1 FROM outbox WHERE id = ?", (id_,)))

    def close(self) -> None:
        self._side.close()


def _outgoing(row: tuple[Any, ...]) -> Outgoing:
    seq, id_, record_seq, released_by, type_, at, shoe, data = row
    return Outgoing(int(seq), str(id_), str(type_), float(at), int(shoe), json.loads(data),
                    int(record_seq), int(released_by))
