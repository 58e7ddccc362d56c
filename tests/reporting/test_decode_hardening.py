"""Regression tests: frames that once made the decoder raise something other than its own error.

Each of these killed the controller's client thread (and so stopped ``shoe run``) or the
reference table system's connection handler. ``decode`` must answer every one of them with a
:class:`ProtocolViolation` carrying the error code to send back, and both ends must carry on.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from typing import Any

import pytest

from shoe_controller.errors import TableSystemError
from shoe_controller.reporting import protocol as p
from shoe_controller.reporting.client import TableSystemReporter
from simulators.table_system import TableSystem
from tests.reporting.helpers import KEY, RawPeer, card_event, reporter_for

pytestmark = pytest.mark.timeout(60)

ZERO_SIG = "0" * 64


def frame(body: str, *, sig: str = ZERO_SIG) -> str:
    """An ``error`` (either side may send one) with ``body`` spliced in as raw JSON text."""
    return (f'{{"protocol":{p.PROTOCOL_VERSION},"type":"error","session":"a.b","code":"x",'
            f'"detail":"",{body},"sig":"{sig}"}}')


def signed_text(message: dict[str, Any]) -> str:
    """``message`` signed, as plain ``json.dumps`` text (so odd values survive encoding).

    A value with no canonical form is signed over ``json.dumps`` instead (what a careless
    peer might do): the decoder must refuse it before it even looks at the signature."""
    body = {k: v for k, v in message.items() if k != "sig"}
    try:
        sig = p.signature(body, KEY)
    except p.NotCanonical:
        text = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
        sig = hmac.new(KEY, text, hashlib.sha256).hexdigest()
    return json.dumps({**body, "sig": sig})


# Each case: the raw frame (as the network would deliver it) and the code it must get.
CASES: dict[str, tuple[str | bytes, str]] = {
    "nan": (frame('"upto":NaN'), p.MALFORMED),
    "infinity": (frame('"upto":Infinity'), p.MALFORMED),
    "minus-infinity": (frame('"upto":-Infinity'), p.MALFORMED),
    "float-overflowing-to-infinity": (frame('"upto":1e400'), p.MALFORMED),
    "non-ascii-sig": (frame('"upto":1', sig="é" * 64), p.BAD_SIGNATURE),
    "sig-with-astral-chars": (frame('"upto":1', sig="\U0001F600" * 64), p.BAD_SIGNATURE),
    "sig-upper-case": (frame('"upto":1', sig="A" * 64), p.BAD_SIGNATURE),
    "sig-with-newline": (frame('"upto":1', sig="0" * 63 + "\\n"), p.BAD_SIGNATURE),
    "raw-lone-surrogate": (frame('"upto":1,"note":"\udc80"'), p.MALFORMED),
    "escaped-lone-surrogate": (frame('"upto":1,"note":"\\ud800"'), p.MALFORMED),
    "lone-surrogate-in-a-key": (frame('"upto":1,"\\udfff":1'), p.MALFORMED),
    "deep-list": (f'{{"protocol":{p.PROTOCOL_VERSION},"x":' + "[" * 60_000, p.MALFORMED),
    "deep-list-closed": ("[" * 30_000 + "]" * 30_000, p.MALFORMED),
    "deep-object": ('{"a":' * 10_000 + "1" + "}" * 10_000, p.MALFORMED),
    "deep-list-as-bytes": (b"[" * 60_000, p.MALFORMED),
    "huge-integer-digits": (frame('"upto":' + "9" * 5000), p.MALFORMED),
    "non-utf8-bytes": (b'{"protocol":2,"type":"error","x":"\xff"}', p.MALFORMED),
    "encoded-surrogate-bytes": (b'{"protocol":2,"type":"error","x":"\xed\xa0\x80"}',
                                p.MALFORMED),
}


@pytest.mark.parametrize("sender", ["controller", "table_system"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_frames_raise_only_protocol_violations(case: str, sender: str) -> None:
    raw, code = CASES[case]
    with pytest.raises(p.ProtocolViolation) as info:
        p.decode(raw, KEY, sender=sender)
    assert info.value.code == code, info.value


def test_a_lone_surrogate_is_named_in_the_detail() -> None:
    with pytest.raises(p.ProtocolViolation) as info:
        p.decode(frame('"upto":1,"note":"\\ud800"'), KEY, sender="table_system")
    assert "surrogate" in info.value.detail


def _ack(**changes: Any) -> dict[str, Any]:
    return p.message("ack", session="a.b", seq=1, upto=1) | changes


@pytest.mark.parametrize(
    "make",
    [
        lambda: signed_text(_ack(upto=2**53)),  # not exactly representable elsewhere
        lambda: signed_text(_ack(upto=10**30)),
        lambda: signed_text(_ack(seq=-(2**60))),
        # Duplicate keys: another parser might take the first, we the last one.
        lambda: signed_text(_ack(upto=1))[:-1] + ',"upto":5}',
        lambda: '{"type":"ack",' + signed_text(_ack())[1:],
        # Not UTF-8: json.loads would guess UTF-16 and take it.
        lambda: signed_text(_ack()).encode("utf-16"),
        lambda: signed_text(_ack()).encode("utf-32"),
        lambda: b"\xef\xbb\xbf" + signed_text(_ack()).encode(),  # a UTF-8 byte-order mark
    ],
    ids=["int-2^53", "int-10^30", "int-minus-2^60", "duplicate-upto", "duplicate-type",
         "utf-16", "utf-32", "utf-8-bom"],
)
def test_validly_signed_but_non_canonicalisable_frames_are_malformed(make: Any) -> None:
    with pytest.raises(p.ProtocolViolation) as info:
        p.decode(make(), KEY, sender="table_system")
    assert info.value.code == p.MALFORMED, info.value


def test_the_largest_safe_integer_is_taken() -> None:
    message = p.decode(signed_text(_ack(upto=2**53 - 1)), KEY, sender="table_system")
    assert message["upto"] == 2**53 - 1


# ------------------------------------------------------------------ the controller's client
@pytest.fixture
def connected(table_system: TableSystem):  # type: ignore[no-untyped-def]
    reporter = reporter_for(table_system.port)
    reporter.add(1, 1.0, [{"type": "round_opened", "round": 1}])
    reporter.start()
    assert reporter.wait_acked(5)
    link = next(iter(table_system.connections)).link  # type: ignore[attr-defined]
    yield reporter, link
    reporter.close()


def _still_reports(reporter: TableSystemReporter, record: int) -> None:
    reporter.check()
    assert reporter.connected
    reporter.add(record, float(record), [card_event(1, record)])
    assert reporter.wait_acked(5)


# A raw lone surrogate cannot cross the network: the WebSocket layer refuses text frames that
# are not UTF-8. Its escaped form can, and so can everything else.
NETWORK_CASES = ["nan", "infinity", "non-ascii-sig", "escaped-lone-surrogate", "deep-list",
                 "deep-object", "duplicate-keys"]
CASES["duplicate-keys"] = (frame('"upto":1,"upto":2'), p.MALFORMED)


@pytest.mark.parametrize("case", NETWORK_CASES)
def test_one_hostile_frame_does_not_stop_the_controller(
    table_system: TableSystem, connected: Any, case: str, caplog: pytest.LogCaptureFixture
) -> None:
    reporter, _ = connected
    raw, code = CASES[case]
    with caplog.at_level(logging.WARNING, logger="shoe_controller.reporting"):
        table_system.send_raw(raw)  # type: ignore[arg-type]
        assert table_system.wait_for(
            lambda s: any(e["code"] == code for e in s.errors_received), 5), (
            table_system.errors_received)
    _still_reports(reporter, 2)


def test_a_bug_while_handling_a_message_is_reported_and_reaches_the_owner(
    table_system: TableSystem, connected: Any, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    reporter, link = connected
    original = TableSystemReporter._handle

    def broken(self: TableSystemReporter, message: Any) -> None:
        if message["type"] == "open_betting":
            raise KeyError("a bug in the handler")
        original(self, message)

    monkeypatch.setattr(TableSystemReporter, "_handle", broken)
    with caplog.at_level(logging.ERROR, logger="shoe_controller.reporting"):
        table_system.send_command("open_betting", shoe=1, round=2)
        assert table_system.wait_for(
            lambda s: any(e["code"] == p.INTERNAL_ERROR for e in s.errors_received), 5), (
            table_system.errors_received)
    assert "a bug in the handler" in caplog.text  # logged with its traceback
    error = next(e for e in table_system.errors_received if e["code"] == p.INTERNAL_ERROR)
    assert error["ref"] == link.seq
    with pytest.raises(TableSystemError, match="a bug in the handler"):
        reporter.check()  # the owner learns of it ...
    assert reporter.connected  # ... but the thread was not killed by it
    assert reporter._thread is not None and reporter._thread.is_alive()


# ------------------------------------------------------------------ the reference table system
@pytest.mark.parametrize("case", NETWORK_CASES)
def test_one_hostile_frame_does_not_drop_the_table_systems_connection(
    table_system: TableSystem, case: str
) -> None:
    raw, code = CASES[case]
    assert isinstance(raw, str)
    raw = raw.replace('"type":"error"', '"type":"round_opened"')
    peer = RawPeer(table_system.port)
    assert peer.hello()["type"] == "welcome"
    peer.ws.send(raw)
    reply = peer.recv()
    assert reply["type"] == "error" and reply["code"] in (code, p.BAD_SIGNATURE), reply
    peer.send(peer.event())  # the session goes on
    assert peer.recv()["upto"] == 1
    assert table_system.faults == []


@pytest.mark.parametrize("case", NETWORK_CASES)
def test_a_hostile_hello_is_refused_cleanly(table_system: TableSystem, case: str) -> None:
    raw, _ = CASES[case]
    assert isinstance(raw, str)
    peer = RawPeer(table_system.port)
    peer.ws.send(raw.replace('"type":"error"', '"type":"hello"'))
    reply = peer.recv()
    assert reply["type"] == "error"
    assert table_system.faults == []
    assert RawPeer(table_system.port).hello()["type"] == "welcome"  # still serving


def test_a_bug_in_the_table_system_is_reported_not_fatal_to_the_connection(
    table_system: TableSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = {"n": 0}
    original = TableSystem._event

    async def broken(self: TableSystem, link: Any, table: Any, event: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("a bug in the table system")
        await original(self, link, table, event)

    monkeypatch.setattr(TableSystem, "_event", broken)
    peer = RawPeer(table_system.port)
    peer.hello()
    peer.send(peer.event(seq=1))
    reply = peer.recv()
    assert reply["type"] == "error" and reply["code"] == p.INTERNAL_ERROR and reply["ref"] == 1
    assert [type(f) for f in table_system.faults] == [RuntimeError]
    peer.send(peer.event(seq=1))
    assert peer.recv()["upto"] == 1


def test_a_valid_signature_with_anything_after_it_is_refused() -> None:
    good = p.sign(p.message("error", session="a.b", code="x", detail="", ref=None), KEY)
    assert p.decode(json.dumps(good), KEY, sender="table_system") == good
    for tail in ("\n", " ", "0", "\x00"):
        with pytest.raises(p.ProtocolViolation) as info:
            p.decode(json.dumps({**good, "sig": good["sig"] + tail}), KEY, sender="table_system")
        assert info.value.code == p.BAD_SIGNATURE
