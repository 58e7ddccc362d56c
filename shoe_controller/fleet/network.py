"""Driving a paho client from the thread that owns it, without paho's network thread.

paho's threaded mode (``loop_start``) costs two thread wake-ups per publish: the publishing
thread writes a byte to wake paho's thread, which then sends the packet, and wakes again for
each acknowledgement. A table publishes a few messages per card, and on a busy machine
those wake-ups are CPU the tables' own threads want. :class:`OwnedLoop` uses paho's
external-loop API instead (``loop_read``, ``loop_write``, ``loop_misc``; paho's own
``loop()`` is never called, so paho never creates its wake-up socket pair): a publish from
the owner's thread is sent at once, by that thread, with one ``send``. The owner calls
:meth:`OwnedLoop.turn` whenever it wakes and at least as often as it asks; the turn connects
or reconnects (with backoff), reads what the broker sent (CONNACK, acknowledgements, PINGRESP:
paho calls ``on_connect``, ``on_publish``, ``on_disconnect`` in the owner's thread, from
within the turn), writes what is left to write and keeps the connection alive.

Acknowledgements wait in the socket until the next turn: nothing needs them sooner, unless
the in-flight window fills (then the owner turns more often, see ``busy``).
"""

from __future__ import annotations

import logging
import ssl
import time
from collections.abc import Callable

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


class OwnedLoop:
    """The network side of one paho client, turned by its owner's thread (not thread-safe:
    only that thread may call :meth:`turn` or ``client.publish``)."""

    def __init__(self, client: mqtt.Client, settings: BrokerSettings, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.settings = settings
        self._clock = clock
        client.connect_async(settings.host, settings.port, keepalive=settings.keepalive)
        self._retry_at = 0.0  # the first attempt at the first turn
        self._delay = 0.0  # current backoff; 0 after a successful connection
        self._connecting_since: float | None = None

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
        if client.loop_read() == mqtt.MQTT_ERR_SUCCESS and client.want_write():
            client.loop_write()
        if client.socket() is not None:
            client.loop_misc()  # keepalive: PINGREQ when due, a dead link noticed
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
            client.disconnect()  # closes the socket
            self._connecting_since = None
            return self._back_off(now)
        return BUSY_TURN_SECONDS  # waiting for the CONNACK

    def _connect(self, now: float) -> bool:
        try:
            self.client.reconnect()
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

    def close(self) -> None:
        """Send DISCONNECT (the broker then discards the last will) and close the socket."""
        client = self.client
        if client.socket() is not None:
            client.disconnect()  # queued and written at once: no network thread to wait for
