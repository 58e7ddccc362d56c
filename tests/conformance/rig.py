"""A host ShoeConnection and a SimulatedShoe joined by a real transport pair, for the suites."""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

from firmware_protocol.link import LinkConfig, LinkUp
from firmware_protocol.messages import CardDrawn, CardMisread, Message, SetExitLock
from shoe_controller.cards import Card
from shoe_controller.device import ConnectionItem, ShoeConnection
from shoe_controller.errors import ShoeTimeoutError
from shoe_controller.transports.base import Transport
from simulators.dealer import VirtualDealer
from simulators.shoe import ShoeRunner, SimulatedShoe
from simulators.shoe_model import ShoeModel
from simulators.transport_pairs import TransportPair, transport_pair

FAST_LINK = LinkConfig(
    retransmit_timeout=0.03,
    retransmit_timeout_max=0.3,
    heartbeat_interval=0.1,
    link_timeout=0.6,
    hello_interval=0.05,
)
"""Loopback timings: quick retransmissions and a short heartbeat watchdog keep tests fast."""
OLD_LINK = dataclasses.replace(FAST_LINK, fast_recovery=False)
"""The same timings, link revision 1.0 (no Nak, no LinkOptions, fixed timeout)."""
REV_1_2_LINK = dataclasses.replace(FAST_LINK, frame_copies=False)
"""The same timings, link revision 1.2 (fast recovery without frame copies)."""
NEWEST = "both-1.3"
PAIRINGS = {NEWEST: (FAST_LINK, FAST_LINK), "1.2-shoe": (FAST_LINK, REV_1_2_LINK),
            "1.2-host": (REV_1_2_LINK, FAST_LINK), "1.0-shoe": (FAST_LINK, OLD_LINK),
            "1.0-host": (OLD_LINK, FAST_LINK)}
"""(host link, shoe link) per pairing of revisions: a new host must work with an old shoe,
and an old host with a new shoe."""


class _Versions:
    """Which pairing the rig builds now (set per test by the suite's fixture)."""

    current: tuple[LinkConfig, LinkConfig] = (FAST_LINK, FAST_LINK)


VERSIONS = _Versions()

T = TypeVar("T")


@dataclass
class Rig:
    pair: TransportPair
    shoe: SimulatedShoe
    runner: ShoeRunner
    conn: ShoeConnection
    seen: list[ConnectionItem] = field(default_factory=list)

    def next(self, kind: type[T], timeout: float = 5.0,
             where: Callable[[T], bool] = lambda _: True) -> T:
        """The next item of ``kind`` (matching ``where``); everything seen is kept in ``seen``."""
        end = time.monotonic() + timeout
        while True:
            self.runner.check()
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {kind.__name__} within {timeout} s; seen {self.seen[-5:]}")
            try:
                item = self.conn.get(timeout=min(left, 0.2))
            except ShoeTimeoutError:
                continue
            self.seen.append(item)
            if isinstance(item, kind) and where(item):
                return item

    def nothing_within(self, kind: type, seconds: float) -> None:
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            try:
                item = self.conn.get(timeout=left)
            except ShoeTimeoutError:
                return
            self.seen.append(item)
            assert not isinstance(item, kind), f"unexpected {item}"


def wait_until(condition: Callable[[], bool], timeout: float = 5.0, what: str = "it") -> None:
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.002)


@contextmanager
def shoe_rig(
    kind: str,
    cards: list[Card],
    *,
    dealer: VirtualDealer | None = None,
    cut_card: int | None = 14,
    link_config: LinkConfig | None = None,
    commit_on_get: bool = True,
    host_factory: Callable[[TransportPair], Transport | Callable[[], Transport]] | None = None,
) -> Iterator[Rig]:
    """``link_config`` for both ends; without it each end gets the link revision of
    :data:`VERSIONS` (the suite runs once per pairing of revisions)."""
    host_link, shoe_link = (link_config, link_config) if link_config else VERSIONS.current
    with transport_pair(kind) as pair:
        model = ShoeModel(cards, cut_card=cut_card)
        shoe = SimulatedShoe(model, dealer=dealer, link_config=shoe_link, rng=random.Random(7))
        host = pair.host if host_factory is None else host_factory(pair)
        with ShoeRunner(shoe, pair.device, close_transport=False) as runner:
            conn = ShoeConnection(host, link_config=host_link, commit_on_get=commit_on_get)
            with conn:
                yield Rig(pair, shoe, runner, conn)


def deal_whole_shoe(
    rig: Rig,
    expected: int,
    *,
    timeout: float,
    on_card: Callable[[int], None] = lambda n: None,
    journalled: set[int] | None = None,
) -> list[Message]:
    """Be a minimal table: keep the exit unlocked (again after every LinkUp: the shoe locks
    itself when it loses the host) and collect card messages until ``expected`` arrived.

    Without ``journalled`` every card message delivered is kept, so a duplicate delivery
    shows up in the result (with it, a counter already in the set is a repeat); ``on_card(n)`` runs after the n-th card (break the wire...)."""
    cards: list[Message] = []
    rig.conn.send(SetExitLock(False))
    end = time.monotonic() + timeout
    while len(cards) < expected:
        rig.runner.check()
        if time.monotonic() > end:
            raise AssertionError(f"only {len(cards)} of {expected} cards in {timeout} s")
        try:
            item = rig.conn.get(timeout=0.2)
        except ShoeTimeoutError:
            continue
        rig.seen.append(item)
        if isinstance(item, LinkUp):
            rig.conn.send(SetExitLock(False))
        elif isinstance(item, CardDrawn | CardMisread) and (
            journalled is None or item.counter not in journalled
        ):
            if journalled is not None:
                journalled.add(item.counter)
            cards.append(item)
            on_card(len(cards))
    return cards


def card_of(message: Message) -> Card:
    assert isinstance(message, CardDrawn)
    return Card.from_wire(message.rank, message.suit)
