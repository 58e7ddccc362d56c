"""Every kind of bad or unauthorised message, at both ends: an error reply, a log record, and
the connection (and the process) carries on."""

from __future__ import annotations

import json
import logging

import pytest
from websockets.exceptions import ConnectionClosed

from shoe_controller.reporting import protocol as p
from simulators.table_system import TableSystem
from tests.reporting.helpers import KEY, RawPeer, card_event, reporter_for

pytestmark = pytest.mark.timeout(60)


def refused(peer: RawPeer) -> dict:
    reply = peer.recv()
    with pytest.raises(ConnectionClosed):
        peer.recv()
    return reply


# ------------------------------------------------------------------ at the table system
def test_wrong_token_is_unauthenticated(table_system: TableSystem,
                                        caplog: pytest.LogCaptureFixture) -> None:
    peer = RawPeer(table_system.port, token="not-the-token")
    peer.send(p.message("hello", table_id="t1", token="not-the-token",
                        nonce=peer.challenge["nonce"], client_nonce="x", controller="", head=0))
    reply = refused(peer)
    assert reply["type"] == "error" and reply["code"] == "unauthenticated"
    assert "unauthenticated" in caplog.text


def test_event_before_hello_is_unauthenticated(table_system: TableSystem) -> None:
    peer = RawPeer(table_system.port)
    peer.send(peer.event(seq=1, session="none"))
    assert refused(peer)["code"] == "unauthenticated"
    assert table_system.accepted == []


def test_hello_signed_with_another_key_is_refused(table_system: TableSystem) -> None:
    peer = RawPeer(table_system.port, key=b"x" * 32)
    reply = peer.hello()
    assert reply["type"] == "error" and reply["code"] == "bad_signature"


def test_hello_answering_an_old_challenge_is_a_replay(table_system: TableSystem) -> None:
    peer = RawPeer(table_system.port)
    assert peer.hello(nonce="an-old-nonce")["code"] == "replayed"


@pytest.mark.parametrize(
    ("make", "code"),
    [
        (lambda peer: p.encode(peer.event(2), b"y" * 32), "bad_signature"),
        (lambda peer: p.encode(peer.event(2, session="old.session"), KEY), "replayed"),
        (lambda peer: p.encode(peer.event(7), KEY), "out_of_sequence"),
        (lambda peer: "{not json", "malformed"),
        (lambda peer: p.encode(peer.event(2, data="x"), KEY), "malformed"),
        (lambda peer: p.encode({**peer.event(2), "extra": 1}, KEY), "malformed"),
        (lambda peer: p.encode({**peer.event(2), "protocol": 1}, KEY), "unsupported_version"),
        (lambda peer: p.encode({**peer.event(2), "type": "open_betting"}, KEY), "unknown_type"),
        (lambda peer: p.encode(peer.event(2, data={"pad": "x" * 70_000}), KEY), "too_large"),
        (lambda peer: p.encode(peer.event(id="t1:999:0", seq=1), KEY), "conflict"),
    ],
    ids=["signature", "other-session", "gap", "not-json", "bad-field", "extra-field",
         "version", "wrong-direction", "oversized", "same-seq-other-id"],
)
def test_bad_events_get_an_error_and_the_session_goes_on(
    table_system: TableSystem, caplog: pytest.LogCaptureFixture, make, code: str
) -> None:
    peer = RawPeer(table_system.port)
    assert peer.hello()["type"] == "welcome"
    peer.send(peer.event())  # seq 1 recorded
    assert peer.recv()["type"] == "ack"
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        peer.ws.send(make(peer))
        replies = [peer.recv()]
        if code == "out_of_sequence":
            replies.append(peer.recv())
    errors = [r for r in replies if r["type"] == "error"]
    assert [e["code"] for e in errors] == [code]
    assert code in caplog.text
    if code == "out_of_sequence":
        assert any(r["type"] == "resend" and r["from_seq"] == 2 for r in replies)
    peer.send(peer.event(2))  # the next good event is still taken
    assert peer.recv()["upto"] == 2
    assert table_system.wait_for(lambda s: s.tables["t1"].last_seq == 2, 5)
    assert len(table_system.accepted) == 2


