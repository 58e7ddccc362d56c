"""The SQLite journal: every input is appended and made durable before it takes effect.

Why SQLite in WAL mode: one append is one transaction, and SQLite guarantees that a
transaction is either wholly in the file after a crash or power loss, or not at all (the
WAL frames carry checksums; a torn tail is discarded on the next open). With
``synchronous=FULL`` the WAL is fsynced at every commit, so :meth:`Journal.append` returning
means the record survives a power cut. ``"normal"`` durability skips that fsync: the journal
stays consistent, but the last records before a power cut may be lost (not before a mere
process crash). The table controller uses ``"full"``.

Layout (format version 2, also in ``PRAGMA user_version``)::

    meta(key TEXT PRIMARY KEY, value TEXT)       -- created_at, product_version,
                                                 -- format_version, hash_algorithm
    records(seq INTEGER PRIMARY KEY, wall_time REAL, kind TEXT, actor TEXT,
            data TEXT  -- canonical JSON --, prev_hash TEXT, hash TEXT)
    outbox(seq INTEGER PRIMARY KEY, id TEXT UNIQUE, record_seq INTEGER,
           released_by INTEGER, type TEXT, at REAL, shoe INTEGER,
           data TEXT  -- RFC 8785 JSON --)       -- version 2: events as numbered for the
                                                 -- table system (shoe_controller.reporting)

The outbox is not part of the hash chain: it is derived from the records (it keeps the numbers
the reporter gave their events, so that no later version renumbers them) and is written
through a second connection (:meth:`Journal.side_connection`) with ``synchronous=NORMAL``: its
WAL frames become durable at the journal's next FULL commit, at no extra fsync. A writable
open upgrades a version-1 file in place (one transaction); read-only opens take 1 and 2.

See :mod:`shoe_controller.journal.records` for the hash chain and what it cannot prevent.
"""

from __future__ import annotations

import datetime as _dt
import json
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Self

from shoe_controller import __version__
from shoe_controller.errors import JournalError, JournalNotReady
from shoe_controller.journal.records import (
    GENESIS_HASH,
    Record,
    check_fields,
    encode_data,
    record_hash,
)

if TYPE_CHECKING:
    from shoe_controller.journal.verify import VerifyReport

Durability = Literal["full", "normal"]
DURABILITY_PRAGMA: dict[str, str] = {"full": "FULL", "normal": "NORMAL"}

FORMAT_VERSION = 2
OLDEST_FORMAT_VERSION = 1
"""Read-only opens take every version from this one on; a writable open upgrades them."""
APPLICATION_ID = 0x53484F45  # "SHOE": lets `file` and our own open tell a journal apart
HASH_PLAIN = "sha256"
HASH_KEYED = "hmac-sha256"

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE records (
    seq INTEGER PRIMARY KEY,
    wall_time REAL NOT NULL,
    kind TEXT NOT NULL,
    actor TEXT,
    data TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);
