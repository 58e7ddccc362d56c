"""What a wheel table reports to the table system: every event a real :class:`WheelTable`
emits, over a scripted day of games with every wheel fault, every kind of void, supervisors'
clears, the line lost and back, self-tests and a biased wheel, goes through the real
:class:`EventStream` and must validate against the JSON Schemas in docs/table-protocol (and
the run-time :func:`check_message`).

The wheel's lines below are written by hand from the protocol's summary (issue 18 and
wheel_protocol/PROTOCOL.md), not produced by the simulator; the expected reasons and kinds are
the README's lists, written out here, not read from the code. The roulette examples in the
README are checked against the schemas too, signatures included.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_controller.errors import ProtocolViolation
from shoe_controller.games.roulette.bias import BiasConfig
from shoe_controller.live.inputs import TableInput
from shoe_controller.reporting import protocol as p
from shoe_controller.reporting.stream import EventStream
from shoe_controller.wheel_table.inputs import (
    BettingCommand,
    LinkChanged,
    SessionStarted,
    SupervisorAction,
    WheelLine,
    WheelTick,
)
from shoe_controller.wheel_table.machine import WheelSettings, WheelTable
from wheel_protocol import TrackerConfig

SCHEMAS = p.load_schemas()
README = p.schema_dir() / "README.md"
TABLE = "T-9"
T0 = 1_760_000_000.0
KEY = bytes(range(32))

# The README's "Roulette" lists, written out (the independent statement).
VOID_REASONS = {"misspin", "ball_not_detected", "fault", "wheel_idle", "abandoned",
                "no_result", "not_started", "number_mismatch", "supervisor"}
WHEEL_KINDS = {"hardware", "wheel_idle", "misspin", "ball_not_detected", "launch_retry",
               "not_started", "number_mismatch", "no_status", "game_not_opened", "line_noise",
               "wheel_bias"}
WHEEL_STATUSES = {"up", "down", "warning", "self_test_passed", "self_test_failed"}
ROULETTE_TYPES = {"round_opened", "betting_closed", "winning_number", "round_void",
                  "irregularity", "irregularity_cleared", "device_health"}
RED = {1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36}


class Script:
    """A wheel table fed hand-written lines on a clock of its own, every record kept."""

    def __init__(self, *, host_starts: bool = False, bias: BiasConfig | None = None) -> None:
        self.table = WheelTable(WheelSettings(
            table_id=TABLE, tracker=TrackerConfig(host_starts=host_starts),
            bias=bias or BiasConfig()))
        self.now = T0
        self.records: list[tuple[float, list[dict[str, Any]]]] = []
        self.apply(SessionStarted("roulette-single-zero", "roulette"))
        self.apply(LinkChanged(True))

    def apply(self, item: TableInput) -> list[dict[str, Any]]:
        events = self.table.handle(item, self.now).events
        self.records.append((self.now, events))
        return events

    def line(self, text: str, dt: float = 0.5) -> list[dict[str, Any]]:
        self.now += dt
        return self.apply(WheelLine(text))

    def status(self, state: int, spin: int, last: int | None, flags: int = 0, *,
               copies: int = 2) -> None:
        """A status as a wheel sends it: automatic status every 500 ms repeats it (twice
        here, unless ``copies`` says otherwise)."""
        shown = "  " if last is None else f"{last:>2}"
        for _ in range(copies):
            self.line(f"*X;{state};{spin:03d};{shown};{flags:X};250;0")

    def repeat(self, seconds: float, state: int, spin: int, last: int | None,
               flags: int = 0) -> None:
        """The same status every 500 ms for ``seconds``."""
        self.status(state, spin, last, flags, copies=int(seconds / 0.5))

    def wait(self, seconds: float) -> None:
        """Silence from the wheel: the table's timers fire as the controller would fire them."""
        end = self.now + seconds
        while (deadline := self.table.next_deadline()) is not None and deadline <= end:
            self.now = max(self.now, deadline)
            self.apply(WheelTick())
        self.now = end

    def supervisor(self, action: str, reason: str = "", who: str = "alice") -> None:
        self.now += 0.1
        self.apply(SupervisorAction(action, who, None, reason))

    def game(self, spin: int, last: int, number: int) -> None:
        """A whole game the wheel runs by itself: bets, rim, no more bets, the number twice
        (its status and its bare result line), then before the next game."""
        self.status(2, spin, last)
        self.status(3, spin, last)
        self.status(4, spin, last)
        self.status(5, spin, number)
        self.line(f"{number:>2}", dt=0.1)
        self.status(1, spin, number)

    def messages(self) -> list[dict[str, Any]]:
        stream = EventStream(TABLE)
        out = []
        for seq, (at, events) in enumerate(self.records, start=1):
            out += [o.to_message(TABLE, "n1.n2") for o in stream.add(seq, at, events)]
        return [p.sign(m, KEY) for m in out]


