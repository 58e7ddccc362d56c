"""The pit's model of the floor: every table's last state, status and recent events (pure).

:meth:`Floor.apply` takes one MQTT message (topic, payload bytes, the receive time) and folds
it in; it never raises for what a broker can deliver. A payload that is not ours (not JSON,
another version, a table id that is not its topic's, a field of the wrong type, too big) is
counted in :attr:`Floor.rejected` with its reason and changes nothing. Older or repeated
messages (QoS 1 may deliver twice; a restarted controller starts a new session) never
overwrite newer ones: a state is newer if its ``at`` is later, or equal with a higher
``version``; an event is known by its ``id``.

:meth:`Floor.summary` is what the pit's tile for a table shows, :meth:`Floor.detail` what its
detail panel shows (docs/fleet.md describes both).
"""

from __future__ import annotations

import json
import math
from collections import Counter, OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any

from shoe_controller.fleet.broker import split_topic
from shoe_controller.fleet.result_text import result_text

#: Payloads larger than this are not ours (a state is a few kB).
MAX_PAYLOAD = 256 * 1024
#: Events kept per table for its detail panel.
KEEP_EVENTS = 60
#: Outcomes shown on a tile (the state keeps the whole shoe's).
TILE_RESULTS = 30
#: Tables the floor tracks at most (a flood of made-up table ids cannot exhaust memory).
MAX_TABLES = 2000
#: Rejection reasons remembered for the page (the count keeps going).
KEEP_REASONS = 20


class Rejected(ValueError):
    """A message the floor does not take (the reason is its text)."""


@dataclass
class TableEntry:
    table_id: str
    state: dict[str, Any] | None = None
    status: dict[str, Any] | None = None
    status_at: float | None = None  # when the pit received the status
    events: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=KEEP_EVENTS))
    event_ids: set[str] = field(default_factory=set)
    last_seq: int = 0
    gaps: int = 0  # events the pit knows it missed (a jump in seq)
    state_gaps: int = 0  # states it missed: a jump in version within a publisher session
    states_seen: int = 0  # states taken from the current publisher session
    received_at: float = 0.0
    last_card: dict[str, Any] | None = None
    changed: int = 0  # floor version of the last change


