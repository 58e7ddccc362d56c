"""The table-system protocol, version 2: message shapes, signing, checking (no I/O).

JSON text frames over a WebSocket; every message is one JSON object with ``protocol`` (2),
``type`` and ``sig``: a hex HMAC-SHA256, under the shared key, of the RFC 8785 (JSON
Canonicalization Scheme, "JCS") form of the message without its ``sig``. JCS is a
specification that any language can implement (ECMAScript number formatting, keys sorted by
UTF-16 code units, minimal string escaping, UTF-8), unlike Python's ``json.dumps`` which
version 1 signed. The full description, with worked examples, is docs/table-protocol/README.md
and every message has a JSON Schema beside it; :func:`check_message` enforces the same shapes
at run time without needing ``jsonschema`` (the tests keep the two in agreement).

:func:`decode` is the only door for bytes from the network: it raises
:class:`ProtocolViolation` (with the error code to send back) for *any* input and never
anything else; a fuzz test (tests/fuzz) and an atheris harness (bench/fuzz_table_protocol.py)
hold it to that.

Both ends use this module: the controller's client and the reference table system
(``simulators/table_system.py``).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import re
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import rfc8785

from shoe_controller.errors import ProtocolViolation

__all__ = ["ProtocolViolation"]

PROTOCOL_VERSION = 2
MAX_MESSAGE_BYTES = 64 * 1024
"""Larger messages are refused with ``too_large`` (the connection stays up)."""
HARD_FRAME_LIMIT = 1024 * 1024
"""The WebSocket layer closes the connection (1009) on frames larger than this."""
MAX_DEPTH = 32
"""Arrays and objects nest at most this deep (a message itself is depth 1)."""
SAFE_INTEGER = 2**53 - 1
"""Every number lies within +-SAFE_INTEGER: an IEEE double, which JCS assumes, holds every
integer up to it exactly and no integer beyond it reliably (I-JSON, RFC 7493)."""

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
UNAVAILABLE = "unavailable"
INTERNAL_ERROR = "internal_error"
ERROR_CODES = (UNAUTHENTICATED, BAD_SIGNATURE, REPLAYED, OUT_OF_SEQUENCE, TOO_LARGE,
               MALFORMED, UNSUPPORTED_VERSION, UNKNOWN_TYPE, CONFLICT, NOT_APPLICABLE, AHEAD,
               UNAVAILABLE, INTERNAL_ERROR)

#: Events the controller reports (type -> what it means); each is sequenced and acknowledged.
EVENT_TYPES = (
    "shoe_new", "shoe_burn", "shoe_cut_card", "shoe_finished",
    "round_opened", "betting_closed", "card", "round_result", "round_confirmed", "round_void",
    "irregularity", "irregularity_cleared", "device_health",
    # blackjack tables only (README "Blackjack"):
    "decision_due", "decision_made", "insurance_closed", "dealer_check",
    # roulette tables only (docs/table-protocol/README.md "Roulette"):
    "winning_number",
)
#: The event types only a blackjack table reports.
BLACKJACK_EVENT_TYPES = ("decision_due", "decision_made", "insurance_closed", "dealer_check")
#: The event types only a roulette (wheel) table reports.
ROULETTE_EVENT_TYPES = ("winning_number",)
#: Table system -> controller commands (sequenced per session, applied by the table);
#: ``decision`` and ``insurance`` at blackjack tables only.
COMMAND_TYPES = ("open_betting", "close_betting", "void_round", "decision", "insurance")
#: The most seats a blackjack table has (a ``seats`` list is checked against it).
MAX_SEATS = 7

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
    "close_betting": {**_COMMON, **_TS_SEQ, "shoe": "int", "round": "int", "seats": "seats?"},
    "decision": {**_COMMON, **_TS_SEQ, "shoe": "int", "round": "int", "seat": "int",
                 "hand": "int", "action": "nstr", "key": "str"},
    "insurance": {**_COMMON, **_TS_SEQ, "shoe": "int", "round": "int", "seats": "seats",
                  "key": "str"},
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


class NotCanonical(ValueError):
    """A value has no canonical form under this protocol (see :func:`check_value`)."""


# ---------------------------------------------------------------------------- canonical form
def check_value(value: Any, *, depth: int = 1) -> None:
    """Raise :class:`NotCanonical` unless ``value`` is JSON this protocol can sign.

    JSON's own types only (dict with str keys, list/tuple, str, int, float, bool, None);
    strings that are Unicode text (no lone surrogates); numbers finite and within
    +-:data:`SAFE_INTEGER`; arrays and objects nested at most :data:`MAX_DEPTH` deep.
    """
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, str):
        _check_text(value)
    elif isinstance(value, int):
        if not -SAFE_INTEGER <= value <= SAFE_INTEGER:
            raise NotCanonical(f"the integer {_short(value)} is outside +-(2**53 - 1)")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise NotCanonical(f"{value} is not a JSON number")
        if abs(value) > SAFE_INTEGER:
            raise NotCanonical(f"the number {value!r} is outside +-(2**53 - 1)")
    elif isinstance(value, (dict, list, tuple)):
        if depth > MAX_DEPTH:
            raise NotCanonical(f"nested deeper than {MAX_DEPTH} levels")
        if isinstance(value, dict):
            for name, item in value.items():
                if not isinstance(name, str):
                    raise NotCanonical(f"object keys are strings, not {type(name).__name__}")
                _check_text(name)
                check_value(item, depth=depth + 1)
        else:
            for item in value:
                check_value(item, depth=depth + 1)
    else:
        raise NotCanonical(f"{type(value).__name__} is not a JSON type")


def _check_text(text: str) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise NotCanonical(
                f"a string holds a lone surrogate (U+{ord(text[exc.start]):04X}), which is not "
                "Unicode text") from None


def _short(number: int) -> str:
    return str(number) if number.bit_length() < 200 else f"of {number.bit_length()} bits"


def canonical_bytes(value: Any) -> bytes:
    """The RFC 8785 (JCS) form of ``value``, as UTF-8: the bytes that are signed.

    Raises :class:`NotCanonical` for anything :func:`check_value` refuses. The ``rfc8785``
    package is the definition. Most messages take a faster road to the very same bytes: where
    JCS and ``json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` agree
    (strings escaped alike; keys without characters beyond U+FFFF, whose code-point order then
    is their UTF-16 order; integral floats written as integers; other floats at least 1e-4 in
    magnitude, which Python writes with the same shortest digits and no exponent below 2**53),
    the C encoder writes them; anything else goes to ``rfc8785``. The equivalence is a
    property test (tests/reporting/test_canonical_form.py).
    """
    try:
        prepared = _for_json_dumps(value, 1)
    except _NeedsLibrary:
        check_value(value)
        return rfc8785.dumps(value)
    return json.dumps(prepared, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


class _NeedsLibrary(Exception):
    """``json.dumps`` would not write this value as JCS does: use ``rfc8785``."""


def _for_json_dumps(value: Any, depth: int) -> Any:
    """``value`` checked (as :func:`check_value`) and with integral floats made integers, or
    :class:`_NeedsLibrary` where ``json.dumps`` would write it otherwise than JCS."""
    kind = type(value)
    if value is None or kind is bool or kind is int and -SAFE_INTEGER <= value <= SAFE_INTEGER:
        return value
    if kind is str:
        _check_text(value)
        return value
    if kind is float and math.isfinite(value) and abs(value) <= SAFE_INTEGER:
        if value.is_integer():
            return int(value)
        if abs(value) < 1e-4:
            raise _NeedsLibrary
        return value
    if (kind is dict or kind is list or kind is tuple) and depth <= MAX_DEPTH:
        if kind is not dict:
            return [_for_json_dumps(item, depth + 1) for item in value]
        out = {}
        for name, item in value.items():
            if type(name) is not str:
                raise _NeedsLibrary
            _check_text(name)
            if not name.isascii() and max(name) > "\uffff":
                raise _NeedsLibrary  # UTF-16 order differs from code-point order
            out[name] = _for_json_dumps(item, depth + 1)
        return out
    raise _NeedsLibrary  # out of range, too deep, not JSON, or a subclass: the full check


def canonical_json(value: Any) -> str:
    """:func:`canonical_bytes` as text (what goes into a WebSocket text frame)."""
    return canonical_bytes(value).decode("utf-8")


def signature(message: Mapping[str, Any], key: bytes) -> str:
    """Hex HMAC-SHA256 of the canonical form of ``message`` without its ``sig``."""
    body = {name: value for name, value in message.items() if name != "sig"}
    return _mac(key, canonical_bytes(body))


def _mac(key: bytes, canonical: bytes) -> str:
    return hmac.new(key, canonical, hashlib.sha256).hexdigest()


def sign(message: Mapping[str, Any], key: bytes) -> dict[str, Any]:
    """A copy of ``message`` with its ``sig``."""
    signed = {name: value for name, value in message.items() if name != "sig"}
    signed["sig"] = signature(signed, key)
    return signed


def encode(message: Mapping[str, Any], key: bytes) -> str:
    """The signed message as the text of one WebSocket frame (itself in canonical form)."""
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


# ---------------------------------------------------------------------------- decoding
_SIG = re.compile(r"[0-9a-f]{64}")
# A JSON string, or the rest of the text after an unterminated one (possessive: linear time).
_STRING = re.compile(r'"(?:[^"\\]|\\.?)*+(?:"|\Z)', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class _Refused(ValueError):
    """Raised by the JSON parser's hooks; becomes ``malformed``."""


def _refuse_constant(name: str) -> Any:
    raise _Refused(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _Refused(f"the number {text[:40]} is too large for a double")
    return number


def _safe_int(text: str) -> int:
    if len(text) > 17 or not -SAFE_INTEGER <= (number := int(text)) <= SAFE_INTEGER:
        raise _Refused(f"the integer {text[:40]} is outside +-(2**53 - 1)")
    return number


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        for name, _ in pairs:
            if name in seen:
                raise _Refused(f"the key {name!r:.40} appears more than once")
            seen.add(name)
    return value


def _too_deep(text: str) -> bool:
    """Whether arrays/objects in ``text`` nest deeper than :data:`MAX_DEPTH` (before parsing,
    so the parser's recursion is never the limit)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return False
    depth = 0
    for char in _NOT_BRACKET.sub("", _STRING.sub("", text)):
        if char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return True
        else:
            depth -= 1
    return False


def parse(text: str | bytes) -> Any:
    """Strict JSON: UTF-8, no NaN/Infinity, no duplicate keys, numbers and strings that have a
    canonical form, nesting within :data:`MAX_DEPTH`. Raises ``ProtocolViolation(MALFORMED)``
    or ``ProtocolViolation(TOO_LARGE)`` and nothing else."""
    if isinstance(text, str):
        try:
            size = len(text.encode("utf-8"))
            unicode_error = ""
        except UnicodeEncodeError as exc:
            size = len(text.encode("utf-8", "surrogatepass"))
            unicode_error = (f"a lone surrogate (U+{ord(text[exc.start]):04X}) is not Unicode "
                             "text")
    elif isinstance(text, (bytes, bytearray, memoryview)):
        raw = bytes(text)
        size = len(raw)
        unicode_error = ""
    else:
        raise ProtocolViolation(MALFORMED, f"a frame is text, not {type(text).__name__}")
    if size > MAX_MESSAGE_BYTES:
        raise ProtocolViolation(TOO_LARGE, f"{size} bytes; the limit is {MAX_MESSAGE_BYTES}")
    if unicode_error:
        raise ProtocolViolation(MALFORMED, unicode_error)
    if not isinstance(text, str):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolViolation(MALFORMED, f"not UTF-8: {exc.reason} at byte {exc.start}"
                                    ) from None
    if text.startswith("\ufeff"):
        raise ProtocolViolation(MALFORMED, "a byte-order mark before the JSON")
    if _too_deep(text):
        raise ProtocolViolation(MALFORMED, f"nested deeper than {MAX_DEPTH} levels")
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float,
                           parse_int=_safe_int, object_pairs_hook=_object)
        check_value(value)
    except (_Refused, NotCanonical) as exc:
        raise ProtocolViolation(MALFORMED, str(exc)) from None
    except RecursionError:  # not reached (_too_deep), kept as a second line
        raise ProtocolViolation(MALFORMED, "nested too deeply") from None
    except ValueError as exc:
        raise ProtocolViolation(MALFORMED, f"not JSON: {exc}") from None
    return value


def decode(text: str | bytes, key: bytes, *, sender: str) -> dict[str, Any]:
    """Parse, authenticate and shape-check one received frame.

    ``sender`` is ``"controller"`` or ``"table_system"`` (who is allowed to send what).
    Raises :class:`ProtocolViolation` with the error code to send back; never anything else.
    """
    value = parse(text)
    if not isinstance(value, dict):
        raise ProtocolViolation(MALFORMED, "a message is a JSON object")
    ref = value.get("seq") if _is_int(value.get("seq")) else None
    version = value.get("protocol")
    if type(version) is not int or version != PROTOCOL_VERSION:
        detail = f"protocol {version!r:.40}; this end speaks {PROTOCOL_VERSION}"
        if type(version) is int and version == 1:
            detail = ("protocol 1 is not spoken here: version 2 signs the RFC 8785 (JCS) "
                      "canonical form (docs/table-protocol/README.md); upgrade this peer")
        raise ProtocolViolation(UNSUPPORTED_VERSION, detail, ref)
    kind = value.get("type")
    allowed = FROM_CONTROLLER if sender == "controller" else FROM_TABLE_SYSTEM
    if not isinstance(kind, str) or kind not in allowed:
        raise ProtocolViolation(UNKNOWN_TYPE, f"type {kind!r:.60} is not one the {sender} "
                                "sends", ref)
    sig = value.get("sig")
    if not isinstance(sig, str) or _SIG.fullmatch(sig) is None:
        raise ProtocolViolation(BAD_SIGNATURE, f"{kind}: sig must be 64 lowercase hex digits",
                                ref)
    if not hmac.compare_digest(sig.encode("ascii"), signature(value, key).encode("ascii")):
        raise ProtocolViolation(BAD_SIGNATURE, f"{kind}: wrong signature", ref)
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
    if spec == "seats":
        return (isinstance(value, list) and len(value) <= MAX_SEATS
                and all(_is_int(seat) and 1 <= seat <= MAX_SEATS for seat in value)
                and len(set(value)) == len(value))
    raise AssertionError(spec)


_KIND_TEXT = {"int": "a whole number >= 0", "num": "a number", "str": "a string",
              "nstr": "a non-empty string", "bool": "true or false", "obj": "an object",
              "int?": "a whole number >= 0 or null", "str?": "a string or null",
              "seats": "a list of distinct seat numbers 1 to 7",
              "seats?": "a list of distinct seat numbers 1 to 7, or null"}


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
