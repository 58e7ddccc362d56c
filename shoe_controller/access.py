"""Who may act as a supervisor, and how often anyone may try: one guard for every way in.

The web panel (its login and every action) and the stdin console (``shoe run --console``) both
go through :meth:`TableController.supervisor` or ``controller.access``, i.e. through one
:class:`AccessGuard`, keyed by the *client* a try comes from (the HTTP peer's address,
``"console"``) and the supervisor id that was typed, known or not.

Limits (:class:`Limits`, the defaults) and why they are what they are::

    per client and id   5 wrong PINs in 300 s  -> that client is held off for that id
    per client         10 wrong PINs in 300 s  -> that client is held off for every id
    whole table        20 wrong PINs in  30 s  -> every client is held off, except a client
                                                 that logged in as that id within 12 h

* A hold-off lasts until the oldest of the wrong PINs that caused it leaves its window: at most
  300 s for a client, at most 30 s table-wide.
* Another client is never held off by a client's wrong PINs: an attacker can lock out only
  themselves, not the supervisor at the dealer's screen.
* One client alone can never reach the table-wide limit (10 per 300 s < 20 per 30 s). Keeping it
  reached needs 20 wrong PINs every 30 s, i.e. at least 20 clients (addresses) each spending its
  10 tries; even then a supervisor who has logged in from their client before (the dealer PC,
  the console) is not held off, and a new one waits at most 30 s at a time.
* The table-wide limit bounds the PBKDF2 work an attack can cause: about 20 checks (0.26 s each
  at 600 000 iterations on the dealer PC) per 30 s. A client that logged in as an id (a
  *trusted* pair) is neither held off by it nor counted in it: its wrong PINs are bounded by
  its own limits (5 per 300 s), and it cannot be made without the PIN.
* "Client" is what the caller says: for the web, the TCP peer's address (proxy headers are
  ignored, so a request cannot choose it). Everyone on the dealer PC is 127.0.0.1: one client.

Every try is *counted before its PIN is hashed*, as a wrong one until the hash says otherwise,
so concurrent tries cannot overtake the count: 60 wrong PINs sent at once from one client cost
5 PBKDF2 checks, not 60. A try that is held off costs no check; whether it is held off depends
only on the client, the typed id and the counts, never on whether the id exists.

Every try that is not held off costs exactly one PBKDF2 check with the parameters of the
configured hashes: an unknown id, a reserved one (:data:`~shoe_controller.config.RESERVED_ACTORS`)
or a PIN shorter than :data:`~shoe_controller.config.MIN_PIN_DIGITS` is checked against a dummy
hash that no PIN matches, and refused exactly like a wrong PIN. Neither the answer nor the time
tells a known id from an unknown one.

Memory is bounded whatever arrives: the tables of clients, of (client, id) pairs and of trusted
pairs are LRU-ordered with size caps (:class:`Limits`), and each keeps only the last ``limit``
times. The counts live in memory: a restarted controller starts afresh.

The guard reads no clock of its own (``clock``, seconds, is passed in: the controller passes its
own), never sleeps, and is thread-safe; the PBKDF2 check runs outside its lock.
"""

from __future__ import annotations

import collections
import itertools
import logging
import re
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from shoe_controller.config import (
    MIN_PIN_DIGITS,
    PIN_ITERATIONS,
    PIN_SCHEME,
    RESERVED_ACTORS,
    check_pin,
)
from shoe_controller.errors import ConfigError, SupervisorHeldOffError

log = logging.getLogger("shoe_controller.access")

DEFAULT_CLIENT = "local"
"""The client of a caller that names none (code calling the controller directly)."""
CONSOLE_CLIENT = "console"
"""The client of the stdin console (``shoe run --console``)."""
KEY_CHARS = 128
"""Typed ids and client names are kept to this many characters (memory stays bounded)."""




@dataclass(frozen=True, slots=True)
class Limits:
    """The guard's numbers (the module docstring says why these)."""

    pair_failures: int = 5
    pair_window: float = 300.0
    client_failures: int = 10
    client_window: float = 300.0
    table_failures: int = 20
    table_window: float = 30.0
    trusted_seconds: float = 12 * 3600.0
    """A client that logged in as an id within this long is not held off by the table limit."""
    max_pairs: int = 4096
    max_clients: int = 4096
    max_trusted: int = 1024

    def __post_init__(self) -> None:
        counts = (self.pair_failures, self.client_failures, self.table_failures,
                  self.max_pairs, self.max_clients, self.max_trusted)
        if min(counts) < 1 or min(self.pair_window, self.client_window, self.table_window) <= 0:
            raise ConfigError("access limits must be positive")


