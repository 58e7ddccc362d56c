"""Journal verification: walk every record and name each one that was tampered with.

The attacker we model has the file and plain SQL: ``UPDATE`` a column, ``DELETE`` a row,
``INSERT`` a row (renumbering the later rows to make room, since ``seq`` is an integer key),
or swap the contents of two rows. Each leaves a different fingerprint:

* **edited** - the stored hash no longer matches the record's content under any position;
* **reordered** - a record's hash matches its content only under another record's seq (the
  two were swapped, whole rows or just some columns);
* **deleted** - a seq is missing from the chain (a gap; or, if the later rows were renumbered
  to hide the gap, their hashes match their old seq, which reveals the gap again);
* **inserted** - two rows claim the same place in the chain, and the next record links to the
  other one (or nothing links to it);
* **broken-chain** - a record's ``prev_hash`` is not the hash of the record before it while
  both look intact: one of them was rewritten with a recomputed hash.

Every record is checked and every problem found is reported, first problem first. The chain
cannot catch an attacker who recomputes every later hash, nor dropped records at the very end
(see :mod:`shoe_controller.journal.records`).
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from shoe_controller.journal.records import GENESIS_HASH, canonical_json, record_hash
from shoe_controller.journal.store import (
    FORMAT_VERSION,
    check_key,
    connect_readonly,
    read_meta,
)

ProblemKind = Literal["edited", "deleted", "inserted", "reordered", "broken-chain", "meta"]

_SHIFT_WINDOW = 8  # renumbering by up to this many places is recognised without the chain
_PAIR_LIMIT = 100  # unmatched rows beyond this are not searched pairwise for swaps
_PAYLOAD_FIELDS = ("wall_time", "kind", "actor", "data_json")


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with the journal; ``seq`` is the record it names (0: the meta data)."""

    seq: int
    kind: ProblemKind
    message: str


@dataclass(frozen=True, slots=True)
class VerifyReport:
    path: Path
    count: int
    last_hash: str | None
    problems: tuple[Problem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        if self.ok:
            return f"journal OK: {self.count} records, last hash {self.last_hash or '-'}"
        return f"journal FAILED: {len(self.problems)} problem(s) in {self.count} records"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "ok": self.ok,
            "records": self.count,
            "last_hash": self.last_hash,
            "problems": [
                {"seq": p.seq, "kind": p.kind, "message": p.message} for p in self.problems
            ],
        }


@dataclass(slots=True)
class _Row:
    """A stored row plus what verification learned about it."""

    seq: Any
    wall_time: Any
    kind: Any
    actor: Any
    data_json: str | None  # canonical re-encoding of the data column; None if unreadable
    prev_hash: Any
    hash: Any
    true_seq: int | None = None  # the seq under which its hash matches its content
    inferred_place: int | None = None  # for an edited row: where its neighbours put it
    swapped_with: int | None = None
    cycle: tuple[int, ...] = field(default=())

    @property
    def label(self) -> str:
        kind = self.kind if isinstance(self.kind, str) else "?"
        return f"record {self.seq} ({kind})"

    @property
    def moved(self) -> bool:
        return self.true_seq is not None and self.true_seq != self.seq

    @property
    def place(self) -> int:
        """Where this row belongs in the chain as written."""
        if self.true_seq is not None:
            return self.true_seq
        return self.inferred_place if self.inferred_place is not None else int(self.seq)


def verify_journal(path: str | Path, *, key: bytes | None = None) -> VerifyReport:
    """Verify the journal at ``path`` without modifying it (opened read-only)."""
    path = Path(path)
    conn = connect_readonly(path)
    try:
        return verify_connection(conn, path, key)
    finally:
        conn.close()


def verify_connection(
    conn: sqlite3.Connection, path: Path, key: bytes | None = None
) -> VerifyReport:
    meta = read_meta(conn, path)  # raises JournalError for a file that is no journal at all
    check_key(meta, key, path)
    problems = _meta_problems(conn, meta)
    raw = conn.execute(
        "SELECT seq, wall_time, kind, actor, data, prev_hash, hash FROM records ORDER BY seq"
    ).fetchall()
    rows = [_load_row(r) for r in raw]
    problems += _chain_problems(rows, key)
    problems.sort(key=lambda p: (p.seq, p.kind))
    last_hash = rows[-1].hash if rows else None
    return VerifyReport(path, len(rows), last_hash, tuple(problems))


