"""Driving a paho client from the thread that owns it, without paho's network thread.

paho's threaded mode (``loop_start``) costs two thread wake-ups per publish: the publishing
thread writes a byte to wake paho's thread, which then sends the packet, and wakes again for
each acknowledgement. A table publishes a few messages per card, and on a busy machine
those wake-ups (and the switches of Python's interpreter lock that come with every system
call) are CPU the tables' own threads want. :class:`OwnedLoop` uses paho's external-loop API
instead (``loop_read``, ``loop_write``, ``loop_misc``; paho's own ``loop()`` is never called,
so paho never creates its wake-up socket pair), and :class:`BatchingClient` batches the
socket's system calls: everything published between two :meth:`OwnedLoop.flush` calls goes
out with one ``send``, and one ``recv`` takes what the broker sent (paho alone reads a packet
with three). The owner calls :meth:`OwnedLoop.turn` whenever it wakes and at least as often
as it asks; the turn connects or reconnects (with backoff), reads what the broker sent
(CONNACK, acknowledgements, PINGRESP: paho calls ``on_connect``, ``on_publish``,
``on_disconnect`` in the owner's thread, from within the turn), writes what is left to write
and keeps the connection alive.

Acknowledgements wait in the socket until the next turn: nothing needs them sooner, unless
the in-flight window fills (then the owner turns more often, see ``busy``).
"""

from __future__ import annotations

import logging
import ssl
import time
from collections.abc import Callable
from typing import Any

import paho.mqtt.client as mqtt

from shoe_controller.fleet.broker import BrokerSettings
from shoe_controller.fleet.client import RECONNECT_MAX_SECONDS, RECONNECT_MIN_SECONDS

log = logging.getLogger("shoe_controller.mqtt")

#: How often an idle owner turns: how soon a broker that went away is noticed, and the
#: acknowledgements are read, when nothing is being published.
IDLE_TURN_SECONDS = 0.5
#: How often it turns while something waits on the network: the broker's CONNACK, a socket
#: buffer full (data left to write), a full in-flight window.
BUSY_TURN_SECONDS = 0.01
#: A broker that took the TCP connection but sends no CONNACK within this is tried again.
CONNACK_SECONDS = 10.0
#: What one read takes from the socket at most (many acknowledgements).
READ_CHUNK = 65536


class BatchingClient(mqtt.Client):
    """paho's client with its socket I/O batched, for an owner that turns it (OwnedLoop).

    paho touches the socket in two private methods, ``_sock_send`` and ``_sock_recv`` (paho
    2.x; pyproject pins ``<3``, and every test against the real broker goes through here):

    * writes: with ``on_socket_register_write`` set (paho's hook for external loops) paho
      queues what is published instead of writing it at once; :meth:`flush` lets paho write
      its queue into one buffer and sends that with one ``send`` (what the socket does not
      take now is kept, in order, for the next flush);
    * reads: one ``recv`` of up to :data:`READ_CHUNK` bytes, from which paho's byte-by-byte
      reads are served.
    Both buffers belong to one socket: a new connection starts with empty ones."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._gathering: bytearray | None = None
        self._unsent = bytearray()
        self._read = b""
        self._read_at = 0
        self._buffers_of: Any = None  # the socket the buffers belong to
        self.on_socket_register_write = _nothing  # queue, do not write, on publish

    def _own_buffers(self) -> None:
        sock = self.socket()
        if sock is not self._buffers_of:
            self._buffers_of = sock
            self._unsent = bytearray()
            self._read, self._read_at = b"", 0

    def _sock_send(self, buf: bytes | bytearray) -> int:
        if self._gathering is None:  # (DISCONNECT, written directly: see OwnedLoop.close)
            return super()._sock_send(buf)
        self._gathering += buf
        return len(buf)

    def _sock_recv(self, bufsize: int) -> bytes:
        self._own_buffers()
        if self._read_at >= len(self._read):
            data = super()._sock_recv(READ_CHUNK)  # BlockingIOError when there is nothing
            if len(data) <= bufsize:
                return data  # (b"": the broker closed the connection)
            self._read, self._read_at = data, 0
        start = self._read_at
        self._read_at = start + bufsize
        return self._read[start:self._read_at]

    def want_read(self) -> bool:
        """Data read from the socket that paho has not taken yet."""
        return self._buffers_of is self.socket() and self._read_at < len(self._read)

    def want_write(self) -> bool:
        return super().want_write() or (self._buffers_of is self.socket()
                                        and bool(self._unsent))

    def flush(self) -> bool:
        """Send what paho has queued, with one ``send``; False if the socket failed (paho
        notices at its next read: the owner should turn at once)."""
        if self.socket() is None:
            return True
        self._own_buffers()
        self._gathering = self._unsent
        try:
            self.loop_write()  # paho "writes" its queue into _unsent
        finally:
            self._gathering = None
        unsent = self._unsent
        while unsent:
            try:
                sent = super()._sock_send(unsent)
            except BlockingIOError:
                return True  # the socket's buffer is full: the rest at the next flush
            except OSError:
                return False
            del unsent[:sent]
        return True


def _nothing(*_args: Any) -> None:
    """paho's register-write hook: set, so that a publish queues rather than writes."""


