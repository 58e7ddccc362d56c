"""Stopping a command's loop from a signal handler, safely (its own module: the simulators'
command lines use it too, and need nothing else of the controller's start-up)."""

from __future__ import annotations

import threading

__all__ = ["set_from_signal_handler"]


def set_from_signal_handler(event: threading.Event) -> None:
    """Set ``event`` from a signal handler, by a thread of its own. A handler runs on the
    main thread between two of its bytecodes, and if those lie inside the main thread's own
    ``event.wait`` (a command's loop, ``while not stop.wait(0.5)``), the Event's lock is held
    by the thread the handler interrupted: ``event.set()`` there would wait for it forever,
    and the process would ignore every later SIGTERM (found by a review; reproduced with a
    loop of ``wait(0)``). The thread sets it as soon as the wait lets go of the lock."""
    threading.Thread(target=event.set, name="stop-signal", daemon=True).start()
