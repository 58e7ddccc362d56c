"""Starting any live table: its journal (one controller per journal, the key, the chain
checked before anything is rebuilt from it), the table system's reporter, and the services
beside the controller whose failures must reach the controller's loop."""

from __future__ import annotations

import contextlib
import fcntl
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from shoe_controller import __version__
from shoe_controller.config import RunConfig
from shoe_controller.errors import ConfigError, JournalError
from shoe_controller.journal import Journal
from shoe_controller.stop_signal import set_from_signal_handler

#: A journal key shorter than this is refused (it is an HMAC key, as the table system's).
MIN_JOURNAL_KEY_BYTES = 16


def table_system_reporter(config: RunConfig) -> Any:
    """The table-system reporter ``config`` asks for (``None`` without ``table_url``)."""
    if config.table_url is None:
        return None
    import ssl

    from shoe_controller.reporting.client import TableSystemConfig, TableSystemReporter
    from shoe_controller.reporting.protocol import read_key_file

    assert config.table_token is not None and config.table_key_file is not None  # validated
    context = None
    if config.table_url.startswith("wss://"):
        context = ssl.create_default_context(
            cafile=None if config.table_ca_file is None else str(config.table_ca_file))
    return TableSystemReporter(TableSystemConfig(
        url=config.table_url, token=config.table_token, key=read_key_file(config.table_key_file),
        table_id=config.table_id, ssl_context=context, controller_version=__version__,
    ))


@contextlib.contextmanager
def journal_lock(journal: Path) -> Iterator[None]:
    """Hold ``<journal>.lock`` exclusively: two controllers on one journal would interleave
    two tables' inputs. The OS releases it when the process dies, even by SIGKILL."""
    lock_path = journal.with_name(journal.name + ".lock")
    check_journal_path(journal)
    try:
        lock_file = open(lock_path, "a+")  # noqa: SIM115 - closed by the with below
    except OSError as exc:
        raise JournalError(f"{journal}: cannot create the journal's lock file "
                           f"{lock_path.name}: {exc.strerror or exc}") from None
    with lock_file as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise JournalError(f"{journal}: in use by another shoe controller") from None
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def check_journal_path(journal: Path) -> None:
    """A journal's folder must exist: a typo in the path must not start a fresh table in a
    new folder (the journal is the table's memory)."""
    folder = journal.parent
    if not folder.is_dir():
        what = "is not a directory" if folder.exists() else "does not exist"
        raise JournalError(f"{journal}: directory {folder} {what} (create it first if this "
                           "is really a new table)")
    if journal.is_dir():
        raise JournalError(f"{journal}: is a directory, not a journal file")


def journal_key(config: RunConfig) -> bytes | None:
    """The journal's HMAC key from ``journal_key_file`` (None: a plain journal)."""
    path = config.journal_key_file
    if path is None:
        return None
    try:
        key = Path(path).read_bytes().strip()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the journal key: {exc.strerror or exc}") from None
    if len(key) < MIN_JOURNAL_KEY_BYTES:
        raise ConfigError(f"{path}: the journal key must be at least {MIN_JOURNAL_KEY_BYTES} "
                          "bytes")
    return key


def check_journal_chain(journal: Journal) -> None:
    """Refuse to run on a journal whose hash chain is broken: the table would be rebuilt
    from records someone edited, and every record appended would extend a forged chain."""
    report = journal.verify()
    if report.ok:
        return
    first = report.problems[0]
    raise JournalError(
        f"{journal.path}: the journal failed verification ({len(report.problems)} "
        f"problem(s); first: {first.message}); not started. See `shoe journal verify "
        f"{journal.path}` and call the supervisor")


def check_http(http: Any) -> None:
    """The dealer display's listener (``http``: ``HttpSettings`` or an ``--http`` text) can
    be served: its TLS files load and its address is free. Checked before the journal."""
    import socket

    from shoe_controller.web.app import WebServerError, _tls_context
    from shoe_controller.web.binding import http_settings

    settings = http_settings(http) if isinstance(http, str) else http
    _tls_context(settings)
    try:
        socket.create_server((settings.host, settings.port)).close()
    except OSError as exc:
        raise WebServerError(f"web display: cannot listen on {settings.host}:"
                             f"{settings.port}: {exc}") from exc


class Services:
    """Optional services beside the controller (dealer display, camera fallback): each one's
    failure in its own thread stops the controller's loop and is re-raised to the caller."""

    def __init__(self) -> None:
        self.checks: list[Any] = []

    def should_stop(self, stop: Any) -> Any:
        def check() -> bool:
            for service in self.checks:
                service.check()
            return bool(stop())

        return check


class StopSignals:
    """SIGINT and SIGTERM ask a command's loop to stop: :attr:`event` is set, and each signal
    is kept, as its number (:attr:`received`) and its name (:attr:`names`), for the command's
    last line and exit status."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.received: list[int] = []
        self.names: list[str] = []

    def install(self) -> StopSignals:
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self._on_signal)
        return self

    def _on_signal(self, signum: int, _frame: object) -> None:
        self.received.append(signum)
        self.names.append(signal.Signals(signum).name)
        set_from_signal_handler(self.event)