def _meta_problems(conn: sqlite3.Connection, meta: dict[str, str]) -> list[Problem]:
    problems = []
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    for name in ("created_at", "product_version", "format_version", "hash_algorithm"):
        if name not in meta:
            problems.append(Problem(0, "meta", f"the meta table lacks {name!r}"))
    if "format_version" in meta and meta["format_version"] != str(version):
        problems.append(
            Problem(
                0,
                "meta",
                f"the meta table says format version {meta['format_version']!r} but the "
                f"file says {version} (this controller writes {FORMAT_VERSION})",
            )
        )
    return problems


def _load_row(raw: tuple[Any, ...]) -> _Row:
    seq, wall_time, kind, actor, data, prev_hash, hash_ = raw
    try:
        data_json: str | None = canonical_json(json.loads(data))
    except (TypeError, ValueError):
        data_json = None
    return _Row(seq, wall_time, kind, actor, data_json, prev_hash, hash_)


def _matches(row: _Row, seq: int, key: bytes | None, **swap: Any) -> bool:
    values = {name: swap.get(name, getattr(row, name)) for name in _PAYLOAD_FIELDS}
    if values["data_json"] is None or not isinstance(values["kind"], str):
        return False
    if values["actor"] is not None and not isinstance(values["actor"], str):
        return False
    if isinstance(values["wall_time"], bool) or not isinstance(values["wall_time"], (int, float)):
        return False
    if not isinstance(row.prev_hash, str) or not isinstance(row.hash, str):
        return False
    try:
        digest = record_hash(
            seq,
            values["wall_time"],
            values["kind"],
            values["actor"],
            values["data_json"],
            row.prev_hash,
            key,
        )
    except ValueError:  # e.g. a NaN written into wall_time
        return False
    return digest == row.hash


def _find_true_seqs(rows: list[_Row], key: bytes | None) -> None:
    """Set ``true_seq`` for every row whose hash matches its content at some position."""
    by_hash = {row.hash: row for row in rows}
    shift = 0  # stored seq minus true seq of the previous row: renumbering comes in runs
    for row in rows:
        if not isinstance(row.seq, int):
            continue
        candidates = [row.seq, row.seq - shift]
        if row.prev_hash == GENESIS_HASH:
            candidates.append(1)
        linked = by_hash.get(row.prev_hash)
        if linked is not None and isinstance(linked.seq, int):
            candidates.append(linked.place + 1)
            candidates.append(linked.seq + 1)
        for distance in range(1, _SHIFT_WINDOW + 1):
            candidates += [row.seq - distance, row.seq + distance]
        for candidate in dict.fromkeys(candidates):
            if candidate >= 1 and _matches(row, candidate, key):
                row.true_seq = candidate
                shift = row.seq - candidate
                break
        else:
            row.inferred_place = row.seq - shift  # an edited row inside a renumbered run
    displaced = [r for r in rows if isinstance(r.seq, int) and r.true_seq != r.seq]
    if len(displaced) <= _PAIR_LIMIT:  # whole rows swapped too far apart for the window
        for row in (r for r in displaced if r.true_seq is None):
            for other in displaced:
                if other.seq != row.seq and _matches(row, other.seq, key):
                    row.true_seq = other.seq
                    break
    _find_payload_swaps([r for r in rows if r.true_seq is None], key)
    linked_from = {row.prev_hash: row for row in rows}
    for row in rows:
        following = linked_from.get(row.hash)
        if row.true_seq is None and following is not None and following.true_seq is not None:
            row.inferred_place = following.true_seq - 1  # the next record still links to it


def _find_payload_swaps(unmatched: list[_Row], key: bytes | None) -> None:
    """Find pairs of rows whose columns were exchanged (``UPDATE ... SET data = ...``)."""
    if len(unmatched) > _PAIR_LIMIT:
        return
    subsets = [
        names
        for size in range(1, len(_PAYLOAD_FIELDS) + 1)
        for names in itertools.combinations(_PAYLOAD_FIELDS, size)
    ]
    for a, b in itertools.combinations(unmatched, 2):
        if a.swapped_with is not None or b.swapped_with is not None:
            continue
        if not isinstance(a.seq, int) or not isinstance(b.seq, int):
            continue
        for names in subsets:
            a_gets = {name: getattr(b, name) for name in names}
            b_gets = {name: getattr(a, name) for name in names}
            if _matches(a, a.seq, key, **a_gets) and _matches(b, b.seq, key, **b_gets):
                a.swapped_with, b.swapped_with = b.seq, a.seq
                a.true_seq, b.true_seq = a.seq, b.seq
                break


