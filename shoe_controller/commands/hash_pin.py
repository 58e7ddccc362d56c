"""``shoe hash-pin``: a supervisor PIN's hash, the value a config file's ``[supervisors]`` takes.

At a terminal the PIN is asked twice without echo (``getpass``); otherwise it is the first line
of standard input (``echo 471100 | shoe hash-pin``, for provisioning scripts). The PIN rule is
the config's own (:func:`shoe_controller.config.check_pin_policy`): a PIN it would refuse is
never hashed, and the message never repeats the PIN.
"""

from __future__ import annotations

import argparse
import getpass
import sys

from shoe_controller.config import MIN_PIN_DIGITS, check_pin_policy, hash_pin
from shoe_controller.errors import ConfigError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        f"Hash a supervisor PIN ({MIN_PIN_DIGITS} or more digits) for the [supervisors] table "
        "of the config file (docs/config.md). At a terminal the PIN is asked twice without "
        "echo; otherwise it is read from the first line of standard input. Prints the hash.")


def read_pin() -> str:
    """The PIN: asked twice without echo at a terminal, else standard input's first line."""
    if sys.stdin is not None and sys.stdin.isatty():
        pin = getpass.getpass("PIN: ")
        check_pin_policy(pin)  # refused before it is asked again
        if pin != getpass.getpass("PIN again: "):
            raise ConfigError("the two PINs differ")
        return pin
    line = sys.stdin.readline() if sys.stdin is not None else ""
    if not line:
        raise ConfigError("no PIN on standard input (run it at a terminal, or pipe the PIN in)")
    return line.rstrip("\r\n")


def run(args: argparse.Namespace) -> int:
    print(hash_pin(read_pin()))  # hash_pin checks the PIN rule again: one rule, one place
    return 0
