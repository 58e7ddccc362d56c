"""The reliable link on a simulated clock: faults, timing, loss, restarts, wrap-around."""

from __future__ import annotations

import dataclasses

import pytest

from firmware_protocol.cobs import cobs_encode
from firmware_protocol.codec import HEADER, Frame, FrameDecoder, encode_frame
from firmware_protocol.crc import crc32
from firmware_protocol.link import (
    Link,
    LinkConfig,
    LinkLost,
    LinkUp,
    PeerRestarted,
    ProtocolError,
    Role,
    initial_sequence,
)
from firmware_protocol.messages import (
    Ack,
    Button,
    ButtonPressed,
    Capability,
    CardDrawn,
    DeviceInfo,
    ErrorCode,
    ErrorReport,
    Heartbeat,
    HostHello,
    Indicator,
    Message,
    MessageType,
    Sensor,
    SetExitLock,
    SetIndicators,
    StatusRequest,
)
from firmware_protocol.testing import TEST_IDENTITY, LinkPair

HOST_SESSION = 0x1234_5678
SHOE_SESSION = 0x9ABC_DEF0


def card(counter: int) -> CardDrawn:
    return CardDrawn(counter, 1 + counter % 13, counter % 4, Sensor.OPTICAL_PRIMARY, 95)


def frames(data: bytes) -> list[Frame]:
    return FrameDecoder().feed(data)


def up_pair(**faults: float) -> LinkPair:
    pair = LinkPair.create(seed=1, **faults)
    assert pair.run_until(lambda: pair.host.link.is_up and pair.shoe.link.is_up, 5.0)
    return pair


def connected_host(now: float = 0.0, config: LinkConfig | None = None) -> tuple[Link, int]:
    """A host link brought up by hand; returns it and the first sequence number."""
    host = Link(Role.HOST, config, HOST_SESSION)
    (hello,) = frames(host.data_to_send(now))
    assert hello.message == HostHello(1, HOST_SESSION)
    outputs = host.receive(encode_frame(DeviceInfo.from_identity(TEST_IDENTITY, SHOE_SESSION)), now)
    assert [type(e) for e in outputs] == [LinkUp]
    assert host.poll(now) == []
    return host, initial_sequence(HOST_SESSION, SHOE_SESSION)


def test_handshake_brings_both_sides_up_with_the_peer_identity() -> None:
    pair = up_pair()
    (host_up,) = pair.host.events
    (shoe_up,) = pair.shoe.events
    assert isinstance(host_up, LinkUp) and isinstance(shoe_up, LinkUp)
    assert isinstance(host_up.peer, DeviceInfo)
    # The shoe's link adds what it speaks itself (revisions 1.2, 1.3) to the shoe's identity.
    assert host_up.peer.identity == dataclasses.replace(
        TEST_IDENTITY, capabilities=TEST_IDENTITY.capabilities | Capability.FAST_RECOVERY
        | Capability.FRAME_COPIES)
    assert host_up.peer_session == SHOE_SESSION and shoe_up.peer_session == HOST_SESSION
    assert not host_up.resumed


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_exactly_once_in_order_through_loss_duplication_reordering_corruption(seed: int) -> None:
    pair = LinkPair.create(
        seed=seed, loss=0.2, duplicate=0.15, corrupt=0.15, reorder=0.3, garbage=0.1
    )
    cards = [card(n) for n in range(1, 401)]
    commands: list[Message] = [SetIndicators(Indicator(n % 64), n % 3) for n in range(150)]
    for index, message in enumerate(cards):
        pair.shoe.link.send(message, pair.now)
        if index < len(commands):
            pair.host.link.send(commands[index], pair.now)
        if index % 7 == 0:
            pair.step()
    assert pair.run_until(
        lambda: len(pair.host.received) >= len(cards) and len(pair.shoe.received) >= 150, 300
    )
    pair.run(1.0)  # anything extra (a duplicate) would show up now
    assert pair.host.received == cards
    assert pair.shoe.received == commands
    assert pair.host.link.stats.duplicates + pair.shoe.link.stats.duplicates > 0
    assert pair.to_host.stats.corrupted and pair.to_host.stats.lost and pair.to_host.stats.delayed
    assert pair.run_until(
        lambda: pair.host.link.unacked_count == 0 and pair.shoe.link.unacked_count == 0, 30
    )
    assert pair.host.received == cards and pair.shoe.received == commands


