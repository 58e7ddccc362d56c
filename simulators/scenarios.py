"""Whole-shoe runs: a host ShoeConnection deals a SimulatedShoe over a (faulty) transport.

Shared by the fault tests and ``bench/bench_link_faults.py``. The host side plays a minimal
table: it keeps the exit unlocked (again after every ``LinkUp``, since the shoe locks itself
when it loses the host), journals each card message (here: appends it to a list) before asking
for the next one, and de-duplicates by the shoe's card counter (a set of the counters it has
"journalled"), which only matters after a host restart.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from firmware_protocol.link import LinkConfig, LinkUp
from firmware_protocol.messages import CardDrawn, CardMisread, Message, SetExitLock
from shoe_controller.cards import Card
from shoe_controller.device import ConnectionItem, ShoeConnection
from shoe_controller.errors import ShoeTimeoutError
from shoe_controller.transports.base import Transport
from simulators.dealer import VirtualDealer
from simulators.faults import FaultConfig, FaultCounters, FaultInjector, FaultyTransport
from simulators.shoe import ShoeRunner, SimulatedShoe
from simulators.shoe_model import ShoeModel
from simulators.transport_pairs import transport_pair

LOOPBACK_LINK = LinkConfig(
    retransmit_timeout=0.03,
    retransmit_timeout_max=0.3,
    heartbeat_interval=0.1,
    link_timeout=0.6,
    hello_interval=0.05,
)
"""Link timings for a loopback wire (round trips well under a millisecond)."""


def collect_cards(
    conn: ShoeConnection,
    expected: int,
    *,
    timeout: float,
    journalled: set[int] | None = None,
    on_card: Callable[[int], bool] = lambda n: False,
    seen: list[ConnectionItem] | None = None,
    check: Callable[[], None] = lambda: None,
    collected: list[Message] | None = None,
) -> list[Message]:
    """Keep the exit open and gather card messages until ``expected`` are in ``collected``.

    Without ``journalled`` every card message delivered is kept (a duplicate would show); with
    it, a card whose counter is already in the set is a repeat and skipped. After
    each kept card ``on_card(n)`` runs; if it returns True the collection stops early (to
    restart the host). ``check()`` is called on each turn (e.g. to surface a shoe failure).
    """
    cards = collected if collected is not None else []
    conn.send(SetExitLock(False))
    end = time.monotonic() + timeout
    while len(cards) < expected:
        check()
        if time.monotonic() > end:
            raise ShoeTimeoutError(f"only {len(cards)} of {expected} cards in {timeout:g} s")
        try:
            item = conn.get(timeout=0.2)
        except ShoeTimeoutError:
            continue
        if seen is not None:
            seen.append(item)
        if isinstance(item, LinkUp):
            conn.send(SetExitLock(False))
        elif isinstance(item, CardDrawn | CardMisread) and (
            journalled is None or item.counter not in journalled
        ):
            if journalled is not None:
                journalled.add(item.counter)
            cards.append(item)
            if on_card(len(cards)):
                break
    return cards


@dataclass
class ShoeRun:
    """What a whole-shoe run delivered, and what the wire did to it."""

    cards: list[Message]
    elapsed: float
    host_to_shoe: FaultCounters = field(default_factory=FaultCounters)
    shoe_to_host: FaultCounters = field(default_factory=FaultCounters)
    reconnections: int = 0
    host_restarts: int = 0
    repeats_filtered: int = 0

    @property
    def disconnects(self) -> int:
        return self.host_to_shoe.disconnects + self.shoe_to_host.disconnects

    def received_cards(self) -> list[Card]:
        return [Card.from_wire(m.rank, m.suit) for m in self.cards if isinstance(m, CardDrawn)]


def deal_shoe(
    kind: str,
    cards: Sequence[Card],
    *,
    faults: FaultConfig | None = None,
    link_config: LinkConfig = LOOPBACK_LINK,
    restart_host_after: Sequence[int] = (),
    timeout: float = 60.0,
    baud: int | None = None,
    shoe_link_config: LinkConfig | None = None,
) -> ShoeRun:
    """Deal every card of ``cards`` to a host over a ``kind`` transport pair (see
    ``simulators.transport_pairs``). ``faults`` applies in both directions (independent seeds
    ``seed`` and ``seed + 1``) at the host's end of the wire; ``restart_host_after`` lists card
    counts after which the host is shut down without acknowledging and a new one takes over.
    ``shoe_link_config`` (default: ``link_config``) lets the two ends speak different link
    revisions (e.g. one with ``fast_recovery=False``).

    ``baud`` (or a kind such as ``"memory@115200"``) makes the wire take wire time. The faults
    then sit on either side of the pacing, as a host-end injector would on a real line: what the
    host sends is faulted before it goes on the line (a dropped frame takes no wire time), what
    it receives after it crossed the line (every byte took its time, then was lost or garbled).
    """
    with transport_pair(kind, baud=baud) as pair:
        shoe = SimulatedShoe(
            ShoeModel(cards, cut_card=None),
            dealer=VirtualDealer(pace=0),
            link_config=shoe_link_config if shoe_link_config is not None else link_config,
            rng=random.Random(1),
        )
        host: Transport = pair.host
        tx = rx = None
        if faults is not None:
            tx = FaultInjector(faults)
            rx = FaultInjector(replace(faults, seed=faults.seed + 1))
            host = FaultyTransport(pair.host, tx=tx, rx=rx)
        journal: set[int] = set()
        seen: list[ConnectionItem] = []
        received: list[Message] = []
        restarts = sorted(set(restart_host_after))
        reconnections = 0
        started = time.monotonic()
        with ShoeRunner(shoe, pair.device, close_transport=False) as runner:
            while len(received) < len(cards):
                left = timeout - (time.monotonic() - started)
                with ShoeConnection(host, link_config=link_config) as conn:
                    collect_cards(
                        conn,
                        len(cards),
                        timeout=left,
                        journalled=journal,
                        seen=seen,
                        on_card=lambda n: bool(restarts) and n >= restarts[0],
                        check=runner.check,
                        collected=received,
                    )
                    reconnections += conn.transport.reconnections
                if restarts and len(received) >= restarts[0]:
                    restarts.pop(0)
        elapsed = time.monotonic() - started
        return ShoeRun(
            received,
            elapsed,
            tx.counters if tx is not None else FaultCounters(),
            rx.counters if rx is not None else FaultCounters(),
            reconnections,
            len(set(restart_host_after)),
            sum(1 for item in seen if isinstance(item, CardDrawn | CardMisread)) - len(received),
        )

