"""Fast recovery's timer and handshake (SPEC 8.3, 8.8, revision 1.2), one link driven by hand.

What a bad serial line taught (``bench/bench_fast_recovery.py``): a damaged block is most often
the peer's answer, so the timer waits for the Nak's round trip; an acknowledgement that still
asks for a frame a round trip after its copy shows the copy lost; samples taken across a
recovery inflate the timeout; a first sample can measure something other than the line; a Nak
may be what was damaged; and a lost hello must not cost half a second.
"""

from __future__ import annotations

import pytest

from firmware_protocol.codec import FrameDecoder, encode_frame
from firmware_protocol.link import HELLO_FIRST_RETRY, Link, LinkConfig, Role, initial_sequence
from firmware_protocol.messages import (
    Ack,
    CardDrawn,
    Heartbeat,
    HostHello,
    LinkOptions,
    Nak,
    Sensor,
    SetExitLock,
)
from firmware_protocol.rtt import WARM_UP, RttEstimator

from .test_fast_recovery import HOST_SESSION, NEW, OLD, fast_shoe_info

RTT = 0.005  # the handshake's round trip in these tests


def frames(data: bytes) -> list:  # type: ignore[type-arg]
    return FrameDecoder().feed(data)


def reliable(data: bytes) -> list[object]:
    return [frame.message for frame in frames(data) if frame.reliable]


def damaged_block() -> bytes:
    block = bytearray(encode_frame(Heartbeat(0)))
    block[3] ^= 0x40
    return bytes(block)


def fast_host() -> tuple[Link, int]:
    """A revision 1.2 host up with a revision 1.2 shoe, its handshake measured at RTT and its
    LinkOptions acknowledged; returns the host and the next sequence number it sends."""
    host = Link(Role.HOST, NEW, HOST_SESSION)
    host.data_to_send(0.0)
    host.receive(encode_frame(fast_shoe_info()), RTT)
    first = initial_sequence(HOST_SESSION, fast_shoe_info().session_id)
    assert reliable(host.data_to_send(RTT)) == [LinkOptions(1)]
    host.receive(encode_frame(Ack(), 0, (first + 1) & 0xFFFF), 2 * RTT)
    assert host.unacked_count == 0 and host._rtt.samples == 2
    return host, (first + 1) & 0xFFFF


def test_a_damaged_block_restarts_the_timer_but_never_beyond_two_timeouts() -> None:
    host, _ = fast_host()
    rto = host._base_rto()
    start = 0.1
    host.send(SetExitLock(True), start)
    assert reliable(host.data_to_send(start)) == [SetExitLock(True)]
    assert host._rto_deadline == pytest.approx(start + rto)
    host.receive(damaged_block(), start + rto / 2)  # the answer, damaged: our Nak asks again
    assert host._rto_deadline == pytest.approx(start + 1.5 * rto)
    assert reliable(host.data_to_send(start + 1.2 * rto)) == []  # not while the Nak is out
    host.receive(damaged_block(), start + 1.4 * rto)
    assert host._rto_deadline == pytest.approx(start + 2 * rto)  # bounded
    assert reliable(host.data_to_send(start + 2 * rto)) == [SetExitLock(True)]


def test_a_revision_1_0_link_keeps_its_timer_on_damage() -> None:
    host = Link(Role.HOST, OLD, HOST_SESSION)
    host.data_to_send(0.0)
    host.receive(encode_frame(fast_shoe_info()), RTT)
    host.send(SetExitLock(True), RTT)
    host.data_to_send(RTT)
    deadline = host._rto_deadline
    host.receive(damaged_block(), 0.1)
    assert host._rto_deadline == deadline


def test_an_acknowledgement_that_still_asks_for_a_frame_a_round_trip_later_resends_it() -> None:
    host, seq = fast_host()
    overdue = host._rtt.overdue
    assert overdue == pytest.approx(host._rtt.srtt + 0.001)
    start = 0.1
    host.send(SetExitLock(True), start)
    host.data_to_send(start)
    asks = encode_frame(Heartbeat(0), 0, seq)  # "I still expect seq"
    host.receive(asks, start + overdue - 0.0005)  # sent before our frame could have arrived
    assert reliable(host.data_to_send(start + overdue - 0.0005)) == []
    resend_at = start + overdue + 0.0001  # sent after it should have arrived: it was lost
    host.receive(asks, resend_at)
    assert resend_at < start + host._base_rto()  # earlier than the timer
    assert reliable(host.data_to_send(resend_at)) == [SetExitLock(True)]
    assert host._retries == 1  # an expiry of the timer: backed off, counted
    host.receive(asks, resend_at + overdue + 0.0001)  # the next one needs twice as long
    assert reliable(host.data_to_send(resend_at + overdue + 0.0001)) == []
    host.receive(asks, resend_at + 2 * overdue + 0.0001)
    assert reliable(host.data_to_send(resend_at + 2 * overdue + 0.0001)) == [SetExitLock(True)]


@pytest.mark.parametrize("between", ["nothing", "damage", "nak"])
def test_an_acknowledgement_that_may_have_waited_for_a_recovery_is_no_sample(
        between: str) -> None:
    host, seq = fast_host()
    samples = host._rtt.samples
    start = 0.1
    host.send(SetExitLock(True), start)
    host.data_to_send(start)
    if between == "damage":
        host.receive(damaged_block(), start + 0.002)
    elif between == "nak":
        host.receive(encode_frame(Nak(0), 0, seq), start + 0.002)  # (it may be our frame)
    host.receive(encode_frame(Ack(), 0, (seq + 1) & 0xFFFF), start + 0.004)
    assert host.unacked_count == 0
    assert host._rtt.samples == samples + (between == "nothing")