def a_day_at_a_wheel_that_runs_its_games() -> Script:
    s = Script()
    # The controller starts while the wheel is mid-game: a ball runs that no round was opened
    # for (watched, never settled: a warning).
    s.status(3, 7, 4)
    s.status(5, 7, 22)
    s.status(1, 7, 22)
    s.line("*F 000")  # a self-test answered: passed
    s.game(8, 22, 17)  # a normal game
    # A misspin: void, *R, the respin (a new round whose bets stand) gives 5.
    s.status(2, 9, 17)
    s.status(3, 9, 17, flags=2)
    s.status(3, 9, 17)
    s.status(4, 9, 17)
    s.status(5, 9, 5)
    s.status(1, 9, 5)
    # The launch failed and retried past the vendor's 3 s grace: a warning only; a number.
    s.status(2, 10, 5)
    s.repeat(4, 3, 10, 5, flags=8)
    s.status(4, 10, 5)
    s.status(5, 10, 0)
    s.line(" 0", dt=0.1)
    s.status(1, 10, 0)
    # Ball not detected for longer than the 5 s grace: void, latched; a clear.
    s.status(2, 11, 0)
    s.status(3, 11, 0)
    s.repeat(6, 4, 11, 0, flags=1)
    s.status(1, 11, 0)
    s.supervisor("clear")
    # A sensor fault (flag 4) mid-game: void, latched; the wheel idles; a failed self-test.
    s.status(2, 12, 0)
    s.status(3, 12, 0, flags=4)
    s.status(6, 12, 0, flags=4)
    s.line("*F 012")
    s.status(6, 12, 0)
    s.supervisor("clear")  # refused: the wheel still idles
    s.status(1, 12, 0)  # repaired and restarted
    s.supervisor("clear")
    # A silent drop to idle mid-game (no fault reporting): void, latched, *F asked for.
    s.status(2, 13, 0)
    s.status(3, 13, 0)
    s.status(6, 13, 0)
    s.line("*F 000")
    s.status(1, 13, 0)
    s.supervisor("clear")
    # A stray two-digit line while the ball still runs: line noise, dropped (a warning).
    s.status(2, 14, 0)
    s.status(3, 14, 0)
    s.line("21", dt=0.1)
    s.status(3, 14, 0)
    s.status(4, 14, 0)
    # The status says 12 (its repeat lost) and the result line 13: nothing settles which,
    # the game is void and latched.
    s.status(5, 14, 12, copies=1)
    s.line("13", dt=0.1)
    s.wait(1.5)
    s.status(1, 14, 12)
    # While it is latched the wheel runs a game: not opened, never settled.
    s.status(2, 15, 12)
    s.status(3, 15, 12)
    s.status(4, 15, 12)
    s.status(5, 15, 30)
    s.status(1, 15, 30)
    s.supervisor("clear")
    # The wheel goes back to "before a game" without a number: abandoned.
    s.status(2, 16, 30)
    s.status(3, 16, 30)
    s.status(1, 16, 30)
    # A new game begins before this one's number was seen: no result (and the new round).
    s.status(2, 17, 30)
    s.status(3, 17, 30)
    s.status(4, 17, 30)
    s.status(2, 18, 30)
    # A supervisor voids the round in play (the ball left the wheel).
    s.supervisor("void_round", "ball left the wheel")
    s.status(1, 18, 30)
    # Silence: "wheel silent" latches; the line drops and comes back; a clear.
    s.wait(4)
    s.now += 1
    s.apply(LinkChanged(False, "wheel line lost: cable"))
    s.now += 1
    s.apply(LinkChanged(True))
    s.status(1, 18, 30)
    s.supervisor("clear")
    # With mode 256 the wheel reports a fault during play as an *F line: void, latched.
    s.status(2, 19, 30)
    s.status(3, 19, 30)
    s.line("*F 004")
    s.status(1, 19, 30)
    s.supervisor("clear")
    # The line is lost while bets are open: bets are locked at once.
    s.status(2, 20, 30)
    s.now += 1
    s.apply(LinkChanged(False, "wheel line lost: unplugged"))
    s.now += 1
    s.apply(LinkChanged(True))
    s.game(21, 30, 26)
    return s


