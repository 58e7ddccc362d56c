"""Tampering with a journal through plain SQL must fail verify and name the record."""

from __future__ import annotations

import hashlib
import itertools
import sqlite3
from pathlib import Path

import pytest
from journal_helpers import raw_sql

from shoe_controller.journal import verify_journal
from shoe_controller.journal.records import record_hash

N = 12
COLUMNS = "wall_time, kind, actor, data, prev_hash, hash"


def named(path: Path) -> set[tuple[int, str]]:
    report = verify_journal(path)
    assert not report.ok
    for problem in report.problems:
        assert f"record {problem.seq}" in problem.message or problem.kind == "meta"
    return {(p.seq, p.kind) for p in report.problems}


def edit_data(path: Path, seq: int) -> None:
    with raw_sql(path) as db:
        db.execute("UPDATE records SET data = ? WHERE seq = ?", ('{"i":999}', seq))


def delete(path: Path, seq: int) -> None:
    with raw_sql(path) as db:
        db.execute("DELETE FROM records WHERE seq = ?", (seq,))


def renumber(db: sqlite3.Connection, after: int, by: int) -> None:
    """Shift every seq > ``after`` by ``by`` (via negatives: the key must stay unique)."""
    db.execute("UPDATE records SET seq = -(seq + ?) WHERE seq > ?", (by, after))
    db.execute("UPDATE records SET seq = -seq WHERE seq < 0")


def swap_rows(db: sqlite3.Connection, a: int, b: int, columns: str = COLUMNS) -> None:
    cols = [c.strip() for c in columns.split(",")]
    row_a = db.execute(f"SELECT {columns} FROM records WHERE seq = ?", (a,)).fetchone()
    row_b = db.execute(f"SELECT {columns} FROM records WHERE seq = ?", (b,)).fetchone()
    assignments = ", ".join(f"{c} = ?" for c in cols)
    db.execute(f"UPDATE records SET {assignments} WHERE seq = ?", (*row_b, a))
    db.execute(f"UPDATE records SET {assignments} WHERE seq = ?", (*row_a, b))


def forge_insert(db: sqlite3.Connection, seq: int, *, valid_hash: bool) -> None:
    """Insert a new record at ``seq``, pushing the later ones up; a careful attacker links it
    to the record before and computes its hash correctly."""
    renumber(db, after=seq - 1, by=1)
    prev = db.execute("SELECT hash FROM records WHERE seq = ?", (seq - 1,)).fetchone()
    prev_hash = prev[0] if prev else "0" * 64
    data = '{"code":"9H"}'
    digest = (
        record_hash(seq, 1_700_000_100.0, "card", None, data, prev_hash)
        if valid_hash
        else hashlib.sha256(b"x").hexdigest()
    )
    db.execute(
        f"INSERT INTO records (seq, {COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (seq, 1_700_000_100.0, "card", None, data, prev_hash, digest),
    )


def test_untouched_journal_verifies(journal12: Path) -> None:
    report = verify_journal(journal12)
    assert report.ok, report.problems
    assert report.count == N
    assert report.summary().startswith(f"journal OK: {N} records, last hash ")


@pytest.mark.parametrize("seq", range(1, N + 1))
def test_edited_data_is_named(journal12: Path, seq: int) -> None:
    edit_data(journal12, seq)
    assert named(journal12) == {(seq, "edited")}
    message = verify_journal(journal12).problems[0].message
    assert message.startswith(f"record {seq} (") and "was edited" in message


@pytest.mark.parametrize(
    ("column", "value"),
    [("kind", "button"), ("actor", "mallory"), ("wall_time", 1.5), ("prev_hash", "f" * 64)],
)
def test_every_column_is_covered_by_the_hash(journal12: Path, column: str, value: object) -> None:
    with raw_sql(journal12) as db:
        db.execute(f"UPDATE records SET {column} = ? WHERE seq = 5", (value,))
    assert (5, "edited") in named(journal12)


def test_unreadable_data_counts_as_edited(journal12: Path) -> None:
    with raw_sql(journal12) as db:
        db.execute("UPDATE records SET data = 'not json' WHERE seq = 4")
    assert named(journal12) == {(4, "edited")}


@pytest.mark.parametrize("seq", range(1, N))  # the very last record: see test_limits
def test_deleted_record_is_named(journal12: Path, seq: int) -> None:
    delete(journal12, seq)
    assert named(journal12) == {(seq, "deleted")}


@pytest.mark.parametrize("seq", range(1, N))
def test_deleted_and_renumbered_is_named(journal12: Path, seq: int) -> None:
    with raw_sql(journal12) as db:
        db.execute("DELETE FROM records WHERE seq = ?", (seq,))
        renumber(db, after=seq, by=-1)
    assert named(journal12) == {(seq, "deleted")}
    assert "renumbered" in verify_journal(journal12).problems[0].message


def test_several_deleted_records_are_one_gap(journal12: Path) -> None:
    with raw_sql(journal12) as db:
        db.execute("DELETE FROM records WHERE seq BETWEEN 4 AND 6")
    report = verify_journal(journal12)
    assert [(p.seq, p.kind) for p in report.problems] == [(4, "deleted")]
    assert "records 4-6 were deleted" in report.problems[0].message


