"""Frame copies (SPEC 8.9, revision 1.3): a lone frame goes with a copy right behind it.

The receiver's rules are checked against a table written from the SPEC's text (not from the
link's code): a host link brought up by hand with a FRAME_COPIES shoe is fed hand-made frames,
and what it delivers and what it sends back (Acks, Naks) is compared with the table. The
sender's rules and the agreement are checked on ``LinkPair``'s simulated line, and a
hypothesis search looks for a pattern of lost, damaged and duplicated frames that breaks
exactly-once, in-order delivery with copies on.
"""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_protocol.codec import Flags, FrameDecoder, encode_frame
from firmware_protocol.link import Link, LinkConfig, Role, initial_sequence
from firmware_protocol.messages import (
    Ack,
    Capability,
    CardDrawn,
    DeviceInfo,
    Nak,
    Sensor,
    SetExitLock,
)
from firmware_protocol.testing import TEST_IDENTITY, LinkPair, LossyChannel

HOST_SESSION, SHOE_SESSION = 0x0A0B0C0D, 0x11223344
ISN = initial_sequence(HOST_SESSION, SHOE_SESSION)
NEW = LinkConfig()
REV_1_2 = LinkConfig(frame_copies=False)
REV_1_0 = LinkConfig(fast_recovery=False)
GAP = 0.001  # seconds between a frame and the next one fed to the receiver


def card(n: int) -> CardDrawn:
    return CardDrawn(n, (n % 13) + 1, n % 4, Sensor.OPTICAL_PRIMARY, 99)


def damaged(wire: bytes) -> bytes:
    """The frame with one byte of its body changed (never into a delimiter): a bad CRC."""
    body, middle = bytearray(wire), len(wire) // 2
    body[middle] = body[middle] ^ 0x40 if body[middle] != 0x40 else 0x41
    return bytes(body)


# ------------------------------------------------------------------ the receiver's table

class Receiver:
    """A host link that is up with a FRAME_COPIES shoe (handshake done by hand)."""

    def __init__(self, shoe_capabilities: Capability = Capability.FAST_RECOVERY
                 | Capability.FRAME_COPIES) -> None:
        self.link = Link(Role.HOST, NEW, HOST_SESSION)
        self.now = 10.0
        self.delivered: list[int] = []
        self.sent: list[tuple[float, str]] = []  # (time, Ack / Nak / Data)
        self.link.data_to_send(self.now)  # HostHello
        identity = dataclasses.replace(
            TEST_IDENTITY, capabilities=TEST_IDENTITY.capabilities | shoe_capabilities)
        self.feed(encode_frame(DeviceInfo.from_identity(identity, SHOE_SESSION)))
        assert self.link.is_up
        self._decoder = FrameDecoder()
        self.advance(0.0)  # the LinkOptions goes out

    def feed(self, wire: bytes) -> None:
        for item in self.link.receive(wire, self.now):
            if isinstance(item, CardDrawn):
                self.delivered.append(item.counter)

    def advance(self, seconds: float) -> None:
        """Let the link run its timers and write for ``seconds`` (in 0.1 ms steps)."""
        end = self.now + seconds
        while True:
            self.link.poll(self.now)
            for frame in FrameDecoder().feed(self.link.data_to_send(self.now)):
                kind = ("Ack" if isinstance(frame.message, Ack) else "Nak"
                        if isinstance(frame.message, Nak) else "Data")
                self.sent.append((self.now, kind))
            if self.now >= end:
                return
            self.now = min(end, self.now + 0.0001)

    def count(self, kind: str, since: float) -> int:
        return sum(1 for when, what in self.sent if what == kind and when >= since)


def shoe_frame(n: int, *, copied: bool = False, copy: bool = False) -> bytes:
    """The shoe's card ``n`` (seq ISN + n), acknowledging the host's LinkOptions."""
    return encode_frame(card(n), ISN + n, ISN + 1, reliable=True, copied=copied, copy=copy)