def a_host_started_wheel() -> Script:
    s = Script(host_starts=True)
    s.status(1, 1, 0)
    # A game the table system opens and closes; the wheel launches on *u.
    s.apply(BettingCommand("open", "table-system"))
    s.now += 1
    s.apply(BettingCommand("close", "table-system"))
    s.status(2, 2, 0)
    s.status(3, 2, 0)
    s.status(4, 2, 0)
    s.status(5, 2, 33)
    s.line("33", dt=0.1)
    s.status(1, 2, 33)
    # The wheel does not launch after *u: not started (void, latched).
    s.apply(BettingCommand("open", "timer"))
    s.now += 1
    s.apply(BettingCommand("close", "timer"))
    s.repeat(11, 1, 2, 33)
    s.wait(0.5)
    s.supervisor("clear")
    # The table system voids a round in betting.
    s.apply(BettingCommand("open", "table-system"))
    s.supervisor("void_round", "dealer called it off", who="table-system")
    return s


def a_wheel_biased_to_one_pocket() -> Script:
    s = Script(bias=BiasConfig(min_games=37))
    last = 0
    for spin in range(1, 60):
        s.game(spin, last, 7)
        last = 7
    return s


@pytest.fixture(scope="module")
def messages() -> list[dict[str, Any]]:
    out = []
    for script in (a_day_at_a_wheel_that_runs_its_games(), a_host_started_wheel(),
                   a_wheel_biased_to_one_pocket()):
        out += script.messages()
    return out


def validate(message: dict[str, Any]) -> None:
    jsonschema.validate(message, SCHEMAS[message["type"]])
    p.check_message(message)


def test_every_event_a_wheel_table_reports_validates_against_its_schema(
        messages: list[dict[str, Any]]) -> None:
    for message in messages:
        validate(message)
        assert message["shoe"] == 0
    assert {m["type"] for m in messages} == ROULETTE_TYPES


def test_the_script_covers_every_void_reason_fault_and_wheel_status(
        messages: list[dict[str, Any]]) -> None:
    data = [(m["type"], m["data"]) for m in messages]
    assert {d["reason"] for t, d in data if t == "round_void"} == VOID_REASONS
    kinds = {d["kind"] for t, d in data if t == "irregularity"}
    kinds |= {d["kind"] for t, d in data if t == "device_health" and d["status"] == "warning"}
    assert kinds == WHEEL_KINDS
    assert {d["status"] for t, d in data if t == "device_health"} == WHEEL_STATUSES
    assert {d["component"] for t, d in data if t == "device_health"} == {"wheel"}
    origins = {d["origin"] for t, d in data if t == "betting_closed"}
    assert origins == {"wheel", "table-system", "timer", "line_lost", "supervisor"}
    # a supervisor's void names them, as at a card table; the wheel's own voids name nobody
    for t, d in data:
        if t == "round_void":
            assert (d["supervisor"] is None) == (d["reason"] != "supervisor"), d
    bias = [d for t, d in data if t == "irregularity" and d["kind"] == "wheel_bias"]
    assert bias and all(not d["latched"] and 0 <= d["p"] < 1e-4 for d in bias)
    assert all(d["latched"] for t, d in data if t == "irregularity" and d["kind"] != "wheel_bias")


