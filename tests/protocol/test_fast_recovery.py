"""Fast recovery (SPEC 8.8, revision 1.2): Nak and a measured retransmission timeout.

On the simulated clock of ``LinkPair``: a frame lost or damaged is resent after a Nak within a
few milliseconds, not after the 0.25 s timeout; a revision 1.0 peer on either side gets exactly
the old behaviour and never sees a type it does not know; a very bad line does not turn into a
storm of Naks; and every message still arrives exactly once, in order.
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from firmware_protocol.codec import FrameDecoder, encode_frame
from firmware_protocol.link import Link, LinkConfig, Role, initial_sequence
from firmware_protocol.messages import (
    Capability,
    CardDrawn,
    DeviceInfo,
    HostHello,
    LinkOptions,
    Message,
    MessageType,
    Nak,
    Sensor,
    SetExitLock,
)
from firmware_protocol.rtt import RttEstimator
from firmware_protocol.testing import TEST_IDENTITY, LinkPair, LossyChannel

HOST_SESSION, SHOE_SESSION = 0x0A0B0C0D, 0x11223344
OLD = LinkConfig(fast_recovery=False)
NEW = LinkConfig()


def card(n: int) -> CardDrawn:
    return CardDrawn(n, (n % 13) + 1, n % 4, Sensor.OPTICAL_PRIMARY, 99)


def pair(host: LinkConfig = NEW, shoe: LinkConfig = NEW, seed: int = 1,
         **faults: float) -> LinkPair:
    rng = random.Random(seed)
    link_pair = LinkPair(
        Link(Role.HOST, host, HOST_SESSION),
        Link(Role.SHOE, shoe, SHOE_SESSION, TEST_IDENTITY),
        LossyChannel(random.Random(rng.random()), **faults),
        LossyChannel(random.Random(rng.random()), **faults),
    )
    assert link_pair.run_until(lambda: link_pair.host.link.is_up and link_pair.shoe.link.is_up,
                               2.0)
    link_pair.run(0.05)
    return link_pair


def types_on_the_wire(link_pair: LinkPair, direction: str) -> set[MessageType]:
    """Every message type a side wrote, decoded from its channel (a tap on the write)."""
    seen: set[MessageType] = set()
    channel = link_pair.to_shoe if direction == "to_shoe" else link_pair.to_host
    write = channel.write
    decoder = FrameDecoder()

    def tapped(data: bytes, now: float) -> None:
        seen.update(frame.message.TYPE for frame in decoder.feed(data))
        write(data, now)

    channel.write = tapped  # type: ignore[method-assign]
    return seen


def test_the_estimator_follows_rfc_6298() -> None:
    rtt = RttEstimator(initial=0.25, floor=0.01, ceiling=2.0)
    assert rtt.rto == 0.25  # no sample yet
    rtt.sample(0.004)
    assert rtt.srtt == 0.004 and rtt.rttvar == 0.002
    assert rtt.rto == pytest.approx(max(0.01, 0.004 + 4 * 0.002))
    for _ in range(50):
        rtt.sample(0.004)
    assert rtt.rto == 0.01  # the floor
    rtt.sample(1.0)
    assert 0.01 < rtt.rto <= 2.0


def test_fast_recovery_is_agreed_and_the_shoes_application_never_sees_it() -> None:
    link_pair = pair()
    assert link_pair.host.link.peer.capabilities & Capability.FAST_RECOVERY  # type: ignore[union-attr]
    assert link_pair.shoe.link._peer_takes_nak and link_pair.host.link._peer_takes_nak
    assert not any(isinstance(m, LinkOptions) for m in link_pair.shoe.received)


@pytest.mark.parametrize(("host", "shoe"), [(NEW, OLD), (OLD, NEW)], ids=["old-shoe", "old-host"])
def test_an_older_peer_never_receives_a_type_it_does_not_know(host: LinkConfig,
                                                              shoe: LinkConfig) -> None:
    link_pair = pair(host, shoe, loss=0.05, corrupt=0.05, seed=3)
    to_shoe = types_on_the_wire(link_pair, "to_shoe")
    to_host = types_on_the_wire(link_pair, "to_host")
    for n in range(1, 201):
        link_pair.shoe.link.send(card(n), link_pair.now)
        link_pair.host.link.send(SetExitLock(n % 2 == 0), link_pair.now)
        link_pair.run(0.01)
    assert link_pair.run_until(lambda: len(link_pair.host.received) == 200, 60)
    assert [m.counter for m in link_pair.host.received] == list(range(1, 201))  # type: ignore[attr-defined]
    assert MessageType.NAK not in to_shoe | to_host
    assert MessageType.LINK_OPTIONS not in to_shoe
    assert not link_pair.host.link._peer_takes_nak and not link_pair.shoe.link._peer_takes_nak


def test_a_lost_frame_is_resent_after_a_nak_not_after_the_timeout() -> None:
    link_pair = pair()
    for n in range(1, 21):  # round trips measured: the timeout comes down to its floor
        link_pair.shoe.link.send(card(n), link_pair.now)
        link_pair.run(0.01)
    assert link_pair.shoe.link._rtt.samples > 0
    link_pair.to_host.loss = 1.0
    link_pair.shoe.link.send(card(21), link_pair.now)  # this one is lost
    link_pair.run(0.002)
    link_pair.to_host.loss = 0.0
    link_pair.shoe.link.send(card(22), link_pair.now)  # the gap it leaves is seen at once
    sent_at = link_pair.now
    assert link_pair.run_until(lambda: len(link_pair.host.received) == 22, 1.0)
    assert link_pair.now - sent_at < 0.02  # a few ms, not 0.25 s
    assert link_pair.host.link.stats.naks_sent >= 1
    assert link_pair.shoe.link.stats.fast_retransmissions >= 1
    assert [m.counter for m in link_pair.host.received] == list(range(1, 23))  # type: ignore[attr-defined]


def test_a_nak_for_damage_gets_a_damaged_last_frame_resent() -> None:
    """Nothing follows the damaged frame, so there is no gap to see: the damage itself is."""
    link_pair = pair()
    for n in range(1, 11):
        link_pair.shoe.link.send(card(n), link_pair.now)
        link_pair.run(0.01)
    link_pair.to_host.corrupt = 1.0
    link_pair.shoe.link.send(card(11), link_pair.now)
    link_pair.run(0.0015)
    link_pair.to_host.corrupt = 0.0
    sent_at = link_pair.now
    assert link_pair.run_until(lambda: len(link_pair.host.received) == 11, 1.0)
    assert link_pair.now - sent_at < 0.03


def test_what_a_nak_marks_received_is_not_resent() -> None:
    shoe = Link(Role.SHOE, NEW, SHOE_SESSION, TEST_IDENTITY)
    shoe.receive(encode_frame(HostHello(1, HOST_SESSION)), 0.0)
    shoe.data_to_send(0.0)
    isn = initial_sequence(SHOE_SESSION, HOST_SESSION)
    shoe.receive(encode_frame(LinkOptions(1), isn, isn, reliable=True), 0.0)
    for n in range(4):
        shoe.send(card(n), 0.0)
    shoe.data_to_send(0.0)
    # The host has isn (acknowledged) and isn+2; isn+1 and isn+3 are missing.
    shoe.receive(encode_frame(Nak(0b01), 0, (isn + 1) & 0xFFFF), 0.1)
    resent = [f.seq for f in FrameDecoder().feed(shoe.data_to_send(0.1)) if f.reliable]
    assert resent == [(isn + 1) & 0xFFFF, (isn + 3) & 0xFFFF]
    assert shoe.data_to_send(0.101) == b""  # and not again for the same Nak


def test_a_frame_still_on_its_way_is_not_resent_for_a_nak() -> None:
    shoe = Link(Role.SHOE, NEW, SHOE_SESSION, TEST_IDENTITY)
    shoe.receive(encode_frame(HostHello(1, HOST_SESSION)), 0.0)
    shoe.data_to_send(0.0)
    isn = initial_sequence(SHOE_SESSION, HOST_SESSION)
    shoe.send(card(1), 0.0)
    shoe.data_to_send(0.0)
    early = NEW.nak_holdoff / 2  # no round trip measured: the holdoff stands in for one
    shoe.receive(encode_frame(Nak(0), 0, isn), early)  # sent just before: maybe on its way
    assert card(1) not in frames_of(shoe.data_to_send(early))  # (an Ack goes at once)
    assert card(1) in frames_of(shoe.data_to_send(NEW.nak_holdoff))  # then it is resent


BAD_LINE = {"loss": 0.1, "corrupt": 0.1, "duplicate": 0.1, "reorder": 0.1, "garbage": 0.1}


@pytest.mark.parametrize(("config", "within"), [(NEW, 5.0), (OLD, 60.0)], ids=["1.2", "1.0"])
def test_a_very_bad_line_costs_one_nak_per_holdoff_and_new_frames_still_flow(
        config: LinkConfig, within: float) -> None:
    """One frame in ten lost, one in ten damaged, duplicated, delayed, glued to garbage:
    300 messages sent 2 ms apart arrive within 5 s with fast recovery (measured 1.5 s; the
    revision 1.0 link takes about 19 s on the same line)."""
    link_pair = pair(config, config, seed=5, **BAD_LINE)
    started = link_pair.now
    for n in range(1, 301):
        link_pair.shoe.link.send(card(n), link_pair.now)
        link_pair.run(0.002)
    assert link_pair.run_until(lambda: len(link_pair.host.received) == 300, within)
    elapsed = link_pair.now - started
    received: list[Message] = link_pair.host.received
    assert [m.counter for m in received] == list(range(1, 301))  # type: ignore[attr-defined]
    for side in (link_pair.host.link, link_pair.shoe.link):
        assert side.stats.naks_sent <= elapsed / NEW.nak_holdoff + 1


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(("host", "shoe"), [(NEW, NEW), (NEW, OLD), (OLD, NEW)],
                         ids=["both-new", "old-shoe", "old-host"])
def test_exactly_once_in_order_both_ways_whoever_speaks_it(seed: int, host: LinkConfig,
                                                          shoe: LinkConfig) -> None:
    link_pair = pair(host, shoe, seed=seed, loss=0.05, corrupt=0.05, duplicate=0.05,
                     reorder=0.05, garbage=0.05)
    for n in range(1, 151):
        link_pair.shoe.link.send(card(n), link_pair.now)
        if n % 3 == 0:
            link_pair.host.link.send(SetExitLock(n % 2 == 0), link_pair.now)
        link_pair.run(0.003)
    assert link_pair.run_until(lambda: len(link_pair.host.received) == 150
                               and len(link_pair.shoe.received) == 50, 120)
    assert [m.counter for m in link_pair.host.received] == list(range(1, 151))  # type: ignore[attr-defined]
    assert [m.locked for m in link_pair.shoe.received] == [  # type: ignore[attr-defined]
        n % 2 == 0 for n in range(3, 151, 3)]


def test_a_restarted_shoe_agrees_afresh() -> None:
    link_pair = pair()
    new_shoe = Link(Role.SHOE, OLD, 0x0BADF00D, TEST_IDENTITY)  # reflashed with 1.0 firmware
    link_pair.replace_shoe(new_shoe)
    assert link_pair.run_until(lambda: new_shoe.is_up and isinstance(
        link_pair.host.link.peer, DeviceInfo) and link_pair.host.link.peer.session_id
        == 0x0BADF00D, 5.0)
    link_pair.run(0.1)
    assert not link_pair.host.link._peer_takes_nak


# -- the handshake's round trip is the first sample (8.3) --------------------------------------

def frames_of(data: bytes) -> list[object]:
    return [frame.message for frame in FrameDecoder().feed(data)]


def test_the_host_takes_its_first_round_trip_from_the_handshake() -> None:
    """HostHello -> DeviceInfo is answered by the shoe's link: a round trip of the line. Its
    first message's acknowledgement would also measure the shoe's application."""
    host = Link(Role.HOST, NEW, HOST_SESSION)
    assert frames_of(host.data_to_send(0.0)) == [HostHello(1, HOST_SESSION)]
    info = DeviceInfo.from_identity(TEST_IDENTITY, SHOE_SESSION)
    host.receive(encode_frame(dataclasses.replace(
        info, capabilities=info.capabilities | Capability.FAST_RECOVERY)), 0.005)
    assert host.is_up and host._rtt.samples == 1 and host._rtt.srtt == pytest.approx(0.005)
    assert host._base_rto() == pytest.approx(0.005 + 4 * 0.0025)  # not the initial 0.25 s


def test_two_hellos_out_give_no_sample() -> None:
    """Karn's rule for the handshake: which hello did the DeviceInfo answer?"""
    host = Link(Role.HOST, NEW, HOST_SESSION)
    host.data_to_send(0.0)
    host.data_to_send(NEW.hello_interval)  # the first one went unanswered: a second hello
    host.receive(encode_frame(DeviceInfo.from_identity(TEST_IDENTITY, SHOE_SESSION)), 0.6)
    assert host.is_up and host._rtt.samples == 0


