"""Where and how the dealer display listens (``--http``), and which requests it answers.

Safe by default, because the display carries the PIN-protected supervisor panel:

* ``--http 8080`` or ``--http :8080`` listens on 127.0.0.1 only; another host must be named
  (``--http 0.0.0.0:8443``, ``--http 192.0.2.7:8443``).
* A host other than a loopback one needs TLS (``--http-cert FILE --http-key FILE``), or
  ``--http-insecure`` to say in so many words that PINs may cross the network in clear.
* Every request must name, in its ``Host`` header, a name this display answers to: the host it
  was told to listen on (for ``0.0.0.0``/``::``, the machine's host name), ``localhost``,
  ``127.0.0.1``, ``::1`` and the names given with ``--http-host``. Anything else gets 400: a
  web page elsewhere that gets its own name resolved to this machine (DNS rebinding) cannot
  talk to the panel through the dealer's browser. A ``POST`` whose ``Origin`` names another
  site gets 403 (a form or script elsewhere cannot send supervisor actions).

No FastAPI here: ``shoe run`` and ``shoe demo`` validate their ``--http`` options with these
functions before anything starts, without loading the web stack.
"""

from __future__ import annotations

import argparse
import ipaddress
import socket
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shoe_controller.errors import ConfigError

DEFAULT_HOST = "127.0.0.1"
LOCAL_NAMES = ("localhost", "127.0.0.1", "::1")
WILDCARDS = ("0.0.0.0", "::", "")


class HttpSettingsError(ConfigError):
    """``--http`` and its options do not make a safe, possible listener."""


def parse_http(text: str, option: str = "--http") -> tuple[str, int]:
    """``--http`` -> (host, port). ``PORT`` and ``:PORT`` mean 127.0.0.1; ``HOST:PORT``;
    IPv6 as ``[::1]:8080``. ``option``: the option named in errors (``--metrics`` too)."""
    value = str(text).strip()
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = DEFAULT_HOST, value
    elif not host:
        host = DEFAULT_HOST
    if host.startswith("["):
        if not host.endswith("]") or len(host) < 3:
            raise HttpSettingsError(f"{option} {text!r}: an IPv6 host is written [ADDRESS]:PORT")
        host = host[1:-1]
    elif ":" in host:
        raise HttpSettingsError(f"{option} {text!r}: write an IPv6 host as [ADDRESS]:PORT")
    if not port.isdigit() or not 0 <= int(port) <= 65535 or not host.strip():
        raise HttpSettingsError(
            f"{option} {text!r}: expected PORT (on 127.0.0.1), :PORT or HOST:PORT, e.g. 8080 or "
            "127.0.0.1:8080")
    return host.strip(), int(port)


def is_loopback(host: str) -> bool:
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def normal_host(name: str) -> str:
    """A host name as the Host check compares it: lower case, no brackets, no final dot."""
    name = name.strip().lower()
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    return name.rstrip(".")


@dataclass(frozen=True, slots=True)
class HttpSettings:
    """A validated listener: host and port, TLS files, extra host names, insecure allowed."""

    host: str = DEFAULT_HOST
    port: int = 0
    cert_file: Path | None = None
    key_file: Path | None = None
    hosts: tuple[str, ...] = ()
    insecure: bool = False
    allowed: frozenset[str] = field(default=frozenset(), compare=False)

    @property
    def tls(self) -> bool:
        return self.cert_file is not None

    @property
    def url_host(self) -> str:
        """The host to put in the display's URL (one the Host check accepts)."""
        if self.host in WILDCARDS:
            return self.hosts[0] if self.hosts else socket.gethostname()
        return f"[{self.host}]" if ":" in self.host else self.host


def http_settings(http: str | tuple[str, int], *, cert_file: Path | str | None = None,
                  key_file: Path | str | None = None, hosts: Iterable[str] = (),
                  insecure: bool = False) -> HttpSettings:
    """Validate the ``--http`` options together; raises :class:`HttpSettingsError` saying
    what to do."""
    host, port = parse_http(http) if isinstance(http, str) else http
    if (cert_file is None) != (key_file is None):
        raise HttpSettingsError("--http-cert and --http-key go together: the certificate (PEM) "
                                "and its private key (PEM)")
    names = tuple(normal_host(name) for name in hosts)
    for name in names:
        if not name or any(c.isspace() or c in "/@?#" for c in name):
            raise HttpSettingsError(f"--http-host {name!r}: expected a host name or address")
    if not is_loopback(host) and cert_file is None and not insecure:
        raise HttpSettingsError(
            f"--http {host}:{port} listens beyond this machine without TLS: supervisor PINs "
            "would cross the network in clear. Give --http-cert FILE --http-key FILE, or "
            "listen on 127.0.0.1 (--http PORT), or add --http-insecure if the network is "
            "yours alone")
    allowed = {*LOCAL_NAMES, *names}
    if host in WILDCARDS:
        allowed.add(normal_host(socket.gethostname()))
    else:
        allowed.add(normal_host(host))
    return HttpSettings(host, port, None if cert_file is None else Path(cert_file),
                        None if key_file is None else Path(key_file), names, insecure,
                        frozenset(allowed))


