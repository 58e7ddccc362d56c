"""The host end of the link with the commit rule (``HostEndpoint``), without threads."""

from __future__ import annotations

import numpy as np
import pytest

from firmware_protocol.cobs import cobs_encode
from firmware_protocol.codec import HEADER, Frame, FrameDecoder, encode_frame
from firmware_protocol.crc import crc32
from firmware_protocol.link import (
    HELD_ACK_LOOK_MAX,
    HELD_ACK_LOOK_SHARE,
    Link,
    LinkConfig,
    LinkUp,
    ProtocolError,
    Role,
    initial_sequence,
)
from firmware_protocol.messages import (
    Ack,
    CardDrawn,
    DeviceInfo,
    MessageType,
    Sensor,
    SetExitLock,
)
from firmware_protocol.testing import TEST_IDENTITY
from shoe_controller.device import HostEndpoint

HOST, SHOE = 0x0A0B0C0D, 0x11223344
ISN = initial_sequence(HOST, SHOE)


def card(counter: int) -> CardDrawn:
    return CardDrawn(counter, 12, 1, Sensor.OPTICAL_PRIMARY, 97, False)


def unreadable(seq: int) -> bytes:
    body = HEADER.pack(1, MessageType.CARD_DRAWN, 1, seq, 0, 9) + bytes.fromhex(
        "010000000c01016500")  # confidence 101
    return cobs_encode(body + crc32(body).to_bytes(4, "little")) + b"\x00"


def connected() -> HostEndpoint:
    endpoint = HostEndpoint(Link(Role.HOST, None, HOST))
    endpoint.data_to_send(0.0)
    endpoint.receive(encode_frame(DeviceInfo.from_identity(TEST_IDENTITY, SHOE)), 0.0)
    assert isinstance(endpoint.take(), LinkUp)
    endpoint.commit()
    return endpoint


def acks(data: bytes) -> list[int]:
    return [f.ack_number for f in FrameDecoder().feed(data) if isinstance(f, Frame)
            and f.ack_number is not None]


def test_a_refused_card_comes_out_before_the_card_after_it_and_is_acknowledged_last() -> None:
    endpoint = connected()
    endpoint.receive(unreadable(ISN) + encode_frame(card(2), ISN + 1, reliable=True), 0.1)
    first = endpoint.take()
    assert isinstance(first, ProtocolError) and first.seq == ISN
    # The refusal is answered at once (an ErrorReport, which acknowledges nothing); nothing
    # acknowledges it before it is journalled.
    assert acks(endpoint.data_to_send(0.1)) == []
    endpoint.commit()
    second = endpoint.take()
    assert second == card(2)
    assert acks(endpoint.data_to_send(0.2)) == []  # nor card 2, which is not journalled yet
    endpoint.commit()
    # the acknowledgement waits up to ack_delay for a frame to ride on, and none comes
    assert acks(endpoint.data_to_send(0.2)) == []
    assert acks(endpoint.data_to_send(0.2 + LinkConfig().ack_delay)) == [ISN + 2]


def test_the_hosts_own_frames_go_while_a_card_waits_and_acknowledge_only_what_is_journalled(
) -> None:
    """A host busy journalling (or still starting up) used to send nothing at all: its link
    options, Naks and commands waited, and the shoe measured the host's start-up as a round
    trip of the line."""
    endpoint = connected()
    endpoint.receive(encode_frame(card(1), ISN, reliable=True), 0.1)
    assert endpoint.take() == card(1) and not endpoint.may_send
    endpoint.send(SetExitLock(True), 0.1)
    (sent,) = [f for f in FrameDecoder().feed(endpoint.data_to_send(0.1)) if isinstance(f, Frame)]
    assert sent.message == SetExitLock(True)
    assert sent.ack_number == ISN  # card 1 (ISN) is not acknowledged
    assert endpoint.next_deadline() != 0.1  # no acknowledgement due: no busy loop
    endpoint.commit()
    assert acks(endpoint.data_to_send(0.1 + LinkConfig().ack_delay)) == [ISN + 1]


def test_link_events_need_no_commit() -> None:
    endpoint = HostEndpoint(Link(Role.HOST, None, HOST))
    endpoint.data_to_send(0.0)
    endpoint.receive(encode_frame(DeviceInfo.from_identity(TEST_IDENTITY, SHOE)), 0.0)
    assert endpoint.may_send  # a LinkUp acknowledges nothing to the shoe
    assert isinstance(endpoint.take(), LinkUp)
    endpoint.receive(encode_frame(Ack(), 0, ISN), 0.1)
    assert endpoint.may_send and endpoint.take() is None


def test_an_acknowledgement_held_for_the_commit_keeps_the_owner_polling() -> None:
    """The commit comes from the controller's thread while the I/O thread waits on
    next_deadline(): that wait must stay short while an acknowledgement is held, or one that
    no command carries would wait for the I/O thread's longest sleep."""
    endpoint = connected()
    endpoint.receive(encode_frame(card(1), ISN, reliable=True), 0.1)
    assert endpoint.take() == card(1)
    endpoint.poll(0.1)
    assert endpoint.next_deadline() == pytest.approx(0.1 + LinkConfig().ack_delay)
    endpoint.commit(0.1005)
    endpoint.poll(0.1011)
    assert acks(endpoint.data_to_send(0.1016)) == [ISN + 1]  # alone, an ack_delay after commit


def test_an_acknowledgement_held_long_is_looked_at_less_often() -> None:
    """An owner that does not commit for a while (not reading yet, replaying its journal, a
    stalled disk) must not keep the I/O thread waking a thousand times a second: the look
    again comes after a quarter of the time held, never more than HELD_ACK_LOOK_MAX, and the
    acknowledgement still goes once committed."""
    endpoint = connected()
    endpoint.receive(encode_frame(card(1), ISN, reliable=True), 1.0)
    assert endpoint.take() == card(1)
    looks = []
    now = 1.0
    while now < 2.5:  # one and a half seconds held (within link_timeout): the wake-ups
        endpoint.poll(now)
        assert ISN + 1 not in acks(endpoint.data_to_send(now))  # (heartbeats go on)
        deadline = endpoint.next_deadline()
        assert deadline is not None and deadline > now
        looks.append(deadline - now)
        now = deadline
    assert looks[0] == pytest.approx(LinkConfig().ack_delay)  # a fresh hold: as before
    assert max(looks) == pytest.approx(HELD_ACK_LOOK_MAX)
    assert all(look <= max(LinkConfig().ack_delay, HELD_ACK_LOOK_SHARE * (at - 1.0)) + 1e-9
               for look, at in zip(looks, np.cumsum([1.0, *looks]), strict=False))
    assert len(looks) < 1.5 / HELD_ACK_LOOK_MAX + 40  # was 1500 (one per ack_delay)
    endpoint.commit(now)
    endpoint.poll(now + LinkConfig().ack_delay)
    assert acks(endpoint.data_to_send(now + LinkConfig().ack_delay)) == [ISN + 1]
    # the next card held starts afresh
    endpoint.receive(encode_frame(card(2), ISN + 1, reliable=True), now + 0.01)
    assert endpoint.take() == card(2)
    endpoint.poll(now + 0.01)
    assert endpoint.next_deadline() == pytest.approx(now + 0.01 + LinkConfig().ack_delay)