def test_winning_numbers_carry_the_facts_of_the_rule_sheet(
        messages: list[dict[str, Any]]) -> None:
    numbers = [m["data"] for m in messages if m["type"] == "winning_number"]
    assert [n["number"] for n in numbers[:4]] == [17, 5, 0, 26]  # the first script's, in order
    for n in numbers:
        number = n["number"]
        if number == 0:
            assert (n["colour"], n["dozen"], n["column"], n["parity"], n["half"]) == (
                "green", None, None, None, None)
            continue
        assert n["colour"] == ("red" if number in RED else "black")
        assert n["dozen"] == next(d for d, top in ((1, 12), (2, 24), (3, 36)) if number <= top)
        assert n["column"] == (number - 1) % 3 + 1
        assert n["parity"] == ("even" if number % 2 == 0 else "odd")
        assert n["half"] == ("low" if number <= 18 else "high")


def test_rounds_are_reported_whole_and_in_order(messages: list[dict[str, Any]]) -> None:
    """Per table run: rounds 1, 2, ... each opened, closed, then one outcome."""
    runs: list[list[dict[str, Any]]] = [[]]
    for message in messages:
        if message["type"] == "round_opened" and message["data"]["round"] == 1 and runs[-1]:
            runs.append([])
        runs[-1].append(message)
    for run in runs:
        steps: dict[int, list[str]] = {}
        for message in run:
            round_ = message["data"].get("round")
            if message["type"] in ("round_opened", "betting_closed", "winning_number",
                                   "round_void"):
                steps.setdefault(round_, []).append(message["type"])
        assert list(steps) == list(range(1, len(steps) + 1))
        for round_, kinds in steps.items():
            assert kinds[:2] == ["round_opened", "betting_closed"], (round_, kinds)
            assert len(kinds) == 3 and kinds[2] in ("winning_number", "round_void"), kinds


# ---------------------------------------------------------------- the schemas refuse
def _a(type_: str, messages: list[dict[str, Any]], **where: Any) -> dict[str, Any]:
    return next(m for m in messages if m["type"] == type_
                and all(m["data"].get(k) == v for k, v in where.items()))


@pytest.mark.parametrize(("kind", "where", "change"), [
    ("winning_number", {}, {"number": 37}),
    ("winning_number", {}, {"colour": "blue"}),
    ("winning_number", {}, {"source": "guess"}),
    ("round_void", {"reason": "misspin"}, {"reason": "bad luck"}),
    ("round_void", {"reason": "misspin"}, {"supervisor": 3}),
    ("device_health", {"status": "warning"}, {"status": "open"}),
    ("device_health", {"status": "up"}, {"component": "roulette"}),
    ("irregularity", {"kind": "wheel_bias"}, {"latched": True}),
    ("irregularity", {"kind": "wheel_bias"}, {"p": 1.5}),
    ("round_opened", {"round": 2}, {"wheel_spin": 0}),
])
def test_the_schemas_refuse_a_wrong_roulette_payload(
        messages: list[dict[str, Any]], kind: str, where: dict[str, Any],
        change: dict[str, Any]) -> None:
    good = _a(kind, messages, **where)
    validate(good)
    bad = {**good, "data": {**good["data"], **change}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, SCHEMAS[kind])


def test_a_device_health_warning_needs_its_kind(messages: list[dict[str, Any]]) -> None:
    good = _a("device_health", messages, status="warning")
    bad = {**good, "data": {k: v for k, v in good["data"].items() if k != "kind"}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, SCHEMAS["device_health"])


def test_card_table_payloads_still_validate() -> None:
    """Tightened for the wheel, the shared schemas still take what card tables send."""
    envelope = {"protocol": 2, "session": "a.b", "table_id": "t", "seq": 1, "id": "t:1:0",
                "at": T0, "shoe": 2, "sig": "0" * 64}
    for kind, data in [
        ("round_void", {"round": 4, "supervisor": "alice", "reason": "card turned over"}),
        ("round_void", {"round": 4, "supervisor": None, "reason": "shoe empty"}),
        ("device_health", {"component": "shoe_link", "status": "down", "reason": "timeout"}),
        ("device_health", {"component": "shoe_lid", "status": "open", "reason": ""}),
        ("irregularity", {"kind": "misread", "prompt": "p", "remedy": "r", "detail": "",
                          "card": None, "counter": 9, "round": 5}),
        ("betting_closed", {"round": 3, "origin": "table-system", "seats": [1, 4]}),
    ]:
        jsonschema.validate({**envelope, "type": kind, "data": data}, SCHEMAS[kind])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**envelope, "type": "device_health", "data": {
            "component": "shoe_lid", "status": "up", "reason": ""}}, SCHEMAS["device_health"])