# What arrives after a clean copied pair of card 0 (which lets the receiver measure the time
# from an original to its copy), one block every GAP, and what SPEC 8.9 says follows:
# the cards delivered, and whether a Nak goes out within the next 10 ms.
# O = card 1 marked COPIED, C = its copy, P = card 1 plain (no flag), X = O damaged,
# Y = C damaged, D = a plain duplicate of card 0 (as the line's own duplication makes one).
RECEIVER_TABLE = [
    # blocks, delivered, Nak sent, Acks owed by the blocks after card 0's
    ("O C", [1], False, 1),        # the copy of what arrived: dropped, nothing owed for it
    ("O Y", [1], False, 1),        # the damaged block right behind O is its copy: no Nak
    ("X C", [1], False, 1),        # the original damaged: the copy brings it, no Nak
    ("C", [1], False, 1),          # the original lost: the copy is taken as it
    ("X Y", [], True, 0),          # both damaged: a Nak once the copy's time has passed
    ("P Y", [1], True, 1),         # no copy announced: a damaged block asks as in 8.8
    ("D", [], False, 1),           # a plain duplicate still means our ack was lost (8.2)
    ("O C C", [1], False, 1),      # the line duplicated the copy: still nothing owed
]


@pytest.mark.parametrize(("blocks", "delivered", "nak", "acks"), RECEIVER_TABLE,
                         ids=[row[0] for row in RECEIVER_TABLE])
def test_the_receiver_follows_the_table(blocks: str, delivered: list[int], nak: bool,
                                        acks: int) -> None:
    receiver = Receiver()
    receiver.feed(shoe_frame(0, copied=True))
    receiver.advance(GAP)
    receiver.feed(shoe_frame(0, copy=True))
    receiver.advance(0.005)
    assert receiver.delivered == [0]
    start = receiver.now
    wires = {"O": shoe_frame(1, copied=True), "C": shoe_frame(1, copy=True),
             "P": shoe_frame(1), "X": damaged(shoe_frame(1, copied=True)),
             "Y": damaged(shoe_frame(1, copy=True)), "D": shoe_frame(0)}
    for block in blocks.split():
        receiver.feed(wires[block])
        receiver.advance(GAP)
    receiver.advance(0.010)
    assert receiver.delivered == [0, *delivered]
    assert (receiver.count("Nak", start) > 0) is nak
    # a Nak counts as the acknowledgement that was due (8.8)
    assert receiver.count("Ack", start) + receiver.count("Nak", start) == acks + nak


def test_a_damaged_original_and_copy_are_asked_for_at_once_after_the_second() -> None:
    receiver = Receiver()
    receiver.feed(shoe_frame(0, copied=True))
    receiver.advance(GAP)
    receiver.feed(shoe_frame(0, copy=True))
    receiver.advance(0.005)
    receiver.feed(damaged(shoe_frame(1, copied=True)))
    receiver.advance(GAP / 2)  # the Nak waits for a copy (1.5 x the 1 ms measured) ...
    assert receiver.count("Nak", 0) == 0
    second = receiver.now
    receiver.feed(damaged(shoe_frame(1, copy=True)))
    receiver.advance(0.0)  # ... and goes as soon as the copy is seen damaged too
    assert [when for when, kind in receiver.sent if kind == "Nak"] == [second]


def test_copy_flags_from_a_peer_that_did_not_agree_are_ignored() -> None:
    receiver = Receiver(shoe_capabilities=Capability.FAST_RECOVERY)  # a revision 1.2 shoe
    receiver.feed(shoe_frame(0))
    receiver.advance(0.005)
    start = receiver.now
    receiver.feed(shoe_frame(0, copy=True))  # reserved in 1.2: a duplicate like any other
    receiver.advance(0.005)
    assert receiver.delivered == [0] and receiver.count("Ack", start) == 1


# ------------------------------------------------------------------ sender and agreement

def pair(host: LinkConfig = NEW, shoe: LinkConfig = NEW, seed: int = 1,
         loss: float = 0.0, corrupt: float = 0.0) -> LinkPair:
    rng = random.Random(seed)
    link_pair = LinkPair(
        Link(Role.HOST, host, HOST_SESSION),
        Link(Role.SHOE, shoe, SHOE_SESSION, TEST_IDENTITY),
        LossyChannel(random.Random(rng.random()), loss=loss, corrupt=corrupt),
        LossyChannel(random.Random(rng.random()), loss=loss, corrupt=corrupt),
    )
    assert link_pair.run_until(lambda: link_pair.host.link.is_up and link_pair.shoe.link.is_up,
                               2.0)
    link_pair.run(0.05)
    return link_pair


