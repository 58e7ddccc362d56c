"""Appending, reading back and opening journals (shoe_controller.journal.store)."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from pathlib import Path

import pytest
from journal_helpers import fill

from shoe_controller import __version__
from shoe_controller.errors import JournalDataError, JournalError, JournalNotReady, ShoeError
from shoe_controller.journal import FORMAT_VERSION, GENESIS_HASH, Journal, verify_journal


def test_append_returns_the_stored_record(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.db") as journal:
        first = journal.append("card", {"code": "AS", "sensor": 1}, actor="shoe", wall_time=10.5)
        second = journal.append("button", {"button": "deal"})
        assert (first.seq, second.seq) == (1, 2)
        assert first.prev_hash == GENESIS_HASH and second.prev_hash == first.hash
        assert first.kind == "card" and first.actor == "shoe" and first.wall_time == 10.5
        assert second.actor is None and isinstance(second.wall_time, float)
        assert list(journal.records()) == [first, second]
        assert journal.last() == second and journal.count() == 2


def test_hash_is_sha256_of_the_canonical_json_the_docs_describe(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.db") as journal:
        record = journal.append("card", {"z": 1, "a": "é"}, actor="x", wall_time=1.0)
    text = json.dumps(
        [1, 1.0, "card", "x", {"a": "é", "z": 1}, GENESIS_HASH],
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    assert record.hash == hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_data_is_returned_as_replay_will_see_it(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.db") as journal:
        record = journal.append("card", {"cards": ("AS", "KD"), "nested": {"b": [1.5, None]}})
        assert record.data == {"cards": ["AS", "KD"], "nested": {"b": [1.5, None]}}
        assert next(journal.records()).data == record.data


@pytest.mark.parametrize(
    ("kind", "data", "wall_time", "fragment"),
    [
        ("card", {"when": object()}, None, "not JSON-serialisable"),
        ("card", {"x": float("nan")}, None, "not JSON-serialisable"),
        ("card", {1: "int key"}, None, "keys must be strings"),
        ("card", ["not", "a", "mapping"], None, "must be a mapping"),
        ("", {}, None, "kind must be a non-empty string"),
        ("card", {}, float("inf"), "wall_time must be finite"),
    ],
)
def test_bad_data_is_refused_before_anything_is_written(
    tmp_path: Path, kind: str, data: object, wall_time: float | None, fragment: str
) -> None:
    with Journal(tmp_path / "j.db") as journal:
        journal.append("card", {"ok": True})
        with pytest.raises(JournalDataError, match=fragment) as info:
            journal.append(kind, data, wall_time=wall_time)  # type: ignore[arg-type]
        assert isinstance(info.value, ValueError) and isinstance(info.value, ShoeError)
        assert journal.count() == 1
        assert journal.append("card", {"ok": True}).seq == 2
    assert verify_journal(tmp_path / "j.db").ok


@pytest.mark.parametrize(("durability", "level"), [("full", 2), ("normal", 1)])
def test_durability_sets_the_fsync_policy(tmp_path: Path, durability: str, level: int) -> None:
    with Journal(tmp_path / "j.db", durability=durability) as journal:  # type: ignore[arg-type]
        conn = journal._connection()
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == level
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_unknown_durability_is_refused(tmp_path: Path) -> None:
    with pytest.raises(JournalError, match="durability must be one of"):
        Journal(tmp_path / "j.db", durability="sometimes")  # type: ignore[arg-type]


def test_meta_and_version_are_written(tmp_path: Path) -> None:
    Journal(tmp_path / "j.db").close()
    with Journal(tmp_path / "j.db", readonly=True) as journal:
        assert journal.meta["product_version"] == __version__
        assert journal.meta["format_version"] == str(FORMAT_VERSION)
        assert journal.meta["hash_algorithm"] == "sha256"
        assert journal.meta["created_at"].endswith("+00:00")


def test_a_newer_format_is_refused_clearly(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    Journal(path).close()
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {FORMAT_VERSION + 1}")
    for opener in (lambda: Journal(path), lambda: verify_journal(path)):
        with pytest.raises(JournalError, match="newer than this controller understands"):
            opener()


def test_other_files_are_refused(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello, this is not a database at all" * 10)
    with pytest.raises(JournalError, match="not a journal"):
        Journal(text)
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE t (x)")
    before = other.read_bytes()
    with pytest.raises(JournalError, match="not a shoe journal"):
        Journal(other)
    assert other.read_bytes() == before  # refused untouched (not even switched to WAL)
    with pytest.raises(JournalError, match="no such journal file"):
        verify_journal(tmp_path / "missing.db")


def test_an_empty_database_is_a_journal_not_yet_made(tmp_path: Path) -> None:
    """A controller creates the file, then its tables: a reader polling in between (a
    monitor, a test waiting for cards) is told to try again, not that the file is foreign;
    and the controller then makes its journal there as usual."""
    path = tmp_path / "table.sqlite"
    sqlite3.connect(path).close()  # the file exists, with no table in it yet
    with pytest.raises(JournalNotReady, match="not a journal yet"):
        Journal(path, readonly=True)
    with pytest.raises(JournalNotReady):
        verify_journal(path)
    with Journal(path) as journal:
        journal.append("note", {"text": "made"})
    with Journal(path, readonly=True) as journal:
        assert [record.kind for record in journal.records()] == ["note"]


def test_meta_disagreeing_with_the_file_is_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    fill(path, 3)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = '7' WHERE key = 'format_version'")
        db.execute("DELETE FROM meta WHERE key = 'created_at'")
    kinds = [(p.seq, p.kind) for p in verify_journal(path).problems]
    assert kinds == [(0, "meta"), (0, "meta")]


def test_close_is_idempotent_and_closed_journal_refuses(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.db")
    journal.close()
    journal.close()
    assert journal.closed
    with pytest.raises(JournalError, match="closed"):
        journal.append("card", {})


def test_reopening_continues_the_chain(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    fill(path, 5)
    with Journal(path) as journal:
        assert journal.append("card", {}).seq == 6
    assert verify_journal(path).count == 6 and verify_journal(path).ok


def test_records_from_a_start_seq_across_batches(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.db", durability="normal") as journal:
        for i in range(2100):
            journal.append("card", {"i": i}, wall_time=float(i))
        seqs = [r.seq for r in journal.records(start_seq=1000)]
        assert seqs == list(range(1000, 2101))
        assert [r.data["i"] for r in journal.records(2099)] == [2098, 2099]
        assert journal.verify().ok


def test_appends_from_several_threads_stay_one_chain(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.db", durability="normal") as journal:

        def worker(n: int) -> None:
            for i in range(50):
                journal.append("card", {"thread": n, "i": i})

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert journal.count() == 200 and journal.verify().ok


def test_readonly_open_does_not_modify_the_journal(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    fill(path, 20)
    before = (path.read_bytes(), os.stat(path).st_mtime_ns)
    assert verify_journal(path).ok
    with Journal(path, readonly=True) as journal:
        assert journal.count() == 20
        with pytest.raises(JournalError, match="read-only"):
            journal.append("card", {})
    assert (path.read_bytes(), os.stat(path).st_mtime_ns) == before
    # SQLite may leave an empty -wal and a -shm index beside the file: no record is in them
    wal = Path(f"{path}-wal")
    assert not wal.exists() or wal.stat().st_size == 0


def test_keyed_journal_needs_its_key(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    with Journal(path, key=b"secret") as journal:
        journal.append("card", {"code": "AS"})
        journal.append("card", {"code": "KD"})
    assert verify_journal(path, key=b"secret").ok
    with pytest.raises(JournalError, match="keyed"):
        verify_journal(path)
    assert not verify_journal(path, key=b"wrong").ok
    with pytest.raises(JournalError, match="not keyed"):
        Journal(tmp_path / "plain.db").close() or Journal(tmp_path / "plain.db", key=b"k")