def _mark_cycles(rows: list[_Row]) -> None:
    """Moved rows that form a permutation among themselves were reordered, not renumbered.

    Each row is walked at most once (a renumbered run is one long path, not a cycle).
    """
    at = {row.seq: row for row in rows if isinstance(row.seq, int)}
    walked: set[int] = set()
    for start in rows:
        if not start.moved or id(start) in walked:
            continue
        path: list[_Row] = []
        on_path: set[int] = set()
        current: _Row | None = start
        while current is not None and current.moved and id(current) not in walked:
            walked.add(id(current))
            on_path.add(id(current))
            path.append(current)
            current = at.get(current.place)
        if current is not None and id(current) in on_path:
            cycle = path[path.index(current) :]
            seqs = tuple(r.seq for r in cycle)
            for row in cycle:
                row.cycle = seqs


def _chain_problems(rows: list[_Row], key: bytes | None) -> list[Problem]:
    problems: list[Problem] = []
    _find_true_seqs(rows, key)
    _mark_cycles(rows)
    referenced = {row.prev_hash for row in rows}

    kept: list[_Row] = []
    integral = [r for r in rows if isinstance(r.seq, int)]
    for r in rows:
        if not isinstance(r.seq, int):
            problems.append(
                Problem(
                    int(r.seq) if isinstance(r.seq, float) else 0,
                    "inserted",
                    f"{r.label} was inserted: a journal seq is always a whole number",
                )
            )
    integral.sort(key=lambda r: (r.place, r.seq))
    last_moved = max((r.place for r in integral if r.moved), default=0)
    for _place, group_iter in itertools.groupby(integral, key=lambda r: r.place):
        group = sorted(
            group_iter,
            key=lambda r: (r.hash in referenced, r.true_seq is not None, r.moved),
            reverse=True,
        )
        kept.append(group[0])
        if len(group) > 1:
            renumbered = last_moved > group[0].place
            note = "; the records after it were renumbered" if renumbered else ""
        for intruder in group[1:]:
            genuine = group[0]
            where = (
                f"record {genuine.seq}, written as {genuine.place}, is the genuine one"
                if genuine.moved
                else f"record {genuine.seq} is the genuine one"
            )
            problems.append(
                Problem(
                    intruder.seq,
                    "inserted",
                    f"{intruder.label} was inserted: it is not part of the hash chain "
                    f"({where}){note}",
                )
            )

    for row in kept:
        if row.swapped_with is not None:
            problems.append(
                Problem(
                    row.seq,
                    "reordered",
                    f"{row.label} was reordered: its content was swapped with record "
                    f"{row.swapped_with}",
                )
            )
        elif row.cycle:
            seqs = sorted(row.cycle)
            together = ", ".join(str(s) for s in seqs[:-1]) + f" and {seqs[-1]}"
            problems.append(
                Problem(
                    row.seq,
                    "reordered",
                    f"{row.label} was reordered: it holds what was written as record "
                    f"{row.true_seq} (records {together} were swapped)",
                )
            )
        elif row.true_seq is None:
            problems.append(
                Problem(
                    row.seq,
                    "edited",
                    f"{row.label} was edited: its content does not match its hash",
                )
            )

    previous: _Row | None = None
    for row in kept:
        expected = 1 if previous is None else previous.place + 1
        if row.place > expected:
            first, last = expected, row.place - 1
            what = f"record {first} was" if first == last else f"records {first}-{last} were"
            if row.moved:
                how = (
                    f"the record now numbered {row.seq} was written as {row.place}; "
                    f"the records after the gap were renumbered to hide it"
                )
            else:
                start = "the start" if previous is None else f"record {previous.seq}"
                how = f"the journal jumps from {start} to record {row.seq}"
            problems.append(Problem(first, "deleted", f"{what} deleted: {how}"))
        elif _is_intact(row) and (previous is None or _is_intact(previous)):
            prev_hash = GENESIS_HASH if previous is None else previous.hash
            if row.prev_hash != prev_hash:
                before = "the start" if previous is None else f"record {previous.seq}"
                problems.append(
                    Problem(
                        row.seq,
                        "broken-chain",
                        f"{row.label} does not link to {before}: one of them was "
                        f"rewritten with a recomputed hash",
                    )
                )
        previous = row
    return problems


def _is_intact(row: _Row) -> bool:
    return row.true_seq is not None and row.swapped_with is None