def frames_on_the_wire(link_pair: LinkPair, direction: str) -> list[tuple[int, int, bool]]:
    """(flags, seq, reliable) of every frame a side writes from now on (a tap on the write)."""
    seen: list[tuple[int, int, bool]] = []
    channel = link_pair.to_shoe if direction == "to_shoe" else link_pair.to_host
    write = channel.write
    decoder = FrameDecoder()

    def tapped(data: bytes, now: float) -> None:
        seen.extend((f.flags, f.seq, f.reliable) for f in decoder.feed(data))
        write(data, now)

    channel.write = tapped  # type: ignore[method-assign]
    return seen


def test_copies_are_agreed_in_the_handshake() -> None:
    link_pair = pair()
    info = link_pair.host.link.peer
    assert isinstance(info, DeviceInfo)
    assert info.capabilities & Capability.FRAME_COPIES
    assert link_pair.host.link._copies and link_pair.shoe.link._copies


@pytest.mark.parametrize(("host", "shoe"), [(NEW, REV_1_2), (REV_1_2, NEW), (NEW, REV_1_0),
                                            (REV_1_0, NEW)],
                         ids=["1.2-shoe", "1.2-host", "1.0-shoe", "1.0-host"])
def test_an_older_peer_never_sees_a_copy(host: LinkConfig, shoe: LinkConfig) -> None:
    link_pair = pair(host, shoe, loss=0.05, corrupt=0.05, seed=5)
    to_shoe = frames_on_the_wire(link_pair, "to_shoe")
    to_host = frames_on_the_wire(link_pair, "to_host")
    for n in range(1, 101):
        link_pair.shoe.link.send(card(n), link_pair.now)
        link_pair.host.link.send(SetExitLock(n % 2 == 0), link_pair.now)
        link_pair.run(0.01)
    assert link_pair.run_until(lambda: len(link_pair.host.received) == 100, 60)
    assert [m.counter for m in link_pair.host.received] == list(range(1, 101))  # type: ignore[attr-defined]
    copy_bits = Flags.COPY | Flags.COPIED
    assert not any(flags & copy_bits for flags, _, _ in to_shoe + to_host)
    assert not link_pair.host.link._copies and not link_pair.shoe.link._copies
    shoe_info = link_pair.host.link.peer
    assert isinstance(shoe_info, DeviceInfo)
    assert bool(shoe_info.capabilities & Capability.FRAME_COPIES) == (
        shoe.fast_recovery and shoe.frame_copies)


def test_a_lone_frame_goes_with_its_copy_and_costs_no_acknowledgement() -> None:
    with_copies, without = pair(), pair(NEW, REV_1_2)
    for link_pair in (with_copies, without):
        to_host = frames_on_the_wire(link_pair, "to_host")
        acks_before = link_pair.host.link.stats.ack_frames_sent
        for n in range(1, 11):
            link_pair.shoe.link.send(card(n), link_pair.now)
            link_pair.run(0.02)
        assert [m.counter for m in link_pair.host.received] == list(range(1, 11))  # type: ignore[attr-defined]
        link_pair.acks = link_pair.host.link.stats.ack_frames_sent - acks_before  # type: ignore[attr-defined]
        link_pair.wire = to_host  # type: ignore[attr-defined]
    wire = with_copies.wire  # type: ignore[attr-defined]
    reliable = [(flags, seq) for flags, seq, is_reliable in wire if is_reliable]
    assert len(reliable) == 20
    for (first, seq1), (second, seq2) in zip(reliable[::2], reliable[1::2], strict=True):
        assert seq1 == seq2 and first & Flags.COPIED and second & Flags.COPY
    assert with_copies.acks == without.acks == 10  # type: ignore[attr-defined]
    assert with_copies.shoe.link.stats.copies_sent == 10
    assert with_copies.host.link.stats.copies_used == 0


