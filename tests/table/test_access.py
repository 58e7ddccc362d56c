"""The access guard every supervisor try goes through (web panel, console, code).

Work is counted as PBKDF2 checks (calls of the guard's ``verify_pin``), never as time: a
timing test on a shared 2-core machine proves nothing, and equal work is what makes the time
equal. The clock is a fake one, so hold-offs of minutes take no time.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from shoe_controller.access import (
    AccessGuard,
    Limits,
    SupervisorHeldOffError,
    is_reserved,
)
from shoe_controller.config import (
    MIN_PIN_ITERATIONS,
    RESERVED_ACTORS,
    check_pin,
    hash_pin,
    load_run_config,
)
from shoe_controller.errors import ConfigError
from shoe_controller.live.supervision import SupervisorAuthError
from shoe_controller.table.controller import TableController

PIN = "583920"
PIN_HASH = hash_pin(PIN, salt=b"access-guard-tests", iterations=MIN_PIN_ITERATIONS)
BOB_PIN = "660311"
BOB_HASH = hash_pin(BOB_PIN, salt=b"access-guard-bob", iterations=MIN_PIN_ITERATIONS)
WRONG = "000000"
LIMITS = Limits()


class Clock:
    def __init__(self) -> None:
        self.now = 5000.0

    def __call__(self) -> float:
        return self.now


class CountingCheck:
    """``check_pin`` (the real PBKDF2 unless ``fake``), counting calls and the iterations
    of the hash each call was made against."""

    def __init__(self, *, fake: bool = False,
                 gate: Callable[[str], None] | None = None) -> None:
        self.calls = 0
        self.iterations: Counter[int] = Counter()
        self.fake = fake
        self.gate = gate
        self._lock = threading.Lock()

    def __call__(self, stored: str, pin: str) -> bool:
        with self._lock:
            self.calls += 1
            self.iterations[int(stored.split("$")[1])] += 1
        if self.gate is not None:
            self.gate(pin)
        if self.fake:
            return stored == PIN_HASH and pin == PIN
        return check_pin(stored, pin)


def guard(clock: Clock, check: CountingCheck, **limits: float) -> AccessGuard:
    return AccessGuard({"alice": PIN_HASH, "bob": BOB_HASH}, clock=clock,
                       limits=Limits(**limits) if limits else None, verify_pin=check)


def outcome(g: AccessGuard, supervisor: str, pin: str, client: str) -> str:
    try:
        return "ok" if g.verify(supervisor, pin, client) else "wrong"
    except SupervisorHeldOffError:
        return "held off"


# -- counted before hashed ---------------------------------------------------------------------

def test_sixty_concurrent_wrong_pins_cost_at_most_the_limit_and_alice_logs_in_elsewhere() -> None:
    """Reported: 60 concurrent wrong PINs were all hashed (limit 5). Here the checks that
    get through are held inside the hash until every attacker thread has had its answer, so
    the count cannot have caught up afterwards: it must have been taken before the hash."""
    answered = threading.Semaphore(0)
    release = threading.Event()

    def gate(pin: str) -> None:
        if pin == WRONG:
            release.wait(10)

    check = CountingCheck(gate=gate)
    g = guard(Clock(), check)
    barrier = threading.Barrier(60)

    def attack(_: int) -> str:
        barrier.wait(10)
        try:
            return outcome(g, "alice", WRONG, "203.0.113.9")
        finally:
            answered.release()

    with ThreadPoolExecutor(max_workers=60) as pool:
        futures = [pool.submit(attack, n) for n in range(60)]
        # Every try not admitted answers at once; the admitted ones sit in their hash.
        for _ in range(60 - LIMITS.pair_failures):
            assert answered.acquire(timeout=10)
        assert check.calls == LIMITS.pair_failures
        # During the attack, alice at the dealer's screen (another client) logs in.
        assert g.verify("alice", PIN, "192.0.2.1") is True
        assert g.is_held_off("alice", "203.0.113.9")
        assert not g.is_held_off("alice", "192.0.2.1")
        release.set()
        results = Counter(f.result(timeout=10) for f in futures)
    assert results == {"held off": 60 - LIMITS.pair_failures, "wrong": LIMITS.pair_failures}
    assert check.calls == LIMITS.pair_failures + 1  # the attacker's five and alice's one


def test_sixty_concurrent_wrong_pins_from_sixty_clients_cost_at_most_the_table_limit() -> None:
    clock = Clock()
    check = CountingCheck()
    g = guard(clock, check)
    assert g.verify("alice", PIN, "dealer-pc") is True  # alice has logged in here before
    check.calls = 0
    barrier = threading.Barrier(60)

    def attack(n: int) -> str:
        barrier.wait(10)
        return outcome(g, "alice", WRONG, f"198.51.100.{n}")

    with ThreadPoolExecutor(max_workers=60) as pool:
        results = Counter(pool.map(attack, range(60)))
    assert check.calls == LIMITS.table_failures
    assert results == {"wrong": LIMITS.table_failures, "held off": 60 - LIMITS.table_failures}
    # A client alice logged in from is not held off by the table-wide limit ...
    assert g.verify("alice", PIN, "dealer-pc") is True
    # ... a new one is, but only briefly (the table window), and without a hash.
    with pytest.raises(SupervisorHeldOffError, match="at this table") as held:
        g.verify("bob", BOB_PIN, "pit-tablet")
    assert 0 < held.value.retry_after <= LIMITS.table_window
    assert check.calls == LIMITS.table_failures + 1
    clock.now += LIMITS.table_window
    assert g.verify("bob", BOB_PIN, "pit-tablet") is True


# -- the same work whatever was typed ------------------------------------------------------------

@pytest.mark.parametrize("supervisor,pin", [
    ("alice", WRONG),            # known id, wrong PIN
    ("mallory", WRONG),          # unknown id
    ("mallory", PIN),            # unknown id, a PIN someone has
    ("alice", PIN[:4]),          # too short, though its start is right
    ("alice", ""),               # empty
    ("table-system", WRONG),     # reserved
    ("x" * 5000, "1" * 5000),    # absurdly long
])
def test_every_refused_try_costs_one_check_with_the_configured_parameters(
        supervisor: str, pin: str) -> None:
    check = CountingCheck()
    g = guard(Clock(), check)
    assert g.verify(supervisor, pin, "client-1") is False
    assert check.calls == 1
    assert check.iterations == {MIN_PIN_ITERATIONS: 1}  # what alice's and bob's hashes use


def test_a_short_pin_is_refused_even_when_a_hash_of_it_is_configured() -> None:
    """A hash made before the 6-digit rule no longer lets its short PIN in."""
    short_hash = "pbkdf2_sha256$100000$" + "ab" * 16 + "$" + "cd" * 32
    g = AccessGuard({"carol": short_hash}, clock=Clock(), verify_pin=lambda s, p: True)
    assert g.verify("carol", "1234", "c") is False  # even a check that says yes to all
    assert g.verify("carol", "123456", "c") is True


def test_an_unknown_id_is_limited_exactly_like_a_known_one() -> None:
    clock = Clock()
    check = CountingCheck(fake=True)
    g = guard(clock, check)
    answers = {who: [outcome(g, who, WRONG, f"client-{who}") for _ in range(8)]
               for who in ("alice", "mallory")}
    assert answers["alice"] == answers["mallory"] == (
        ["wrong"] * LIMITS.pair_failures + ["held off"] * (8 - LIMITS.pair_failures))
    assert check.calls == 2 * LIMITS.pair_failures


# -- who is held off, for how long ---------------------------------------------------------------

def test_a_client_holds_off_only_itself_and_only_for_the_window() -> None:
    clock = Clock()
    g = guard(clock, CountingCheck(fake=True))
    for _ in range(LIMITS.pair_failures):
        assert outcome(g, "alice", WRONG, "attacker") == "wrong"
    assert g.is_held_off("alice", "attacker")
    assert outcome(g, "alice", PIN, "attacker") == "held off"  # even the right PIN, unchecked
    assert not g.is_held_off("alice", "dealer-pc")
    assert outcome(g, "alice", PIN, "dealer-pc") == "ok"
    assert not g.is_held_off("bob", "attacker")  # other ids still open to this client
    with pytest.raises(SupervisorHeldOffError) as held:
        g.verify("alice", PIN, "attacker")
    assert held.value.retry_after == pytest.approx(LIMITS.pair_window)
    assert "try again in 5 min 0 s" in str(held.value)
    clock.now += LIMITS.pair_window - 1
    assert g.is_held_off("alice", "attacker")
    clock.now += 1
    assert outcome(g, "alice", PIN, "attacker") == "ok"


def test_one_client_guessing_ids_is_held_off_for_every_id() -> None:
    clock = Clock()
    g = guard(clock, CountingCheck(fake=True))
    for n in range(LIMITS.client_failures):
        assert outcome(g, f"guess{n}", WRONG, "scanner-of-ids") == "wrong"
    assert g.is_held_off("alice", "scanner-of-ids")
    assert outcome(g, "alice", PIN, "scanner-of-ids") == "held off"
    # One client alone never reaches the table-wide limit: others are not affected.
    assert LIMITS.client_failures < LIMITS.table_failures
    assert outcome(g, "alice", PIN, "dealer-pc") == "ok"
    clock.now += LIMITS.client_window
    assert outcome(g, "alice", PIN, "scanner-of-ids") == "ok"


def test_the_right_pin_forgives_that_ids_wrong_ones_from_that_client() -> None:
    g = guard(Clock(), CountingCheck(fake=True))
    for _ in range(LIMITS.pair_failures - 1):
        assert outcome(g, "alice", WRONG, "dealer-pc") == "wrong"
    assert outcome(g, "alice", PIN, "dealer-pc") == "ok"
    for _ in range(LIMITS.pair_failures - 1):
        assert outcome(g, "alice", WRONG, "dealer-pc") == "wrong"
    assert not g.is_held_off("alice", "dealer-pc")


def test_asking_whether_held_off_changes_nothing() -> None:
    clock = Clock()
    g = guard(clock, CountingCheck(fake=True))
    for _ in range(LIMITS.pair_failures):
        g.verify("alice", WRONG, "attacker")
    before = g.sizes()
    for client in ("attacker", "new-1", "new-2"):
        for who in ("alice", "bob", "nobody"):
            g.is_held_off(who, client)
            g.retry_after(who, client)
    assert g.sizes() == before
    assert g.is_held_off("alice", "attacker") and not g.is_held_off("nobody", "new-1")


# -- bounded memory ------------------------------------------------------------------------------

def test_memory_stays_bounded_after_100000_clients_and_ids() -> None:
    clock = Clock()
    check = CountingCheck(fake=True)
    g = guard(clock, check)
    for n in range(100_000):
        clock.now += 2.0  # slower than the table-wide limit: every try is checked
        assert g.verify(f"id-{n}", WRONG, f"client-{n}") is False
        if n % 7 == 0:
            assert g.verify("alice", PIN, f"client-{n}") is True  # fills the trusted table
    assert check.calls == 100_000 + len(range(0, 100_000, 7))
    sizes = g.sizes()
    assert sizes["pairs"] <= LIMITS.max_pairs
    assert sizes["clients"] <= LIMITS.max_clients
    assert sizes["trusted"] <= LIMITS.max_trusted
    assert sizes["table"] <= LIMITS.table_failures
    assert sizes["entries"] <= (LIMITS.max_pairs * LIMITS.pair_failures
                                + LIMITS.max_clients * LIMITS.client_failures)
    # The newest ones are the ones kept, and still counted.
    for _ in range(LIMITS.pair_failures - 1):
        g.verify("id-99999", WRONG, "client-99999")
    assert g.is_held_off("id-99999", "client-99999")


# -- reserved names ------------------------------------------------------------------------------

def test_reserved_ids_are_the_ones_config_validation_refuses() -> None:
    names = [*RESERVED_ACTORS, "Table_System", "table.system", "TIMER", "game_server", "alice",
             "table-system-2", "alice.b"]
    for name in names:
        try:
            load_run_config(None, {"device": "loop://", "profile": "punto-banco-8d",
                                   "journal": "j.db", "supervisors": {name: PIN_HASH}})
            refused_by_config = False
        except ConfigError as exc:
            assert "reserved" in str(exc), exc
            refused_by_config = True
        assert is_reserved(name) is refused_by_config, name


def bare_controller(supervisors: dict[str, str], clock: Callable[[], float] | None = None
                    ) -> TableController:
    """A controller with no journal, table or shoe: enough for its supervisor checks."""
    clock = clock if clock is not None else Clock()
    return TableController(journal=None, table=None, profile="x",  # type: ignore[arg-type]
                           connection=None, supervisors=supervisors,  # type: ignore[arg-type]
                           clock=clock)


def test_the_controller_refuses_reserved_ids_whatever_the_source_of_its_map() -> None:
    with pytest.raises(ConfigError, match="'table-system'.*reserved"):
        bare_controller({"alice": PIN_HASH, "table-system": PIN_HASH})
    controller = bare_controller({"alice": PIN_HASH})
    controller.supervisors["Table_System"] = PIN_HASH  # added behind validation's back
    with pytest.raises(SupervisorAuthError, match="unknown id or wrong PIN"):
        controller.supervisor("void_round", "Table_System", PIN, reason="cards exposed")
    with pytest.raises(SupervisorAuthError):
        controller.supervisor("clear", "alice", PIN[:5])


def test_the_controller_passes_the_client_and_its_clock() -> None:
    clock = Clock()
    controller = bare_controller({"alice": PIN_HASH}, clock)
    controller.access.verify_pin = CountingCheck(fake=True)
    for _ in range(LIMITS.pair_failures):
        with pytest.raises(SupervisorAuthError):
            controller.supervisor("clear", "alice", WRONG, client="203.0.113.9")
    with pytest.raises(SupervisorHeldOffError):
        controller.supervisor("clear", "alice", PIN, client="203.0.113.9")
    assert controller.supervisor("clear", "alice", PIN).status == "queued"  # client "local"
    assert controller.access.is_held_off("alice", "203.0.113.9")
    clock.now += LIMITS.pair_window
    assert not controller.access.is_held_off("alice", "203.0.113.9")
