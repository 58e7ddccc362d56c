"""``shoe journal export`` and ``shoe journal recall`` of a wheel table's journal.

The journal is written by the real controller reading a real pseudo-terminal, the wheel's
side of which this test writes line by line (hand-written status lines, as the protocol
summary gives them): normal games, a misspin and its respin, a ball not detected past its
grace (latched, then cleared by a supervisor with a PIN), a supervisor's void, a zero, and a
round left in play. Export and recall then run as the real CLI, in a process of their own.

The expected rounds are written out by hand below; they also equal what the controller
reported (``winning_number`` / ``round_void``), and every line validates against
docs/roulette/export.schema.json. A property test writes journals of random games straight
into a journal file and checks the export against a statement of the games written here.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_controller.commands.roulette_journal import export_lines
from shoe_controller.config import MIN_PIN_ITERATIONS, hash_pin
from shoe_controller.journal import Journal
from shoe_controller.wheel_table.connection import WheelConnection
from shoe_controller.wheel_table.controller import WheelController
from shoe_controller.wheel_table.machine import WheelSettings, WheelTable
from simulators.pty import open_pty_pair
from wheel_protocol import TrackerConfig

pytestmark = pytest.mark.timeout(120)

DOCS = Path(__file__).resolve().parents[2] / "docs"
EXPORT_SCHEMA = json.loads((DOCS / "roulette" / "export.schema.json").read_text("utf-8"))
PIN = "471100"
ALICE = hash_pin(PIN, salt=bytes(range(16)), iterations=MIN_PIN_ITERATIONS)
GRACE = 0.3  # ball not detected: seconds before the game is void
Played = tuple[Path, Path, list[dict[str, Any]]]  # journal, run configuration, reported events

#: The run configuration's [wheel] section the controller runs with (and export is given).
CONFIG = f"""\
profile = "roulette-single-zero"
device = "socket://127.0.0.1:1"
journal = "unused.db"

[wheel]
ball_not_detected_grace = {GRACE}
confirm_window = 0.2
launch_fail_grace = 0.2
status_timeout = 0
"""
TRACKER = TrackerConfig(ball_not_detected_grace=GRACE, confirm_window=0.2,
                        launch_fail_grace=0.2, status_timeout=0.0)

# What happened, as the script below makes it happen (round, number, colour, spin, void).
EXPECTED = [
    {"type": "round", "round": 1, "number": 17, "colour": "black", "wheel_spin": 8,
     "void": None},
    {"type": "round", "round": 2, "number": None, "colour": None, "wheel_spin": 9,
     "void": "misspin"},
    {"type": "round", "round": 3, "number": 5, "colour": "red", "wheel_spin": 9, "void": None},
    {"type": "round", "round": 4, "number": None, "colour": None, "wheel_spin": 10,
     "void": "ball_not_detected"},
    {"type": "round", "round": 5, "number": None, "colour": None, "wheel_spin": 11,
     "void": "supervisor"},
    {"type": "round", "round": 6, "number": 0, "colour": "green", "wheel_spin": 12,
     "void": None},
]


def status(state: int, spin: int, last: int, flags: int = 0) -> bytes:
    return f"*X;{state};{spin:03d};{last:>2};{flags:X};250;0\r\n".encode("ascii")


def statuses(state: int, spin: int, last: int, flags: int = 0) -> list[bytes]:
    """A status as a wheel sends it: repeated (automatic status every 500 ms)."""
    return [status(state, spin, last, flags)] * 2


class Wheel:
    """The wheel's end of the pty, and the controller stepped until it took each line."""

    def __init__(self, ctl: WheelController, device: Any) -> None:
        self.ctl = ctl
        self.device = device
        self.written = b""  # what the controller wrote to the wheel
        self.head = 0  # the last journal record looked at

    def until(self, done: Callable[[], bool], seconds: float = 10.0) -> None:
        deadline = time.monotonic() + seconds
        while not done():
            assert time.monotonic() < deadline, f"not done: {self.ctl.view()['prompt']}"
            self.ctl.step(0.01)
            self.written += self.device.read(256, timeout=0)

    def send(self, line: bytes) -> None:
        """Write one line as the wheel; return once the controller journalled it."""
        self.device.write(line)
        self.until(self._took_a_line)

    def status(self, state: int, spin: int, last: int, flags: int = 0) -> None:
        for line in statuses(state, spin, last, flags):
            self.send(line)

    def _took_a_line(self) -> bool:
        for record in self.ctl.journal.records(self.head + 1):
            self.head = record.seq
            if record.kind == "wheel_line":
                return True
        return False

    def game(self, spin: int, last: int, number: int) -> None:
        for state in (2, 3, 4):
            self.status(state, spin, last)
        self.send(status(5, spin, number))
        self.send(f"{number:>2}\r\n".encode("ascii"))
        self.status(1, spin, number)


