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
    "check_device_url",
    "open_transport",
    "transport_for_url",
]


def check_device_url(url: str) -> None:
    """Raise :class:`~shoe_controller.errors.ConfigError` if ``url`` can never name a shoe.

    Without touching the device (it may be unplugged at start, which is no error): a USB URL
    must parse, a ``socket://`` URL needs HOST:PORT, and a pyserial URL's protocol must be one
    pyserial knows. ``shoe run`` calls this before it opens the journal, so a typo in
    ``--device`` leaves no journal behind.
    """
    if url.startswith("usb://"):
        from shoe_controller.transports.usb import parse_usb_url

        parse_usb_url(url)
        return
    from shoe_controller.transports.serial_port import check_serial_url

    check_serial_url(url)


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
