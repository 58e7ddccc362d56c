"""The ``shoe run`` configuration: a TOML file plus command-line overrides, validated.

Every problem is collected and reported at once, each as ``FILE: key: reason``, so an operator
fixes the file in one go instead of one error per start. Unknown keys are errors (a typo must
not silently fall back to a default), with the closest known key suggested.

What is validated here is what is built later: the link's timings are checked by building the
:class:`~firmware_protocol.link.LinkConfig` itself, so a file that passes cannot fail at start.

Supervisor PINs are stored only as salted PBKDF2 hashes
(``pbkdf2_sha256$<iterations>$<salt hex>$<hash hex>``) of at least :data:`MIN_PIN_DIGITS`
digits; make one with ``shoe hash-pin``. Supervisor ids must not be
one of :data:`RESERVED_ACTORS`, the names the controller journals its own actions under. See
docs/config.md for every key.
"""

from __future__ import annotations

import difflib
import hashlib
import hmac
import math
import re
import secrets
import sys
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from firmware_protocol.link import LinkConfig

from shoe_controller.errors import ConfigError

LOG_LEVELS = ("debug", "info", "warning", "error")
DURABILITIES = ("full", "normal")
#: What the controller does while the table system is unreachable (the one definition).
TABLE_DOWN_POLICIES = ("keep-dealing", "stop-after-round")
#: Names the controller journals and reports its own actions and card sources under (the table
#: system's commands, the betting timer, the scanner, the camera, ...). A supervisor with one of
#: these ids would make their actions indistinguishable from the system's, so they are refused,
#: ignoring case and the separators ``-``, ``_``, ``.``.
RESERVED_ACTORS = (
    "table-system",
    "table_system",
    "game-server",
    "timer",
    "scanner",
    "camera",
    "supervisor",
    "system",
    "controller",
    "shoe",
    "dealer",
    "server",
    "host",
    "journal",
    "admin",
    "administrator",
    "root",
    "operator",
    "unknown",
    "none",
    "null",
)
MIN_PIN_DIGITS = 6
PIN_SCHEME = "pbkdf2_sha256"
PIN_ITERATIONS = 600_000  # OWASP 2023 recommendation for PBKDF2-HMAC-SHA256
MIN_PIN_ITERATIONS = 100_000
# Always used with fullmatch: "$" would also match before a trailing newline.
_PIN_HASH = re.compile(r"pbkdf2_sha256\$(\d+)\$([0-9a-f]{16,})\$([0-9a-f]{64})")
_USB_URL = re.compile(r"usb://[0-9a-fA-F]{4}:[0-9a-fA-F]{4}(/.*)?", re.DOTALL)
_SUPERVISOR_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")


@dataclass(frozen=True, slots=True)
class RunConfig:
    """Everything ``shoe run`` needs, validated. ``supervisors`` maps id -> PIN hash."""

    device: str
    profile: str
    journal: Path
    betting_seconds: float = 15.0
    shoes: int | None = None
    log_json: bool = False
    log_level: str = "info"
    heartbeat_seconds: float = 0.5
    link_timeout_seconds: float = 2.0
    durability: str = "full"
    table_id: str = "table-1"
    supervisors: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    table_url: str | None = None
    table_token: str | None = None
    table_key_file: Path | None = None
    table_ca_file: Path | None = None
    table_down_policy: str = "keep-dealing"
    journal_key_file: Path | None = None
    metrics: str | None = None
    """Where the Prometheus metrics are served on a port of their own: ``HOST:PORT``
    (normalised; ``--metrics``, docs/metrics.md); ``None``: only at the display's /metrics."""
    mqtt: str | None = None
    """The MQTT broker the table publishes to (``mqtt://`` or ``mqtts://``; docs/fleet.md)."""
    mqtt_prefix: str = "shoe"
    mqtt_protocol: str = "5"
    mqtt_password_file: Path | None = None
    mqtt_ca_file: Path | None = None
    mqtt_cert_file: Path | None = None
    mqtt_key_file: Path | None = None
    pit: str | None = None
    """The pit (a group of tables on the floor) named in the table's MQTT state."""
    wheel: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """A roulette table's ``[wheel]`` section (:mod:`shoe_controller.wheel_table.settings`)."""
    games: int | None = None
    """A wheel table stops after this many finished games (``shoe run --games``)."""

    def metrics_address(self) -> tuple[str, int] | None:
        """(host, port) of :attr:`metrics`, or None."""
        if self.metrics is None:
            return None
        host, _, port = self.metrics.rpartition(":")
        return host.strip("[]"), int(port)

    def mqtt_settings(self) -> Any:
        """The validated broker (``shoe_controller.fleet.broker.BrokerSettings``) or None;
        reads the password file and checks the TLS files (raises ``ConfigError``)."""
        if self.mqtt is None:
            return None
        from shoe_controller.fleet.broker import broker_settings, check_prefix, check_table_id
        from shoe_controller.fleet.client import tls_context

        check_prefix(self.mqtt_prefix)
        check_table_id(self.table_id)
        settings = broker_settings(
            self.mqtt, password_file=self.mqtt_password_file, ca_file=self.mqtt_ca_file,
            cert_file=self.mqtt_cert_file, key_file=self.mqtt_key_file,
            protocol=self.mqtt_protocol)
        tls_context(settings)
        return settings

    def link_config(self) -> LinkConfig:
        """The shoe link's settings: what validation built, so it cannot fail at start."""
        return link_settings(self.heartbeat_seconds, self.link_timeout_seconds)


