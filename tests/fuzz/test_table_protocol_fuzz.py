"""Fuzzing the table-system decoder: any input in, only ``ProtocolViolation`` out.

``protocol.decode`` is the only door for bytes from the network, at both ends (the controller
decodes the table system's frames, the reference table system the controller's). Whatever it
is given (any bytes, any text, lone surrogates included, structured JSON of every shape and
depth, valid signed messages mutated field by field or byte by byte) it either returns a
message that is well-formed and correctly signed, or raises ``ProtocolViolation``; never
another exception. ``bench/fuzz_table_protocol.py`` runs the same property under atheris
(coverage-guided) on demand.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shoe_controller.reporting import protocol as p

KEY = b"fuzz-key-0123456789abcdef"
SENDERS = ("controller", "table_system")
FUZZ = settings(max_examples=300, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def decodes_or_refuses(raw: str | bytes) -> list[dict[str, Any]]:
    """Decode ``raw`` as each sender; the property every test asserts."""
    taken = []
    for sender in SENDERS:
        try:
            message = p.decode(raw, KEY, sender=sender)
        except p.ProtocolViolation as exc:
            assert exc.code in p.ERROR_CODES, exc
            assert isinstance(exc.detail, str)
            json.dumps(p.error_message(exc.code, exc.detail, ref=exc.ref))  # can be answered
            p.encode(p.error_message(exc.code, exc.detail, ref=exc.ref), KEY)
            continue
        # Taken: then it is exactly a well-formed message, correctly signed.
        p.check_message(message)
        assert message["sig"] == p.signature(message, KEY)
        assert message["type"] in (p.FROM_CONTROLLER if sender == "controller"
                                   else p.FROM_TABLE_SYSTEM)
        taken.append(message)
    return taken


# ------------------------------------------------------------------ unstructured
characters = st.characters() | st.characters(categories=["Cs"])  # lone surrogates too


@FUZZ
@given(st.binary(max_size=4000))
def test_any_bytes(raw: bytes) -> None:
    decodes_or_refuses(raw)


@FUZZ
@given(st.text(alphabet=characters, max_size=2000))
def test_any_text(raw: str) -> None:
    decodes_or_refuses(raw)


@FUZZ
@given(st.sampled_from("[{\"]}:,0 \\"), st.integers(0, 70_000), st.sampled_from(["", "1", "\""]))
def test_deep_or_long_runs_of_one_character(char: str, count: int, tail: str) -> None:
    decodes_or_refuses(char * count + tail)


# ------------------------------------------------------------------ structured JSON
numbers = (st.integers() | st.integers(-(2**53) - 2, 2**53 + 2)
           | st.floats(allow_nan=True, allow_infinity=True) | st.floats(-1e16, 1e16))
scalars = st.none() | st.booleans() | numbers | st.text(alphabet=characters, max_size=12)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(alphabet=characters, max_size=6), inner, max_size=4),
    max_leaves=25)


def nested(value: Any, depth: int) -> Any:
    for _ in range(depth):
        value = [value]
    return value


def render(value: Any, ensure_ascii: bool) -> str:
    return json.dumps(value, allow_nan=True, ensure_ascii=ensure_ascii)


@FUZZ
@given(json_values, st.integers(0, 40), st.booleans())
def test_any_json_value(value: Any, depth: int, ensure_ascii: bool) -> None:
    decodes_or_refuses(render(nested(value, depth), ensure_ascii))


@FUZZ
@given(st.dictionaries(st.sampled_from(sorted({f for fs in p.FIELDS.values() for f in fs}
                                              | {"sig", "extra"})), json_values, max_size=12),
       st.sampled_from(sorted(p.FIELDS)), st.booleans(), st.booleans())
def test_any_object_with_protocol_field_names(body: dict[str, Any], kind: str, sign: bool,
                                              ensure_ascii: bool) -> None:
    body = {**body, "protocol": p.PROTOCOL_VERSION, "type": kind}
    if sign:
        try:
            body = p.sign(body, KEY)
        except p.NotCanonical:
            pass  # unsignable: sent as it is
    decodes_or_refuses(render(body, ensure_ascii))


# ------------------------------------------------------------------ valid messages, mutated
_SAFE = st.integers(0, p.SAFE_INTEGER)
_KIND_VALUES = {
    "int": _SAFE, "int?": st.none() | _SAFE, "str": st.text(max_size=20),
    "str?": st.none() | st.text(max_size=20), "nstr": st.text(min_size=1, max_size=20),
    "bool": st.booleans(), "num": st.floats(-1e15, 1e15) | _SAFE,
    "obj": st.dictionaries(st.text(max_size=8), st.none() | _SAFE | st.text(max_size=8),
                           max_size=5),
    "seats": st.lists(st.integers(1, p.MAX_SEATS), unique=True, max_size=p.MAX_SEATS),
    "seats?": st.none() | st.lists(st.integers(1, p.MAX_SEATS), unique=True,
                                   max_size=p.MAX_SEATS),
}


@st.composite
def valid_messages(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(sorted(p.FIELDS)))
    message: dict[str, Any] = {"protocol": p.PROTOCOL_VERSION, "type": kind}
    for name, spec in p.FIELDS[kind].items():
        if name in message:
            continue
        if spec.endswith("?") and draw(st.booleans()):
            continue  # optional and absent
        message[name] = draw(_KIND_VALUES[spec])
    return message


@FUZZ
@given(valid_messages())
def test_valid_signed_messages_are_taken_by_the_side_that_receives_them(message: dict) -> None:
    signed = p.sign(message, KEY)
    taken = decodes_or_refuses(p.encode(message, KEY))
    receivers = sum(message["type"] in allowed
                    for allowed in (p.FROM_CONTROLLER, p.FROM_TABLE_SYSTEM))
    assert taken == [signed] * receivers


@FUZZ
@given(valid_messages(), st.sampled_from(["replace", "delete", "add", "sig"]), st.data(),
       st.booleans())
def test_valid_messages_with_one_field_changed(message: dict, how: str, data: st.DataObject,
                                               resign: bool) -> None:
    signed = p.sign(message, KEY)
    name = data.draw(st.sampled_from(sorted(signed)))
    if how == "replace":
        signed[name] = data.draw(json_values)
    elif how == "delete":
        del signed[name]
    elif how == "add":
        signed[data.draw(st.text(alphabet=characters, max_size=8))] = data.draw(json_values)
    else:
        signed["sig"] = data.draw(st.text(alphabet=characters, max_size=70) | json_values)
    if resign and how != "sig":
        try:
            signed = p.sign(signed, KEY)
        except p.NotCanonical:
            pass
    decodes_or_refuses(render(signed, data.draw(st.booleans())))


@FUZZ
@given(valid_messages(), st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255),
                                            st.sampled_from(["flip", "insert", "delete"])),
                                  min_size=1, max_size=6))
def test_valid_frames_with_bytes_changed(message: dict, edits: list[tuple[int, int, str]]
                                         ) -> None:
    frame = bytearray(p.encode(message, KEY).encode("utf-8"))
    for where, byte, how in edits:
        at = where % (len(frame) + 1)
        if how == "insert":
            frame[at:at] = bytes([byte])
        elif frame and at < len(frame):
            if how == "flip":
                frame[at] ^= byte or 1
            else:
                del frame[at]
    decodes_or_refuses(bytes(frame))
    try:
        text = bytes(frame).decode("utf-8", "surrogateescape")  # lone surrogates as text
    except UnicodeDecodeError:  # pragma: no cover - surrogateescape decodes any bytes
        return
    decodes_or_refuses(text)


@pytest.mark.parametrize("depth", [31, 32, 33, 1000, 60_000])
def test_nesting_at_and_beyond_the_limit(depth: int) -> None:
    """The message is depth 1; ``extra`` holds depth - 1 nested arrays."""
    message = p.message("error", session=None, code="x", detail="", ref=None)
    inner = "[" * (depth - 1) + "0" + "]" * (depth - 1)
    sig = '"' + "0" * 64 + '"'
    if depth <= p.MAX_DEPTH:
        nested_value: Any = 0
        for _ in range(depth - 1):
            nested_value = [nested_value]
        sig = json.dumps(p.signature({**message, "extra": nested_value}, KEY))
    raw = json.dumps(message)[:-1] + f', "extra": {inner}, "sig": {sig}}}'
    decodes_or_refuses(raw)
    with pytest.raises(p.ProtocolViolation) as info:
        p.decode(raw, KEY, sender="table_system")
    if depth <= p.MAX_DEPTH:  # signed and parsed: refused only for its unknown field
        assert info.value.code == p.MALFORMED and "unknown field(s) extra" in info.value.detail
    else:
        assert info.value.code in (p.MALFORMED, p.TOO_LARGE)
        assert "nested deeper" in info.value.detail or info.value.code == p.TOO_LARGE
