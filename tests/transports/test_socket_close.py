"""A ``socket://`` shoe line that the peer closes is given up at once.

pyserial's socket ``close()`` sleeps 0.3 s after closing ("give the server some time"); the
transport closes on every failure, so each cut of a flaky TCP line (``shoe sim --tcp`` behind a
proxy, a terminal server) stalled the table for 0.3 s before it even tried to reconnect.
"""

from __future__ import annotations

import socket
import threading
import time

import pytest

from shoe_controller.errors import TransportError
from shoe_controller.transports import transport_for_url


def test_a_closed_peer_is_noticed_and_the_port_closed_without_pyserials_sleep() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        closed = threading.Event()

        def peer() -> None:
            client, _ = server.accept()
            client.sendall(b"\x00")
            client.shutdown(socket.SHUT_RDWR)
            client.close()
            closed.set()

        thread = threading.Thread(target=peer, daemon=True)
        thread.start()
        transport = transport_for_url(f"socket://127.0.0.1:{port}")
        transport.open()
        assert closed.wait(5)
        started = time.monotonic()
        with pytest.raises(TransportError, match="disconnected"):
            for _ in range(100):
                transport.read(64, 0.05)
        # the failed read closed the port: no 0.3 s sleep in it (the bound leaves room for a
        # loaded machine, and is still well below pyserial's sleep)
        assert time.monotonic() - started < 0.25
        assert not transport.is_open
        thread.join(5)
