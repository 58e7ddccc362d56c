"""Helpers shared by the journal tests (imported by name: tests/ is not a package)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from shoe_controller.journal import Journal

KINDS = ["card", "shoe-event", "button", "command", "supervisor"]


def fill(path: Path, count: int) -> None:
    with Journal(path) as journal:
        for i in range(count):
            journal.append(
                KINDS[i % len(KINDS)],
                {"i": i, "code": f"{'A23456789TJQK'[i % 13]}S", "note": "é ✓"},
                actor=None if i % 3 else "dealer",
                wall_time=1_700_000_000.0 + i * 1.25,
            )


@contextmanager
def raw_sql(path: Path) -> Iterator[sqlite3.Connection]:
    """The attacker's tool: plain sqlite3 on the file, committed on exit."""
    conn = sqlite3.connect(path)
    try:
        yield conn
        conn.commit()
    finally:
        conn.close()
