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


def test_a_listener_closed_under_a_reading_thread_is_a_transport_error_naming_its_port() -> None:
    """A simulator's thread reading while its owner closes the listener must end on
    TransportError (which it expects at shutdown), never on OSError from asking a closed socket
    its address (EBADF; once a thread-exception warning in CI)."""
    from shoe_controller.transports.tcp import TcpServerTransport

    server = TcpServerTransport("127.0.0.1", 0)
    server.open()
    port = server.address[1]
    assert port != 0
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            while True:
                server.read(64, 0.01)
        except BaseException as exc:  # noqa: BLE001 - the test inspects it
            errors.append(exc)

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    time.sleep(0.05)
    server.close()
    thread.join(5)
    assert len(errors) == 1 and isinstance(errors[0], TransportError), errors
    assert f":{port}" in str(errors[0])
    assert server.address == ("127.0.0.1", port) and f":{port}" in server.description
