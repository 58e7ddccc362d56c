"""The host's connection to a shoe: a transport, the host end of the link, and an I/O thread.

Two layers, so the rule that matters most is pure and testable without threads:

* :class:`HostEndpoint` (sans-I/O, time passed in): the host end of the
  :class:`~firmware_protocol.link.Link` plus the **journalled-before-acknowledged** rule. Feed it
  bytes, take its items one at a time, commit what you have made durable, and ask it for bytes
  to write: it returns none at all (no ack, no command, no heartbeat) while an item it handed
  out has not been committed.
* :class:`ShoeConnection`: a (reconnecting) transport and an I/O thread around one
  ``HostEndpoint``. The owner receives, in order, through one thread-safe queue, every
  :class:`~firmware_protocol.messages.Message` the shoe sent (exactly once, in order), every
  link event (``LinkUp``, ``LinkLost``, ``PeerRestarted``, ``ProtocolError``) at its place
  among them, and every transport event (``TransportEvent``).

**Journalled before acknowledged.** The link acknowledges a delivered message with its next
``data_to_send()``. A link output handed out by :meth:`ShoeConnection.get` is committed when the
owner calls :meth:`~ShoeConnection.commit` or calls :meth:`~ShoeConnection.get` again (the owner
has finished with it: journalled it). So the shoe learns a card was received only after the
owner made it durable; if the controller dies before, the shoe still holds the card and sends it
again. The owner must therefore keep consuming promptly (well within the link timeout, 2 s by
default) or the shoe, hearing no heartbeat, locks its exit. An owner that journals in another
thread passes ``commit_on_get=False`` and calls ``commit()`` itself. A refused card frame
(``ProtocolError`` with a ``seq``) is acknowledged by the link like any message (SPEC 8.2), so
it too is only acknowledged once the owner has journalled what it made of it.

**Errors reach the owner.** An exception in the I/O thread is re-raised by the next
:meth:`~ShoeConnection.get` or :meth:`~ShoeConnection.send` (the thread stops). Outages of the
transport are not errors: the :class:`ReconnectingTransport` reconnects and reports events, and
the link retransmits what was lost.

After a controller restart the shoe re-sends card messages the old session never acknowledged,
possibly ones the old controller had already journalled: the table recognises them by the
shoe's identity, its load and the card counter (``Table.is_duplicate``).
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections import deque
from collections.abc import Callable
from types import TracebackType
from typing import Self

from firmware_protocol.link import Link, LinkConfig, LinkOutput, ProtocolError, Role
from firmware_protocol.messages import DeviceInfo, Message
from shoe_controller.errors import ShoeError, ShoeTimeoutError, TransportError
from shoe_controller.transports.base import (
    ReconnectingTransport,
    Transport,
    TransportEvent,
    TransportEventKind,
)

__all__ = ["ConnectionItem", "HostEndpoint", "ShoeConnection"]

log = logging.getLogger("shoe.device")

ConnectionItem = LinkOutput | TransportEvent
"""What :meth:`ShoeConnection.get` returns."""

RETRY_LOG_SECONDS = 60.0
"""While the shoe cannot be reached, a failed reconnection attempt is logged (WARNING) only if
its error differs from the last one logged or this long after it: the attempts go on every
second, the log must not."""

MAX_WAIT = 0.05
"""Longest the I/O thread blocks in one read, so timers and ``close()`` are served promptly."""
READ_SIZE = 4096


class HostEndpoint:
    """The host end of the link with the commit rule; pure (``now`` passed in), not thread-safe.

    Items (messages and link events, in the link's order) come out of :meth:`take`. Each one
    the link acknowledges to the shoe (a message, a refused reliable frame) is *outstanding*
    from the moment the link produced it until the owner :meth:`commit` s after taking it;
    nothing sent acknowledges an outstanding item (the link holds its acknowledgement back:
    :meth:`Link.acknowledge_on_commit`), while the host's own frames keep going.
    """

    def __init__(self, link: Link) -> None:
        if link.role is not Role.HOST:
            raise ValueError("a HostEndpoint needs a HOST link")
        self.link = link
        link.acknowledge_on_commit()
        self._items: deque[LinkOutput] = deque()
        self._outstanding = 0  # produced by the link, not committed by the owner yet
        self._taken = 0  # of those, handed to the owner by take()

    def receive(self, data: bytes | bytearray | memoryview, now: float) -> None:
        self._add(self.link.receive(data, now))

    def poll(self, now: float) -> None:
        self._add(self.link.poll(now))

    def take(self) -> LinkOutput | None:
        """The next item, or None; it stays outstanding until the next :meth:`commit`."""
        if not self._items:
            return None
        item = self._items.popleft()
        if _acknowledged(item):
            self._taken += 1
        return item

    def commit(self, now: float | None = None) -> None:
        """The owner has made every item taken so far durable."""
        self.link.commit(self._taken, now)
        self._outstanding -= self._taken
        self._taken = 0

    @property
    def may_send(self) -> bool:
        """Whether nothing delivered waits for the owner's commit (so every ack may go out)."""
        return self._outstanding == 0

    def send(self, message: Message, now: float) -> None:
        self.link.send(message, now)

    def data_to_send(self, now: float) -> bytes:
        """Bytes to write now; they acknowledge nothing outstanding."""
        return self.link.data_to_send(now)

    def next_deadline(self) -> float | None:
        """When to poll and send again at the latest (an acknowledgement held for the owner
        is due only after its commit, which flushes)."""
        return self.link.next_deadline()

    def _add(self, items: list[LinkOutput]) -> None:
        self._items.extend(items)
        self._outstanding += sum(1 for item in items if _acknowledged(item))


def _acknowledged(item: LinkOutput) -> bool:
    """Whether the link acknowledges ``item`` to the shoe: a delivered message, or a refused
    reliable frame (acknowledged and skipped, SPEC 8.2). Link events acknowledge nothing."""
    return isinstance(item, Message) or (isinstance(item, ProtocolError) and item.seq is not None)


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
        self._endpoint = HostEndpoint(Link(Role.HOST, link_config, session_id))
        # One lock guards the endpoint and writing; the condition wakes a waiting get().
        self._lock = threading.RLock()
        self._ready = threading.Condition(self._lock)
        self._transport_events: deque[TransportEvent] = deque()
        self._stopped = False
        self._error: BaseException | None = None
        self._closing = threading.Event()
        self._closed = False
        self._ever_connected = False
        self._retry_logged: tuple[float, str] | None = None  # (when, error) last logged
        self.transport = ReconnectingTransport(
            factory,
            self._on_transport_event,
            backoff_initial=backoff_initial,
            backoff_max=backoff_max,
        )
        self.transport.open()
        self._ever_connected = self.transport.is_connected
        self._thread = threading.Thread(target=self._run, name="shoe-connection", daemon=True)
        self._thread.start()

    @property
    def link(self) -> Link:
        return self._endpoint.link

    # -- the owner's side ------------------------------------------------------------------

    def get(self, timeout: float | None = None) -> ConnectionItem:
        """The next message or event; raises :class:`ShoeTimeoutError` after ``timeout`` s.

        Commits everything handed out before (unless ``commit_on_get=False``).
        """
        if self._commit_on_get:
            self.commit()
        self._raise_if_failed()
        end = None if timeout is None else time.monotonic() + timeout
        with self._ready:
            while True:
                if self._transport_events:
                    return self._transport_events.popleft()
                item = self._endpoint.take()
                if item is not None:
                    return item
                if self._stopped:
                    self._raise_if_failed()
                    raise ShoeError("the shoe connection is closed")
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    raise ShoeTimeoutError(f"nothing from the shoe within {timeout:g} s")
                self._ready.wait(left)

    def commit(self) -> None:
        """The owner has made every item handed out so far durable: acknowledge them."""
        with self._lock:
            self._endpoint.commit(self._clock())
            if not self._closed:
                self._flush()

    def send(self, message: Message) -> None:
        """Queue ``message`` for reliable delivery to the shoe and send it as soon as allowed."""
        self._raise_if_failed()
        if self._closed:
            raise ShoeError("the shoe connection is closed")
        with self._lock:
            self._endpoint.send(message, self._clock())
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
        """Stop the I/O thread and close the transport. Idempotent; never raises. What was
        committed is acknowledged before the line closes (not left to a delayed ack)."""
        with self._lock:
            if self._closed:
                return
            self.link.acknowledge_now()
            try:
                self._flush()
            except (TransportError, OSError) as exc:
                log.debug("last acknowledgement not sent on close: %s", exc)
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
                with self._ready:
                    self._endpoint.poll(self._clock())
                    self._flush()
                    deadline = self._endpoint.next_deadline()
                    self._ready.notify_all()
                wait = MAX_WAIT
                if deadline is not None:
                    wait = min(wait, max(0.0, deadline - self._clock()))
                data = self.transport.read(READ_SIZE, wait)
                if data:
                    with self._ready:
                        self._endpoint.receive(data, self._clock())
                        self._ready.notify_all()
        except BaseException as exc:  # noqa: BLE001 - handed to the owner by get()/send()
            if not (isinstance(exc, TransportError) and self._closing.is_set()):
                self._error = exc
                log.error("shoe connection I/O failed: %s", exc)
        finally:
            with self._ready:
                self._stopped = True
                self._ready.notify_all()

    def _on_transport_event(self, event: TransportEvent) -> None:
        self._log_transport_event(event)
        with self._ready:
            if event.kind is TransportEventKind.RECONNECTED:
                self._endpoint.link.line_restored(self._clock())
            self._transport_events.append(event)
            self._ready.notify_all()

    def _log_transport_event(self, event: TransportEvent) -> None:
        """Tell the operator, at the default level, that the shoe cannot be reached and why
        (a missing port used to show only at debug level): one WARNING when it goes, repeated
        failures rate-limited (:data:`RETRY_LOG_SECONDS`), one INFO line when it is back."""
        fields = {"device": event.description, "error": event.reason,
                  "attempt": event.attempt, "down_for": round(event.down_for, 1)}
        now = time.monotonic()
        if event.kind is TransportEventKind.LOST:
            self._retry_logged = (now, event.reason)
            if self._ever_connected:
                log.warning("shoe connection lost on %s: %s; reconnecting", event.description,
                            event.reason, extra=fields)
            else:
                log.warning("cannot connect to the shoe on %s: %s; retrying", event.description,
                            event.reason, extra=fields)
        elif event.kind is TransportEventKind.RETRY_FAILED:
            last = self._retry_logged
            if last is None or last[1] != event.reason or now - last[0] >= RETRY_LOG_SECONDS:
                self._retry_logged = (now, event.reason)
                log.warning("shoe still not connected on %s after %.0f s (%d attempts): %s; "
                            "retrying", event.description, event.down_for, event.attempt,
                            event.reason, extra=fields)
            else:
                log.debug("shoe still not connected: %s", event.reason, extra=fields)
        elif event.kind is TransportEventKind.RECONNECTED:
            self._ever_connected = True
            self._retry_logged = None
            log.info("shoe port %s open after %.1f s", event.description, event.down_for,
                     extra=fields)

    def _flush(self) -> None:
        """Write what the endpoint lets out now (nothing while an item awaits its commit).
        Caller holds the lock: so never a reconnection attempt here (pyserial gives a TCP
        connect 5 s, and the table's thread would wait that long in ``send``); the I/O
        thread's read reconnects, outside the lock, and the link then sends again what the
        line dropped meanwhile."""
        out = self._endpoint.data_to_send(self._clock())
        if out:
            self.transport.write(out, reconnect=False)

    def _raise_if_failed(self) -> None:
        if self._error is not None:
            raise self._error
