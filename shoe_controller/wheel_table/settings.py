"""The ``[wheel]`` section of the run configuration (docs/config.md), checked whole.

Every key is optional; the defaults follow the vendor's guidance (wheel_protocol/PROTOCOL.md):
the wheel runs its games by itself and sends its status every 500 ms.

===========================  =======================================================
``name``                     the wheel's id in the bias report (default ``wheel-1``)
``baudrate``                 9600 (the wheel's); other standard rates for a converter
``host_starts``              the controller opens betting and starts each game (``*u``)
``poll_interval``            seconds between ``*X`` polls (absent: the wheel sends status)
``launch_fail_grace``        seconds flag 8 is ignored at the start of a spin (3)
``ball_not_detected_grace``  seconds flag 1 is tolerated before the game is void (5)
``confirmations``            agreeing reports that settle a number at once (2)
``confirm_window``           seconds a lone report waits for another (1.2)
``start_timeout``            seconds a host start may take to launch (10)
``status_timeout``           silence that latches "wheel silent" (3; 0: never)
``direction``                ``alternate``, ``clockwise`` or ``anticlockwise`` (host starts)
``bias_alert_p``             the bias monitor's alert level (1e-4)
``bias_min_games``           games before the monitor may alert (370)
``bias_sector_size``         neighbouring pockets per sector tested (9)
===========================  =======================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shoe_controller.games.roulette.bias import BiasConfig
from wheel_protocol import TrackerConfig

BAUDRATES = (1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200)
_TRACKER_KEYS = ("host_starts", "poll_interval", "launch_fail_grace", "ball_not_detected_grace",
                 "confirmations", "confirm_window", "start_timeout", "status_timeout",
                 "direction")
_BIAS_KEYS = {"bias_alert_p": "alert_p", "bias_min_games": "min_games",
              "bias_sector_size": "sector_size"}
KEYS = ("name", "baudrate", *_TRACKER_KEYS, *_BIAS_KEYS)


def wheel_problems(section: Any) -> list[str]:
    """Why ``section`` is not a valid ``[wheel]`` table: one reason a line (none: valid)."""
    if not isinstance(section, Mapping):
        return [f": must be a table ([wheel]), got {type(section).__name__}"]
    problems = [f".{_label(key)}: unknown key (known: {', '.join(KEYS)})"
                for key in section if key not in KEYS]
    name = section.get("name", "wheel-1")
    if not isinstance(name, str) or not name.strip() or not name.isprintable():
        problems.append(f".name: must be a non-empty line of text, got {name!r}")
    baudrate = section.get("baudrate", 9600)
    if isinstance(baudrate, bool) or baudrate not in BAUDRATES:
        problems.append(f".baudrate: must be one of {', '.join(map(str, BAUDRATES))}, got "
                        f"{baudrate!r}")
    checked = {key: value for key, value in section.items() if key in _TRACKER_KEYS}
    if not isinstance(checked.get("host_starts", False), bool):
        problems.append(f".host_starts: must be true or false, got "
                        f"{checked.pop('host_starts')!r}")
    try:
        tracker_config(checked)
    except (ValueError, TypeError, OverflowError) as exc:
        problems.extend(f": {reason}" for reason in str(exc).split("; "))
    try:
        bias_config(section)
    except (ValueError, TypeError, OverflowError) as exc:
        problems.append(f": bias_{exc!s}")
    return problems


def _label(key: object) -> str:
    """A key as written, or quoted when it would not show as itself on one line."""
    if isinstance(key, str) and key and key.isprintable() and key.strip() == key:
        return key
    return repr(key)


def tracker_config(section: Mapping[str, Any]) -> TrackerConfig:
    values = {key: section[key] for key in _TRACKER_KEYS if key in section}
    for key, value in values.items():  # a TOML integer is a number of seconds too
        if key not in ("host_starts", "confirmations", "direction") \
                and isinstance(value, int) and not isinstance(value, bool):
            values[key] = float(value)
    return TrackerConfig(**values)


def bias_config(section: Mapping[str, Any]) -> BiasConfig:
    values = {field: section[key] for key, field in _BIAS_KEYS.items() if key in section}
    if isinstance(values.get("alert_p"), int) and not isinstance(values["alert_p"], bool):
        values["alert_p"] = float(values["alert_p"])
    return BiasConfig(**values)
