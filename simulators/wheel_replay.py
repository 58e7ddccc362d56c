"""Play a recorded wheel log back over the wire (``shoe sim --wheel --replay LOGFILE``).

A log holds what a host received from a real wheel, one line per line, as it came (noise
included). A line may start with a timestamp, seconds as a decimal number followed by a TAB
(``12.500<TAB>*X;2;012;17;0;250;0``); protocol lines hold no TAB, so this cannot be mistaken
for content. Lines starting with ``#`` are comments; an empty line is skipped. A line without
a timestamp goes out ``interval`` seconds after the one before (a real wheel's status
period). Everything is sent ``speed`` times faster than recorded.

The replay starts when the host sends its first bytes (any command, e.g. ``*K``), or over TCP
when a host connects (a controller of a wheel that sends its status by itself may send
nothing), so a host that opens the port late does not miss the start. Commands are otherwise
not answered: a log is a log.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from shoe_controller.errors import ConfigError

_STAMP = re.compile(rb"([0-9]{1,9}(?:\.[0-9]{1,9})?)\t")


@dataclass(frozen=True, slots=True)
class LogLine:
    at: float | None  # seconds, as recorded
    raw: bytes  # the line without its end


def parse_wheel_log(data: bytes, source: str = "<log>") -> list[LogLine]:
    """The lines of a wheel log; ConfigError naming the line for a timestamp that goes back."""
    lines: list[LogLine] = []
    last: float | None = None
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip(b"\r\n") or raw.startswith(b"#"):
            continue
        match = _STAMP.match(raw)
        at = float(match.group(1)) if match else None
        if match:
            raw = raw[match.end() :]
            if last is not None and at is not None and at < last:
                raise ConfigError(f"{source}: line {number}: timestamp {at:g} is before the "
                                  f"previous one ({last:g})")
            last = at
        lines.append(LogLine(at, raw))
    if not lines:
        raise ConfigError(f"{source}: the wheel log holds no lines")
    return lines


def read_wheel_log(path: str | os.PathLike[str]) -> list[LogLine]:
    try:
        with open(path, "rb") as file:
            data = file.read(64 * 1024 * 1024 + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read wheel log {os.fspath(path)}: "
                          f"{exc.strerror or exc}") from None
    if len(data) > 64 * 1024 * 1024:
        raise ConfigError(f"{os.fspath(path)}: wheel log larger than 64 MiB")
    return parse_wheel_log(data, os.fspath(path))


class WheelReplay:
    """Sans-I/O: :meth:`receive` starts it, :meth:`data_to_send` gives the lines now due."""

    def __init__(self, lines: list[LogLine], *, speed: float = 1.0,
                 interval: float = 0.5) -> None:
        if not (speed > 0 and speed < float("inf")):
            raise ConfigError(f"--speed must be a number more than 0, got {speed}")
        self.lines = lines
        self._times = self._schedule(lines, interval / speed, speed)
        self._start: float | None = None
        self._next = 0

    @staticmethod
    def _schedule(lines: list[LogLine], gap: float, speed: float) -> list[float]:
        times: list[float] = []
        first = next((line.at for line in lines if line.at is not None), None)
        for line in lines:
            if line.at is not None and first is not None:
                times.append((line.at - first) / speed)
            else:
                times.append(times[-1] + gap if times else 0.0)
        return times

    @property
    def started(self) -> bool:
        return self._start is not None

    @property
    def finished(self) -> bool:
        return self._next >= len(self.lines)

    def receive(self, data: bytes, now: float) -> None:
        if data:
            self.start(now)

    def start(self, now: float) -> None:
        """Play from ``now`` (a host is there); nothing if playing already."""
        if self._start is None:
            self._start = now

    def next_deadline(self) -> float | None:
        if self._start is None or self.finished:
            return None
        return self._start + self._times[self._next]

    def data_to_send(self, now: float) -> bytes:
        out = bytearray()
        while self._start is not None and not self.finished \
                and now >= self._start + self._times[self._next]:
            out += self.lines[self._next].raw + b"\r\n"
            self._next += 1
        return bytes(out)