def test_the_shoe_takes_its_first_round_trip_from_the_hosts_link_options() -> None:
    """DeviceInfo -> LinkOptions: the host's link answers the handshake at once. The shoe's
    first message (sent with its DeviceInfo) is acknowledged only once the host's journal has
    it: a host still starting up made that first sample 70 ms, and the timeout stayed at
    hundreds of milliseconds for a dozen frames after it."""
    shoe = Link(Role.SHOE, NEW, SHOE_SESSION, TEST_IDENTITY)
    shoe.receive(encode_frame(HostHello(1, HOST_SESSION)), 0.0)
    shoe.send(card(1), 0.0)
    sent = frames_of(shoe.data_to_send(0.0))
    assert isinstance(sent[0], DeviceInfo) and sent[1] == card(1)
    assert shoe._base_rto() == NEW.retransmit_timeout  # nothing measured yet
    first = initial_sequence(SHOE_SESSION, HOST_SESSION)
    options = encode_frame(LinkOptions(1), first, first, reliable=True)  # no ack for the card
    shoe.receive(options, 0.004)
    assert shoe._rtt.samples == 1 and shoe._rtt.srtt == pytest.approx(0.004)
    # the card's timer, armed with the initial 0.25 s, now runs on the measured timeout
    assert shoe._rto_deadline == pytest.approx(0.0 + 0.004 + 4 * 0.002)
    assert [m for m in frames_of(shoe.data_to_send(0.013)) if m == card(1)] == [card(1)]


