"""USB transport: a shoe that is a plain USB bulk device (not a USB-serial adapter).

The shoe exposes one vendor-specific interface with one bulk IN and one bulk OUT endpoint; the
byte stream on them is exactly the serial byte stream (COBS frames delimited by 0x00), so the
link layer cannot tell the two apart.

Our shoe's USB identity is :data:`SHOE_USB_VID`:`SHOE_USB_PID`. **This is a placeholder
assignment**: 0x1209 is the pid.codes open-source vendor id and 0x0001 its "test PID" reserved
for development, until the product gets its own PID. Any other VID:PID can be given on the
command line (``usb://VID:PID[/SERIAL]``).

Everything goes through ``usb.core.find(backend=...)``, so a test passes the virtual backend
from ``simulators.usb_backend`` and needs neither libusb nor hardware.

Timeouts: libusb takes milliseconds and treats 0 as "forever"; our convention is seconds with
``None`` forever and ``0`` polling. Reads are issued in slices of at most 100 ms so that a
``close()`` from another thread ends a blocked read promptly.
"""

from __future__ import annotations

import errno
import math
import threading
from dataclasses import dataclass
from typing import Any

import usb.core
import usb.util

from shoe_controller.errors import ConfigError, TransportError
from shoe_controller.transports.base import (
    DEFAULT_READ_SIZE,
    Deadline,
    Transport,
    check_read_args,
)

__all__ = [
    "SHOE_USB_IDS",
    "SHOE_USB_PID",
    "SHOE_USB_VID",
    "UsbAddress",
    "UsbTransport",
    "format_usb_url",
    "parse_usb_url",
]

SHOE_USB_VID = 0x1209  # pid.codes (placeholder, see the module docstring)
SHOE_USB_PID = 0x0001  # pid.codes test PID (placeholder)
#: Every (VID, PID) that is one of our shoes; ``shoe ports`` lists these.
SHOE_USB_IDS: tuple[tuple[int, int], ...] = ((SHOE_USB_VID, SHOE_USB_PID),)

_SLICE_MS = 100  # longest single bulk read, so close() is noticed quickly
_READ_PACKETS = 16  # a bulk read asks for this many max-size packets (avoids overflow errors)


@dataclass(frozen=True, slots=True)
class UsbAddress:
    vid: int
    pid: int
    serial_number: str | None = None


def parse_usb_url(url: str) -> UsbAddress:
    """``usb://VID:PID[/SERIAL]`` (hex ids) -> address; plain ``usb://`` means our shoe."""
    if not url.startswith("usb://"):
        raise ConfigError(f"not a USB URL (expected usb://VID:PID[/SERIAL]): {url!r}")
    rest = url[len("usb://") :]
    if not rest:
        return UsbAddress(SHOE_USB_VID, SHOE_USB_PID)
    ids, _, serial_number = rest.partition("/")
    vid_text, sep, pid_text = ids.partition(":")
    try:
        if not sep:
            raise ValueError
        vid, pid = int(vid_text, 16), int(pid_text, 16)
    except ValueError:
        raise ConfigError(
            f"USB URL {url!r}: expected usb://VID:PID with hex ids, e.g. usb://1209:0001"
        ) from None
    if not (0 <= vid <= 0xFFFF and 0 <= pid <= 0xFFFF):
        raise ConfigError(f"USB URL {url!r}: VID and PID are 16-bit hex numbers")
    return UsbAddress(vid, pid, serial_number or None)


def format_usb_url(vid: int, pid: int, serial_number: str | None = None) -> str:
    suffix = f"/{serial_number}" if serial_number else ""
    return f"usb://{vid:04x}:{pid:04x}{suffix}"


def _timeout_ms(seconds: float) -> int:
    """A libusb timeout for a wait of ``seconds`` (never 0, which libusb reads as forever)."""
    return max(1, min(_SLICE_MS, math.ceil(seconds * 1000)))


