"""Seeded wire fault injection: what a flaky serial line or USB cable does to a byte stream.

:class:`FaultConfig` says how often each fault happens; :class:`FaultInjector` applies it to a
stream; :class:`FaultyTransport` puts an injector on each direction of any transport.

Faults and their units (every rate is a probability in [0, 1]):

============== ==================== ===========================================================
key            unit                 what happens
============== ==================== ===========================================================
``corrupt``    per byte             the byte is replaced by a different value (line noise)
``drop``       per byte             the byte is lost (UART overrun)
``dup``        per byte             the byte arrives twice
``delay``      per byte             the stream stalls ``delay-s`` seconds before the byte
``drop-frame`` per frame            a whole frame is lost (frames end with the 0x00 delimiter)
``dup-frame``  per frame            a whole frame arrives twice (a retransmission race)
``disconnect`` per byte             the connection drops before the byte (cable pulled)
``seed``       -                    the seed; the same seed and stream give the same faults
============== ==================== ===========================================================

Command-line form: ``"corrupt=0.01,drop-frame=0.005,dup-frame=0.005,disconnect=0.0002,seed=7"``
(:meth:`FaultConfig.parse`; unknown keys and bad values are a :class:`ConfigError`).

Determinism: each fault kind draws from its own generator seeded from ``seed``, and byte faults
are placed by counting bytes (geometric gaps), so the faults depend only on the seed and the
byte stream, not on how the stream happens to be split into ``write`` calls. Frame faults
need whole frames: when a frame-level rate is non-zero the injector holds back a partial frame
until its delimiter arrives (frames are COBS-encoded, so 0x00 occurs only as the delimiter).

On a line that takes wire time (``transport_pair("memory", baud=115200)``, see
``shoe_controller.transports.paced``) the place of the injector decides what a fault costs.
Before the pacing (a memory wire's manipulator; ``FaultyTransport(tx=...)`` on the writing
end) it shapes what is *sent*: a corrupted byte takes its byte time, a dropped byte or frame
takes none, a duplicated one takes twice. After the pacing (``FaultyTransport(rx=...)`` on the
reading end) it acts on bytes that already crossed the line: a dropped byte took its time (noise
the receiving UART discarded) and the bytes behind it are not brought forward. Nothing here
changes for pacing; ``simulators.scenarios.deal_shoe`` puts one injector at the host's end of
each direction, so host-to-shoe faults come before the pacing and shoe-to-host faults after it.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import ClassVar

from shoe_controller.errors import ConfigError, TransportError
from shoe_controller.transports.base import (
    DEFAULT_READ_SIZE,
    Deadline,
    Transport,
    check_read_args,
)

__all__ = ["FaultActions", "FaultConfig", "FaultCounters", "FaultInjector", "FaultyTransport"]

FRAME_DELIMITER = 0x00


@dataclass(frozen=True, slots=True)
class FaultConfig:
    """How often each wire fault happens (see the module docstring for units)."""

    corrupt_rate: float = 0.0
    drop_byte_rate: float = 0.0
    duplicate_byte_rate: float = 0.0
    delay_rate: float = 0.0
    delay_seconds: float = 0.05
    drop_frame_rate: float = 0.0
    duplicate_frame_rate: float = 0.0
    disconnect_rate: float = 0.0
    seed: int = 0

    #: command-line key -> field. The first key of a field is the one ``to_spec`` writes.
    KEYS: ClassVar[dict[str, str]] = {
        "corrupt": "corrupt_rate",
        "drop": "drop_byte_rate",
        "drop-byte": "drop_byte_rate",
        "dup": "duplicate_byte_rate",
        "dup-byte": "duplicate_byte_rate",
        "delay": "delay_rate",
        "delay-s": "delay_seconds",
        "drop-frame": "drop_frame_rate",
        "dup-frame": "duplicate_frame_rate",
        "disconnect": "disconnect_rate",
        "seed": "seed",
    }

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            key = self.key_for(f.name)
            if f.name == "seed":
                if isinstance(value, bool) or not isinstance(value, int):
                    raise ConfigError(f"fault {key}: must be an integer, got {value!r}")
            elif f.name == "delay_seconds":
                if not (isinstance(value, int | float) and 0 <= value <= 60):
                    raise ConfigError(f"fault {key}: must be seconds in 0..60, got {value!r}")
            elif not (isinstance(value, int | float) and 0.0 <= value <= 1.0):
                raise ConfigError(f"fault {key}: rate must be in 0..1, got {value!r}")

    @classmethod
    def key_for(cls, field_name: str) -> str:
        return next(k for k, v in cls.KEYS.items() if v == field_name)

    @classmethod
    def parse(cls, spec: str) -> FaultConfig:
        """``"corrupt=0.01,drop-frame=0.005,seed=7"`` -> config; ``""`` or ``"none"`` -> none."""
        text = spec.strip()
        if text in ("", "none"):
            return cls()
        values: dict[str, float | int] = {}
        seen: dict[str, str] = {}
        for item in text.split(","):
            item = item.strip()
            key, sep, raw = item.partition("=")
            key, raw = key.strip().lower(), raw.strip()
            if not sep or not key or not raw:
                raise ConfigError(f"fault spec {spec!r}: expected KEY=VALUE, got {item!r}")
            if key not in cls.KEYS:
                known = ", ".join(cls.KEYS)
                raise ConfigError(f"fault spec {spec!r}: unknown key {key!r} (known: {known})")
            name = cls.KEYS[key]
            if name in seen:
                raise ConfigError(
                    f"fault spec {spec!r}: {key!r} given twice (also as {seen[name]!r})"
                )
            seen[name] = key
            try:
                values[name] = int(raw, 0) if name == "seed" else float(raw)
            except ValueError:
                kind = "an integer" if name == "seed" else "a number"
                raise ConfigError(f"fault spec {spec!r}: {key}={raw!r} is not {kind}") from None
            if name != "seed" and not math.isfinite(values[name]):
                raise ConfigError(f"fault spec {spec!r}: {key}={raw!r} is not finite")
        return cls(**values)  # type: ignore[arg-type]

    def to_spec(self) -> str:
        """The command-line form, listing only what differs from the default (plus the seed)."""
        default = FaultConfig()
        parts = [
            f"{self.key_for(f.name)}={getattr(self, f.name)!r}"
            for f in fields(self)
            if f.name != "seed" and getattr(self, f.name) != getattr(default, f.name)
        ]
        parts.append(f"seed={self.seed}")
        return ",".join(parts)

    @property
    def frame_faults(self) -> bool:
        return self.drop_frame_rate > 0 or self.duplicate_frame_rate > 0

    @property
    def active(self) -> bool:
        rates = (f.name for f in fields(self) if f.name not in ("seed", "delay_seconds"))
        return any(getattr(self, name) > 0 for name in rates)


@dataclass(slots=True)
class FaultCounters:
    """What the injector did, for test assertions and the operator's statistics."""

    bytes_in: int = 0
    bytes_out: int = 0
    corrupted_bytes: int = 0
    dropped_bytes: int = 0
    duplicated_bytes: int = 0
    delays: int = 0
    frames: int = 0
    dropped_frames: int = 0
    duplicated_frames: int = 0
    disconnects: int = 0
    discarded_on_disconnect: int = 0  # bytes after the cut, lost with the connection