def actor_key(name: str) -> str:
    """``name`` as the reserved-name rule compares it: lower case, ``-``, ``_``, ``.`` dropped
    (the rule of :mod:`shoe_controller.config`, so ``Table_System`` is ``table-system``)."""
    return re.sub(r"[-_.]", "", name.lower())


_RESERVED = frozenset(actor_key(name) for name in RESERVED_ACTORS)


def is_reserved(supervisor: str) -> bool:
    """Whether ``supervisor`` is one of the names the controller journals its own actions as."""
    return actor_key(supervisor) in _RESERVED


def _iterations(stored: str) -> int | None:
    parts = stored.split("$")
    if len(parts) != 4 or parts[0] != PIN_SCHEME or not parts[1].isdigit():
        return None
    return int(parts[1])


Entry = tuple[float, int]  # (when, serial): one wrong PIN, or a try whose check is running


class AccessGuard:
    """Checks supervisors' PINs for every way in, with the limits above.

    ``supervisors`` maps id -> PIN hash and is read at each try (the controller passes its own
    map); ``verify_pin(stored, pin) -> bool`` is the PBKDF2 check (``config.check_pin``; a test
    may wrap it to count the checks).
    """

    def __init__(self, supervisors: Mapping[str, str], *,
                 clock: Callable[[], float] = time.monotonic, limits: Limits | None = None,
                 verify_pin: Callable[[str, str], bool] = check_pin) -> None:
        reserved = sorted(name for name in supervisors if is_reserved(name))
        if reserved:
            raise ConfigError(
                f"supervisor id(s) {', '.join(map(repr, reserved))} reserved for the controller's "
                "own actions (a supervisor's would look like the system's): choose other ids "
                "(docs/config.md, Reserved supervisor ids)")
        self.supervisors = supervisors
        self.limits = limits or Limits()
        self.verify_pin = verify_pin
        self._clock = clock
        self._lock = threading.Lock()
        self._serial = itertools.count()
        self._pairs: collections.OrderedDict[tuple[str, str], collections.deque[Entry]] = (
            collections.OrderedDict())
        self._clients: collections.OrderedDict[str, collections.deque[Entry]] = (
            collections.OrderedDict())
        self._table: collections.deque[Entry] = collections.deque(
            maxlen=self.limits.table_failures)
        self._trusted: collections.OrderedDict[tuple[str, str], float] = collections.OrderedDict()
        # No PIN matches a random digest; the check costs what a real one costs.
        self._dummy_salt = secrets.token_hex(16)
        self._dummy_digest = secrets.token_hex(32)

    # ------------------------------------------------------------------ the one way in
    def verify(self, supervisor: str, pin: str, client: str | None = None) -> bool:
        """True if ``pin`` is ``supervisor``'s PIN. False for a wrong PIN, an unknown or
        reserved id, or a PIN shorter than MIN_PIN_DIGITS, each after the same one PBKDF2
        check. Raises :class:`SupervisorHeldOffError` (no check made) while held off."""
        client_key = _key(DEFAULT_CLIENT if client is None else client)
        pair = (client_key, _key(supervisor))
        with self._lock:
            now = self._clock()
            wait, why = self._wait(pair, now)
            if wait > 0:
                log.debug("supervisor try held off (%s)", why,
                          extra={"supervisor": pair[1], "client": client_key})
                raise SupervisorHeldOffError(_held_off_message(why, wait), wait)
            entry = self._reserve(pair, now)
        stored = self.supervisors.get(supervisor)
        genuine = (stored is not None and not is_reserved(supervisor)
                   and len(pin) >= MIN_PIN_DIGITS and _iterations(stored) is not None)
        checked = self.verify_pin(stored if genuine and stored is not None else self._dummy(),
                                  pin)
        ok = genuine and checked
        with self._lock:
            if ok:
                self._succeeded(pair, entry, self._clock())
            else:
                self._failed(pair)
        if not ok:
            log.warning("supervisor: unknown id or wrong PIN",
                        extra={"supervisor": pair[1], "client": client_key})
        return ok

    def is_held_off(self, supervisor: str, client: str | None = None) -> bool:
        """Whether a try by ``client`` as ``supervisor`` would now be refused unchecked.
        Read-only: asking changes nothing."""
        return self.retry_after(supervisor, client) > 0

    def retry_after(self, supervisor: str, client: str | None = None) -> float:
        """Seconds until ``client`` may try as ``supervisor`` again (0: now)."""
        pair = (_key(DEFAULT_CLIENT if client is None else client), _key(supervisor))
        with self._lock:
            return self._wait(pair, self._clock())[0]

    def sizes(self) -> dict[str, int]:
        """How many entries each table holds (memory stays within :class:`Limits`)."""
        with self._lock:
            return {"pairs": len(self._pairs), "clients": len(self._clients),
                    "table": len(self._table), "trusted": len(self._trusted),
                    "entries": sum(map(len, self._pairs.values()))
                    + sum(map(len, self._clients.values()))}

    # ------------------------------------------------------------------ internals (locked)
    def _dummy(self) -> str:
        """A hash no PIN matches, with the iterations most configured hashes use."""
        found = [n for n in map(_iterations, self.supervisors.values()) if n is not None]
        iterations = (max(set(found), key=lambda n: (found.count(n), n)) if found
                      else PIN_ITERATIONS)
        return f"{PIN_SCHEME}${iterations}${self._dummy_salt}${self._dummy_digest}"

    def _trusted_now(self, pair: tuple[str, str], now: float) -> bool:
        since = self._trusted.get(pair)
        return since is not None and now - since <= self.limits.trusted_seconds

    def _wait(self, pair: tuple[str, str], now: float) -> tuple[float, str]:
        limits = self.limits
        waits = [(_window_wait(self._pairs.get(pair), limits.pair_failures,
                               limits.pair_window, now), "client"),
                 (_window_wait(self._clients.get(pair[0]), limits.client_failures,
                               limits.client_window, now), "client")]
        if not self._trusted_now(pair, now):
            waits.append((_window_wait(self._table, limits.table_failures,
                                       limits.table_window, now), "table"))
        return max(waits)

    def _reserve(self, pair: tuple[str, str], now: float) -> Entry:
        """Count the try as a wrong PIN before it is checked."""
        entry = (now, next(self._serial))
        limits = self.limits
        _lru_entries(self._pairs, pair, limits.pair_failures, limits.max_pairs).append(entry)
        _lru_entries(self._clients, pair[0], limits.client_failures,
                     limits.max_clients).append(entry)
        # A trusted pair is neither held off by the table-wide count nor counted in it: its
        # tries are bounded by its own limit, and counting them in a table kept at its
        # limit's length would push out the wrong PINs that count.
        if not self._trusted_now(pair, now):
            self._table.append(entry)
        return entry

    def _succeeded(self, pair: tuple[str, str], entry: Entry, now: float) -> None:
        self._pairs.pop(pair, None)  # the right PIN forgives this id's wrong ones from here
        for entries in (self._clients.get(pair[0]), self._table):
            if entries is not None and entry in entries:
                entries.remove(entry)
        self._trusted[pair] = now
        self._trusted.move_to_end(pair)
        while len(self._trusted) > self.limits.max_trusted:
            self._trusted.popitem(last=False)

    def _failed(self, pair: tuple[str, str]) -> None:
        """The reservation stands as the wrong PIN; say so once when it starts a hold-off."""
        limits = self.limits
        for entries, limit, who in ((self._pairs.get(pair), limits.pair_failures,
                                     "this client and id"),
                                    (self._clients.get(pair[0]), limits.client_failures,
                                     "this client")):
            if entries is not None and len(entries) == limit:
                log.warning("supervisor: %d wrong PINs from %s: held off for a while",
                            limit, who, extra={"supervisor": pair[1], "client": pair[0]})
                return