def test_frames_sent_together_and_resends_get_no_copy() -> None:
    link_pair = pair()
    to_host = frames_on_the_wire(link_pair, "to_host")
    for n in range(1, 4):  # three at once: none of them is lone
        link_pair.shoe.link.send(card(n), link_pair.now)
    link_pair.run(0.05)
    assert not any(flags & (Flags.COPY | Flags.COPIED) for flags, _, _ in to_host)
    link_pair.to_host.loss = 1.0
    link_pair.shoe.link.send(card(4), link_pair.now)  # lone, with its copy: both lost
    link_pair.run(0.002)
    link_pair.to_host.loss = 0.0
    assert link_pair.run_until(lambda: len(link_pair.host.received) == 4, 2.0)
    resends = [flags for flags, seq, reliable in to_host
               if reliable and seq == (ISN + 3) % 65536  # card 4: the fourth
               and not flags & (Flags.COPY | Flags.COPIED)]
    assert resends, "card 4 came back by a resend"
    assert link_pair.shoe.link.stats.copies_sent == 1


def test_a_damaged_original_is_recovered_by_its_copy_without_a_nak() -> None:
    link_pair = pair()
    for n in range(1, 6):  # the receiver measures how long a copy takes
        link_pair.shoe.link.send(card(n), link_pair.now)
        link_pair.run(0.02)
    naks, resent = link_pair.host.link.stats.naks_sent, link_pair.shoe.link.stats.fast_retransmissions
    write = link_pair.to_host.write

    def damage_the_original(data: bytes, now: float) -> None:
        first = data.index(b"\x00", 1) + 1  # after the burst's leading 0x00, the original
        write(data[:1] + damaged(data[1:first]) + data[first:], now)

    link_pair.to_host.write = damage_the_original  # type: ignore[method-assign]
    link_pair.shoe.link.send(card(6), link_pair.now)
    link_pair.step()
    link_pair.to_host.write = write  # type: ignore[method-assign]
    link_pair.run(0.05)
    assert [m.counter for m in link_pair.host.received] == list(range(1, 7))  # type: ignore[attr-defined]
    assert link_pair.host.link.stats.copies_used == 1
    assert link_pair.host.link.stats.naks_sent == naks
    assert link_pair.shoe.link.stats.fast_retransmissions == resent
    assert link_pair.shoe.link.stats.retransmissions == 0


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(seed=st.integers(0, 2**32 - 1), loss=st.floats(0, 0.3), corrupt=st.floats(0, 0.3),
       duplicate=st.floats(0, 0.3), garbage=st.floats(0, 0.1),
       gaps=st.lists(st.sampled_from([0.0, 0.001, 0.004, 0.02]), min_size=30, max_size=30))
def test_copies_keep_exactly_once_in_order(seed: int, loss: float, corrupt: float,
                                           duplicate: float, garbage: float,
                                           gaps: list[float]) -> None:
    link_pair = pair(seed=seed)
    for channel in (link_pair.to_host, link_pair.to_shoe):
        channel.loss, channel.corrupt = loss, corrupt
        channel.duplicate, channel.garbage = duplicate, garbage
    for n, gap in enumerate(gaps, start=1):  # lone frames and bursts, both directions
        link_pair.shoe.link.send(card(n), link_pair.now)
        link_pair.host.link.send(SetExitLock(n % 2 == 0), link_pair.now)
        if gap:
            link_pair.run(gap, dt=0.001)
    assert link_pair.run_until(lambda: len(link_pair.host.received) == 30
                               and len(link_pair.shoe.received) == 30, 120, dt=0.002)
    assert [m.counter for m in link_pair.host.received] == list(range(1, 31))  # type: ignore[attr-defined]
    assert [m.locked for m in link_pair.shoe.received] == [n % 2 == 0 for n in range(1, 31)]  # type: ignore[attr-defined]
    for channel in (link_pair.to_host, link_pair.to_shoe):
        channel.loss = channel.corrupt = channel.duplicate = channel.garbage = 0.0
    link_pair.run(0.5)
    assert link_pair.host.link.unacked_count == 0 and link_pair.shoe.link.unacked_count == 0