# ---------------------------------------------------------------- the README's examples
def _roulette_examples() -> Iterator[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Roulette\n", 1)[1].split("\n## ", 1)[0]
    yield from re.findall(r"```text\n(\{.*?\})\n```", section, re.DOTALL)


def test_the_readme_roulette_examples_are_valid_signed_messages() -> None:
    found = re.search(r"Key \(hex\): `([0-9a-f]{64})`", README.read_text(encoding="utf-8"))
    assert found is not None, "the README's example key"
    key = bytes.fromhex(found.group(1))
    frames = list(_roulette_examples())
    assert len(frames) >= 5
    kinds = set()
    for frame in frames:
        try:
            message = p.decode(frame, key, sender="controller")
        except ProtocolViolation as exc:
            raise AssertionError(f"{exc}: {frame}") from None
        assert p.canonical_json(message) == frame  # each frame as sent: canonical
        validate(message)
        kinds.add(message["type"])
    assert {"round_opened", "betting_closed", "winning_number", "round_void",
            "irregularity", "device_health"} <= kinds


def _listed(heading: str) -> set[str]:
    """The codes in the first column of a table under ``heading`` in the README's
    "Roulette" section."""
    text = README.read_text(encoding="utf-8")
    part = text.split("\n## Roulette\n", 1)[1].split(f"\n{heading}\n", 1)[1]
    rows = part.split("\n\n", 2)[1].split("\n", 2)[2]  # after the header and its rule
    return set(re.findall(r"^\| `([a-z_]+)` \|", rows, re.MULTILINE))


def test_the_readme_lists_the_void_reasons_and_kinds_the_schemas_and_table_know() -> None:
    data = SCHEMAS["round_void"]["properties"]["data"]
    assert set(data["then"]["properties"]["reason"]["enum"]) == VOID_REASONS
    assert _listed("### Void reasons") == VOID_REASONS
    assert _listed("### Irregularity kinds") == WHEEL_KINDS


# ---------------------------------------------------------------- any input (hypothesis)
_STEPS = st.one_of(
    st.tuples(st.just("status"), st.integers(1, 7), st.integers(1, 256),
              st.integers(0, 36), st.integers(0, 15)),
    st.tuples(st.just("number"), st.integers(0, 36)),
    st.tuples(st.just("self_test"), st.sampled_from(["000", "012", "004"])),
    st.tuples(st.just("noise"), st.binary(max_size=12)),
    st.tuples(st.just("wait"), st.floats(0.1, 12.0)),
    st.tuples(st.just("link"), st.booleans()),
    st.tuples(st.just("supervisor"), st.sampled_from(["clear", "void_round", "reset_bias",
                                                      "dealer"])),
    st.tuples(st.just("betting"), st.sampled_from(["open", "close"])),
)


@settings(max_examples=60, deadline=None)
@given(host_starts=st.booleans(), steps=st.lists(_STEPS, max_size=60))
def test_whatever_the_wheel_and_the_people_do_every_report_validates(
        host_starts: bool, steps: list[tuple[Any, ...]]) -> None:
    s = Script(host_starts=host_starts)
    for step in steps:
        kind = step[0]
        if kind == "status":
            s.status(*step[1:], copies=2)
        elif kind == "number":
            s.line(f"{step[1]:>2}")
        elif kind == "self_test":
            s.line(f"*F {step[1]}")
        elif kind == "noise":
            s.line(step[1].decode("latin-1").replace("\r", "").replace("\n", ""))
        elif kind == "wait":
            s.wait(step[1])
        elif kind == "link":
            s.now += 0.5
            s.apply(LinkChanged(step[1], "" if step[1] else "wheel line lost: test"))
        elif kind == "supervisor":
            s.supervisor(step[1], "a reason" if step[1] != "dealer" else "Maria")
        else:
            s.now += 0.5
            s.apply(BettingCommand(step[1], "table-system"))
    for message in s.messages():
        validate(message)
        assert message["shoe"] == 0