class Floor:
    """Every table under ``prefix`` (topics ``<prefix>/tables/<id>/{state,events,status}``)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.tables: OrderedDict[str, TableEntry] = OrderedDict()
        self.version = 0
        self.rejected = 0
        self.reasons: deque[str] = deque(maxlen=KEEP_REASONS)

    # ------------------------------------------------------------------ folding
    def apply(self, topic: str, payload: bytes, now: float) -> str | None:
        """Fold one message in; the id of the table it changed, or None (ignored/rejected)."""
        try:
            return self._apply(topic, payload, now)
        except Rejected as exc:
            self.rejected += 1
            self.reasons.append(f"{topic[:200]}: {exc}")
            return None

    def _apply(self, topic: str, payload: bytes, now: float) -> str | None:
        where = split_topic(self.prefix, topic)
        if where is None:
            raise Rejected("not a table topic")
        table_id, kind = where
        if len(payload) > MAX_PAYLOAD:
            raise Rejected(f"payload of {len(payload)} bytes (at most {MAX_PAYLOAD})")
        try:
            document = json.loads(payload)
        except (ValueError, UnicodeDecodeError) as exc:
            raise Rejected(f"not JSON: {exc}") from None
        if not isinstance(document, dict):
            raise Rejected("not a JSON object")
        if document.get("v") != 1:
            raise Rejected(f"payload version {document.get('v')!r} (this pit reads 1)")
        if document.get("table_id") != table_id:
            raise Rejected(f"table_id {document.get('table_id')!r} is not the topic's")
        entry = self.tables.get(table_id)
        if entry is None:
            if len(self.tables) >= MAX_TABLES:
                raise Rejected(f"more than {MAX_TABLES} tables")
            entry = TableEntry(table_id)
        changed = {"state": self._state, "events": self._event,
                   "status": self._status}[kind](entry, document, now)
        if not changed:
            return None
        self.tables[table_id] = entry  # only a valid message makes a table known
        self.version += 1
        entry.changed = self.version
        entry.received_at = now
        return table_id

    def _state(self, entry: TableEntry, doc: dict[str, Any], now: float) -> bool:
        _check(doc, STATE_FIELDS)
        _check(doc["prompt"], PROMPT_FIELDS, "prompt.")
        _check(doc["shoe"], SHOE_FIELDS, "shoe.")
        for item in doc["latched"]:
            if not isinstance(item, dict):
                raise Rejected("latched: items must be objects")
            _check(item, LATCHED_FIELDS, "latched[].")
        for item in doc["recent_results"]:
            if not isinstance(item, dict) or not isinstance(item.get("outcome"), str):
                raise Rejected("recent_results: items must be objects with an outcome")
        if doc.get("last_result") is not None and not isinstance(doc["last_result"], dict):
            raise Rejected("last_result: must be an object or null")
        odds = doc.get("odds")
        if odds is not None and (not isinstance(odds, dict)
                                 or not isinstance(odds.get("player_edge", []), list)):
            raise Rejected("odds: must be an object with a player_edge list")
        old = entry.state
        if old is not None and old["session"] == doc["session"]:
            if doc["version"] < old["version"] or doc == old:
                return False  # an older one, or a QoS 1 duplicate
            if doc["version"] > old["version"]:
                entry.state_gaps += doc["version"] - old["version"] - 1
                entry.states_seen += 1
            # (the same version again: re-published after a reconnection)
        elif old is not None and old["at"] > doc["at"]:
            return False  # an older session's state arriving late
        else:
            entry.states_seen = 1
        entry.state = doc
        return True

    def _event(self, entry: TableEntry, doc: dict[str, Any], now: float) -> bool:
        _check(doc, EVENT_FIELDS)
        if doc["id"] in entry.event_ids:
            return False
        seq = doc["seq"]
        if entry.last_seq and seq > entry.last_seq + 1:
            entry.gaps += seq - entry.last_seq - 1
        entry.last_seq = max(entry.last_seq, seq)
        if len(entry.events) == entry.events.maxlen:
            entry.event_ids.discard(entry.events[0]["id"])
        entry.events.append(doc)
        entry.event_ids.add(doc["id"])
        if doc["type"] == "card":
            entry.last_card = {"seq": seq, "at": doc["at"], "received": now,
                               "card": doc["data"].get("card"),
                               "hand": doc["data"].get("hand")}
        return True

    def _status(self, entry: TableEntry, doc: dict[str, Any], now: float) -> bool:
        _check(doc, STATUS_FIELDS)
        if "at" in doc and not _finite(doc["at"]):
            raise Rejected("at: unexpected value")
        old = entry.status
        if old is not None and old == doc:
            return False
        entry.status = doc
        entry.status_at = now
        return True

    # ------------------------------------------------------------------ documents
    def summary(self, table_id: str) -> dict[str, Any]:
        """One table's tile: who, what the dealer sees, the shoe, results, alarms."""
        entry = self.tables[table_id]
        state = entry.state or {}
        status = entry.status or {}
        online = bool(status.get("online", bool(state)))
        odds = state.get("odds") or {}
        shoe = state.get("shoe") or {}
        return {
            "table_id": table_id,
            "pit": state.get("pit"),
            "game": state.get("game"),
            "profile": state.get("profile"),
            "online": online,
            "offline_reason": "" if online else str(status.get("reason") or ""),
            "offline_since": None if online else status.get("at", entry.status_at),
            "state": state.get("state"),
            "prompt": state.get("prompt"),
            "alarm": state.get("alarm"),
            "latched": [{k: item.get(k) for k in ("kind", "prompt", "detail", "since")}
                        for item in state.get("latched") or ()],
            "shoe": {k: shoe.get(k) for k in ("number", "cards_dealt", "cards_total",
                                              "cut_card_out", "finished")},
            "round": state.get("round"),
            "results": [r["outcome"] for r in (state.get("recent_results") or ())
                        ][-TILE_RESULTS:],
            # roulette: each result's number (None for a void, and at card tables)
            "result_numbers": [r.get("number") if isinstance(r.get("number"), int)
                               and not isinstance(r.get("number"), bool) else None
                               for r in (state.get("recent_results") or ())][-TILE_RESULTS:],
            "last_result": state.get("last_result"),
            "last_result_text": result_text(state.get("last_result")),
            # No alert once the shoe is finished: no round is dealt from the cards left.
            "player_edge": [] if shoe.get("finished") else list(odds.get("player_edge") or ()),
            "link": state.get("link"),
            "state_version": state.get("version"),
            "state_at": state.get("at"),
            "last_event_seq": entry.last_seq,
            "event_gaps": entry.gaps,
            "state_gaps": entry.state_gaps,
            "states_seen": entry.states_seen,
            "last_card": entry.last_card,
            "received_at": entry.received_at,
        }

    def detail(self, table_id: str) -> dict[str, Any]:
        """A table's detail panel: its tile, the whole state, its recent events."""
        entry = self.tables[table_id]
        return {**self.summary(table_id), "state_document": entry.state,
                "status_document": entry.status, "events": list(entry.events)}

    def snapshot(self) -> dict[str, Any]:
        """The whole floor: every tile, the games and pits to filter by, what was refused."""
        summaries = [self.summary(t) for t in sorted(self.tables)]
        return {"version": self.version, "tables": summaries,
                "games": sorted({s["game"] for s in summaries if s["game"]}),
                "pits": sorted({s["pit"] for s in summaries if s["pit"]}),
                "rejected": self.rejected, "reasons": list(self.reasons)}

    def changed_since(self, version: int) -> list[dict[str, Any]]:
        """Tiles of the tables changed after floor ``version``."""
        return [self.summary(t) for t, e in self.tables.items() if e.changed > version]

    def counts(self) -> Counter[str]:
        """How many tables are online, offline, latched, with a player edge."""
        counts: Counter[str] = Counter()
        for table_id in self.tables:
            tile = self.summary(table_id)
            counts["tables"] += 1
            counts["online" if tile["online"] else "offline"] += 1
            counts["latched"] += bool(tile["latched"])
            counts["player_edge"] += bool(tile["player_edge"])
        return counts