@contextmanager
def controller(path: Path, seen: list[dict[str, Any]]) -> Iterator[Wheel]:
    with open_pty_pair() as pair, Journal(path, durability="normal") as journal, \
            WheelConnection(pair.slave_path, retry_seconds=0.05) as line:
        ctl = WheelController(journal=journal, table=WheelTable(WheelSettings(tracker=TRACKER)),
                              profile="roulette-single-zero", connection=line,
                              supervisors={"alice": ALICE})
        ctl.listeners.append(lambda _view, events: seen.extend(events))
        ctl.start()
        wheel = Wheel(ctl, pair.device_side)
        wheel.until(lambda: ctl.table.link_up)
        yield wheel


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    """A journal of the script's games, the run configuration, and what was reported."""
    directory = tmp_path_factory.mktemp("wheel-journal")
    path, config = directory / "wheel.db", directory / "run.toml"
    config.write_text(CONFIG, encoding="utf-8")
    seen: list[dict[str, Any]] = []
    with controller(path, seen) as wheel:
        ctl = wheel.ctl
        wheel.status(1, 7, 22)
        wheel.game(8, 22, 17)
        # a misspin: the round is void, *R goes to the wheel, the respin gives 5
        wheel.status(2, 9, 17)
        wheel.status(3, 9, 17, flags=2)
        wheel.until(lambda: b"*R" in wheel.written)
        for state in (3, 4):
            wheel.status(state, 9, 17)
        wheel.status(5, 9, 5)
        wheel.status(1, 9, 5)
        # no ball past the grace: void, latched; alice clears it
        for state in (2, 3):
            wheel.status(state, 10, 5)
        wheel.status(4, 10, 5, flags=1)
        wheel.until(lambda: bool(ctl.table.latched), seconds=GRACE + 10)
        wheel.status(1, 10, 5)
        ticket = ctl.supervisor("clear", "alice", PIN)
        wheel.until(lambda: not ctl.table.latched)
        assert ticket.accepted, ticket.message
        # alice voids a round in play; the wheel's number for it is never taken
        wheel.status(2, 11, 5)
        ctl.supervisor("void_round", "alice", PIN, reason="ball left the wheel")
        wheel.until(lambda: ctl.table.current is None)
        for state in (3, 4):
            wheel.status(state, 11, 5)
        wheel.status(5, 11, 30)
        wheel.status(1, 11, 30)
        wheel.game(12, 30, 0)
        wheel.status(2, 13, 0)  # round 7: in play when the controller stops
    return path, config, seen


def shoe(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "shoe_controller", *args], capture_output=True,
                          text=True, timeout=60, check=False)


def test_export_gives_each_round_once_as_the_table_decided(played: Played) -> None:
    path, config, seen = played
    done = shoe("journal", "export", str(path), "--config", str(config))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines == EXPECTED
    for line in lines:
        jsonschema.validate(line, EXPORT_SCHEMA)
    # the rounds the controller reported, round for round (export never reads them)
    reported = [{"round": e["round"], "number": e.get("number"), "void": e.get("reason")}
                for e in seen if e["type"] in ("winning_number", "round_void")]
    assert reported == [{"round": x["round"], "number": x["number"], "void": x["void"]}
                        for x in EXPECTED]


