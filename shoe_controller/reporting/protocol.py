"""The table-system protocol, version 1: message shapes, signing, checking (no I/O).

JSON text frames over a WebSocket; every message is one JSON object with ``protocol`` (1),
``type`` and ``sig``: a hex HMAC-SHA256, under the shared key, of the canonical JSON of the
message without its ``sig`` (sorted keys, ``(",", ":")`` separators, UTF-8, no ASCII
escaping). The full description is docs/table-protocol/README.md and every message has a JSON
Schema beside it; :func:`check_message` enforces the same shapes at run time without needing
``jsonschema`` (the tests keep the two in agreement).

Both ends use this module: the controller's client and the reference table system
(``simulators/table_system.py``).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from shoe_controller.errors import ProtocolViolation

__all__ = ["ProtocolViolation"]

PROTOCOL_VERSION = 1
MAX_MESSAGE_BYTES = 64 * 1024
"""Larger messages are refused with ``too_large`` (the connection stays up)."""
HARD_FRAME_LIMIT = 1024 * 1024
"""The WebSocket layer closes the connection (1009) on frames larger than this."""

# Error codes (README "Errors").
UNAUTHENTICATED = "unauthenticated"
BAD_SIGNATURE = "bad_signature"
REPLAYED = "replayed"
OUT_OF_SEQUENCE = "out_of_sequence"
TOO_LARGE = "too_large"
MALFORMED = "malformed"
UNSUPPORTED_VERSION = "unsupported_version"
UNKNOWN_TYPE = "unknown_type"
CONFLICT = "conflict"
NOT_APPLICABLE = "not_applicable"
AHEAD = "ahead"
ERROR_CODES = (UNAUTHENTICATED, BAD_SIGNATURE, REPLAYED, OUT_OF_SEQUENCE, TOO_LARGE,
               MALFORMED, UNSUPPORTED_VERSION, UNKNOWN_TYPE, CONFLICT, NOT_APPLICABLE, AHEAD)

#: Events the controller reports (type -> what it means); each is sequenced and acknowledged.
EVENT_TYPES = (
    "shoe_new", "shoe_burn", "shoe_cut_card", "shoe_finished",
    "round_opened", "betting_closed", "card", "round_result", "round_confirmed", "round_void",
    "irregularity", "irregularity_cleared", "device_health",
)
#: Table system -> controller commands (sequenced per session, applied by the table).
COMMAND_TYPES = ("open_betting", "close_betting", "void_round")

# Field checks: name -> kind. Kinds: "int" (>= 0, not bool), "str", "nstr" (non-empty str),
# "bool", "obj", "num", "hex" (64 hex digits), "int?" / "str?" (may be null or absent).
_COMMON = {"protocol": "int", "type": "nstr"}
_SESSION = {"session": "nstr"}
_TS_SEQ = {"session": "nstr", "seq": "int"}
FIELDS: dict[str, dict[str, str]] = {
    "challenge": {**_COMMON, "nonce": "nstr"},
    "hello": {**_COMMON, "table_id": "nstr", "token": "nstr", "nonce": "nstr",
              "client_nonce": "nstr", "controller": "str", "head": "int"},
    "welcome": {**_COMMON, **_SESSION, "last_seq": "int", "drives_betting": "bool"},
    "ack": {**_COMMON, **_TS_SEQ, "upto": "int"},
    "resend": {**_COMMON, **_TS_SEQ, "from_seq": "int"},
    "open_betting": {**_COMMON, **_TS_SEQ, "shoe": "int", "round": "int"},
    "close_betting": {**_COMMON, **_TS_SEQ, "shoe": "int", "round": "int"},
    "void_round": {**_COMMON, **_TS_SEQ, "shoe": "int", "round": "int", "reason": "str"},
    "error": {**_COMMON, "session": "str?", "code": "nstr", "detail": "str", "ref": "int?"},
}
_EVENT_FIELDS = {**_COMMON, **_SESSION, "table_id": "nstr", "seq": "int", "id": "nstr",
                 "at": "num", "shoe": "int", "data": "obj"}
for _type in EVENT_TYPES:
    FIELDS[_type] = _EVENT_FIELDS

#: Which side may send which message.
FROM_CONTROLLER = frozenset({"hello", "error", *EVENT_TYPES})
FROM_TABLE_SYSTEM = frozenset({"challenge", "welcome", "ack", "resend", "error", *COMMAND_TYPES})


def canonical_json(value: Any) -> str:
    """The one JSON text of ``value`` that is signed."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def signature(message: Mapping[str, Any], key: bytes) -> str:
    body = {name: value for name, value in message.items() if name != "sig"}
    return hmac.new(key, canonical_json(body).encode("utf-8"), hashlib.sha256).hexdigest()


def sign(message: Mapping[str, Any], key: bytes) -> dict[str, Any]:
    """A copy of ``message`` with its ``sig``."""
    signed = {name: value for name, value in message.items() if name != "sig"}
    signed["sig"] = signature(signed, key)
    return signed