@dataclass(frozen=True, slots=True)
class FaultActions:
    """Time-based faults the carrier must act on (a pure byte function can't sleep or hang up)."""

    delay_seconds: float = 0.0
    disconnect: bool = False


class _EventClock:
    """Positions of a fault of probability ``rate`` per byte (or frame), by geometric gaps."""

    def __init__(self, rate: float, rng: random.Random) -> None:
        self.rate = rate
        self.rng = rng
        self._log_keep = math.log1p(-rate) if 0.0 < rate < 1.0 else 0.0
        self.gap = self._draw()  # units left before the next event

    def _draw(self) -> float:
        if self.rate <= 0.0:
            return math.inf
        if self.rate >= 1.0:
            return 0
        return math.floor(math.log(1.0 - self.rng.random()) / self._log_keep)

    def positions(self, n: int) -> list[int]:
        """Indices in ``range(n)`` where the event happens; advances the clock by ``n``."""
        found: list[int] = []
        pos = 0
        while self.gap < n - pos:
            pos += int(self.gap)
            found.append(pos)
            pos += 1
            self.gap = self._draw()
        self.gap -= n - pos
        return found

    def fires(self) -> bool:
        return bool(self.positions(1))


class FaultInjector:
    """Applies a :class:`FaultConfig` to one direction of a byte stream.

    Call it as a manipulator: ``injector(data) -> list[bytes]`` (one chunk per frame when frame
    faults are on). Delays and disconnects cannot happen inside a pure function: they are
    collected for the carrier (:meth:`take_actions`, used by :class:`FaultyTransport`), and a
    disconnect also calls ``on_disconnect`` at once (e.g. ``MemoryWire.break_connection``).
    Not thread-safe: use one injector per direction, called by that direction's writer.
    """

    def __init__(
        self, config: FaultConfig, *, on_disconnect: Callable[[], None] | None = None
    ) -> None:
        self.config = config
        self.counters = FaultCounters()
        self._on_disconnect = on_disconnect

        def clock(kind: str, rate: float) -> _EventClock:
            return _EventClock(rate, random.Random(f"{config.seed}:{kind}"))

        self._disconnect = clock("disconnect", config.disconnect_rate)
        self._drop = clock("drop", config.drop_byte_rate)
        self._corrupt = clock("corrupt", config.corrupt_rate)
        self._duplicate = clock("duplicate", config.duplicate_byte_rate)
        self._delay = clock("delay", config.delay_rate)
        self._drop_frame = clock("drop-frame", config.drop_frame_rate)
        self._duplicate_frame = clock("duplicate-frame", config.duplicate_frame_rate)
        self._corrupt_values = random.Random(f"{config.seed}:corrupt-value")
        self._partial = bytearray()  # an incomplete frame held back (frame faults only)
        self._pending_delay = 0.0
        self._pending_disconnect = False

    def __call__(self, data: bytes) -> list[bytes]:
        self.counters.bytes_in += len(data)
        if self.config.frame_faults:
            units = self._frame_faults(data)
        else:
            units = [bytes(data)] if data else []
        out: list[bytes] = []
        for index, unit in enumerate(units):
            chunk, cut = self._byte_faults(unit)
            if chunk:
                out.append(chunk)
            if cut:
                lost = sum(map(len, units[index + 1 :])) + len(self._partial)
                self._partial.clear()
                self.counters.discarded_on_disconnect += lost
                break
        self.counters.bytes_out += sum(map(len, out))
        return out

    def take_actions(self) -> FaultActions:
        """The delay and disconnect decided since the last call (then forgotten)."""
        actions = FaultActions(self._pending_delay, self._pending_disconnect)
        self._pending_delay = 0.0
        self._pending_disconnect = False
        return actions

    def flush(self) -> bytes:
        """Release a held-back partial frame (e.g. at close), without faults."""
        rest = bytes(self._partial)
        self._partial.clear()
        return rest

    # -- internals ------------------------------------------------------------------------------

    def _frame_faults(self, data: bytes) -> list[bytes]:
        self._partial += data
        end = self._partial.rfind(FRAME_DELIMITER)
        if end < 0:
            return []
        complete = bytes(self._partial[: end + 1])
        del self._partial[: end + 1]
        units: list[bytes] = []
        start = 0
        while start < len(complete):
            stop = complete.index(FRAME_DELIMITER, start) + 1
            frame = complete[start:stop]
            start = stop
            self.counters.frames += 1
            if self._drop_frame.fires():
                self.counters.dropped_frames += 1
                continue
            units.append(frame)
            if self._duplicate_frame.fires():
                self.counters.duplicated_frames += 1
                units.append(frame)
        return units

    def _byte_faults(self, unit: bytes) -> tuple[bytes, bool]:
        """Byte-level faults on one unit; returns the result and whether the link was cut."""
        cut_positions = self._disconnect.positions(len(unit))
        cut = bool(cut_positions)
        if cut:
            self.counters.discarded_on_disconnect += len(unit) - cut_positions[0]
            unit = unit[: cut_positions[0]]
            self.counters.disconnects += 1
            self._pending_disconnect = True
        n = len(unit)
        drops = set(self._drop.positions(n))
        corrupts = self._corrupt.positions(n)
        duplicates = set(self._duplicate.positions(n))
        delays = self._delay.positions(n)
        if delays:
            self.counters.delays += len(delays)
            self._pending_delay += len(delays) * self.config.delay_seconds
        result = unit
        if drops or corrupts or duplicates:
            buf = bytearray(unit)
            for i in corrupts:
                if i not in drops:
                    buf[i] ^= self._corrupt_values.randrange(1, 256)
                    self.counters.corrupted_bytes += 1
            out = bytearray()
            start = 0
            for i in sorted(drops | duplicates):
                out += buf[start:i]
                if i in drops:
                    self.counters.dropped_bytes += 1
                else:
                    out += bytes((buf[i], buf[i]))
                    self.counters.duplicated_bytes += 1
                start = i + 1
            out += buf[start:]
            result = bytes(out)
        if cut and self._on_disconnect is not None:
            self._on_disconnect()
        return result, cut