# ---------------------------------------------------------------------- shape checks
_NUMBER = (int, float)


def _finite(value: Any) -> bool:
    return isinstance(value, _NUMBER) and not isinstance(value, bool) and math.isfinite(value)


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _str(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= 10_000


def _opt_str(value: Any) -> bool:
    return value is None or _str(value)


def _opt_int(value: Any) -> bool:
    return value is None or _int(value)


STATE_FIELDS = {"session": _str, "version": _int, "at": _finite, "state": _str,
                "prompt": lambda v: isinstance(v, dict), "alarm": _str, "round": _int,
                "shoe": lambda v: isinstance(v, dict), "latched": lambda v: isinstance(v, list),
                "recent_results": lambda v: isinstance(v, list), "game": _str,
                "pit": _opt_str, "link": lambda v: isinstance(v, dict),
                "last_event_seq": _int}
PROMPT_FIELDS = {"text": _str, "level": _str, "detail": _str}
SHOE_FIELDS = {"number": _int, "cards_dealt": _int, "cards_total": _opt_int,
               "cut_card_out": lambda v: isinstance(v, bool),
               "finished": lambda v: isinstance(v, bool)}
LATCHED_FIELDS = {"kind": _str, "prompt": _str, "detail": _str, "since": _finite}
EVENT_FIELDS = {"seq": lambda v: _int(v) and v >= 1, "id": _str, "type": _str, "at": _finite,
                "shoe": _int, "data": lambda v: isinstance(v, dict)}
STATUS_FIELDS = {"online": lambda v: isinstance(v, bool), "reason": _str, "session": _str}


def _check(document: dict[str, Any], fields: dict[str, Any], where: str = "") -> None:
    for name, ok in fields.items():
        if name not in document:
            raise Rejected(f"{where}{name}: missing")
        if not ok(document[name]):
            raise Rejected(f"{where}{name}: unexpected value {str(document[name])[:40]!r}")
