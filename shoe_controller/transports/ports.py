"""What can be connected to: serial ports (with their USB identity) and USB bulk shoes.

Used by ``shoe ports``. Listing never raises for a missing USB library: libusb absent is a
normal situation on a dealer PC that only uses USB-serial shoes, so it is reported as a note.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from shoe_controller.transports.usb import SHOE_USB_IDS, format_usb_url

__all__ = [
    "PortListing",
    "SerialPortInfo",
    "UsbDeviceInfo",
    "list_ports",
    "list_serial_ports",
    "list_usb_devices",
]


@dataclass(frozen=True, slots=True)
class SerialPortInfo:
    device: str  # what to pass as the URL, e.g. /dev/ttyUSB0
    description: str
    vid: int | None = None
    pid: int | None = None
    serial_number: str | None = None
    manufacturer: str | None = None
    location: str | None = None
    is_shoe: bool = False  # VID:PID is one of ours

    @property
    def usb_id(self) -> str | None:
        return None if self.vid is None or self.pid is None else f"{self.vid:04x}:{self.pid:04x}"


@dataclass(frozen=True, slots=True)
class UsbDeviceInfo:
    url: str  # usb://VID:PID[/SERIAL], what to pass to ``shoe run --port``
    vid: int
    pid: int
    bus: int | None
    address: int | None
    serial_number: str | None = None
    product: str | None = None
    manufacturer: str | None = None
    is_shoe: bool = False


@dataclass(slots=True)
class PortListing:
    serial_ports: list[SerialPortInfo] = field(default_factory=list)
    usb_devices: list[UsbDeviceInfo] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. "USB: no backend (libusb) available"

    def to_json(self) -> dict[str, Any]:
        return {
            "serial_ports": [asdict(p) | {"usb_id": p.usb_id} for p in self.serial_ports],
            "usb_devices": [asdict(d) for d in self.usb_devices],
            "notes": list(self.notes),
        }


def list_serial_ports() -> list[SerialPortInfo]:
    """Every serial port the OS knows, sorted by device name."""
    from serial.tools import list_ports

    found = []
    for port in list_ports.comports():
        found.append(
            SerialPortInfo(
                device=port.device,
                description=port.description if port.description != "n/a" else "",
                vid=port.vid,
                pid=port.pid,
                serial_number=port.serial_number,
                manufacturer=port.manufacturer,
                location=port.location,
                is_shoe=(port.vid, port.pid) in SHOE_USB_IDS,
            )
        )
    return sorted(found, key=lambda p: p.device)


def _string(device: Any, name: str) -> str | None:
    try:
        value = getattr(device, name)
    except Exception:  # noqa: BLE001 - no permission / no string descriptors: leave it out
        return None
    return None if value is None else str(value)


def list_usb_devices(
    *, all_devices: bool = False, backend: Any = None
) -> tuple[list[UsbDeviceInfo], str | None]:
    """Our USB shoes (or every USB device), and a note if USB could not be searched."""
    import usb.core

    try:
        devices = list(usb.core.find(find_all=True, backend=backend))
    except usb.core.NoBackendError:
        return [], "USB: no backend available (install libusb-1.0 to find USB shoes)"
    except usb.core.USBError as exc:
        return [], f"USB: cannot enumerate devices: {exc}"
    found = []
    for dev in devices:
        ident = (int(dev.idVendor), int(dev.idProduct))
        is_shoe = ident in SHOE_USB_IDS
        if not (is_shoe or all_devices):
            continue
        serial_number = _string(dev, "serial_number")
        found.append(
            UsbDeviceInfo(
                url=format_usb_url(*ident, serial_number),
                vid=ident[0],
                pid=ident[1],
                bus=dev.bus,
                address=dev.address,
                serial_number=serial_number,
                product=_string(dev, "product"),
                manufacturer=_string(dev, "manufacturer"),
                is_shoe=is_shoe,
            )
        )
    return sorted(found, key=lambda d: (d.bus or 0, d.address or 0)), None


def list_ports(*, all_usb: bool = False, usb_backend: Any = None) -> PortListing:
    usb_devices, note = list_usb_devices(all_devices=all_usb, backend=usb_backend)
    return PortListing(list_serial_ports(), usb_devices, [note] if note else [])
