"""An in-memory test bench for the link: two :class:`Link` ends joined by lossy channels.

Reusable by any team that needs a deterministic, faulty serial line without I/O: a
:class:`LossyChannel` is one direction of the line (seeded faults per frame: loss,
duplication, corruption, reordering by extra delay, garbage between frames, cable pulled);
:class:`LinkPair` drives a host link and a shoe link on a simulated clock and records what each
side delivered. Standard library only, no threads, no real time.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from firmware_protocol.link import Link, LinkConfig, LinkEvent, LinkOutput, Role
from firmware_protocol.messages import Capability, DeviceIdentity, Message

TEST_IDENTITY = DeviceIdentity(
    vendor="Example Gaming",
    model="SimShoe 8",
    serial_number="SIM-000001",
    firmware_version="1.0.0",
    capabilities=Capability(0xFF),
)


@dataclass
class ChannelStats:
    frames: int = 0
    lost: int = 0
    duplicated: int = 0
    corrupted: int = 0
    delayed: int = 0
    garbage: int = 0


@dataclass
class LossyChannel:
    """One direction of a simulated line. Probabilities apply per frame (0x00-ended piece)."""

    rng: random.Random
    loss: float = 0.0
    duplicate: float = 0.0
    corrupt: float = 0.0
    reorder: float = 0.0
    garbage: float = 0.0
    latency: float = 0.001
    reorder_delay: float = 0.05
    connected: bool = True
    """False: the cable is pulled; everything written is lost."""
    stats: ChannelStats = field(default_factory=ChannelStats)
    _in_flight: list[tuple[float, int, bytes]] = field(default_factory=list)
    _order: int = 0

    def write(self, data: bytes, now: float) -> None:
        if not data:
            return
        if not self.connected:
            self.stats.lost += data.count(0)
            return
        for piece in data.split(b"\x00")[:-1] if data.endswith(b"\x00") else data.split(b"\x00"):
            self._send_piece(piece + b"\x00", now)

    def read(self, now: float) -> bytes:
        """Everything that has arrived by ``now``, in arrival order."""
        chunks: list[bytes] = []
        while self._in_flight and self._in_flight[0][0] <= now:
            chunks.append(heapq.heappop(self._in_flight)[2])
        return b"".join(chunks)

    @property
    def pending(self) -> int:
        return len(self._in_flight)

    def _send_piece(self, piece: bytes, now: float) -> None:
        rng = self.rng
        self.stats.frames += 1
        if rng.random() < self.loss:
            self.stats.lost += 1
            return
        copies = 2 if rng.random() < self.duplicate else 1
        self.stats.duplicated += copies - 1
        for _ in range(copies):
            data = piece
            if len(data) > 1 and rng.random() < self.corrupt:
                self.stats.corrupted += 1
                buffer = bytearray(data)
                buffer[rng.randrange(len(buffer) - 1)] ^= 1 << rng.randrange(8)
                data = bytes(buffer)
            if rng.random() < self.garbage:
                self.stats.garbage += 1
                data = rng.randbytes(rng.randrange(1, 20)) + data
            delay = self.latency
            if rng.random() < self.reorder:
                self.stats.delayed += 1
                delay += rng.random() * self.reorder_delay
            self._order += 1
            heapq.heappush(self._in_flight, (now + delay, self._order, data))


@dataclass
class Side:
    """One end of a :class:`LinkPair` and what it saw."""

    link: Link
    received: list[Message] = field(default_factory=list)
    events: list[LinkEvent] = field(default_factory=list)
    ordered: list[LinkOutput] = field(default_factory=list)
    """Messages and events interleaved, as the link output them."""


class LinkPair:
    """A host link and a shoe link on a simulated clock, joined by two lossy channels."""

    def __init__(
        self,
        host: Link,
        shoe: Link,
        to_shoe: LossyChannel,
        to_host: LossyChannel,
        start: float = 1000.0,
    ) -> None:
        self.host = Side(host)
        self.shoe = Side(shoe)
        self.to_shoe = to_shoe
        self.to_host = to_host
        self.now = start

    @classmethod
    def create(
        cls,
        seed: int = 0,
        config: LinkConfig | None = None,
        host_session: int = 0x1234_5678,
        shoe_session: int = 0x9ABC_DEF0,
        *,
        loss: float = 0.0,
        duplicate: float = 0.0,
        corrupt: float = 0.0,
        reorder: float = 0.0,
        garbage: float = 0.0,
    ) -> LinkPair:
        """A pair with the same seeded fault rates (per frame) in both directions."""
        rng = random.Random(seed)

        def channel() -> LossyChannel:
            return LossyChannel(
                random.Random(rng.random()),
                loss=loss,
                duplicate=duplicate,
                corrupt=corrupt,
                reorder=reorder,
                garbage=garbage,
            )

        return cls(
            Link(Role.HOST, config, host_session),
            Link(Role.SHOE, config, shoe_session, TEST_IDENTITY),
            channel(),
            channel(),
        )

    def replace_shoe(self, link: Link) -> None:
        """Simulate a shoe restart: a new link (new session) in place of the old one."""
        self.shoe = Side(link)

    def replace_host(self, link: Link) -> None:
        self.host = Side(link)

    def step(self, dt: float = 0.005) -> None:
        """Advance the clock by ``dt`` and let both sides read, run timers and write."""
        self.now += dt
        now = self.now
        for side, inbound, outbound in (
            (self.host, self.to_host, self.to_shoe),
            (self.shoe, self.to_shoe, self.to_host),
        ):
            data = inbound.read(now)
            outputs = side.link.receive(data, now) if data else []
            outputs += side.link.poll(now)
            for item in outputs:
                if isinstance(item, Message):
                    side.received.append(item)
                else:
                    side.events.append(item)
            side.ordered.extend(outputs)
            outbound.write(side.link.data_to_send(now), now)

    def run(self, duration: float, dt: float = 0.005) -> None:
        end = self.now + duration
        while self.now < end:
            self.step(dt)

    def run_until(self, condition: Callable[[], bool], timeout: float, dt: float = 0.005) -> bool:
        """Step until ``condition()`` holds (True) or ``timeout`` simulated seconds pass."""
        end = self.now + timeout
        while not condition():
            if self.now >= end:
                return False
            self.step(dt)
        return True