def _key(text: str) -> str:
    return str(text)[:KEY_CHARS]


def _lru_entries(table: collections.OrderedDict[object, collections.deque[Entry]], key: object,
                 limit: int, cap: int) -> collections.deque[Entry]:
    entries = table.get(key)
    if entries is None:
        entries = table[key] = collections.deque(maxlen=limit)
        while len(table) > cap:
            table.popitem(last=False)
    else:
        table.move_to_end(key)
    return entries


def _window_wait(entries: collections.deque[Entry] | None, limit: int, window: float,
                 now: float) -> float:
    """Seconds until fewer than ``limit`` of ``entries`` are within ``window`` of ``now``."""
    if entries is None or len(entries) < limit:
        return 0.0
    return max(0.0, entries[-limit][0] + window - now)


def _held_off_message(why: str, wait: float) -> str:
    seconds = max(1, round(wait + 0.5))
    shown = f"{seconds // 60} min {seconds % 60} s" if seconds >= 60 else f"{seconds} s"
    if why == "table":
        return (f"too many wrong PINs at this table just now: try again in {shown} (a "
                "supervisor who logged in from here before is not held off)")
    return f"too many wrong PINs from here: try again in {shown}"


__all__ = ["CONSOLE_CLIENT", "DEFAULT_CLIENT", "AccessGuard", "Limits",
           "SupervisorHeldOffError", "actor_key", "is_reserved"]