@pytest.mark.parametrize("valid_hash", [True, False])
@pytest.mark.parametrize("seq", range(1, N + 1))
def test_inserted_record_is_named(journal12: Path, seq: int, valid_hash: bool) -> None:
    with raw_sql(journal12) as db:
        forge_insert(db, seq, valid_hash=valid_hash)
    assert named(journal12) == {(seq, "inserted")}


def test_fractional_seq_cannot_be_inserted(journal12: Path) -> None:
    with raw_sql(journal12) as db, pytest.raises(sqlite3.IntegrityError):
        db.execute(
            f"INSERT INTO records (seq, {COLUMNS}) VALUES (5.5, 1.0, 'card', NULL, '{{}}', ?, ?)",
            ("0" * 64, "0" * 64),
        )


def test_fractional_seq_in_a_rebuilt_table_is_named(journal12: Path) -> None:
    with raw_sql(journal12) as db:
        db.execute("CREATE TABLE r2 AS SELECT * FROM records")  # no integer key any more
        db.execute(
            f"INSERT INTO r2 (seq, {COLUMNS}) VALUES (5.5, 1.0, 'card', NULL, '{{}}', ?, ?)",
            ("0" * 64, "0" * 64),
        )
        db.execute("DROP TABLE records")
        db.execute("ALTER TABLE r2 RENAME TO records")
    assert named(journal12) == {(5, "inserted")}


@pytest.mark.parametrize(("a", "b"), list(itertools.combinations(range(1, N + 1), 2)))
def test_swapped_rows_are_named(journal12: Path, a: int, b: int) -> None:
    with raw_sql(journal12) as db:
        swap_rows(db, a, b)
    assert named(journal12) == {(a, "reordered"), (b, "reordered")}


@pytest.mark.parametrize("columns", ["data", "kind, data", "wall_time, kind, actor, data"])
def test_swapped_contents_are_named(journal12: Path, columns: str) -> None:
    with raw_sql(journal12) as db:
        swap_rows(db, 3, 9, columns)
    problems = verify_journal(journal12).problems
    assert {(p.seq, p.kind) for p in problems} == {(3, "reordered"), (9, "reordered")}
    assert "swapped with record 9" in problems[0].message


def test_swapped_seq_numbers_are_named(journal12: Path) -> None:
    with raw_sql(journal12) as db:
        db.execute("UPDATE records SET seq = -1 WHERE seq = 2")
        db.execute("UPDATE records SET seq = 2 WHERE seq = 8")
        db.execute("UPDATE records SET seq = 8 WHERE seq = -1")
    assert named(journal12) == {(2, "reordered"), (8, "reordered")}


def test_rotated_records_are_named(journal12: Path) -> None:
    with raw_sql(journal12) as db:  # 3 -> 4 -> 5 -> 3
        db.execute("UPDATE records SET seq = -5 WHERE seq = 5")
        db.execute("UPDATE records SET seq = 5 WHERE seq = 4")
        db.execute("UPDATE records SET seq = 4 WHERE seq = 3")
        db.execute("UPDATE records SET seq = 3 WHERE seq = -5")
    assert named(journal12) == {(3, "reordered"), (4, "reordered"), (5, "reordered")}


def test_recomputed_hash_breaks_the_chain_at_the_next_record(journal12: Path) -> None:
    with raw_sql(journal12) as db:
        wall, kind, actor, _data, prev = db.execute(
            "SELECT wall_time, kind, actor, data, prev_hash FROM records WHERE seq = 6"
        ).fetchone()
        data = '{"code":"KD"}'
        db.execute(
            "UPDATE records SET data = ?, hash = ? WHERE seq = 6",
            (data, record_hash(6, wall, kind, actor, data, prev)),
        )
    problems = verify_journal(journal12).problems
    assert [(p.seq, p.kind) for p in problems] == [(7, "broken-chain")]
    assert "does not link to record 6" in problems[0].message


def test_edit_after_a_renumbering_is_still_an_edit(journal12: Path) -> None:
    with raw_sql(journal12) as db:
        db.execute("DELETE FROM records WHERE seq = 3")
        renumber(db, after=3, by=-1)
        db.execute("UPDATE records SET data = '{}' WHERE seq IN (6, 11)")  # 11: the last one
    assert named(journal12) == {(3, "deleted"), (6, "edited"), (11, "edited")}


def test_all_problems_are_reported_in_order(journal12: Path) -> None:
    edit_data(journal12, 3)
    delete(journal12, 8)
    with raw_sql(journal12) as db:
        swap_rows(db, 10, 11)
    report = verify_journal(journal12)
    assert [(p.seq, p.kind) for p in report.problems] == [
        (3, "edited"),
        (8, "deleted"),
        (10, "reordered"),
        (11, "reordered"),
    ]


def test_limits_are_what_the_docstring_says(journal12: Path) -> None:
    """Documented limits: dropping the newest record, or a full re-hash, is not caught."""
    delete(journal12, N)
    assert verify_journal(journal12).ok