def test_a_resent_duplicate_is_acknowledged_not_recorded_twice(table_system: TableSystem
                                                               ) -> None:
    peer = RawPeer(table_system.port)
    peer.hello()
    first = peer.event()
    peer.send(first)
    assert peer.recv()["upto"] == 1
    peer.send(first)
    assert peer.recv()["upto"] == 1  # acknowledged again ...
    peer.send(peer.event())
    assert peer.recv()["upto"] == 2
    assert [e["seq"] for e in table_system.accepted] == [1, 2]  # ... but recorded once


# ------------------------------------------------------------------ at the controller
@pytest.fixture
def connected(table_system: TableSystem):
    reporter = reporter_for(table_system.port)
    reporter.add(1, 1.0, [{"type": "round_opened", "round": 1}])
    reporter.start()
    assert reporter.wait_acked(5)
    link = next(iter(table_system.connections)).link  # type: ignore[attr-defined]
    yield reporter, link
    reporter.close()


def _signed(link, **fields) -> str:  # type: ignore[no-untyped-def]
    return p.encode(p.message(**fields), KEY)


@pytest.mark.parametrize(
    ("make", "code"),
    [
        (lambda link: p.encode(p.message("ack", session=link.session, seq=link.seq + 1,
                                         upto=1), b"z" * 32), "bad_signature"),
        (lambda link: p.encode(p.message("ack", session="old.one", seq=link.seq + 1, upto=1),
                               KEY), "replayed"),
        (lambda link: p.encode(p.message("close_betting", session=link.session, seq=1, shoe=1,
                                         round=1), KEY), "replayed"),
        (lambda link: p.encode(p.message("ack", session=link.session, seq=link.seq + 3,
                                         upto=1), KEY), "out_of_sequence"),
        (lambda link: "[1, 2", "malformed"),
        (lambda link: p.encode(p.message("ack", session=link.session, seq=link.seq + 1,
                                         upto="1"), KEY), "malformed"),
        (lambda link: p.encode(p.message("card", session=link.session, seq=link.seq + 1),
                               KEY), "unknown_type"),
        (lambda link: p.encode(p.message("ack", session=link.session, seq=link.seq + 1,
                                         upto=1, pad="x" * 70_000), KEY), "too_large"),
        (lambda link: p.encode(p.message("ack", session=link.session, seq=link.seq + 1,
                                         upto=99), KEY), "ahead"),
    ],
    ids=["signature", "other-session", "replayed-seq", "gap", "not-json", "bad-field",
         "wrong-direction", "oversized", "acks-the-future"],
)
def test_bad_messages_to_the_controller_get_an_error(
    table_system: TableSystem, connected, caplog: pytest.LogCaptureFixture, make, code: str
) -> None:
    reporter, link = connected
    with caplog.at_level(logging.WARNING, logger="shoe_controller.reporting"):
        if code == "replayed":
            link.seq += 1  # seq 1 was the first ack: sending it again is a replay
        table_system.send_raw(make(link))
        assert table_system.wait_for(lambda s: any(e["code"] == code
                                                   for e in s.errors_received), 5), (
            table_system.errors_received)
    assert code in caplog.text
    # Seqs the controller took (checks passed, content refused) are used up on our side too.
    link.seq += {"out_of_sequence": 3, "ahead": 1}.get(code, 0)
    reporter.check()  # the client thread is fine
    assert reporter.connected
    # ... and still reports: a new event reaches the table system.
    reporter.add(2, 2.0, [card_event(1, 1)])
    assert reporter.wait_acked(5)
    assert reporter.take_commands() == []


def test_a_command_from_another_session_is_not_applied(table_system: TableSystem, connected
                                                       ) -> None:
    reporter, link = connected
    link.seq += 1
    table_system.send_raw(p.encode(p.message("open_betting", session="a.b", seq=link.seq,
                                             shoe=1, round=2), KEY))
    assert table_system.wait_for(lambda s: s.errors_received, 5)
    assert reporter.take_commands() == []


def test_decode_never_raises_anything_but_a_protocol_violation() -> None:
    for raw in ["", "null", "[]", '{"protocol": 1}', "\udcff", b"\xff\xfe", '{"type": 5}']:
        with pytest.raises(p.ProtocolViolation):
            p.decode(raw, KEY, sender="controller")
    json.dumps(p.error_message("malformed", "x"))
