"""The host's connection to a shoe: a transport, the host end of the link, and an I/O thread.

:class:`ShoeConnection` owns a (reconnecting) transport and a :class:`~firmware_protocol.link.Link`
in the HOST role. A background thread reads bytes, feeds the link and runs its timers; the owner
receives, in order, through one thread-safe queue:

* every :class:`~firmware_protocol.messages.Message` the shoe sent (exactly once, in order),
* every link event (``LinkUp``, ``LinkLost``, ``PeerRestarted``, ``ProtocolError``),
* every transport event (``TransportEvent``: connection lost, reconnected, retry failed).

**Journalled before acknowledged.** The link acknowledges a delivered message with its next
``data_to_send()``. This class sends nothing at all (no ack, no command, no heartbeat) while a
message the link delivered has not been *committed* by the owner. A message handed out by
:meth:`ShoeConnection.get` is committed when the owner calls :meth:`~ShoeConnection.commit` or
calls :meth:`~ShoeConnection.get` again (the owner has finished with it: journalled it). So the
shoe learns a card was received only after the owner made it durable; if the controller dies
before, the shoe still holds the card and sends it again. The owner must therefore keep
consuming promptly (well within the link timeout, 2 s by default) or the shoe, hearing no
heartbeat, locks its exit. An owner that journals in another thread passes
``commit_on_get=False`` and calls ``commit()`` itself.

**Errors reach the owner.** An exception in the I/O thread is re-raised by the next
:meth:`~ShoeConnection.get` or :meth:`~ShoeConnection.send` (the thread stops). Outages of the
transport are not errors: the :class:`ReconnectingTransport` reconnects and reports events, and
the link retransmits what was lost.

After a controller restart the shoe re-sends card messages the old session never acknowledged,
possibly ones the old controller had already journalled: :class:`CardCounterFilter`
de-duplicates them by the shoe's card counter.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Self

from firmware_protocol.link import Link, LinkConfig, LinkEvent, Role
from firmware_protocol.messages import (
    CardDrawn,
    CardMisread,
    DeviceInfo,
    Message,
    ShoeEvent,
    ShoeStateChanged,
)
from shoe_controller.errors import ShoeError, ShoeTimeoutError, TransportError
from shoe_controller.transports.base import ReconnectingTransport, Transport, TransportEvent

__all__ = ["CardCounterFilter", "ConnectionItem", "ShoeConnection"]

log = logging.getLogger("shoe.device")

ConnectionItem = Message | LinkEvent | TransportEvent
"""What :meth:`ShoeConnection.get` returns."""

MAX_WAIT = 0.05
"""Longest the I/O thread blocks in one read, so timers and ``close()`` are served promptly."""
READ_SIZE = 4096


class _Stopped:
    """Queue sentinel: the I/O thread ended (wakes a blocked ``get``)."""


class ShoeConnection:
    """Host end of the shoe protocol; see the module docstring for the contract.

    ``transport``: a transport factory (called again for every reconnection) or one transport
    that can be re-opened after a failure. The connection opens it; :meth:`close` closes it.
    """

    def __init__(
        self,
        transport: Transport | Callable[[], Transport],
        *,
        link_config: LinkConfig | None = None,
        session_id: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        commit_on_get: bool = True,
        backoff_initial: float = 0.05,
        backoff_max: float = 1.0,
    ) -> None:
        if isinstance(transport, Transport):
            single = transport

            def factory() -> Transport:  # the same transport, re-opened after a failure
                return single
        else:
            factory = transport
        self._clock = clock
        self._commit_on_get = commit_on_get
        if session_id is None:
            session_id = random.SystemRandom().getrandbits(32)
        self.link = Link(Role.HOST, link_config, session_id)
        self._items: queue.Queue[ConnectionItem | _Stopped] = queue.Queue()
        self._lock = threading.RLock()  # guards the link, the commit counters and writing
        self._outstanding = 0  # delivered by the link, not committed by the owner yet
        self._handed_out = 0  # of those, handed to the owner by get()
        self._error: BaseException | None = None
        self._closing = threading.Event()
        self._closed = False
        self.transport = ReconnectingTransport(
            factory,
            self._items.put,
            backoff_initial=backoff_initial,
            backoff_max=backoff_max,
        )
        self.transport.open()
        self._thread = threading.Thread(target=self._run, name="shoe-connection", daemon=True)
        self._thread.start()

    # -- the owner's side ------------------------------------------------------------------

    def get(self, timeout: float | None = None) -> ConnectionItem:
        """The next message or event; raises :class:`ShoeTimeoutError` after ``timeout`` s.

        Commits everything handed out before (unless ``commit_on_get=False``).
        """
        if self._commit_on_get:
            self.commit()
        self._raise_if_failed()
        try:
            item = self._items.get(timeout=timeout)
        except queue.Empty:
            raise ShoeTimeoutError(f"nothing from the shoe within {timeout:g} s") from None
        if isinstance(item, _Stopped):
            self._items.put(item)  # keep waking later callers
            self._raise_if_failed()
            raise ShoeError("the shoe connection is closed")
        if isinstance(item, Message):
            with self._lock:
                self._handed_out += 1
        return item

    def commit(self) -> None:
        """The owner has made every message handed out so far durable: acknowledge them."""
        with self._lock:
            if not self._handed_out:
                return
            self._outstanding -= self._handed_out
            self._handed_out = 0
            if self._outstanding == 0 and not self._closed:
                self._flush()

    def send(self, message: Message) -> None:
        """Queue ``message`` for reliable delivery to the shoe and send it as soon as allowed."""
        self._raise_if_failed()
        if self._closed:
            raise ShoeError("the shoe connection is closed")
        with self._lock:
            self.link.send(message, self._clock())
            if self._outstanding == 0:
                self._flush()

    def wait_until_up(self, timeout: float) -> DeviceInfo:
        """Block until the handshake completed (events stay queued for :meth:`get`)."""
        end = time.monotonic() + timeout
        while not self.is_up:
            self._raise_if_failed()
            if self._closed:
                raise ShoeError("the shoe connection is closed")
            if time.monotonic() >= end:
                raise ShoeTimeoutError(f"no answer from the shoe on {self.description} "
                                       f"within {timeout:g} s")
            time.sleep(0.005)
        info = self.device_info
        assert info is not None
        return info

    @property
    def is_up(self) -> bool:
        with self._lock:
            return self.link.is_up

    @property
    def device_info(self) -> DeviceInfo | None:
        with self._lock:
            peer = self.link.peer
        return peer if isinstance(peer, DeviceInfo) else None

    @property
    def description(self) -> str:
        return self.transport.description

    @property
    def unacked_count(self) -> int:
        """Commands sent to the shoe that it has not acknowledged yet."""
        with self._lock:
            return self.link.unacked_count

    def close(self) -> None:
        """Stop the I/O thread and close the transport. Idempotent; never raises."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._closing.set()
        self._thread.join(timeout=2)
        self.transport.close()
        if self._thread.is_alive():
            self._thread.join(timeout=2)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- the I/O thread --------------------------------------------------------------------

    def _run(self) -> None:
        try:
            while not self._closing.is_set():
                with self._lock:
                    now = self._clock()
                    events = self.link.poll(now)
                    if self._outstanding == 0:
                        self._flush()
                        deadline = self.link.next_deadline()
                    else:  # the owner's commit() flushes; the ack due now must wait for it
                        deadline = None
                for event in events:
                    self._items.put(event)
                wait = MAX_WAIT
                if deadline is not None:
                    wait = min(wait, max(0.0, deadline - self._clock()))
                data = self.transport.read(READ_SIZE, wait)
                if data:
                    with self._lock:
                        delivered = self.link.receive(data, self._clock())
                        self._outstanding += len(delivered)
                        for message in delivered:
                            self._items.put(message)
        except BaseException as exc:  # noqa: BLE001 - handed to the owner by get()/send()
            if not (isinstance(exc, TransportError) and self._closing.is_set()):
                self._error = exc
                log.error("shoe connection I/O failed: %s", exc)
        finally:
            self._items.put(_Stopped())

    def _flush(self) -> None:
        """Write what the link has to send. Caller holds the lock and checked the commit rule."""
        out = self.link.data_to_send(self._clock())
        if out:
            self.transport.write(out)

    def _raise_if_failed(self) -> None:
        if self._error is not None:
            raise self._error


class CardCounterFilter:
    """Passes each card message once, by the shoe's card counter (a controller-restart guard).

    ``last_counter`` is the highest counter the owner journalled before (0 for a fresh shoe).
    Cards with a counter at or below the last one seen are repeats; a ``SHOE_LOADED`` state
    change starts counting again from 0. Other messages always pass (state changes cannot be
    told apart from their repeats: two refused pulls at one counter are both real).
    """

    def __init__(self, last_counter: int = 0) -> None:
        self.last_counter = last_counter
        self.repeats = 0

    def accept(self, message: Message) -> bool:
        if isinstance(message, CardDrawn | CardMisread):
            if message.counter <= self.last_counter:
                self.repeats += 1
                return False
            self.last_counter = message.counter
        elif isinstance(message, ShoeStateChanged) and message.event is ShoeEvent.SHOE_LOADED:
            self.last_counter = 0
        return True
