"""``shoe ports``: which serial ports and USB shoes this PC can see, and the URL to use."""

from __future__ import annotations

import argparse
import json

from shoe_controller.transports.ports import PortListing, list_ports
from shoe_controller.transports.usb import SHOE_USB_IDS


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument(
        "--all", action="store_true", help="list every USB device, not only our shoes"
    )


def run(args: argparse.Namespace) -> int:
    listing = list_ports(all_usb=args.all)
    if args.json:
        print(json.dumps(listing.to_json(), indent=2))
    else:
        print(format_listing(listing, all_usb=args.all))
    return 0


def format_listing(listing: PortListing, *, all_usb: bool = False) -> str:
    lines = ["Serial ports:"]
    if not listing.serial_ports:
        lines.append("  no serial ports found")
    for port in listing.serial_ports:
        usb_id = f"USB {port.usb_id}" if port.usb_id else "not USB"
        extras = [usb_id]
        if port.serial_number:
            extras.append(f"serial {port.serial_number}")
        if port.is_shoe:
            extras.append("our shoe")
        description = f"  {port.description}" if port.description else ""
        lines.append(f"  {port.device}{description}  ({', '.join(extras)})")
    ours = ", ".join(f"{vid:04x}:{pid:04x}" for vid, pid in SHOE_USB_IDS)
    lines.append("USB devices:" if all_usb else f"USB shoes ({ours}):")
    if not listing.usb_devices and not listing.notes:
        lines.append("  no USB devices found" if all_usb else "  no USB shoes found")
    for dev in listing.usb_devices:
        name = " ".join(x for x in (dev.manufacturer, dev.product) if x) or "unknown device"
        where = f"bus {dev.bus} address {dev.address}" if dev.bus is not None else ""
        lines.append(f"  {dev.url}  {name}  {where}".rstrip())
    lines.extend(f"  {note}" for note in listing.notes)
    return "\n".join(lines)
