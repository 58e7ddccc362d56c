"""A virtual USB bus for pyusb: our shoe as a USB bulk device, without libusb or hardware.

``VirtualUsbBackend`` implements ``usb.backend.IBackend`` (after pyftdi's
``tests/backend/usbvirt.py``), so ``usb.core.find(backend=bus)`` and everything built on it
(``UsbTransport``) run unchanged against it. Each :class:`VirtualUsbDevice` has the
descriptors of a real gadget - device, one configuration, one vendor-specific interface, a bulk
IN and a bulk OUT endpoint, manufacturer/product/serial string descriptors - and its bulk
endpoints are wired to byte buffers. The firmware side of the device is
:attr:`VirtualUsbDevice.device_side`, a :class:`Transport` the software shoe reads and writes
like any other byte pipe.

``unplug()`` makes the device vanish: handles opened before fail with ``USBError(ENODEV)`` (as
libusb's ``LIBUSB_ERROR_NO_DEVICE``), ``find()`` no longer returns it, bytes in flight are lost.
``replug()`` brings it back under a new bus address, and the host must open it again - exactly
what a ``ReconnectingTransport`` does. The device side survives the unplug (the simulated shoe
keeps its state, like a shoe with its own power supply): while unplugged its reads time out and
its writes are dropped.

libusb semantics are kept where the host can see them: timeouts are milliseconds with 0 meaning
forever, a timeout raises ``USBTimeoutError``, a bulk IN transfer returns what is there (up to
the buffer's length) as soon as anything is.
"""

from __future__ import annotations

import errno
import threading
import time
from array import array
from dataclasses import dataclass, field
from typing import Any

import usb.backend
import usb.core
import usb.util

from shoe_controller.errors import TransportError
from shoe_controller.transports.base import (
    DEFAULT_READ_SIZE,
    WAIT_SLICE,
    Deadline,
    Transport,
    check_read_args,
)
from shoe_controller.transports.usb import SHOE_USB_PID, SHOE_USB_VID

__all__ = ["VirtualUsbBackend", "VirtualUsbDevice", "VirtualUsbDeviceSide"]

EP_OUT = 0x01  # host -> shoe
EP_IN = 0x81  # shoe -> host
_LANGID_EN_US = 0x0409
_STRING_MANUFACTURER, _STRING_PRODUCT, _STRING_SERIAL = 1, 2, 3