@pytest.mark.parametrize(("fast_recovery", "peer_acks", "link_timeout", "lost", "expected"), [
    (False, True, 100.0, 17.75,
     [0.25, 0.75, 1.75, 3.75, 5.75, 7.75, 9.75, 11.75, 13.75, 15.75]),
    # the handshake measured a round trip of 0: the floor (2 ms), doubled up to the cap
    (True, False, 20.0, 20.0,
     [0.002, 0.006, 0.014, 0.03, 0.062, 0.126, 0.254, 0.51, 1.022, 2.046]),
    # the peer's frames ask for the message a round trip (0) + 1 ms after each copy: the
    # timer expires that early (SPEC 8.8), and still doubles
    (True, True, 20.0, 20.0,
     [0.001, 0.003, 0.007, 0.015, 0.031, 0.063, 0.127, 0.255, 0.511, 1.023]),
], ids=["1.0", "1.2-timer", "1.2-acks-show-loss"])
def test_retransmission_backs_off_exponentially_up_to_the_cap_then_the_link_is_lost(
        fast_recovery: bool, peer_acks: bool, link_timeout: float, lost: float,
        expected: list[float]) -> None:
    """Revision 1.0: the timeout starts at 0.25 s; lost after the 10th retransmission's
    timeout. Revision 1.2: the timeout starts from the handshake's round trip (8.3); lost
    not before the link timeout since the message was first sent (a measured timeout goes
    through its retransmissions quickly, and a short outage is no lost link)."""
    config = LinkConfig(link_timeout=link_timeout, heartbeat_interval=10.0,
                        fast_recovery=fast_recovery)
    host, first_seq = connected_host(0.0, config)
    host.send(SetExitLock(True), 0.0)
    (sent,) = frames(host.data_to_send(0.0))
    assert (sent.seq, sent.reliable) == (first_seq, True)
    resent_at: list[float] = []
    lost_at = None
    now = 0.0
    while now < 25 and lost_at is None:
        now = round(now + 0.001, 3)
        # The peer is alive (heartbeats) but never acknowledges the message.
        heartbeat = encode_frame(Heartbeat(0), 0, first_seq if peer_acks else None)
        outputs = host.receive(heartbeat, now) + host.poll(now)
        if any(isinstance(event, LinkLost) for event in outputs):
            lost_at = now
        for frame in frames(host.data_to_send(now)):
            if frame.reliable:
                assert frame.seq == first_seq and frame.message == SetExitLock(True)
                resent_at.append(now)
    assert resent_at[:10] == pytest.approx(expected, abs=0.003)  # the loop checks every 1 ms
    assert lost_at == pytest.approx(lost)


def test_acknowledgement_resets_the_backoff() -> None:
    """Revision 1.0's fixed timeout (1.2's measured one: test_fast_recovery)."""
    host, seq = connected_host(config=LinkConfig(fast_recovery=False))
    host.send(SetExitLock(True), 0.0)
    host.data_to_send(0.0)
    assert [f.seq for f in frames(host.data_to_send(0.25))] == [seq]  # first retransmission
    host.receive(encode_frame(Ack(), 0, (seq + 1) & 0xFFFF), 0.3)
    assert host.unacked_count == 0
    host.send(SetExitLock(False), 0.3)
    host.data_to_send(0.3)
    assert frames(host.data_to_send(0.54)) == []
    assert [f.seq for f in frames(host.data_to_send(0.55))] == [(seq + 1) & 0xFFFF]


def test_ack_is_sent_only_by_the_next_data_to_send_and_duplicates_are_dropped() -> None:
    host, seq = connected_host()
    data = encode_frame(card(1), seq, None, reliable=True)
    assert host.receive(data, 0.1) == [card(1)]
    # An acknowledgement is due: it waits up to ack_delay for a frame to ride on...
    assert host.next_deadline() == pytest.approx(0.1 + LinkConfig().ack_delay)
    assert host.data_to_send(0.1) == b""
    assert host.receive(data, 0.1) == []  # duplicate suppressed
    # ... unless the peer resends: then our acknowledgement is overdue and goes at once.
    assert host.next_deadline() == 0.1
    (ack,) = frames(host.data_to_send(0.1))
    assert ack.message == Ack() and ack.ack_number == (seq + 1) & 0xFFFF
    assert host.data_to_send(0.1) == b""
    assert host.stats.duplicates == 1


def test_early_frames_are_buffered_and_delivered_in_order() -> None:
    host, seq = connected_host()
    later = [encode_frame(card(n), (seq + n) & 0xFFFF, reliable=True) for n in (3, 1, 2)]
    assert host.receive(b"".join(later), 0.1) == []
    assert host.receive(encode_frame(card(0), seq, reliable=True), 0.1) == [
        card(n) for n in range(4)
    ]