class UsbTransport(Transport):
    """Bulk IN/OUT endpoints of interface ``interface`` of the device VID:PID[/serial]."""

    def __init__(
        self,
        vid: int = SHOE_USB_VID,
        pid: int = SHOE_USB_PID,
        serial_number: str | None = None,
        *,
        backend: Any = None,
        interface: int = 0,
        write_timeout: float = 2.0,
    ) -> None:
        self._address = UsbAddress(vid, pid, serial_number)
        self._backend = backend
        self._interface = interface
        self._write_timeout_ms = max(1, round(write_timeout * 1000))
        self._device: Any = None
        self._ep_in: Any = None
        self._ep_out: Any = None
        self._pending = bytearray()  # bytes of a bulk transfer beyond what read() asked for
        self._read_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._closed = True

    @classmethod
    def from_url(cls, url: str, *, backend: Any = None) -> UsbTransport:
        address = parse_usb_url(url)
        return cls(address.vid, address.pid, address.serial_number, backend=backend)

    @property
    def description(self) -> str:
        a = self._address
        return format_usb_url(a.vid, a.pid, a.serial_number)

    @property
    def is_open(self) -> bool:
        return not self._closed

    def open(self) -> None:
        if not self._closed:
            return
        device = self._find()
        try:
            self._claim(device)
        except usb.core.USBError as exc:
            usb.util.dispose_resources(device)
            raise TransportError(f"{self.description}: cannot claim the device: {exc}") from exc
        except TransportError:
            usb.util.dispose_resources(device)
            raise
        self._device = device
        self._pending.clear()
        self._closed = False

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with self._read_lock, self._write_lock:
            device, self._device = self._device, None
            self._pending.clear()
        if device is not None:
            try:
                usb.util.release_interface(device, self._interface)
            except (usb.core.USBError, ValueError):
                pass  # the device may already be gone; that's why we are closing
            usb.util.dispose_resources(device)

    def read(self, size: int = DEFAULT_READ_SIZE, timeout: float | None = None) -> bytes:
        check_read_args(size, timeout)
        deadline = Deadline(timeout)
        while True:
            with self._read_lock:
                self._check_open()
                if not self._pending:
                    self._bulk_read(deadline)
                if self._pending:
                    data = bytes(self._pending[:size])
                    del self._pending[:size]
                    return data
            if deadline.expired():
                return b""

    def write(self, data: bytes) -> None:
        if not data:
            return
        with self._write_lock:
            self._check_open()
            try:
                written = self._ep_out.write(data, timeout=self._write_timeout_ms)
            except usb.core.USBError as exc:
                failure: Exception = exc
            else:
                if written == len(data):
                    return
                failure = OSError(f"short write: {written} of {len(data)} bytes")
        self.close()
        raise TransportError(f"{self.description}: write failed: {failure}") from failure

    # -- helpers ----------------------------------------------------------------------------------

    def _find(self) -> Any:
        a = self._address

        def matches(dev: Any) -> bool:
            if a.serial_number is None:
                return True
            try:
                return bool(dev.serial_number == a.serial_number)
            except (usb.core.USBError, ValueError):
                return False  # no string descriptors or no permission: can't be the one

        try:
            device = usb.core.find(
                idVendor=a.vid, idProduct=a.pid, backend=self._backend, custom_match=matches
            )
        except usb.core.NoBackendError as exc:
            raise TransportError(
                f"{self.description}: no USB backend available (install libusb-1.0)"
            ) from exc
        except usb.core.USBError as exc:
            raise TransportError(f"{self.description}: USB enumeration failed: {exc}") from exc
        if device is None:
            raise TransportError(f"{self.description}: device not found")
        return device

    def _claim(self, device: Any) -> None:
        try:
            config = device.get_active_configuration()
        except usb.core.USBError:
            config = None
        if config is None:
            device.set_configuration()
            config = device.get_active_configuration()
        try:
            intf = config[(self._interface, 0)]
        except (IndexError, usb.core.USBError) as exc:
            raise TransportError(f"{self.description}: no interface {self._interface}") from exc
        try:
            if device.is_kernel_driver_active(self._interface):
                device.detach_kernel_driver(self._interface)
        except (NotImplementedError, usb.core.USBError):
            pass  # not supported by this backend/OS; claiming will tell if it matters
        usb.util.claim_interface(device, self._interface)

        def bulk(direction: int) -> Any:
            return usb.util.find_descriptor(
                intf,
                custom_match=lambda ep: (
                    usb.util.endpoint_type(ep.bmAttributes) == usb.util.ENDPOINT_TYPE_BULK
                    and usb.util.endpoint_direction(ep.bEndpointAddress) == direction
                ),
            )

        self._ep_in, self._ep_out = bulk(usb.util.ENDPOINT_IN), bulk(usb.util.ENDPOINT_OUT)
        if self._ep_in is None or self._ep_out is None:
            raise TransportError(f"{self.description}: interface has no bulk IN/OUT endpoints")

    def _check_open(self) -> None:
        if self._closed or self._device is None:
            raise TransportError(f"{self.description}: transport is closed")

    def _bulk_read(self, deadline: Deadline) -> None:
        """One bulk transfer of at most one wait slice into ``_pending`` (read lock held)."""
        length = self._ep_in.wMaxPacketSize * _READ_PACKETS
        try:
            chunk = self._ep_in.read(length, timeout=_timeout_ms(deadline.slice(_SLICE_MS / 1000)))
        except usb.core.USBTimeoutError:
            return
        except usb.core.USBError as exc:
            if exc.errno == errno.ETIMEDOUT:
                return
            self._read_lock.release()  # close() takes it
            try:
                self.close()
            finally:
                self._read_lock.acquire()
            raise TransportError(f"{self.description}: read failed: {exc}") from exc
        self._pending += bytes(chunk)