def link_settings(heartbeat_seconds: float, link_timeout_seconds: float) -> LinkConfig:
    """The :class:`LinkConfig` for these config values (raises ``ValueError`` if invalid)."""
    from firmware_protocol.link import LinkConfig  # the shoe's link: a wheel table has none

    return LinkConfig(heartbeat_interval=heartbeat_seconds, link_timeout=link_timeout_seconds)


def durability_warning(config: RunConfig) -> str | None:
    """What ``shoe run`` must warn about the journal's durability, or ``None`` if nothing."""
    if config.durability != "normal":
        return None
    return (
        'durability = "normal": the journal does not fsync each record, so a card is '
        "acknowledged to the shoe before it is on disk; a power cut can lose a card the shoe "
        'has already deleted. Use durability = "full" at a live table.'
    )


REQUIRED = ("device", "profile", "journal")
KNOWN_KEYS = tuple(RunConfig.__dataclass_fields__)


# -- PINs ---------------------------------------------------------------------------------


def check_pin_policy(pin: str) -> None:
    """Raise :class:`ConfigError` unless ``pin`` is at least :data:`MIN_PIN_DIGITS` digits 0-9.

    The message never repeats the PIN.
    """
    if not pin:
        raise ConfigError("a PIN must not be empty")
    if not (pin.isascii() and pin.isdigit()):
        raise ConfigError("a PIN must be digits only (0-9)")
    if len(pin) < MIN_PIN_DIGITS:
        raise ConfigError(f"a PIN must be at least {MIN_PIN_DIGITS} digits, got {len(pin)}")


def hash_pin(pin: str, salt: bytes | None = None, iterations: int = PIN_ITERATIONS) -> str:
    """A salted PBKDF2-HMAC-SHA256 hash of ``pin`` in the config file's format.

    Refuses a PIN that is not :data:`MIN_PIN_DIGITS` or more digits (:func:`check_pin_policy`).
    """
    check_pin_policy(pin)
    salt = secrets.token_bytes(16) if salt is None else salt
    digest = hashlib.pbkdf2_hmac("sha256", pin.encode("utf-8"), salt, iterations)
    return f"{PIN_SCHEME}${iterations}${salt.hex()}${digest.hex()}"


def check_pin(stored: str, pin: str) -> bool:
    """True if ``pin`` matches the ``stored`` hash (constant-time compare)."""
    match = _PIN_HASH.fullmatch(stored)
    if match is None:
        return False
    iterations, salt_hex, digest_hex = match.groups()
    digest = hashlib.pbkdf2_hmac(
        "sha256", pin.encode("utf-8"), bytes.fromhex(salt_hex), int(iterations)
    )
    return hmac.compare_digest(digest.hex(), digest_hex)


# -- loading ------------------------------------------------------------------------------