def test_the_journalled_wheel_settings_decide_the_replay(played: Played) -> None:
    """The controller journals its tracker settings with each session: without --config (the
    default 5 s grace) the replay still runs on the grace the games were played with, and the
    missing ball of round 4 is void as it was at the table."""
    path, _config, _seen = played
    lines = list(export_lines(path))
    assert lines[3]["round"] == 4 and lines[3]["void"] == "ball_not_detected"
    assert lines == EXPECTED


def test_recall_tells_a_supervisor_each_round(played: Played) -> None:
    path, config, _seen = played
    done = shoe("journal", "recall", str(path), "--config", str(config), "--last", "7")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    headings = [line for line in text.splitlines() if not line.startswith(" ")]
    assert headings == [
        "round 1  spin 008  17 BLACK  (2nd dozen, column 2, odd, 1-18)",
        "round 2  spin 009  VOID: misspin",
        "round 3  spin 009  5 RED  (1st dozen, column 2, odd, 1-18)",
        "round 4  spin 010  VOID: ball not detected",
        "round 5  spin 011  VOID: supervisor",
        "round 6  spin 012  0 GREEN  (zero)",
        "round 7  spin 013  (in play: betting open)",
    ]
    blocks = dict(zip(headings, _blocks(text), strict=True))
    assert "  respun as round 3" in blocks["round 2  spin 009  VOID: misspin"]
    assert "  the ball ran the same way as the rotor" in blocks["round 2  spin 009  VOID: misspin"]
    assert any(line.startswith("  warning: misspin") for line in
               blocks["round 2  spin 009  VOID: misspin"])
    assert "  respin of round 2 (its bets stand)" in blocks[headings[2]]
    assert f"  irregularity: ball_not_detected (warning flag 1 for {GRACE:g} s); cleared by " \
           "alice" in blocks[headings[3]]
    assert "  voided by alice: ball left the wheel" in blocks[headings[4]]
    assert "  read from the wheel's status and result line" in blocks[headings[5]]
    assert blocks[headings[6]][0].startswith("  opened ") and len(blocks[headings[6]]) == 1


def _blocks(text: str) -> list[list[str]]:
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith(" "):
            blocks[-1].append(line)
        else:
            blocks.append([])
    return blocks


def test_recall_json_has_the_round_in_play_and_the_last_n(played: Played) -> None:
    path, config, _seen = played
    done = shoe("journal", "recall", str(path), "--config", str(config), "--last", "2",
                "--json")
    assert done.returncode == 0, done.stderr
    rounds = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["round"] for r in rounds] == [6, 7]
    zero, in_play = rounds
    assert (zero["number"], zero["colour"], zero["dozen"], zero["phase"]) == (0, "green", None,
                                                                             "number")
    assert zero["opened_at"] <= zero["closed_at"] <= zero["finished_at"]
    assert (in_play["phase"], in_play["number"], in_play["closed_at"]) == ("betting_open", None,
                                                                          None)


def test_config_errors_are_one_clear_line(played: Played, tmp_path: Path) -> None:
    path, _config, _seen = played
    bad = tmp_path / "bad.toml"
    bad.write_text("[wheel]\nball_not_detected_grace = -1\n", encoding="utf-8")
    done = shoe("journal", "export", str(path), "--config", str(bad))
    assert done.returncode == 1
    assert "ball_not_detected_grace" in done.stderr and "Traceback" not in done.stderr
    done = shoe("journal", "export", str(path), "--config", str(tmp_path / "absent.toml"))
    assert done.returncode == 1 and "cannot read" in done.stderr
    assert "Traceback" not in done.stderr


# ---------------------------------------------------------------- any games (hypothesis)
GAMES = st.lists(st.one_of(
    st.tuples(st.just("number"), st.integers(0, 36)),
    st.tuples(st.just("misspin"), st.integers(0, 36)),
    st.tuples(st.just("abandoned"), st.just(0)),
    st.tuples(st.just("mismatch"), st.integers(0, 35)),
), max_size=12)
RED = {1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36}