def test_an_early_sample_far_below_the_first_starts_the_estimate_afresh() -> None:
    rtt = RttEstimator(initial=0.25, floor=0.002, ceiling=2.0)
    rtt.sample(0.090)  # a host still starting up, or a copy resent unbeknown to us
    rtt.sample(0.050)  # more than half: smoothed as RFC 6298 says
    assert rtt.srtt == pytest.approx(7 / 8 * 0.090 + 1 / 8 * 0.050)
    rtt.sample(0.005)
    assert (rtt.srtt, rtt.rttvar) == (0.005, 0.0025)
    assert rtt.rto == pytest.approx(0.015)  # three times the sample, as after a first one
    for _ in range(WARM_UP):
        rtt.sample(0.010)
    rtt.sample(0.001)  # past the warm-up: smoothed, never a restart
    assert rtt.srtt > 0.005


def test_a_nak_is_answered_by_an_acknowledgement_at_once() -> None:
    host, seq = fast_host()
    host.receive(encode_frame(Nak(0), 0, seq), 0.1)  # the shoe saw damage: maybe our Ack
    assert host.next_deadline() == pytest.approx(0.1)
    (answer,) = frames(host.data_to_send(0.1))
    assert isinstance(answer.message, Ack)  # not after ack_delay


def card_frame(seq: int, n: int) -> bytes:
    return encode_frame(CardDrawn(n, 1, 0, Sensor.OPTICAL_PRIMARY, 99), seq, None,
                        reliable=True)


@pytest.mark.parametrize("gap", [True, False])
def test_a_receiver_with_a_gap_says_its_nak_again_when_the_peer_naks(gap: bool) -> None:
    host, _ = fast_host()
    expected = host._rx_expected
    host.receive(card_frame((expected + 1) & 0xFFFF if gap else expected, 1), 0.1)
    host.commit(len(host._uncommitted), 0.1)
    first = frames(host.data_to_send(0.1))
    assert [type(f.message) for f in first] == ([Nak] if gap else [])
    # the shoe saw damage (perhaps our Nak) and says so
    host.receive(encode_frame(Nak(0), 0, host._tx_next), 0.102)
    sent = [type(f.message) for f in frames(host.data_to_send(0.102))]
    assert sent == ([Nak] if gap else [Ack])


def test_an_unanswered_hello_is_repeated_soon_then_at_the_hello_interval() -> None:
    host = Link(Role.HOST, NEW, HOST_SESSION)
    sent_at = []
    now = 0.0
    while now < 2.0:
        if frames(host.data_to_send(now)):
            sent_at.append(now)
        now = round(now + 0.001, 3)
    gap = HELLO_FIRST_RETRY
    assert sent_at == pytest.approx([0.0, gap, 3 * gap, 7 * gap, 7 * gap + 0.5,
                                     7 * gap + 1.0], abs=0.002)


def test_a_revision_1_0_host_says_hello_every_hello_interval() -> None:
    host = Link(Role.HOST, LinkConfig(fast_recovery=False), HOST_SESSION)
    sent_at = [t / 100 for t in range(200) if frames(host.data_to_send(t / 100))]
    assert sent_at == [0.0, 0.5, 1.0, 1.5]


def test_a_hello_sent_early_for_a_sign_of_the_shoe_does_not_double_the_wait() -> None:
    host = Link(Role.HOST, NEW, HOST_SESSION)
    host.data_to_send(0.0)  # next after 0.1 s, then 0.2 s
    host.receive(damaged_block(), 0.01)  # the shoe's DeviceInfo, damaged
    assert frames(host.data_to_send(0.01))[0].message == HostHello(1, HOST_SESSION)
    assert host.next_deadline() == pytest.approx(0.01 + 2 * HELLO_FIRST_RETRY)  # not 4
    host.data_to_send(0.01 + 2 * HELLO_FIRST_RETRY)  # unanswered: now the wait doubles
    assert host.next_deadline() == pytest.approx(0.01 + 4 * HELLO_FIRST_RETRY)
    host.data_to_send(0.01 + 4 * HELLO_FIRST_RETRY)
    assert host.next_deadline() == pytest.approx(0.01 + 8 * HELLO_FIRST_RETRY)


def test_the_timeout_keeps_half_a_round_trip_of_margin_on_a_steady_line() -> None:
    """Samples from clean trips alone barely vary: SRTT + 1 ms fired whenever a frame waited
    behind another on the wire (a 14-byte Ack takes 1.2 ms at 115200)."""
    rtt = RttEstimator(initial=0.25, floor=0.002, ceiling=2.0)
    for _ in range(40):
        rtt.sample(0.004)
    assert rtt.rto == pytest.approx(0.004 + 0.002)


def test_before_any_sample_a_trip_with_a_recovery_in_it_is_taken() -> None:
    """It can only overstate the round trip; the initial 0.25 s timeout made each early loss
    on a bad line cost a third of a second."""
    host = Link(Role.HOST, NEW, HOST_SESSION)
    host.data_to_send(0.0)
    host.data_to_send(NEW.hello_interval)  # two hellos out: the handshake gives no sample
    host.receive(encode_frame(fast_shoe_info()), 0.6)
    assert host.is_up and host._rtt.samples == 0
    first = initial_sequence(HOST_SESSION, fast_shoe_info().session_id)
    host.data_to_send(0.6)  # LinkOptions
    host.receive(damaged_block(), 0.602)
    host.receive(encode_frame(Ack(), 0, (first + 1) & 0xFFFF), 0.608)
    assert host._rtt.samples == 1 and host._rtt.srtt == pytest.approx(0.008)