def load_run_config(path: Path | None, overrides: Mapping[str, Any]) -> RunConfig:
    """Read ``path`` (if any), apply ``overrides`` (``None`` = not given) and validate.

    Raises one :class:`ConfigError` listing every problem, one ``FILE: key: reason`` a line.
    Override problems are named ``command line: key: reason``.
    """
    source = str(path) if path is not None else "command line"
    values: dict[str, tuple[str, Any]] = {}  # key -> (where it came from, raw value)
    problems: list[str] = []
    if path is not None:
        for key, value in _read_toml(path).items():
            values[key] = (str(path), value)
    for key, value in overrides.items():
        if value is not None:
            values[key] = ("command line", value)

    for key, (origin, _value) in values.items():
        if key not in KNOWN_KEYS:
            problems.append(f"{origin}: {_label(key)}: unknown key{_suggest(key)}")
    for key in REQUIRED:
        if key not in values:
            problems.append(
                f"{source}: {key}: required (set it in the file or with --{key.replace('_', '-')})"
            )

    checked: dict[str, Any] = {}
    failed: set[str] = set()
    for key, (origin, value) in values.items():
        check = _CHECKS.get(key)
        if check is None:
            continue
        try:
            checked[key] = check(value)
        except _Invalid as exc:
            failed.add(key)
            problems.extend(f"{origin}: {key}{reason}" for reason in exc.reasons)
    for key in ("journal", "table_key_file", "table_ca_file", "journal_key_file",
                *_MQTT_FILES):
        if path is not None and key in checked and values[key][0] == str(path):
            checked[key] = path.parent / checked[key]  # relative to the file
    if "table_url" in checked:
        for key in ("table_token", "table_key_file"):
            if key not in values:
                problems.append(f"{source}: {key}: required with table_url (set it in the "
                                f"file or with --{key.replace('_', '-')})")
    elif "table_url" not in values:
        # Without a table URL these would be silently ignored: the operator meant to report.
        for key in ("table_token", "table_key_file", "table_ca_file", "table_down_policy"):
            if key in values:
                problems.append(f"{values[key][0]}: {key}: only used with table_url (set "
                                "table_url or --table-url, or leave it out)")

    if "mqtt" not in values:
        for key in ("mqtt_prefix", "mqtt_protocol", *_MQTT_FILES):
            if key in values:
                problems.append(f"{values[key][0]}: {key}: only used with mqtt (set mqtt or "
                                "--mqtt, or leave it out)")

    if not failed & set(_LINK_KEYS.values()):
        for key, reason in _link_problems(checked):
            other = next(k for k in _LINK_KEYS.values() if k != key)
            origin = values.get(key, values.get(other, (source,)))[0]
            problems.append(f"{origin}: {key}: {reason}")
    if problems:
        raise ConfigError(
            f"{len(problems)} problem(s) in the run configuration:\n  " + "\n  ".join(problems)
        )
    return RunConfig(**checked)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        return parse_toml(data)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def toml_text(data: bytes) -> str:
    """A TOML file's bytes as text: UTF-8, a leading byte-order mark (Windows editors write
    one) dropped; otherwise a :class:`ConfigError` naming the first bad byte.

    ``bytes.decode``, never a text-mode file: the incremental utf-8-sig decoder behind one
    silently drops a partial byte-order mark at the end (a file of just ``b"\\xef"`` reads as "").
    """
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from None


def parse_toml(data: bytes | str) -> dict[str, Any]:
    """Parse a TOML file's bytes (or text); every way it can fail is a :class:`ConfigError`
    (without the file name, which the caller adds).

    Shared by the run configuration and the table profiles. ``tomllib`` alone can also raise
    ``UnicodeDecodeError`` (not UTF-8), ``RecursionError`` (arrays or inline tables nested a
    few hundred deep) and a plain ``ValueError`` (an integer over Python's 4300-digit limit).
    """
    text = toml_text(data) if isinstance(data, bytes) else data.removeprefix("\ufeff")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError("not valid TOML: arrays or tables nested too deeply") from None
    except ValueError as exc:  # e.g. an integer with more than 4300 digits
        raise ConfigError(f"not valid TOML: {str(exc).split(';')[0]}") from None


_LINK_KEYS = {"heartbeat_interval": "heartbeat_seconds", "link_timeout": "link_timeout_seconds"}


