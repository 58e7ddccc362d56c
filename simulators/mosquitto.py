"""A private Mosquitto broker on a free loopback port, for tests and benchmarks.

Debian's ``mosquitto`` (scripts/debian-packages.txt) started with a generated config: no
persistence (a restart forgets retained messages, as a crashed broker without persistence
would), optionally users (``mosquitto_passwd``) and an ACL. Never the system's service.
:meth:`Mosquitto.stop` kills it (as a crash would); :meth:`Mosquitto.start` again reuses the
port, so clients reconnect to "the same broker, restarted".
"""

from __future__ import annotations

import contextlib
import getpass
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Self

MOSQUITTO = "/usr/sbin/mosquitto"
MOSQUITTO_PASSWD = "/usr/bin/mosquitto_passwd"


class BrokerMissing(RuntimeError):
    """Debian's mosquitto is not installed."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Mosquitto:
    """One broker process on 127.0.0.1:``port`` with its files in ``directory``. ``users``:
    name -> password (then anonymous clients are refused) and ``acl``: the ACL file's text."""

    def __init__(self, directory: Path, *, users: dict[str, str] | None = None,
                 acl: str | None = None, tls: tuple[Path, Path, Path] | None = None,
                 extra: tuple[str, ...] = ()) -> None:
        if shutil.which(MOSQUITTO) is None:
            raise BrokerMissing(f"{MOSQUITTO} is missing: run `bash scripts/dev.sh test` (it "
                                "installs scripts/debian-packages.txt) or apt-get install "
                                "mosquitto")
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.log = directory / "mosquitto.log"
        lines = [f"listener {self.port} 127.0.0.1"]
        if tls is not None:
            # (CA, certificate, key): TLS only, and every client shows a certificate of that
            # CA whose common name is its user name.
            ca, cert, key = tls
            lines += [f"cafile {ca}", f"certfile {cert}", f"keyfile {key}",
                      "tls_version tlsv1.2", "require_certificate true",
                      "use_identity_as_username true"]
        self.tls = tls is not None
        lines += ["persistence false",
                 f"log_dest file {self.log}", "log_type error", "log_type warning",
                 "log_type notice", "max_queued_messages 100000",
                 # Running as root, mosquitto would switch to its own user, who cannot read
                 # a test's private directory.
                 f"user {getpass.getuser()}", *extra]
        if users:
            passwords = directory / "passwd"
            passwords.touch(mode=0o600)
            for name, password in users.items():
                subprocess.run([MOSQUITTO_PASSWD, "-b", str(passwords), name, password],
                               check=True, capture_output=True)
            lines += ["allow_anonymous false", f"password_file {passwords}"]
        else:
            lines.append("allow_anonymous true")
        if acl is not None:
            acl_file = directory / "acl"
            acl_file.write_text(acl, encoding="utf-8")
            lines.append(f"acl_file {acl_file}")
        self.config = directory / "mosquitto.conf"
        self.config.write_text("\n".join(lines) + "\n", encoding="utf-8")
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"{'mqtts' if self.tls else 'mqtt'}://127.0.0.1:{self.port}"

    def start(self, timeout: float = 10.0) -> Self:
        self.process = subprocess.Popen([MOSQUITTO, "-c", str(self.config)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(OSError), socket.create_connection(
                    ("127.0.0.1", self.port), timeout=0.2):
                return self
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                err = self.process.stderr.read().decode() if self.process.stderr else ""
                raise RuntimeError(f"mosquitto did not start: {err}\n{self.log_text()}")
            time.sleep(0.02)

    def stop(self) -> None:
        """Kill the broker: connections drop, retained messages are gone."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        if self.process is not None and self.process.stderr is not None:
            self.process.stderr.close()

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