# -- a damaged handshake costs a few milliseconds, not a hello interval ------------------------

def fast_shoe_info() -> DeviceInfo:
    info = DeviceInfo.from_identity(TEST_IDENTITY, SHOE_SESSION)
    return dataclasses.replace(info, capabilities=info.capabilities | Capability.FAST_RECOVERY)


@pytest.mark.parametrize(("config", "next_hello"), [(NEW, 0.01), (OLD, 0.5)],
                         ids=["revision-1.2", "revision-1.0"])
def test_a_host_that_hears_damage_while_connecting_says_hello_again_soon(
        config: LinkConfig, next_hello: float) -> None:
    """The shoe's DeviceInfo (about 40 bytes) is the frame a noisy line damages most; waiting
    for the next hello cost half a second each time."""
    host = Link(Role.HOST, config, HOST_SESSION)
    host.data_to_send(0.0)
    damaged = bytearray(encode_frame(fast_shoe_info()))
    damaged[5] ^= 0x40
    host.receive(bytes(damaged), 0.01)
    assert not host.is_up and host.stats.hellos_sent == 1
    assert host.next_deadline() == pytest.approx(next_hello)
    assert frames_of(host.data_to_send(next_hello)) == [HostHello(1, HOST_SESSION)]


def test_what_the_shoe_sent_before_the_host_was_up_is_asked_for_at_once() -> None:
    """The shoe came up on our hello and sent its first message with its DeviceInfo; the
    DeviceInfo was lost, so the host dropped the message. Once up, the host asks for it (a
    Nak right after its LinkOptions) instead of leaving it to the shoe's backed-off timer."""
    host = Link(Role.HOST, NEW, HOST_SESSION)
    host.data_to_send(0.0)
    first = initial_sequence(HOST_SESSION, SHOE_SESSION)
    host.receive(encode_frame(card(1), first, first, reliable=True), 0.003)  # not up: dropped
    assert host.stats.ignored == 1 and host.next_deadline() == pytest.approx(0.003)
    assert frames_of(host.data_to_send(0.003)) == [HostHello(1, HOST_SESSION)]
    host.receive(encode_frame(fast_shoe_info()), 0.008)
    sent = list(FrameDecoder().feed(host.data_to_send(0.008)))
    assert [type(f.message) for f in sent] == [Nak, LinkOptions]
    assert sent[0].ack_number == first  # "send me everything from your first frame on"


def test_a_line_made_anew_resends_at_once_and_asks_for_what_was_in_flight() -> None:
    """A TCP line cut and reopened: the frames in flight are gone and the timer backed off
    while nothing got through (each cut of a bad line cost about 0.4 s per side)."""
    link_pair = pair()
    host = link_pair.host.link
    host.send(SetExitLock(True), link_pair.now)
    start = link_pair.now
    host.data_to_send(start)  # lost with the old line
    for step in range(1, 5):  # retransmissions into the dead line: the timer backs off
        host.data_to_send(host._rto_deadline or start)
    assert host._rto > NEW.retransmit_timeout_min * 8
    now = (host._rto_deadline or start) - host._rto / 2
    host.line_restored(now)
    sent = [f for f in FrameDecoder().feed(host.data_to_send(now))]
    assert [type(f.message) for f in sent] == [Nak, SetExitLock]  # ask, and resend, at once
    assert host._rto == host._base_rto()
