"""Byte pipes to a shoe (serial, TCP via pyserial ``socket://``, USB bulk, in-memory).

Pick one by URL with :func:`transport_for_url`: ``usb://VID:PID[/SERIAL]`` is a USB bulk shoe,
everything else is a pyserial URL (a device path, ``socket://``, ``loop://``, ``spy://``,
``hwgrep://``). Wrap the factory in :class:`ReconnectingTransport` to survive unplugs.
"""

from __future__ import annotations

from typing import Any

from shoe_controller.transports.base import (
    ReconnectingTransport,
    Transport,
    TransportEvent,
    TransportEventKind,
)

__all__ = [
    "ReconnectingTransport",
    "Transport",
    "TransportEvent",
    "TransportEventKind",
    "open_transport",
    "transport_for_url",
]


def transport_for_url(url: str, *, baudrate: int = 115200, usb_backend: Any = None) -> Transport:
    """A transport for ``url``, not yet opened (so it can serve as a reconnect factory)."""
    if url.startswith("usb://"):
        from shoe_controller.transports.usb import UsbTransport

        return UsbTransport.from_url(url, backend=usb_backend)
    from shoe_controller.transports.serial_port import SerialTransport

    return SerialTransport(url, baudrate)


def open_transport(url: str, *, baudrate: int = 115200, usb_backend: Any = None) -> Transport:
    """:func:`transport_for_url`, opened. Raises ``TransportError`` if the device is absent."""
    transport = transport_for_url(url, baudrate=baudrate, usb_backend=usb_backend)
    transport.open()
    return transport