def _link_problems(checked: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(config key, reason) for each problem :class:`LinkConfig` finds with these timings.

    Building the real LinkConfig (instead of restating its rules) keeps validation and start-up
    in agreement whatever the link's rules become; its field names are translated to ours.
    """
    defaults = RunConfig.__dataclass_fields__
    heartbeat = checked.get("heartbeat_seconds", defaults["heartbeat_seconds"].default)
    link_timeout = checked.get("link_timeout_seconds", defaults["link_timeout_seconds"].default)
    try:
        link_settings(heartbeat, link_timeout)
    except ValueError as exc:
        found = []
        for part in str(exc).removeprefix("invalid LinkConfig: ").split("; "):
            for field_name, key in _LINK_KEYS.items():
                part = re.sub(rf"\b{field_name}\b", key, part)
            named = [(part.find(k), k) for k in _LINK_KEYS.values() if k in part]
            key = min(named)[1] if named else "link_timeout_seconds"
            reason = part.removeprefix(key).strip()
            found.append((key, reason))
        return found
    return []


def _suggest(key: str) -> str:
    close = difflib.get_close_matches(key, KNOWN_KEYS, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


# -- value checks: each returns the clean value or raises _Invalid with ": reason" parts ---


class _Invalid(Exception):
    def __init__(self, *reasons: str) -> None:
        super().__init__(*reasons)
        self.reasons = reasons


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise _Invalid(f": must be a string, got {_show(value)}")
    if not value.strip():
        raise _Invalid(": must not be empty")
    _printable(value.strip())
    return value.strip()


def _printable(text: str) -> None:
    """Control and other invisible characters have no place in a name, URL or path (a NUL
    would only fail later, at start, inside the OS call)."""
    for index, char in enumerate(text):
        if not char.isprintable():
            raise _Invalid(f": must not contain control or invisible characters, got {char!r} "
                           f"at position {index}")


def _device(value: Any) -> str:
    url = _text(value)
    if url.startswith("usb://") and not _USB_URL.fullmatch(url):
        raise _Invalid(f": a USB device is usb://VID:PID with 4 hex digits each, got {url!r}")
    return url


def _number(minimum: float, *, inclusive: bool) -> Callable[[Any], float]:
    def check(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _Invalid(f": must be a number of seconds, got {_show(value)}")
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            raise _Invalid(f": must be finite, got {_show(value)}")
        if number < minimum or (number == minimum and not inclusive):
            relation = ">=" if inclusive else ">"
            raise _Invalid(f": must be {relation} {minimum:g}, got {value!r}")
        return number

    return check


def _count(unit: str) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _Invalid(f": must be a whole number of {unit}, got {_show(value)}")
        if value < 1:
            raise _Invalid(f": must be at least 1 (leave it out to run until stopped), got "
                           f"{value}")
        return int(value)

    return check


_shoes = _count("shoes")


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _Invalid(f": must be true or false, got {_show(value)}")
    return value


def _choice(options: tuple[str, ...]) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if not isinstance(value, str) or value.lower() not in options:
            raise _Invalid(f": must be one of {', '.join(options)}, got {_show(value)}")
        return value.lower()

    return check


def _path(value: Any) -> Path:
    if isinstance(value, Path):
        return value
    if not isinstance(value, str) or not value.strip():
        raise _Invalid(f": must be a file path (a string), got {_show(value)}")
    _printable(value.strip())
    try:
        return Path(value.strip()).expanduser()
    except RuntimeError as exc:  # "~user/..." for an unknown user, or no home directory
        raise _Invalid(f": cannot expand {value.strip()!r}: {exc}") from None


def _listen(value: Any) -> str:
    """``[HOST:]PORT`` (a whole number alone is a port on 127.0.0.1) -> ``HOST:PORT``."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise _Invalid(f": must be [HOST:]PORT (a string) or a port number, got {_show(value)}")
    _printable(value)
    from shoe_controller.web.binding import parse_http

    try:
        host, port = parse_http(value, option="")
    except ConfigError as exc:
        raise _Invalid(f": {str(exc).strip()}") from None
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _ws_url(value: Any) -> str:
    url = _text(value)
    if not url.startswith(("ws://", "wss://")) or url.endswith("://"):
        raise _Invalid(f": must be a ws://HOST:PORT/... or wss://... URL, got {url!r}")
    return url


def _mqtt_url(value: Any) -> str:
    """The URL's form only; the files it goes with are read by ``RunConfig.mqtt_settings``."""
    url = _text(value)
    from shoe_controller.fleet.broker import broker_settings

    try:
        broker_settings(url, option="")
    except ConfigError as exc:
        raise _Invalid(f": {str(exc).strip()}") from None
    return url


def _fleet_check(name: str, value: str) -> str:
    """A topic prefix (``check_prefix``) checked as the publisher will use it."""
    from shoe_controller.fleet import broker

    try:
        return str(getattr(broker, name)(value))
    except ConfigError as exc:
        raise _Invalid(f": {str(exc).strip()}") from None


def _token(value: Any) -> str:
    token = _text(value)
    if len(token) < 8:
        raise _Invalid(": must be at least 8 characters")
    return token


def _supervisors(value: Any) -> Mapping[str, str]:
    if not isinstance(value, Mapping):
        raise _Invalid(f": must be a table of id = PIN hash, got {_show(value)}")
    reasons = []
    for name, stored in value.items():
        where = f".{_label(name)}"
        if not isinstance(name, str) or not _SUPERVISOR_ID.fullmatch(name):
            reasons.append(f"{where}: supervisor id must be 1-64 letters, digits, '.', '_', '-'")
        elif _actor_key(name) in _RESERVED_KEYS:
            reasons.append(
                f"{where}: {name!r} is reserved for the controller's own actions (a "
                "supervisor's would look like the system's); choose another id (docs/config.md, "
                "Reserved supervisor ids)"
            )
        elif not isinstance(stored, str):
            reasons.append(f"{where}: must be a PIN hash string, got {_show(stored)}")
        elif (match := _PIN_HASH.fullmatch(stored)) is None:
            looks_plain = stored.isdigit() or not stored.startswith(PIN_SCHEME)
            reason = (
                "looks like a plain-text PIN; PINs are never stored in clear"
                if looks_plain
                else f"not a valid {PIN_SCHEME}$<iterations>$<salt hex>$<hash hex> value"
            )
            reasons.append(
                f"{where}: {reason}; make a hash with `shoe hash-pin` and paste its "
                "output here"
            )
        elif int(match.group(1)) < MIN_PIN_ITERATIONS:
            reasons.append(
                f"{where}: {match.group(1)} PBKDF2 iterations are too few "
                f"(at least {MIN_PIN_ITERATIONS})"
            )
    if reasons:
        raise _Invalid(*reasons)
    return MappingProxyType(dict(value))


def _wheel(value: Any) -> Mapping[str, Any]:
    from shoe_controller.wheel_table.settings import wheel_problems

    problems = wheel_problems(value)
    if problems:
        raise _Invalid(*problems)
    return MappingProxyType(dict(value))


def _label(key: Any) -> str:
    """A key as written, or quoted if it would not show as itself on one line."""
    plain = isinstance(key, str) and key != "" and key.isprintable() and key.strip() == key
    return key if plain else repr(key)


def _actor_key(name: str) -> str:
    return re.sub(r"[-_.]", "", name.lower())


_RESERVED_KEYS = frozenset(_actor_key(name) for name in RESERVED_ACTORS)


def _show(value: Any) -> str:
    kind = {bool: "a boolean", int: "a number", float: "a number", str: "a string"}.get(
        type(value), f"a {type(value).__name__}"
    )
    if isinstance(value, (dict, list)):
        return kind
    if isinstance(value, int) and value.bit_length() > 200:
        return f"{kind} (with about {int(value.bit_length() * 0.30103)} digits)"
    shown = repr(value)
    return f"{kind} ({shown if len(shown) <= 80 else shown[:77] + '...'})"


_CHECKS: dict[str, Callable[[Any], Any]] = {
    "device": _device,
    "profile": _text,
    "journal": _path,
    "betting_seconds": _number(0, inclusive=True),
    "shoes": _shoes,
    "log_json": _bool,
    "log_level": _choice(LOG_LEVELS),
    "heartbeat_seconds": _number(0, inclusive=False),
    "link_timeout_seconds": _number(0, inclusive=False),
    "durability": _choice(DURABILITIES),
    "table_id": _text,
    "supervisors": _supervisors,
    "table_url": _ws_url,
    "table_token": _token,
    "table_key_file": _path,
    "table_ca_file": _path,
    "table_down_policy": _choice(TABLE_DOWN_POLICIES),
    "journal_key_file": _path,
    "metrics": _listen,
    "mqtt": _mqtt_url,
    "mqtt_prefix": lambda value: _fleet_check("check_prefix", _text(value)),
    "mqtt_protocol": _choice(("5", "3.1.1")),
    "mqtt_password_file": _path,
    "mqtt_ca_file": _path,
    "mqtt_cert_file": _path,
    "mqtt_key_file": _path,
    "pit": _text,
    "wheel": lambda value: _wheel(value),
    "games": _count("games"),
}
_MQTT_FILES = ("mqtt_password_file", "mqtt_ca_file", "mqtt_cert_file", "mqtt_key_file")


def _hash_pin_command(argv: list[str]) -> int:
    """``python -m shoe_controller.config [hash-pin]``: kept for old scripts; it is
    ``shoe hash-pin`` (shoe_controller/commands/hash_pin.py), options and all."""
    from shoe_controller.cli import main

    return main(["hash-pin", *(argv[1:] if argv[:1] == ["hash-pin"] else argv)])


if __name__ == "__main__":  # pragma: no cover
    sys.exit(_hash_pin_command(sys.argv[1:]))