def _colour(number: int) -> str:
    return "green" if number == 0 else "red" if number in RED else "black"


@settings(max_examples=25, deadline=None)
@given(games=GAMES)
def test_export_of_any_games_is_their_statement(games: list[tuple[str, int]]) -> None:
    """Journals of wheel lines written straight into a journal file, as the controller
    journals them; the export equals the games' statement, round by round."""
    lines: list[bytes] = []
    expected: list[dict[str, Any]] = []
    last = 0
    for spin, (kind, number) in enumerate(games, start=1):
        round_ = len(expected) + 1
        lines += statuses(2, spin, last) + statuses(3, spin, last)
        if kind == "misspin":  # void, then the respin (the next round) gives the number
            lines += statuses(3, spin, last, flags=2) + statuses(3, spin, last)
            expected.append({"round": round_, "number": None, "void": "misspin",
                             "wheel_spin": spin})
            round_ += 1
        if kind == "abandoned":
            lines += statuses(1, spin, last)
            expected.append({"round": round_, "number": None, "void": "abandoned",
                             "wheel_spin": spin})
            continue
        lines += statuses(4, spin, last)
        if kind == "mismatch":  # its status once, the result line another number: a tie
            lines += [status(5, spin, number), f"{number + 1:>2}\r\n".encode()]
            lines += statuses(1, spin, number)
            expected.append({"round": round_, "number": None, "void": "number_mismatch",
                             "wheel_spin": spin})
            break  # latched: the rest would not be opened until a supervisor clears it
        lines += [status(5, spin, number), f"{number:>2}\r\n".encode()]
        lines += statuses(1, spin, number)
        expected.append({"round": round_, "number": number, "void": None, "wheel_spin": spin})
        last = number
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "j.db"
        with Journal(path, durability="normal") as journal:
            at = 1_760_000_000.0
            journal.append("session", {"profile": "roulette-single-zero", "game": "roulette"},
                           wall_time=at)
            journal.append("link", {"up": True, "reason": ""}, wall_time=at)
            for line in lines:
                at += 0.5
                journal.append("wheel_line", {"line": line.rstrip(b"\r\n").decode("latin-1"),
                                              "noise": ""}, wall_time=at)
        exported = list(export_lines(path))
    assert exported == [{"type": "round", "round": e["round"], "number": e["number"],
                         "colour": None if e["number"] is None else _colour(e["number"]),
                         "wheel_spin": e["wheel_spin"], "void": e["void"]} for e in expected]


def _journal(path: Path, records: list[tuple[str, dict[str, Any]]]) -> Path:
    with Journal(path, durability="normal") as journal:
        for kind, data in records:
            journal.append(kind, data, wall_time=1_760_000_000.0)
    return path


def test_a_record_no_wheel_table_writes_is_named(tmp_path: Path) -> None:
    """A shoe's record in a wheel table's journal: the export stops there with the record's
    number, after the rounds before it."""
    path = _journal(tmp_path / "j.db", [
        ("session", {"profile": "roulette-single-zero", "game": "roulette"}),
        ("link", {"up": True, "reason": ""}),
        ("card", {"rank": 1, "suit": 0}),
    ])
    done = shoe("journal", "export", str(path))
    assert done.returncode == 1
    assert "journal record 3 (card)" in done.stderr and "Traceback" not in done.stderr


def test_config_is_refused_for_a_card_table_journal(tmp_path: Path) -> None:
    path = _journal(tmp_path / "j.db", [
        ("session", {"profile": "punto-banco-8d", "game": "baccarat"})])
    config = tmp_path / "run.toml"
    config.write_text(CONFIG, encoding="utf-8")
    done = shoe("journal", "recall", str(path), "--config", str(config))
    assert done.returncode == 1
    assert "--config is for a wheel table's journal" in done.stderr
    assert "Traceback" not in done.stderr
