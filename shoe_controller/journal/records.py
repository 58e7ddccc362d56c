"""The journal record and its hash: pure functions, no SQLite.

A record's hash covers everything it says *and* the hash of the record before it, so the
records form a chain: changing, removing, adding or moving one record breaks the chain at
that record. The encoding that is hashed is canonical JSON (sorted keys, no spaces, UTF-8),
so any program in any language can recompute it from the stored columns::

    hash = SHA-256( canonical_json([seq, wall_time, kind, actor, data, prev_hash]) )

or, for a keyed journal, HMAC-SHA-256 with the journal key over the same bytes.

What the chain cannot do: someone who can write the file and knows the algorithm can
recompute every hash after the record they changed, and dropping the newest records leaves
a shorter chain that is still valid. A keyed journal (HMAC; the key kept off the table PC)
stops the first; writing the last hash somewhere else (the game server, a printed shoe
report) stops the second.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from shoe_controller.errors import JournalDataError

GENESIS_HASH = "0" * 64
"""The ``prev_hash`` of record 1: there is no record before it."""


@dataclass(frozen=True, slots=True)
class Record:
    """One journalled input, exactly as stored and hashed.

    ``data`` is the JSON round trip of what was appended (tuples become lists, keys become
    strings), i.e. what a replay of the journal will see.
    """

    seq: int
    wall_time: float
    kind: str
    actor: str | None
    data: dict[str, Any]
    prev_hash: str
    hash: str


def canonical_json(value: Any) -> str:
    """The one JSON text of ``value`` that is hashed; raises ``ValueError``/``TypeError``."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def encode_data(data: Mapping[str, Any]) -> str:
    """Canonical JSON of a record's data, or a :class:`JournalDataError` saying what is wrong.

    Called before anything is written, so a bad value never leaves half a record behind.
    """
    if not isinstance(data, Mapping):
        raise JournalDataError(f"journal data must be a mapping, not {type(data).__name__}")
    bad_keys = [key for key in data if not isinstance(key, str)]
    if bad_keys:
        raise JournalDataError(f"journal data keys must be strings, got {bad_keys[0]!r}")
    try:
        return canonical_json(dict(data))
    except (TypeError, ValueError) as exc:
        raise JournalDataError(f"journal data is not JSON-serialisable: {exc}") from exc


def check_fields(kind: str, actor: str | None, wall_time: float) -> None:
    """Reject values the journal cannot store faithfully, before writing anything."""
    if not isinstance(kind, str) or not kind:
        raise JournalDataError(f"journal record kind must be a non-empty string, got {kind!r}")
    if actor is not None and not isinstance(actor, str):
        raise JournalDataError(f"journal record actor must be a string or None, got {actor!r}")
    if isinstance(wall_time, bool) or not isinstance(wall_time, (int, float)):
        raise JournalDataError(f"wall_time must be seconds as a float, got {wall_time!r}")
    if not math.isfinite(wall_time):
        raise JournalDataError(f"wall_time must be finite, got {wall_time!r}")


def record_hash(
    seq: int,
    wall_time: float,
    kind: str,
    actor: str | None,
    data_json: str,
    prev_hash: str,
    key: bytes | None = None,
) -> str:
    """Hex hash of one record; ``data_json`` is the canonical JSON text of its data.

    The data text is spliced in rather than re-encoded: canonical JSON of a list is the
    canonical JSON of its items joined by commas, so this equals
    ``canonical_json([seq, wall_time, kind, actor, data, prev_hash])``.
    """
    head = canonical_json([seq, float(wall_time), kind, actor])
    tail = canonical_json(prev_hash)
    message = f"{head[:-1]},{data_json},{tail}]".encode()
    if key is None:
        return hashlib.sha256(message).hexdigest()
    return hmac.new(key, message, hashlib.sha256).hexdigest()