def test_heartbeats_when_idle_and_link_loss_after_silence() -> None:
    host, _ = connected_host(0.0)
    assert host.data_to_send(0.49) == b""
    (beat,) = frames(host.data_to_send(0.5))
    assert isinstance(beat.message, Heartbeat) and not beat.reliable
    assert host.next_deadline() == pytest.approx(1.0)
    assert host.poll(1.99) == []
    (lost,) = host.poll(2.0)
    assert isinstance(lost, LinkLost) and "2 s" in lost.reason
    assert not host.is_up
    (hello,) = frames(host.data_to_send(2.0))
    assert hello.message == HostHello(1, HOST_SESSION)


def test_shoe_reports_link_lost_when_host_heartbeats_stop() -> None:
    pair = up_pair()
    pair.run(1.0)
    pair.to_shoe.connected = False
    cut_at = pair.now
    assert pair.run_until(lambda: any(isinstance(e, LinkLost) for e in pair.shoe.events), 5.0)
    # 2 s after the last frame heard, which was at most one heartbeat (0.5 s) before the cut
    assert 2.0 - 0.5 <= pair.now - cut_at <= 2.0 + 0.01
    assert not pair.shoe.link.is_up


def test_cable_pulled_then_replugged_resumes_without_loss_or_duplicates() -> None:
    pair = up_pair()
    for n in range(1, 11):
        pair.shoe.link.send(card(n), pair.now)
    pair.run(0.2)
    pair.to_shoe.connected = pair.to_host.connected = False
    for n in range(11, 31):  # cards drawn while the line is dead
        pair.shoe.link.send(card(n), pair.now)
        pair.run(0.1)
    assert any(isinstance(e, LinkLost) for e in pair.host.events)
    assert any(isinstance(e, LinkLost) for e in pair.shoe.events)
    pair.to_shoe.connected = pair.to_host.connected = True
    assert pair.run_until(lambda: len(pair.host.received) == 30, 10.0)
    pair.run(1.0)
    assert pair.host.received == [card(n) for n in range(1, 31)]
    for side in (pair.host, pair.shoe):
        assert [e.resumed for e in side.events if isinstance(e, LinkUp)] == [False, True]
    assert not any(isinstance(e, PeerRestarted) for e in pair.host.events + pair.shoe.events)


def test_host_restart_keeps_the_shoes_unacked_cards_and_drops_stale_button_presses() -> None:
    pair = up_pair()
    for n in range(1, 6):
        pair.shoe.link.send(card(n), pair.now)
    assert pair.run_until(lambda: len(pair.host.received) == 5, 2.0)
    pair.to_host.connected = False  # the host crashes: nothing reaches it any more
    pair.shoe.link.send(card(6), pair.now)
    pair.shoe.link.send(ButtonPressed(Button.DEALER, 6), pair.now)
    pair.shoe.link.send(card(7), pair.now)
    pair.run(0.5)
    old_host = pair.host
    pair.replace_host(Link(Role.HOST, None, 0x0BAD_CAFE))
    pair.to_host.connected = True
    assert pair.run_until(lambda: len(pair.host.received) >= 2, 5.0)
    pair.run(1.0)
    restarted = [e for e in pair.shoe.events if isinstance(e, PeerRestarted)]
    assert len(restarted) == 1
    assert restarted[0].new_session == 0x0BAD_CAFE and restarted[0].carried_over == 2
    assert restarted[0].dropped == (ButtonPressed(Button.DEALER, 6),)
    assert pair.host.received == [card(6), card(7)]
    journal = {m.counter for m in old_host.received + pair.host.received}  # type: ignore[attr-defined]
    assert journal == set(range(1, 8))


def test_host_restart_after_delivery_but_before_ack_resends_and_counter_dedups() -> None:
    """The host received (and journaled) a card but died before acknowledging it."""
    pair = up_pair()
    pair.to_shoe.connected = False  # the host's acknowledgements never reach the shoe
    pair.shoe.link.send(card(1), pair.now)
    assert pair.run_until(lambda: pair.host.received == [card(1)], 1.0)
    journaled = {m.counter for m in pair.host.received}  # type: ignore[attr-defined]
    pair.replace_host(Link(Role.HOST, None, 0x0BAD_CAFE))
    pair.to_shoe.connected = True
    assert pair.run_until(lambda: pair.host.received == [card(1)], 5.0)
    new = [m for m in pair.host.received if m.counter not in journaled]  # type: ignore[attr-defined]
    assert new == []  # the end-to-end counter identifies the resent card as already seen