@dataclass
class _Descriptor:
    """Attribute bag; pyusb copies the USB descriptor fields it knows from it."""

    fields: dict[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.fields[name]
        except KeyError:
            raise AttributeError(name) from None


class _Pipe:
    """A byte buffer one side writes and the other reads, with a condition to wait on."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.ready = threading.Condition(threading.Lock())

    def put(self, data: bytes) -> None:
        with self.ready:
            self.buffer += data
            self.ready.notify_all()

    def clear(self) -> None:
        with self.ready:
            self.buffer.clear()
            self.ready.notify_all()


@dataclass(frozen=True)
class _Handle:
    device: VirtualUsbDevice
    plug_generation: int


class VirtualUsbDevice:
    """One simulated USB shoe on the virtual bus."""

    def __init__(
        self,
        vid: int = SHOE_USB_VID,
        pid: int = SHOE_USB_PID,
        serial_number: str = "SIM00001",
        *,
        manufacturer: str = "Shoe Controller Project",
        product: str = "Simulated card shoe",
        max_packet_size: int = 64,
        bus: int = 1,
        address: int = 7,
    ) -> None:
        self.vid, self.pid = vid, pid
        self.serial_number = serial_number
        self.strings = {
            _STRING_MANUFACTURER: manufacturer,
            _STRING_PRODUCT: product,
            _STRING_SERIAL: serial_number,
        }
        self.max_packet_size = max_packet_size
        self.bus, self.address = bus, address
        self.to_device = _Pipe()  # bulk OUT
        self.to_host = _Pipe()  # bulk IN
        self._lock = threading.Lock()
        self._plugged = True
        self._plug_generation = 0
        self.configuration = 0  # 0 = unconfigured, as after enumeration
        self.claimed: set[int] = set()
        self.dropped_bytes = 0  # written by the device side while unplugged
        self.device_side = VirtualUsbDeviceSide(self)

    @property
    def plugged(self) -> bool:
        return self._plugged

    @property
    def plug_generation(self) -> int:
        return self._plug_generation

    def unplug(self) -> None:
        """The cable is pulled: host handles die with ENODEV, the device leaves the bus."""
        with self._lock:
            self._plugged = False
            self._plug_generation += 1
            self.configuration = 0
            self.claimed.clear()
        self.to_device.clear()
        self.to_host.clear()

    def replug(self) -> None:
        """The cable is back: the device re-enumerates under a new address."""
        with self._lock:
            if self._plugged:
                return
            self._plugged = True
            self.address = self.address % 127 + 1
        self.to_device.clear()
        self.to_host.clear()

    # -- descriptors -------------------------------------------------------------------------------

    def device_descriptor(self) -> _Descriptor:
        return _Descriptor(
            {
                "bLength": 18,
                "bDescriptorType": usb.util.DESC_TYPE_DEVICE,
                "bcdUSB": 0x0200,
                "bDeviceClass": 0x00,  # class defined per interface
                "bDeviceSubClass": 0x00,
                "bDeviceProtocol": 0x00,
                "bMaxPacketSize0": 64,
                "idVendor": self.vid,
                "idProduct": self.pid,
                "bcdDevice": 0x0100,
                "iManufacturer": _STRING_MANUFACTURER,
                "iProduct": _STRING_PRODUCT,
                "iSerialNumber": _STRING_SERIAL,
                "bNumConfigurations": 1,
                "address": self.address,
                "bus": self.bus,
                "port_number": 1,
                "port_numbers": (1,),
                "speed": 2,  # full speed (usb.util.SPEED_FULL)
            }
        )

    def string_descriptor(self, index: int) -> bytes:
        if index == 0:
            return bytes([4, usb.util.DESC_TYPE_STRING]) + _LANGID_EN_US.to_bytes(2, "little")
        try:
            text = self.strings[index]
        except KeyError:
            raise usb.core.USBError("no such string descriptor", errno=errno.EPIPE) from None
        encoded = text.encode("utf-16-le")
        return bytes([2 + len(encoded), usb.util.DESC_TYPE_STRING]) + encoded


class VirtualUsbDeviceSide(Transport):
    """The shoe firmware's end of the bulk endpoints (reads OUT, writes IN)."""

    def __init__(self, device: VirtualUsbDevice) -> None:
        self._device = device
        self._open = True

    @property
    def description(self) -> str:
        d = self._device
        return f"virtual USB device {d.vid:04x}:{d.pid:04x}/{d.serial_number} (device side)"

    @property
    def is_open(self) -> bool:
        return self._open

    def open(self) -> None:
        self._open = True

    def close(self) -> None:
        self._open = False
        with self._device.to_device.ready:
            self._device.to_device.ready.notify_all()

    def read(self, size: int = DEFAULT_READ_SIZE, timeout: float | None = None) -> bytes:
        check_read_args(size, timeout)
        deadline = Deadline(timeout)
        pipe = self._device.to_device
        with pipe.ready:
            while True:
                if not self._open:
                    raise TransportError(f"{self.description}: transport is closed")
                if pipe.buffer:
                    data = bytes(pipe.buffer[:size])
                    del pipe.buffer[:size]
                    return data
                if deadline.expired():
                    return b""
                pipe.ready.wait(deadline.slice(WAIT_SLICE * 4))

    def write(self, data: bytes) -> None:
        if not self._open:
            raise TransportError(f"{self.description}: transport is closed")
        if not self._device.plugged:
            self._device.dropped_bytes += len(data)  # no host on the other end
            return
        self._device.to_host.put(bytes(data))


class VirtualUsbBackend(usb.backend.IBackend):  # type: ignore[misc]
    """A pyusb backend whose bus holds the given virtual devices (add more with ``attach``)."""

    def __init__(self, *devices: VirtualUsbDevice) -> None:
        super().__init__()
        self._devices: list[VirtualUsbDevice] = list(devices)

    def attach(self, device: VirtualUsbDevice) -> VirtualUsbDevice:
        self._devices.append(device)
        return device

    @property
    def devices(self) -> tuple[VirtualUsbDevice, ...]:
        return tuple(self._devices)

    # -- enumeration and descriptors -----------------------------------------------------------

    def enumerate_devices(self) -> list[VirtualUsbDevice]:
        return [d for d in self._devices if d.plugged]

    def get_parent(self, dev: VirtualUsbDevice) -> None:
        return None

    def get_device_descriptor(self, dev: VirtualUsbDevice) -> _Descriptor:
        return dev.device_descriptor()

    def get_configuration_descriptor(self, dev: VirtualUsbDevice, config: int) -> _Descriptor:
        if config != 0:
            raise IndexError(f"no configuration {config}")
        return _Descriptor(
            {
                "bLength": 9,
                "bDescriptorType": usb.util.DESC_TYPE_CONFIG,
                "wTotalLength": 9 + 9 + 7 + 7,
                "bNumInterfaces": 1,
                "bConfigurationValue": 1,
                "iConfiguration": 0,
                "bmAttributes": 0x80,  # bus powered
                "bMaxPower": 50,  # 100 mA
                "extra_descriptors": [],
            }
        )

    def get_interface_descriptor(
        self, dev: VirtualUsbDevice, intf: int, alt: int, config: int
    ) -> _Descriptor:
        if config != 0 or intf != 0 or alt != 0:
            raise IndexError(f"no interface {intf} alt {alt} in configuration {config}")
        return _Descriptor(
            {
                "bLength": 9,
                "bDescriptorType": usb.util.DESC_TYPE_INTERFACE,
                "bInterfaceNumber": 0,
                "bAlternateSetting": 0,
                "bNumEndpoints": 2,
                "bInterfaceClass": 0xFF,  # vendor specific
                "bInterfaceSubClass": 0x00,
                "bInterfaceProtocol": 0x00,
                "iInterface": 0,
                "extra_descriptors": [],
            }
        )

    def get_endpoint_descriptor(
        self, dev: VirtualUsbDevice, ep: int, intf: int, alt: int, config: int
    ) -> _Descriptor:
        if config != 0 or intf != 0 or alt != 0 or ep not in (0, 1):
            raise IndexError(f"no endpoint {ep}")
        return _Descriptor(
            {
                "bLength": 7,
                "bDescriptorType": usb.util.DESC_TYPE_ENDPOINT,
                "bEndpointAddress": EP_IN if ep == 0 else EP_OUT,
                "bmAttributes": usb.util.ENDPOINT_TYPE_BULK,
                "wMaxPacketSize": dev.max_packet_size,
                "bInterval": 0,
                "bRefresh": 0,
                "bSynchAddress": 0,
                "extra_descriptors": [],
            }
        )

    # -- handles and configuration --------------------------------------------------------------

    def open_device(self, dev: VirtualUsbDevice) -> _Handle:
        if not dev.plugged:
            raise usb.core.USBError(
                "No such device (it may have been disconnected)", errno=errno.ENODEV
            )
        return _Handle(dev, dev.plug_generation)

    def close_device(self, dev_handle: _Handle) -> None:
        pass

    def set_configuration(self, dev_handle: _Handle, config_value: int) -> None:
        device = self._live(dev_handle)
        if config_value not in (0, 1):
            raise usb.core.USBError("Invalid configuration", errno=errno.EINVAL)
        device.configuration = config_value

    def get_configuration(self, dev_handle: _Handle) -> int:
        return self._live(dev_handle).configuration

    def set_interface_altsetting(self, dev_handle: _Handle, intf: int, altsetting: int) -> None:
        self._live(dev_handle)
        if (intf, altsetting) != (0, 0):
            raise usb.core.USBError("Invalid interface or alternate setting", errno=errno.EINVAL)

    def claim_interface(self, dev_handle: _Handle, intf: int) -> None:
        device = self._live(dev_handle)
        if intf != 0:
            raise usb.core.USBError("Entity not found", errno=errno.ENOENT)
        device.claimed.add(intf)

    def release_interface(self, dev_handle: _Handle, intf: int) -> None:
        self._live(dev_handle).claimed.discard(intf)

    def clear_halt(self, dev_handle: _Handle, ep: int) -> None:
        self._live(dev_handle)

    def reset_device(self, dev_handle: _Handle) -> None:
        self._live(dev_handle)

    def ctrl_transfer(
        self,
        dev_handle: _Handle,
        bmRequestType: int,
        bRequest: int,
        wValue: int,
        wIndex: int,
        data: array[int],
        timeout: int,
    ) -> int:
        """Only GET_DESCRIPTOR(STRING) is needed (serial number, product, manufacturer)."""
        device = self._live(dev_handle)
        is_get_descriptor = bmRequestType == 0x80 and bRequest == 0x06
        if not is_get_descriptor or (wValue >> 8) != usb.util.DESC_TYPE_STRING:
            raise usb.core.USBError("Pipe error (request not supported)", errno=errno.EPIPE)
        descriptor = device.string_descriptor(wValue & 0xFF)[: len(data)]
        data[: len(descriptor)] = array("B", descriptor)
        return len(descriptor)

    # -- bulk transfers ------------------------------------------------------------------------

    def bulk_write(
        self, dev_handle: _Handle, ep: int, intf: int, data: array[int], timeout: int
    ) -> int:
        device = self._live_claimed(dev_handle, intf)
        if ep != EP_OUT:
            raise usb.core.USBError("Invalid endpoint", errno=errno.EINVAL)
        device.to_device.put(data.tobytes())
        return len(data)

    def bulk_read(
        self, dev_handle: _Handle, ep: int, intf: int, buff: array[int], timeout: int
    ) -> int:
        device = self._live_claimed(dev_handle, intf)
        if ep != EP_IN:
            raise usb.core.USBError("Invalid endpoint", errno=errno.EINVAL)
        deadline = None if timeout == 0 else time.monotonic() + timeout / 1000
        pipe = device.to_host
        with pipe.ready:
            while not pipe.buffer:
                self._live(dev_handle)  # unplugged while waiting -> ENODEV
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise usb.core.USBTimeoutError("Operation timed out", errno=errno.ETIMEDOUT)
                pipe.ready.wait(WAIT_SLICE if left is None else min(left, WAIT_SLICE))
            count = min(len(buff), len(pipe.buffer))
            buff[:count] = array("B", pipe.buffer[:count])
            del pipe.buffer[:count]
        return count

    # -- helpers ------------------------------------------------------------------------------

    @staticmethod
    def _live(dev_handle: _Handle) -> VirtualUsbDevice:
        device = dev_handle.device
        if not device.plugged or device.plug_generation != dev_handle.plug_generation:
            raise usb.core.USBError(
                "No such device (it may have been disconnected)", errno=errno.ENODEV
            )
        return device

    def _live_claimed(self, dev_handle: _Handle, intf: int) -> VirtualUsbDevice:
        device = self._live(dev_handle)
        if intf not in device.claimed:
            raise usb.core.USBError("Interface not claimed", errno=errno.EBUSY)
        return device
