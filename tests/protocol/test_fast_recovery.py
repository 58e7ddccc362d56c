"""Fast recovery (SPEC 8.8, revision 1.2): Nak and a measured retransmission timeout.

On the simulated clock of ``LinkPair``: a frame lost or damaged is resent after a Nak within a
few milliseconds, not after the 0.25 s timeout; a revision 1.0 peer on either side gets exactly
the old behaviour and never sees a type it does not know; a very bad line does not turn into a
storm of Naks; and every message still arrives exactly once, in order.
"""

from __future__ import annotations

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
    shoe.receive(encode_frame(Nak(0), 0, isn), 0.001)  # sent 1 ms ago: maybe still on its way
    assert shoe.data_to_send(0.001) == b""


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
