"""Where the MQTT broker is and how to log in: ``mqtt://`` / ``mqtts://`` URLs, topic names.

Pure (no sockets): ``shoe run`` and ``shoe pit`` check everything here before they start, so a
typo in a URL or a missing certificate is one clear line at start, never a publisher that
retries for ever against a broker it can never reach.

Secrets stay out of the command line (every user of the machine sees it in ``ps``): a URL may
name the user (``mqtts://table-07@broker:8883``), never the password; the password is read
from a file (``mqtt_password_file``).

Topics (docs/mqtt/README.md)::

    <prefix>/tables/<table_id>/state    retained JSON: what the table shows now
    <prefix>/tables/<table_id>/events   QoS 1: every table-system event, in order
    <prefix>/tables/<table_id>/status   retained: online, or offline (the last will)
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from shoe_controller.errors import ConfigError

SCHEMES = {"mqtt": 1883, "mqtts": 8883}
PROTOCOLS = ("5", "3.1.1")
DEFAULT_PREFIX = "shoe"
TOPIC_KINDS = ("state", "events", "status")
#: Characters a topic level of ours must not hold: the level separator, the wildcards, NUL.
_TOPIC_FORBIDDEN = frozenset("/+#\x00")
MAX_PREFIX = 200
MAX_PASSWORD_BYTES = 65535  # MQTT's binary data limit


class BrokerSettingsError(ConfigError):
    """An MQTT broker URL, topic prefix, login or TLS option is wrong (the message says how)."""


@dataclass(frozen=True)
class BrokerSettings:
    """A validated broker: address, TLS files, login. :attr:`password` never appears in a
    repr or a log line (:meth:`describe` is the URL to show)."""

    host: str
    port: int
    tls: bool = False
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None
    protocol: str = "5"
    keepalive: int = 15

    def describe(self) -> str:
        """The broker as a URL without secrets, for logs and errors."""
        scheme = "mqtts" if self.tls else "mqtt"
        user = f"{urllib.parse.quote(self.username, safe='')}@" if self.username else ""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{user}{host}:{self.port}"


def broker_settings(url: str, *, password_file: Path | str | None = None,
                    ca_file: Path | str | None = None, cert_file: Path | str | None = None,
                    key_file: Path | str | None = None, protocol: str = "5",
                    option: str = "--mqtt") -> BrokerSettings:
    """Validate a broker URL with its options; reads the password file and checks that the
    TLS files can be read. Raises :class:`BrokerSettingsError` naming ``option``."""
    text = str(url).strip()
    where = f"{option} " if option else ""
    if not text or any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise BrokerSettingsError(f"{where}{url!r}: expected mqtt://HOST[:PORT] or "
                                  "mqtts://[USER@]HOST[:PORT]")
    try:
        parts = urllib.parse.urlsplit(text)
        port = parts.port
    except ValueError:
        raise BrokerSettingsError(f"{where}{text!r}: the port must be a number from 1 to "
                                  "65535 (mqtt://HOST:PORT)") from None
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise BrokerSettingsError(f"{where}{text!r}: the scheme must be mqtt:// or mqtts:// "
                                  "(TLS)")
    if not parts.hostname:
        raise BrokerSettingsError(f"{where}{text!r}: no broker host (mqtt://HOST[:PORT])")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise BrokerSettingsError(f"{where}{text!r}: a broker URL has no path, query or "
                                  "fragment (the topic prefix is mqtt_prefix / --mqtt-prefix)")
    if parts.password is not None:
        raise BrokerSettingsError(f"{where}the URL holds a password, which every user of "
                                  "this machine can read in the process list; name only the "
                                  "user in the URL and put the password in a file "
                                  "(mqtt_password_file)")
    if port == 0:
        raise BrokerSettingsError(f"{where}{text!r}: the port must be a number from 1 to "
                                  "65535 (port 0 is not a broker's)")
    username = urllib.parse.unquote(parts.username) if parts.username else None
    if protocol not in PROTOCOLS:
        raise BrokerSettingsError(f"MQTT protocol {protocol!r}: one of {', '.join(PROTOCOLS)}")
    tls = scheme == "mqtts"
    files = {"CA file": ca_file, "client certificate": cert_file, "client key": key_file}
    if not tls and any(value is not None for value in files.values()):
        raise BrokerSettingsError(f"{where}{text!r}: CA, certificate and key files are only "
                                  "used with mqtts:// (TLS)")
    if (cert_file is None) != (key_file is None):
        raise BrokerSettingsError("the MQTT client certificate and its key go together "
                                  "(mqtt_cert_file and mqtt_key_file)")
    for what, path in files.items():
        if path is not None:
            _readable(Path(path), what)
    password = None
    if password_file is not None:
        if username is None:
            raise BrokerSettingsError(f"{where}{text!r}: a password file needs a user in the "
                                      "URL (mqtt://USER@HOST)")
        password = _read_password(Path(password_file))
    return BrokerSettings(
        host=parts.hostname, port=port or SCHEMES[scheme], tls=tls, username=username,
        password=password, ca_file=None if ca_file is None else Path(ca_file),
        cert_file=None if cert_file is None else Path(cert_file),
        key_file=None if key_file is None else Path(key_file), protocol=protocol)


def _readable(path: Path, what: str) -> None:
    try:
        with open(path, "rb") as handle:
            handle.read(1)
    except OSError as exc:
        raise BrokerSettingsError(f"{path}: cannot read the MQTT {what}: "
                                  f"{exc.strerror or exc}") from None


def _read_password(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BrokerSettingsError(f"{path}: cannot read the MQTT password: "
                                  f"{exc.strerror or exc}") from None
    try:
        password = data.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError:
        raise BrokerSettingsError(f"{path}: the MQTT password is not UTF-8 text") from None
    if not password or len(password.encode()) > MAX_PASSWORD_BYTES or "\n" in password:
        raise BrokerSettingsError(f"{path}: expected the MQTT password on one line")
    return password


# ---------------------------------------------------------------- topics
def check_prefix(prefix: str) -> str:
    """A topic prefix: one or more levels (``shoe``, ``casino/floor-2``), no wildcards, no
    ``$`` (reserved by brokers), no empty level."""
    text = str(prefix)
    problem = ""
    if not text or len(text) > MAX_PREFIX:
        problem = f"1 to {MAX_PREFIX} characters"
    elif text.startswith("$"):
        problem = "topics starting with $ are the broker's own"
    elif any(c in "+#\x00" or ord(c) < 32 for c in text):
        problem = "no wildcards (+, #) or control characters"
    elif any(not level for level in text.split("/")):
        problem = "no empty level (no leading, trailing or doubled /)"
    if problem:
        raise BrokerSettingsError(f"MQTT topic prefix {prefix!r}: {problem}")
    return text


def check_table_id(table_id: str) -> str:
    """A table id is one topic level: ACLs grant a table its own level and nothing else."""
    if (not table_id or any(c in _TOPIC_FORBIDDEN or ord(c) < 32 for c in table_id)
            or table_id.startswith("$")):
        raise BrokerSettingsError(f"table_id {table_id!r}: with MQTT it is a topic level, so "
                                  "it must not hold /, +, #, control characters or start "
                                  "with $")
    return table_id


@dataclass(frozen=True)
class Topics:
    """The topics of one table."""

    prefix: str
    table_id: str

    def __post_init__(self) -> None:
        check_prefix(self.prefix)
        check_table_id(self.table_id)

    @property
    def base(self) -> str:
        return f"{self.prefix}/tables/{self.table_id}"

    @property
    def state(self) -> str:
        return f"{self.base}/state"

    @property
    def events(self) -> str:
        return f"{self.base}/events"

    @property
    def status(self) -> str:
        return f"{self.base}/status"


def floor_subscriptions(prefix: str) -> list[str]:
    """What the pit subscribes to: every table's state, events and status."""
    check_prefix(prefix)
    return [f"{prefix}/tables/+/{kind}" for kind in TOPIC_KINDS]


def split_topic(prefix: str, topic: str) -> tuple[str, str] | None:
    """``(table_id, kind)`` of a table topic under ``prefix``; None for anything else."""
    head = f"{prefix}/tables/"
    if not topic.startswith(head):
        return None
    table_id, sep, kind = topic[len(head):].partition("/")
    if not sep or not table_id or kind not in TOPIC_KINDS:
        return None
    return table_id, kind