def encode(message: Mapping[str, Any], key: bytes) -> str:
    """The signed message as the text of one WebSocket frame."""
    return canonical_json(sign(message, key))


def new_nonce() -> str:
    return secrets.token_hex(16)


def session_id(server_nonce: str, client_nonce: str) -> str:
    """Both sides contribute to the session id, so neither can replay an old session."""
    return f"{server_nonce}.{client_nonce}"


def message(type_: str, **fields: Any) -> dict[str, Any]:
    return {"protocol": PROTOCOL_VERSION, "type": type_, **fields}


def error_message(code: str, detail: str, *, session: str | None = None,
                  ref: int | None = None) -> dict[str, Any]:
    return message("error", session=session, code=code, detail=detail[:500], ref=ref)


def decode(text: str | bytes, key: bytes, *, sender: str) -> dict[str, Any]:
    """Parse, authenticate and shape-check one received frame.

    ``sender`` is ``"controller"`` or ``"table_system"`` (who is allowed to send what).
    Raises :class:`ProtocolViolation` with the error code to send back; never anything else.
    """
    size = len(text.encode("utf-8", "surrogatepass")) if isinstance(text, str) else len(text)
    if size > MAX_MESSAGE_BYTES:
        raise ProtocolViolation(TOO_LARGE, f"{size} bytes; the limit is {MAX_MESSAGE_BYTES}")
    try:
        value = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProtocolViolation(MALFORMED, f"not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ProtocolViolation(MALFORMED, "a message is a JSON object")
    ref = value.get("seq") if _is_int(value.get("seq")) else None
    if value.get("protocol") != PROTOCOL_VERSION:
        raise ProtocolViolation(
            UNSUPPORTED_VERSION,
            f"protocol {value.get('protocol')!r}; this end speaks {PROTOCOL_VERSION}", ref)
    kind = value.get("type")
    allowed = FROM_CONTROLLER if sender == "controller" else FROM_TABLE_SYSTEM
    if not isinstance(kind, str) or kind not in allowed:
        raise ProtocolViolation(UNKNOWN_TYPE, f"type {kind!r} is not one the {sender} sends",
                                ref)
    sig = value.get("sig")
    if not isinstance(sig, str) or not hmac.compare_digest(sig, signature(value, key)):
        raise ProtocolViolation(BAD_SIGNATURE, f"{kind}: missing or wrong signature", ref)
    check_message(value)
    return value


def check_message(value: Mapping[str, Any]) -> None:
    """Raise ``ProtocolViolation(MALFORMED)`` unless ``value`` has its type's fields exactly."""
    kind = value.get("type")
    fields = FIELDS.get(kind) if isinstance(kind, str) else None
    if fields is None:
        raise ProtocolViolation(UNKNOWN_TYPE, f"unknown message type {kind!r}")
    problems = []
    for name, spec in fields.items():
        if name not in value:
            if not spec.endswith("?"):
                problems.append(f"{name} missing")
        elif not _fits(value[name], spec):
            problems.append(f"{name} must be {_KIND_TEXT[spec]}, got {value[name]!r:.40}")
    extra = sorted(set(value) - set(fields) - {"sig"})
    if extra:
        problems.append(f"unknown field(s) {', '.join(extra)}")
    if problems:
        ref = value.get("seq") if _is_int(value.get("seq")) else None
        raise ProtocolViolation(MALFORMED, f"{kind}: " + "; ".join(problems), ref)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _fits(value: Any, spec: str) -> bool:
    if spec.endswith("?"):
        return value is None or _fits(value, spec[:-1])
    if spec == "int":
        return _is_int(value)
    if spec == "num":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if spec == "str":
        return isinstance(value, str)
    if spec == "nstr":
        return isinstance(value, str) and bool(value)
    if spec == "bool":
        return isinstance(value, bool)
    if spec == "obj":
        return isinstance(value, dict)
    raise AssertionError(spec)


_KIND_TEXT = {"int": "a whole number >= 0", "num": "a number", "str": "a string",
              "nstr": "a non-empty string", "bool": "true or false", "obj": "an object",
              "int?": "a whole number >= 0 or null", "str?": "a string or null"}


def schema_dir() -> Path:
    """``docs/table-protocol`` of a source checkout (the schemas are documentation)."""
    return Path(__file__).resolve().parents[2] / "docs" / "table-protocol"


def load_schemas(directory: Path | None = None) -> dict[str, dict[str, Any]]:
    """Message type -> its JSON Schema, from ``<type>.schema.json`` files."""
    directory = directory or schema_dir()
    schemas = {}
    for path in sorted(directory.glob("*.schema.json")):
        schemas[path.name.removesuffix(".schema.json")] = json.loads(path.read_text("utf-8"))
    return schemas


def read_key_file(path: str | Path) -> bytes:
    """The shared HMAC key: the file's bytes with surrounding whitespace removed."""
    from shoe_controller.errors import ConfigError

    try:
        key = Path(path).read_bytes().strip()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the table-system key: "
                          f"{exc.strerror or exc}") from None
    if len(key) < 16:
        raise ConfigError(f"{path}: the table-system key must be at least 16 bytes")
    return key