"""
_OUTBOX_SCHEMA = """
CREATE TABLE outbox (
    seq INTEGER PRIMARY KEY,
    id TEXT UNIQUE NOT NULL,
    record_seq INTEGER NOT NULL,
    released_by INTEGER NOT NULL,
    type TEXT NOT NULL,
    at REAL NOT NULL,
    shoe INTEGER NOT NULL,
    data TEXT NOT NULL
)
"""
_COLUMNS = "seq, wall_time, kind, actor, data, prev_hash, hash"
_BATCH = 1000


def connect_readonly(path: Path) -> sqlite3.Connection:
    """Open ``path`` so that nothing, not even a WAL checkpoint, can change the file.

    SQLite may still create an empty ``-wal`` and a ``-shm`` index beside it (a WAL reader
    needs the index); neither holds records, and a writer uses them as they are.
    """
    if not path.is_file():
        what = "is a directory, not a journal file" if path.is_dir() else "no such journal file"
        raise JournalError(f"{path}: {what}")
    uri = "file:" + urllib.parse.quote(str(path.resolve())) + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        raise JournalError(f"{path}: not a journal ({exc})") from exc
    return conn


def read_meta(conn: sqlite3.Connection, path: Path) -> dict[str, str]:
    """The meta table as a dict, after checking that this is a journal we can read."""
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    except sqlite3.DatabaseError as exc:
        raise JournalError(f"{path}: not a journal ({exc})") from exc
    if not tables and app_id == 0:
        # A controller creates the file first and its tables in the next transaction: a
        # reader in between (verify, recall, a monitor polling) must not call it foreign.
        raise JournalNotReady(f"{path}: an empty database, not a journal yet (a controller "
                              "creating it this moment? try again)")
    if app_id != APPLICATION_ID or not {"meta", "records"} <= tables:
        raise JournalError(f"{path}: not a shoe journal (an SQLite file of something else)")
    if version > FORMAT_VERSION:
        raise JournalError(
            f"{path}: journal format version {version} is newer than this controller "
            f"understands (up to {FORMAT_VERSION}); upgrade shoe-controller to read it"
        )
    if version < OLDEST_FORMAT_VERSION:
        raise JournalError(f"{path}: journal format version {version} is not valid")
    return {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta")}


def check_key(meta: Mapping[str, str], key: bytes | None, path: Path) -> None:
    """A keyed journal needs its key, a plain one must not get one (it would never verify)."""
    algorithm = meta.get("hash_algorithm", HASH_PLAIN)
    if algorithm not in (HASH_PLAIN, HASH_KEYED):
        raise JournalError(f"{path}: unknown hash algorithm {algorithm!r}")
    if algorithm == HASH_KEYED and key is None:
        raise JournalError(f"{path}: this journal is keyed (HMAC); its key is needed "
                           "(shoe run --journal-key-file, shoe journal verify --key-file)")
    if algorithm == HASH_PLAIN and key is not None:
        raise JournalError(f"{path}: this journal is not keyed; do not pass a key")


def row_to_record(row: tuple[Any, ...]) -> Record:
    seq, wall_time, kind, actor, data, prev_hash, hash_ = row
    return Record(int(seq), float(wall_time), kind, actor, json.loads(data), prev_hash, hash_)


class Journal:
    """An append-only, hash-chained, durable record of every input to the table.

    Use as a context manager; :meth:`close` is idempotent. One ``Journal`` may be shared by
    threads (appends are serialised by a lock). ``key`` makes the chain keyed (HMAC): the
    same key is then needed to append and to verify. ``readonly=True`` opens an existing
    journal without ever modifying the file (for verify, export, recall).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        durability: Durability = "full",
        key: bytes | None = None,
        readonly: bool = False,
    ) -> None:
        if durability not in DURABILITY_PRAGMA:
            raise JournalError(
                f"durability must be one of {sorted(DURABILITY_PRAGMA)}, not {durability!r}"
            )
        self.path = Path(path)
        self.durability: Durability = durability
        self.readonly = readonly
        self._key = key
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._conn = connect_readonly(self.path) if readonly else self._open_writable()
        try:
            self.meta = read_meta(self._conn, self.path)
        except JournalError:
            self.close()
            raise
        self._check_key()

    # -- opening -------------------------------------------------------------------------

    def _open_writable(self) -> sqlite3.Connection:
        # The folder is not created: a typo in a journal's path must not start a fresh table.
        if not self.path.parent.is_dir():
            raise JournalError(f"{self.path}: directory {self.path.parent} does not exist")
        try:
            conn = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=10.0
            )
        except sqlite3.Error as exc:
            raise JournalError(f"{self.path}: cannot open: {exc}") from exc
        try:
            # Check what the file is before changing anything (WAL mode is written to the
            # file header): someone else's database must be refused untouched.
            try:
                existing = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            except sqlite3.DatabaseError as exc:
                raise JournalError(f"{self.path}: not a journal ({exc})") from exc
            if existing:
                read_meta(conn, self.path)
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise JournalError(f"{self.path}: cannot use WAL mode here (got {mode!r})")
            conn.execute(f"PRAGMA synchronous={DURABILITY_PRAGMA[self.durability]}")
            conn.execute("BEGIN IMMEDIATE")
            try:
                if not conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                    self._create(conn)
                else:
                    self._upgrade(conn)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            conn.close()
            raise JournalError(f"{self.path}: cannot open the journal: {exc}") from exc
        except BaseException:
            conn.close()
            raise
        return conn

    def _create(self, conn: sqlite3.Connection) -> None:
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute(_OUTBOX_SCHEMA)
        created = _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds")
        meta = {
            "created_at": created,
            "product_version": __version__,
            "format_version": str(FORMAT_VERSION),
            "hash_algorithm": HASH_KEYED if self._key is not None else HASH_PLAIN,
        }
        conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", meta.items())
        conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version={FORMAT_VERSION}")

    def _upgrade(self, conn: sqlite3.Connection) -> None:
        """Bring an older journal to :data:`FORMAT_VERSION` (inside the open's transaction, so
        a crash leaves it wholly old or wholly new). The records are not touched."""
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == 1:
            conn.execute(_OUTBOX_SCHEMA)
            conn.execute("UPDATE meta SET value = ? WHERE key = 'format_version'",
                         (str(FORMAT_VERSION),))
            conn.execute(f"PRAGMA user_version={FORMAT_VERSION}")

    def _check_key(self) -> None:
        if self.readonly and self._key is None and self.meta.get("hash_algorithm") == HASH_KEYED:
            return  # reading needs no key (export, recall, the display); verifying does
        try:
            check_key(self.meta, self._key, self.path)
        except JournalError:
            self.close()
            raise

    # -- context manager -----------------------------------------------------------------

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    @property
    def closed(self) -> bool:
        return self._conn is None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise JournalError(f"{self.path}: journal is closed")
        return self._conn

    # -- writing -------------------------------------------------------------------------

    def append(
        self,
        kind: str,
        data: Mapping[str, Any],
        *,
        actor: str | None = None,
        wall_time: float | None = None,
    ) -> Record:
        """Append one record; when this returns the record is durable (per ``durability``).

        Everything is validated before the transaction starts, so a bad value raises
        :class:`~shoe_controller.errors.JournalDataError` and leaves the journal untouched.
        """
        when = time.time() if wall_time is None else wall_time
        check_fields(kind, actor, when)
        when = float(when)
        data_json = encode_data(data)
        if self.readonly:
            raise JournalError(f"{self.path}: journal is open read-only")
        with self._lock:
            conn = self._connection()
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    last = conn.execute(
                        "SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1"
                    ).fetchone()
                    seq, prev = (1, GENESIS_HASH) if last is None else (last[0] + 1, last[1])
                    digest = record_hash(seq, when, kind, actor, data_json, prev, self._key)
                    conn.execute(
                        f"INSERT INTO records ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (seq, when, kind, actor, data_json, prev, digest),
                    )
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise JournalError(f"{self.path}: cannot append to the journal: {exc}") from exc
        return Record(seq, when, kind, actor, json.loads(data_json), prev, digest)

    # -- reading -------------------------------------------------------------------------

    def records(self, start_seq: int = 1) -> Iterator[Record]:
        """Every record from ``start_seq`` on, in order (read in batches, lock not held)."""
        next_seq = start_seq
        while True:
            with self._lock:
                rows = (
                    self._connection()
                    .execute(
                        f"SELECT {_COLUMNS} FROM records WHERE seq >= ? ORDER BY seq LIMIT ?",
                        (next_seq, _BATCH),
                    )
                    .fetchall()
                )
            for row in rows:
                yield row_to_record(row)
            if len(rows) < _BATCH:
                return
            next_seq = rows[-1][0] + 1

    def last(self) -> Record | None:
        with self._lock:
            row = (
                self._connection()
                .execute(f"SELECT {_COLUMNS} FROM records ORDER BY seq DESC LIMIT 1")
                .fetchone()
            )
        return None if row is None else row_to_record(row)

    def count(self) -> int:
        with self._lock:
            return int(self._connection().execute("SELECT count(*) FROM records").fetchone()[0])

    # -- beside the chain -----------------------------------------------------------------

    def side_connection(self) -> SideConnection:
        """A second connection to this file, for tables outside the hash chain (the outbox).

        Its commits do not fsync (``synchronous=NORMAL``): in WAL mode its frames become
        durable with the journal's next FULL commit, and a process crash never loses them.
        Its writes take this journal's lock, so an append never waits in SQLite's busy loop.
        """
        if self.readonly:
            raise JournalError(f"{self.path}: journal is open read-only")
        self._connection()
        return SideConnection(self.path, self._lock)

    def verify(self) -> VerifyReport:
        """Check the whole chain of this journal (see :func:`verify_journal`)."""
        from shoe_controller.journal.verify import verify_connection

        with self._lock:
            return verify_connection(self._connection(), self.path, self._key)


class SideConnection:
    """A connection of its own to a journal's file (see :meth:`Journal.side_connection`).

    Thread-safe; :meth:`close` is idempotent. No automatic checkpoints: the journal's own
    connection runs them, as before.
    """

    def __init__(self, path: Path, journal_lock: threading.Lock) -> None:
        self.path = path
        self._journal_lock = journal_lock
        self._lock = threading.Lock()
        try:
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False,
                                   timeout=10.0)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA wal_autocheckpoint=0")
        except sqlite3.Error as exc:
            raise JournalError(f"{path}: cannot open a second connection: {exc}") from exc
        self._conn: sqlite3.Connection | None = conn

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return self._connection().execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise JournalError(f"{self.path}: {exc}") from exc

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, committed when the block ends (rolled back if it raises)."""
        with self._lock, self._journal_lock:
            conn = self._connection()
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise JournalError(f"{self.path}: {exc}") from exc

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise JournalError(f"{self.path}: side connection is closed")
        return self._conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