def test_shoe_restart_is_detected_and_host_commands_are_reported_dropped() -> None:
    pair = up_pair()
    pair.to_shoe.connected = False
    pair.host.link.send(SetExitLock(False), pair.now)
    pair.run(0.1)
    pair.replace_shoe(Link(Role.SHOE, None, 0x5EED_0002, TEST_IDENTITY))
    pair.to_shoe.connected = True
    restart_at = pair.now
    assert pair.run_until(
        lambda: (
            pair.host.link.is_up
            and pair.shoe.link.is_up
            and any(isinstance(e, PeerRestarted) for e in pair.host.events)
        ),
        3.0,
    )
    assert pair.now - restart_at < 1.0  # NOT_CONNECTED short-cuts the 2 s silence timeout
    kinds = [type(e) for e in pair.host.events]
    assert kinds == [LinkUp, LinkLost, PeerRestarted, LinkUp]
    restarted = pair.host.events[2]
    assert isinstance(restarted, PeerRestarted) and restarted.dropped == (SetExitLock(False),)
    pair.host.link.send(StatusRequest(), pair.now)
    assert pair.run_until(lambda: pair.shoe.received == [StatusRequest()], 1.0)


@pytest.mark.parametrize(
    ("host_session", "shoe_session"), [(HOST_SESSION, SHOE_SESSION), (0, 0xFFF0)]
)
def test_sequence_numbers_wrap_around(host_session: int, shoe_session: int) -> None:
    config = LinkConfig(window=32)
    pair = LinkPair.create(config=config, host_session=host_session, shoe_session=shoe_session)
    assert pair.run_until(lambda: pair.host.link.is_up and pair.shoe.link.is_up, 2.0)
    total = 70_000
    sent = 0
    while len(pair.host.received) < total:
        while sent < total and pair.shoe.link.unacked_count < 64:
            sent += 1
            pair.shoe.link.send(card(sent), pair.now)
        pair.step(0.002)
    assert len(pair.host.received) == total
    assert all(m.counter == n for n, m in enumerate(pair.host.received, start=1))  # type: ignore[attr-defined]
    assert pair.shoe.link.stats.retransmissions == 0


def test_version_mismatch_is_answered_with_a_clear_error() -> None:
    shoe = Link(Role.SHOE, None, SHOE_SESSION, TEST_IDENTITY)
    (event,) = shoe.receive(encode_frame(HostHello(2, HOST_SESSION)), 0.0)
    (reply,) = frames(shoe.data_to_send(0.0))
    assert isinstance(reply.message, ErrorReport)
    assert reply.message.code is ErrorCode.UNSUPPORTED_VERSION and "1" in reply.message.detail
    assert not shoe.is_up
    assert isinstance(event, ProtocolError) and event.code is ErrorCode.UNSUPPORTED_VERSION

    host = Link(Role.HOST, None, HOST_SESSION)
    host.data_to_send(0.0)
    info = DeviceInfo.from_identity(TEST_IDENTITY, SHOE_SESSION)
    (event,) = host.receive(
        encode_frame(
            DeviceInfo(
                2,
                *[
                    getattr(info, f)
                    for f in (
                        "session_id",
                        "capabilities",
                        "vendor",
                        "model",
                        "serial_number",
                        "firmware_version",
                    )
                ],
            )
        ),
        0.1,
    )
    assert isinstance(event, ProtocolError) and not host.is_up


def test_frame_of_another_header_version_gets_an_error_report() -> None:
    host, _ = connected_host()
    host.receive(encode_frame(Heartbeat(1), version=3), 0.1)
    replies = [f.message for f in frames(host.data_to_send(0.1))]
    assert (
        ErrorReport(
            ErrorCode.UNSUPPORTED_VERSION, "frame of protocol version 3, this side speaks 1"
        )
        in replies
    )


def test_refused_reliable_frame_is_acknowledged_reported_and_skipped() -> None:
    host, seq = connected_host()
    body = HEADER.pack(1, MessageType.CARD_DRAWN, 1, seq, 0, 9) + bytes.fromhex(
        "010000000e00013200"
    )
    bad_card = cobs_encode(body + crc32(body).to_bytes(4, "little")) + b"\x00"
    following = encode_frame(card(2), (seq + 1) & 0xFFFF, reliable=True)
    event, delivered = host.receive(bad_card + bad_card + following, 0.1)
    assert delivered == card(2)
    assert isinstance(event, ProtocolError) and event.code is ErrorCode.BAD_PAYLOAD
    assert "rank" in event.detail and not event.from_peer and event.seq == seq
    replies = frames(host.data_to_send(0.1))
    assert [f.message.code for f in replies if isinstance(f.message, ErrorReport)] == [
        ErrorCode.BAD_PAYLOAD
    ]
    assert replies[-1].ack_number == (seq + 2) & 0xFFFF