def host_name(header: str | None) -> str | None:
    """The host of a ``Host`` header (port dropped), normalised; None if it is not one."""
    if header is None:
        return None
    value = header.strip()
    if value.startswith("["):
        end = value.find("]")
        rest = value[end + 1:]
        if end < 0 or (rest and not (rest.startswith(":") and rest[1:].isdigit())):
            return None
        try:
            ipaddress.IPv6Address(value[1:end])
        except ValueError:
            return None
        return normal_host(value[1:end])
    name, sep, port = value.rpartition(":")
    if sep and port.isdigit() and ":" not in name:
        value = name
    elif ":" in value:
        return None
    if not value or any(c.isspace() or c in "/@?#\\" for c in value):
        return None
    return normal_host(value)


class HostCheck:
    """ASGI middleware: 400 for a ``Host`` this display does not answer to, 403 for a state
    changing request whose ``Origin`` is another site."""

    SAFE_METHODS = ("GET", "HEAD", "OPTIONS")

    def __init__(self, app: Any, allowed: Iterable[str]) -> None:
        self.app = app
        self.allowed = frozenset(normal_host(name) for name in allowed)

    async def __call__(self, scope: Mapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {key.lower(): value for key, value in scope.get("headers", [])}
        host = host_name(_text(headers.get(b"host")))
        if host is None or host not in self.allowed:
            await _plain(send, 400, "Invalid host header: this display does not answer to that "
                         "name (the operator adds names with --http-host)")
            return
        origin = headers.get(b"origin")
        if origin is not None and scope.get("method", "GET") not in self.SAFE_METHODS:
            origin_host = urllib.parse.urlsplit(_text(origin) or "").hostname
            if origin_host is None or normal_host(origin_host) not in self.allowed:
                await _plain(send, 403, "Cross-site request refused")
                return
        await self.app(scope, receive, send)


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode("latin-1")


async def _plain(send: Any, status: int, text: str) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


# -- command line ------------------------------------------------------------------------------


def add_http_options(parser: argparse.ArgumentParser, *, example: str = "8080") -> None:
    """``--http``, ``--http-cert``, ``--http-key``, ``--http-host``, ``--http-insecure``
    (``shoe run`` and ``shoe demo``)."""
    parser.add_argument("--http", metavar="[HOST:]PORT",
                        help="serve the dealer display, supervisor panel and API; PORT alone "
                        f"listens on 127.0.0.1 (e.g. --http {example}); another host needs TLS")
    parser.add_argument("--http-cert", type=Path, metavar="FILE",
                        help="serve HTTPS with this certificate (PEM; with --http-key)")
    parser.add_argument("--http-key", type=Path, metavar="FILE",
                        help="the certificate's private key (PEM)")
    parser.add_argument("--http-host", action="append", metavar="NAME",
                        help="another name or address browsers reach the display by "
                        "(repeatable); requests naming any other host are refused")
    parser.add_argument("--http-insecure", action="store_true",
                        help="allow a non-loopback --http without TLS (PINs in clear)")


def http_from_args(args: argparse.Namespace) -> HttpSettings | None:
    """The validated listener the options above ask for (``None`` without ``--http``).

    Raises :class:`HttpSettingsError` (exit 1 with its message) before anything starts."""
    others = [f"--{name.replace('_', '-')}" for name in ("http_cert", "http_key", "http_host",
                                                          "http_insecure")
              if getattr(args, name, None)]
    if args.http is None:
        if others:
            raise HttpSettingsError(f"{', '.join(others)}: only used with --http")
        return None
    return http_settings(args.http, cert_file=args.http_cert, key_file=args.http_key,
                         hosts=args.http_host or (), insecure=bool(args.http_insecure))


__all__ = ["HostCheck", "HttpSettings", "HttpSettingsError", "add_http_options",
           "host_name", "http_from_args", "http_settings", "is_loopback", "parse_http"]
