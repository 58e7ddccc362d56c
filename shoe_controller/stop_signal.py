"""Stopping a command's loop from a signal handler, safely (its own module: the simulators'
command lines use it too, and need nothing else of the controller's start-up)."""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["set_from_signal_handler", "stopped_by_signals"]


def set_from_signal_handler(event: threading.Event) -> None:
    """Set ``event`` from a signal handler, by a thread of its own. A handler runs on the
    main thread between two of its bytecodes, and if those lie inside the main thread's own
    ``event.wait`` (a command's loop, ``while not stop.wait(0.5)``), the Event's lock is held
    by the thread the handler interrupted: ``event.set()`` there would wait for it forever,
    and the process would ignore every later SIGTERM (found by a review; reproduced with a
    loop of ``wait(0)``). The thread sets it as soon as the wait lets go of the lock."""
    threading.Thread(target=event.set, name="stop-signal", daemon=True).start()


@contextmanager
def stopped_by_signals(stop: threading.Event, log: logging.Logger | None = None
                       ) -> Iterator[None]:
    """Inside, SIGINT and SIGTERM set ``stop`` (:func:`set_from_signal_handler`), logged on
    ``log`` if given; on leaving, the handlers from before are put back."""

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        if log is not None:
            log.info("signal %s: stopping", signum)
        set_from_signal_handler(stop)

    previous = {signum: signal.signal(signum, on_signal)
                for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