def test_peer_error_report_becomes_an_event() -> None:
    host, _ = connected_host()
    assert host.receive(
        encode_frame(ErrorReport(ErrorCode.UNSUPPORTED_COMMAND, "no beeper"), 0, None), 0.1
    ) == [ProtocolError(ErrorCode.UNSUPPORTED_COMMAND, "no beeper", True)]


def test_data_before_the_handshake_is_not_delivered_and_the_shoe_asks_for_hello() -> None:
    shoe = Link(Role.SHOE, None, SHOE_SESSION, TEST_IDENTITY)
    assert shoe.receive(encode_frame(SetExitLock(True), 5, 0, reliable=True), 0.0) == []
    (reply,) = frames(shoe.data_to_send(0.0))
    assert reply.message == ErrorReport(ErrorCode.NOT_CONNECTED, "no session: send HostHello")
    shoe.receive(encode_frame(SetExitLock(True), 5, 0, reliable=True), 0.1)
    assert shoe.data_to_send(0.1) == b""  # rate-limited


def test_send_refuses_wrong_direction_and_full_queue() -> None:
    host = Link(Role.HOST, LinkConfig(max_queued=8), HOST_SESSION)
    with pytest.raises(ValueError, match="host link cannot send CardDrawn"):
        host.send(card(1), 0.0)
    with pytest.raises(ValueError, match="cannot send Heartbeat"):
        host.send(Heartbeat(0), 0.0)
    for _ in range(8):
        host.send(StatusRequest(), 0.0)
    with pytest.raises(BufferError, match="full"):
        host.send(StatusRequest(), 0.0)
    assert host.pending_messages() == (StatusRequest(),) * 8


def test_shoe_link_needs_an_identity_and_config_is_validated() -> None:
    with pytest.raises(ValueError, match="DeviceIdentity"):
        Link(Role.SHOE, None, 1)
    with pytest.raises(ValueError, match="session_id"):
        Link(Role.HOST, None, -1)
    with pytest.raises(
        ValueError,
        match=r"window must be 1..64.*link_timeout must be at least 2 x heartbeat_interval",
    ):
        LinkConfig(window=0, link_timeout=0.5)


def _bad_card_frame(seq: int) -> bytes:
    """A CRC-valid, reliable CardDrawn whose payload is invalid (confidence 101)."""
    body = HEADER.pack(1, MessageType.CARD_DRAWN, 1, seq, 0, 9) + bytes.fromhex(
        "010000000c01016500"
    )
    return cobs_encode(body + crc32(body).to_bytes(4, "little")) + b"\x00"


def test_a_refused_frame_is_reported_before_the_messages_sent_after_it() -> None:
    """Regression (review): the link handed out card N+1 from receive() and only later, from
    poll(), the news that card N had been refused, so the table could take N+1 for N."""
    host, seq = connected_host()
    outputs = host.receive(
        _bad_card_frame(seq) + encode_frame(card(2), (seq + 1) & 0xFFFF, reliable=True), 0.1
    )
    assert [type(item) for item in outputs] == [ProtocolError, CardDrawn]
    assert outputs[0].seq == seq and outputs[1] == card(2)


def test_a_refused_frame_that_arrives_early_is_reported_at_its_place_in_sequence() -> None:
    host, seq = connected_host()
    early = host.receive(
        _bad_card_frame((seq + 1) & 0xFFFF)
        + encode_frame(card(3), (seq + 2) & 0xFFFF, reliable=True),
        0.1,
    )
    assert early == []  # both wait for seq, which was lost
    outputs = host.receive(encode_frame(card(1), seq, reliable=True), 0.2)
    assert [type(item) for item in outputs] == [CardDrawn, ProtocolError, CardDrawn]
    assert outputs[0] == card(1) and outputs[2] == card(3)
    assert outputs[1].seq == (seq + 1) & 0xFFFF


def test_link_events_and_messages_share_one_ordered_stream() -> None:
    """A restart seen in the same read as the restarted peer's first card comes first."""
    host, _ = connected_host()
    new_shoe = 0x0BADF00D
    new_seq = initial_sequence(HOST_SESSION, new_shoe)
    outputs = host.receive(
        encode_frame(DeviceInfo.from_identity(TEST_IDENTITY, new_shoe))
        + encode_frame(card(9), new_seq, reliable=True),
        0.1,
    )
    assert [type(item) for item in outputs] == [PeerRestarted, CardDrawn]
    assert outputs[0].peer.session_id == new_shoe
