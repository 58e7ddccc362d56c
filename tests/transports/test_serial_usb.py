"""SerialTransport and UsbTransport specifics: URLs, errors, the virtual USB device."""

from __future__ import annotations

import pytest
import usb.core

from shoe_controller.errors import ConfigError, TransportError
from shoe_controller.transports import open_transport, transport_for_url
from shoe_controller.transports.serial_port import SerialTransport, is_pty_path
from shoe_controller.transports.usb import (
    SHOE_USB_PID,
    SHOE_USB_VID,
    UsbAddress,
    UsbTransport,
    parse_usb_url,
)
from simulators.pty import open_pty_pair
from simulators.usb_backend import VirtualUsbBackend, VirtualUsbDevice

from .helpers import read_exactly


def test_loop_url_echoes() -> None:
    with open_transport("loop://") as port:
        port.write(b"\x00abc\x00")
        assert read_exactly(port, 5) == b"\x00abc\x00"
        assert port.read(10, 0.05) == b""


def test_spy_url_wraps_a_pty(capsys: pytest.CaptureFixture[str]) -> None:
    with open_pty_pair() as pty, SerialTransport(f"spy://{pty.slave_path}?file=/dev/null") as port:
        port.write(b"ping")
        assert read_exactly(pty.device_side, 4) == b"ping"


@pytest.mark.parametrize(
    "url", ["nosuchproto://x", "socket://127.0.0.1", "socket://127.0.0.1:99999", ""]
)
def test_bad_serial_urls_are_config_errors(url: str) -> None:
    with pytest.raises(ConfigError):
        SerialTransport(url).open()


def test_bad_baud_rate_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        SerialTransport("loop://", baudrate=-5).open()


def test_missing_device_is_a_transport_error() -> None:
    with pytest.raises(TransportError, match="cannot open"):
        SerialTransport("/dev/does-not-exist-shoe").open()


def test_hwgrep_without_a_match_is_a_transport_error() -> None:
    with pytest.raises(TransportError):
        SerialTransport("hwgrep://ffff:fffe").open()


def test_pty_detection_and_exclusive_lock() -> None:
    with open_pty_pair() as pty:
        assert is_pty_path(pty.slave_path)
        assert not is_pty_path("socket://127.0.0.1:1")
        with SerialTransport(pty.slave_path):  # noqa: SIM117 - the inner one must fail
            with pytest.raises(TransportError):  # a second controller on the same shoe
                SerialTransport(pty.slave_path).open()


def test_pty_host_sees_the_shoe_vanish() -> None:
    pty = open_pty_pair()
    with SerialTransport(pty.slave_path) as host:
        pty.close()
        with pytest.raises(TransportError):
            read_exactly(host, 1, timeout=2)


def test_usb_urls() -> None:
    assert parse_usb_url("usb://1209:0001") == UsbAddress(0x1209, 0x0001)
    assert parse_usb_url("usb://ABCD:12ef/SN-7") == UsbAddress(0xABCD, 0x12EF, "SN-7")
    assert parse_usb_url("usb://") == UsbAddress(SHOE_USB_VID, SHOE_USB_PID)
    for bad in ("usb://1209", "usb://xyz:0001", "usb://12345:1", "serial:///dev/x"):
        with pytest.raises(ConfigError):
            parse_usb_url(bad)
    assert isinstance(transport_for_url("usb://1209:0001"), UsbTransport)
    assert isinstance(transport_for_url("/dev/ttyUSB0"), SerialTransport)


def test_usb_without_libusb_is_a_clear_transport_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_backend(*args: object, **kwargs: object) -> None:
        raise usb.core.NoBackendError("No backend available")

    monkeypatch.setattr(usb.core, "find", no_backend)
    with pytest.raises(TransportError, match="libusb"):
        UsbTransport().open()


def test_usb_serial_number_selects_the_device() -> None:
    first, second = (
        VirtualUsbDevice(serial_number="A1"),
        VirtualUsbDevice(serial_number="B2", address=9),
    )
    bus = VirtualUsbBackend(first, second)
    with UsbTransport(serial_number="B2", backend=bus) as host:
        host.write(b"to B2")
        assert read_exactly(second.device_side, 5) == b"to B2"
        assert first.device_side.read(10, 0) == b""
    with pytest.raises(TransportError, match="not found"):
        UsbTransport(serial_number="C3", backend=bus).open()


def test_virtual_device_descriptors_and_unplug() -> None:
    gadget = VirtualUsbDevice(serial_number="SHOE42")
    bus = VirtualUsbBackend(gadget)
    dev = usb.core.find(idVendor=SHOE_USB_VID, idProduct=SHOE_USB_PID, backend=bus)
    assert dev is not None
    assert (dev.serial_number, dev.product) == ("SHOE42", "Simulated card shoe")
    dev.set_configuration()
    intf = dev.get_active_configuration()[(0, 0)]
    addresses = sorted(ep.bEndpointAddress for ep in intf)
    assert addresses == [0x01, 0x81]
    old_address = dev.address
    gadget.unplug()
    assert usb.core.find(backend=bus) is None
    with pytest.raises(usb.core.USBError) as info:
        dev.write(0x01, b"x")
    assert info.value.errno == 19  # ENODEV
    gadget.replug()
    again = usb.core.find(backend=bus)
    assert again is not None and again.address != old_address
    usb.util.dispose_resources(dev)


def test_usb_read_timeout_maps_to_empty_bytes() -> None:
    gadget = VirtualUsbDevice()
    with UsbTransport(backend=VirtualUsbBackend(gadget)) as host:
        assert host.read(64, 0.05) == b""
        gadget.device_side.write(b"x" * 3000)  # more than one bulk transfer
        assert read_exactly(host, 3000) == b"x" * 3000
