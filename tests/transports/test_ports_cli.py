"""``shoe ports`` and the listing behind it."""

from __future__ import annotations

import json

import pytest
from serial.tools import list_ports_common

from shoe_controller import cli
from shoe_controller.commands.ports import format_listing
from shoe_controller.transports import ports
from shoe_controller.transports.ports import list_ports
from simulators.usb_backend import VirtualUsbBackend, VirtualUsbDevice


def test_shoe_ports_json_runs_on_this_machine(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ports", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert set(listing) == {"serial_ports", "usb_devices", "notes"}
    for port in listing["serial_ports"]:
        assert port["device"]


def test_shoe_ports_text_runs_on_this_machine(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ports", "--all"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Serial ports:") and "USB devices:" in out
    assert "Traceback" not in out


def test_no_ports_and_no_libusb_read_sensibly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("serial.tools.list_ports.comports", list)
    import usb.core

    def no_backend(*args: object, **kwargs: object) -> None:
        raise usb.core.NoBackendError("No backend available")

    monkeypatch.setattr(usb.core, "find", no_backend)
    text = format_listing(list_ports())
    assert "no serial ports found" in text
    assert "no backend available (install libusb-1.0" in text


def test_usb_serial_adapter_and_usb_shoe_are_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    adapter = list_ports_common.ListPortInfo("/dev/ttyUSB0", skip_link_detection=True)
    adapter.vid, adapter.pid, adapter.serial_number = 0x0403, 0x6001, "FT123"
    adapter.description = "FT232R USB UART"
    monkeypatch.setattr("serial.tools.list_ports.comports", lambda: [adapter])
    shoe = VirtualUsbDevice(serial_number="SHOE7")
    other = VirtualUsbDevice(vid=0x046D, pid=0xC52B, serial_number="MOUSE", address=3)
    bus = VirtualUsbBackend(shoe, other)

    listing = list_ports(usb_backend=bus)
    assert [p.usb_id for p in listing.serial_ports] == ["0403:6001"]
    assert [d.url for d in listing.usb_devices] == ["usb://1209:0001/SHOE7"]
    text = format_listing(listing)
    assert "/dev/ttyUSB0  FT232R USB UART  (USB 0403:6001, serial FT123)" in text
    assert "usb://1209:0001/SHOE7" in text

    everything = ports.list_ports(all_usb=True, usb_backend=bus)
    assert {d.serial_number for d in everything.usb_devices} == {"SHOE7", "MOUSE"}
    assert json.loads(json.dumps(everything.to_json()))["usb_devices"][0]["is_shoe"] in (
        True,
        False,
    )
