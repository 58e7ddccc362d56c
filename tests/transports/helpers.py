"""Small helpers shared by the transport tests (waiting on conditions, not fixed sleeps)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from shoe_controller.transports.base import Transport
from simulators.transport_pairs import TransportPair


def read_exactly(transport: Transport, count: int, timeout: float = 5.0) -> bytes:
    """Read until ``count`` bytes arrived; fail the test if they don't within ``timeout``."""
    deadline = time.monotonic() + timeout
    got = bytearray()
    while len(got) < count:
        left = deadline - time.monotonic()
        assert left > 0, f"only {len(got)} of {count} bytes arrived within {timeout} s"
        got += transport.read(count - len(got), min(left, 0.5))
    return bytes(got)


def bulk_size(pair: TransportPair, unpaced: int, seconds: float = 0.5) -> int:
    """A bulk test's byte count: ``unpaced`` on an instant wire, at most ``seconds`` of wire
    time on a paced one (a 256 KiB payload would take 23 s at 115200 baud)."""
    if pair.baud is None:
        return unpaced
    return min(unpaced, int(seconds * pair.baud / 10))


def wait_until(
    condition: Callable[[], bool], timeout: float = 5.0, what: str = "condition"
) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)


class Background:
    """Run ``target`` in a thread; ``result()`` re-raises its exception in the test."""

    def __init__(self, target: Callable[[], object]) -> None:
        self._target = target
        self._value: object = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._target()
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            self._error = exc

    def result(self, timeout: float = 10.0) -> object:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "background task did not finish"
        if self._error is not None:
            raise self._error
        return self._value
