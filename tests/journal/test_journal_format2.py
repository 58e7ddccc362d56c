"""Journal format version 2: the outbox table, the in-place upgrade of a version-1 file, and the
side connection that writes the outbox (outside the hash chain)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from journal_helpers import fill

from shoe_controller.cli import main
from shoe_controller.errors import JournalError
from shoe_controller.journal import FORMAT_VERSION, Journal, verify_journal
from shoe_controller.journal.store import OLDEST_FORMAT_VERSION

OUTBOX_COLUMNS = ["seq", "id", "record_seq", "released_by", "type", "at", "shoe", "data"]


def make_version_1(path: Path, count: int = 6) -> None:
    """A journal as a version-1 controller wrote it (no outbox, user_version 1)."""
    fill(path, count)
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE outbox")
        db.execute("UPDATE meta SET value = '1' WHERE key = 'format_version'")
        db.execute("PRAGMA user_version = 1")
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def user_version(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute("PRAGMA user_version").fetchone()[0])


def test_a_new_journal_is_format_2_with_an_outbox(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    Journal(path).close()
    assert FORMAT_VERSION == 2 and OLDEST_FORMAT_VERSION == 1
    assert user_version(path) == 2 and tables(path) == {"meta", "records", "outbox"}
    with sqlite3.connect(path) as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(outbox)")]
    assert columns == OUTBOX_COLUMNS


def test_a_version_1_journal_is_read_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    make_version_1(path)
    before = path.read_bytes()
    with Journal(path, readonly=True) as journal:
        assert journal.meta["format_version"] == "1" and journal.count() == 6
    assert verify_journal(path).ok
    assert main(["journal", "verify", str(path)]) == 0
    assert path.read_bytes() == before and user_version(path) == 1


def test_a_writable_open_upgrades_a_version_1_journal_in_place(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    make_version_1(path)
    with Journal(path, readonly=True) as journal:
        records = list(journal.records())
    with Journal(path) as journal:
        assert journal.meta["format_version"] == "2"
        assert list(journal.records()) == records  # the chain is not touched
        assert journal.append("card", {"after": "upgrade"}).seq == 7
    assert user_version(path) == 2 and "outbox" in tables(path)
    report = verify_journal(path)
    assert report.ok and report.count == 7, report.problems
    with Journal(path) as journal:  # a second open finds nothing to do
        assert journal.meta["format_version"] == "2"


def test_a_failed_upgrade_leaves_the_version_1_file(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "j.db"
    make_version_1(path)
    original = Journal._upgrade

    def half(self: Journal, conn: sqlite3.Connection) -> None:
        original(self, conn)
        raise sqlite3.OperationalError("disk I/O error (simulated)")

    monkeypatch.setattr(Journal, "_upgrade", half)
    with pytest.raises(JournalError, match="simulated"):
        Journal(path)
    assert user_version(path) == 1 and "outbox" not in tables(path)
    with Journal(path, readonly=True) as journal:
        assert journal.meta["format_version"] == "1"
    assert verify_journal(path).ok


def test_verify_ignores_the_outbox(journal12: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with sqlite3.connect(journal12) as db:
        db.executemany("INSERT INTO outbox VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       [(n, f"t:{n}:0", n, n, "card", 1.5, 1, "{}") for n in range(1, 40)])
    report = verify_journal(journal12)
    assert report.ok and report.count == 12
    assert main(["journal", "verify", str(journal12)]) == 0
    assert capsys.readouterr().out.startswith("journal OK: 12 records")


def test_the_side_connection_writes_without_its_own_fsync(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    with Journal(path) as journal:
        side = journal.side_connection()
        try:
            assert side.query("PRAGMA synchronous") == [(1,)]  # NORMAL
            with side.transaction() as conn:
                conn.execute("INSERT INTO outbox VALUES (1, 't:1:0', 1, 1, 'card', 1.0, 1, '{}')")
            with pytest.raises(ZeroDivisionError), side.transaction() as conn:
                conn.execute("INSERT INTO outbox VALUES (2, 't:2:0', 2, 2, 'card', 1.0, 1, '{}')")
                raise ZeroDivisionError  # rolled back
            assert side.query("SELECT seq FROM outbox") == [(1,)]
            journal.append("card", {"code": "AS"})  # the journal is not blocked by it
        finally:
            side.close()
            side.close()
        with pytest.raises(JournalError, match="closed"):
            side.query("SELECT 1")
    with Journal(path, readonly=True) as journal, pytest.raises(JournalError, match="read-only"):
        journal.side_connection()
    assert verify_journal(path).ok