class OwnedLoop:
    """The network side of one :class:`BatchingClient`, turned by its owner's thread (not
    thread-safe: only that thread may call :meth:`turn`, :meth:`flush` or ``publish``)."""

    def __init__(self, client: BatchingClient, settings: BrokerSettings, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.settings = settings
        self._clock = clock
        client.connect_async(settings.host, settings.port, keepalive=settings.keepalive)
        self._retry_at = 0.0  # the first attempt at the first turn
        self._delay = 0.0  # current backoff; 0 after a successful connection
        self._connecting_since: float | None = None

    def flush(self) -> bool:
        """Send what was published since the last flush (one system call); False if the
        connection failed (then turn at once)."""
        return self.client.flush()

    def turn(self, busy: bool = False) -> float:
        """Do what the connection needs now; returns the seconds until it needs another
        turn (``busy``: the owner has more to send than the in-flight window takes)."""
        client = self.client
        now = self._clock()
        if client.socket() is None:
            if now < self._retry_at:
                return self._retry_at - now
            if not self._connect(now):
                return self._retry_at - now
        ok = client.loop_read() == mqtt.MQTT_ERR_SUCCESS
        while ok and client.want_read():  # what the one recv brought beyond paho's count
            ok = client.loop_read() == mqtt.MQTT_ERR_SUCCESS
        if client.socket() is not None:
            client.loop_misc()  # keepalive: PINGREQ when due, a dead link noticed
        if client.socket() is not None and not client.flush():
            client.loop_read()  # the failed send's connection: paho closes it on reading
        if client.socket() is None:  # lost (or refused) during this turn
            self._connecting_since = None
            return self._back_off(now)
        if client.is_connected():
            self._connecting_since = None
            self._delay = 0.0
            return BUSY_TURN_SECONDS if busy or client.want_write() else IDLE_TURN_SECONDS
        if self._connecting_since is not None and now - self._connecting_since > CONNACK_SECONDS:
            log.info("mqtt: %s took the connection but did not answer in %g s (retrying)",
                     self.settings.describe(), CONNACK_SECONDS)
            self._disconnect()
            self._connecting_since = None
            return self._back_off(now)
        return BUSY_TURN_SECONDS  # waiting for the CONNACK

    def _connect(self, now: float) -> bool:
        try:
            self.client.reconnect()  # queues CONNECT; the turn's flush sends it
        except (OSError, ssl.SSLError, ValueError) as exc:
            # Unreachable, refused, a TLS handshake that failed: tried again after a while.
            log.debug("mqtt: cannot reach %s: %s (retrying)", self.settings.describe(), exc)
            self._back_off(now)
            return False
        self._connecting_since = now
        return True

    def _back_off(self, now: float) -> float:
        """Next attempt after 0.25 s, doubling up to 10 s, until a connection succeeds."""
        self._delay = min(max(2 * self._delay, RECONNECT_MIN_SECONDS), RECONNECT_MAX_SECONDS)
        self._retry_at = now + self._delay
        return self._delay

    def _disconnect(self) -> None:
        client = self.client
        client.flush()  # what was published first, in order
        client.disconnect()  # queues DISCONNECT
        client.loop_write()  # written directly: paho closes the socket right after it

    def close(self) -> None:
        """Send DISCONNECT (the broker then discards the last will) and close the socket."""
        if self.client.socket() is not None:
            self._disconnect()