class FaultyTransport(Transport):
    """Wraps any transport with an injector per direction (``None``: that direction is clean).

    Writes pass through ``tx`` before the inner transport sends them; reads pass through ``rx``
    after the inner transport received them. Delays stall the calling thread; a disconnect
    closes the inner transport and raises :class:`TransportError` (on the read side, after
    handing over the bytes that arrived before the cut), which is exactly what a real dropped
    connection looks like to a :class:`ReconnectingTransport`; re-opening this wrapper re-opens
    the inner transport.
    """

    def __init__(
        self,
        inner: Transport,
        tx: FaultInjector | None = None,
        rx: FaultInjector | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.inner = inner
        self.tx = tx
        self.rx = rx
        self._sleep = sleep
        self._rx_pending = bytearray()
        self._rx_failure: TransportError | None = None

    @property
    def description(self) -> str:
        return f"{self.inner.description} (with faults)"

    @property
    def is_open(self) -> bool:
        return self.inner.is_open

    def open(self) -> None:
        self.inner.open()

    def close(self) -> None:
        self.inner.close()

    def write(self, data: bytes) -> None:
        if self.tx is None:
            self.inner.write(data)
            return
        if not self.inner.is_open:
            raise TransportError(f"{self.description}: transport is closed")
        chunks = self.tx(data)
        actions = self.tx.take_actions()
        if actions.delay_seconds:
            self._sleep(actions.delay_seconds)
        for chunk in chunks:
            self.inner.write(chunk)
        if actions.disconnect:
            self.inner.close()
            raise TransportError(f"{self.description}: connection dropped (fault injection)")

    def read(self, size: int = DEFAULT_READ_SIZE, timeout: float | None = None) -> bytes:
        check_read_args(size, timeout)
        if self.rx is None:
            return self.inner.read(size, timeout)
        deadline = Deadline(timeout)
        while True:
            if self._rx_pending:
                data = bytes(self._rx_pending[:size])
                del self._rx_pending[:size]
                return data
            if self._rx_failure is not None:
                failure, self._rx_failure = self._rx_failure, None
                raise failure
            received = self.inner.read(size, deadline.remaining())
            if received:
                self._rx_pending += b"".join(self.rx(received))
                actions = self.rx.take_actions()
                if actions.delay_seconds:
                    self._sleep(actions.delay_seconds)
                if actions.disconnect:
                    self.inner.close()
                    self._rx_failure = TransportError(
                        f"{self.description}: connection dropped (fault injection)"
                    )
                continue
            if deadline.expired():
                return b""
