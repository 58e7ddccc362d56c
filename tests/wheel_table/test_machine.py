"""The wheel table on scripted status streams, written as a wheel sends them (the guide's
formats): what the dealer, the table system and the supervisor see in each case."""

from __future__ import annotations

from typing import Any

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

T0 = 1_800_000_000.0


class Script:
    def __init__(self, **tracker: Any) -> None:
        self.table = WheelTable(WheelSettings(tracker=TrackerConfig(**tracker)))
        self.now = T0
        self.events: list[dict[str, Any]] = []
        self.commands: list[bytes] = []
        self.apply(SessionStarted("roulette-single-zero", "roulette"))

    def apply(self, item: Any) -> list[dict[str, Any]]:
        outcome = self.table.handle(item, self.now)
        self.events += outcome.events
        self.commands += [c.encode() for c in outcome.commands]
        return outcome.events

    def lines(self, *lines: str, every: float = 0.5) -> None:
        for line in lines:
            self.now += every
            self.apply(WheelLine.of(line.encode()))

    def wait(self, seconds: float) -> None:
        end = self.now + seconds
        while True:
            deadline = self.table.next_deadline()
            if deadline is None or deadline > end:
                break
            self.now = max(self.now, deadline)
            self.apply(WheelTick())
        self.now = end

    def kinds(self) -> list[str]:
        return [e["type"] for e in self.events if e["type"] not in ("wheel_status", "refused")]


def game(number: int, previous: int, spin: int) -> list[str]:
    """One game as a wheel with auto status sends it (each status twice)."""
    last = f"{previous:>2}"
    return [f"*X;2;{spin:03d};{last};0;250;0"] * 2 + [f"*X;3;{spin:03d};{last};0;250;0"] * 2 \
        + [f"*X;4;{spin:03d};{last};0;250;0"] * 2 + [f"*X;5;{spin:03d};{number:>2};0;250;0",
                                                      f"{number:>2}"] \
        + [f"*X;5;{spin:03d};{number:>2};0;250;0", f"*X;1;{spin:03d};{number:>2};0;250;0"]


def test_a_game_from_place_your_bets_to_its_number() -> None:
    script = Script()
    script.apply(LinkChanged(True))
    script.lines(*game(17, 5, 12))
    assert script.kinds() == ["wheel_health", "round_opened", "betting_closed", "winning_number"]
    number = next(e for e in script.events if e["type"] == "winning_number")
    assert (number["round"], number["number"], number["colour"], number["wheel_spin"],
            number["source"]) == (1, 17, "black", 12, "both")
    view = script.table.view()
    assert view["prompt"] == "17 black" and view["level"] == "result"
    assert view["last_numbers"][0]["number"] == 17


def test_a_wheel_that_is_not_there_is_not_connected_not_an_irregularity() -> None:
    script = Script()
    script.wait(60)
    assert script.table.latched == []
    assert script.table.view()["prompt"].startswith("Wheel not connected")
    script.apply(LinkChanged(True))
    script.wait(3.5)  # the line is open and the wheel says nothing: that is an irregularity
    assert [latched["kind"] for latched in script.table.latched] == ["no_status"]


def test_the_line_lost_while_betting_is_open_locks_bets_at_once() -> None:
    script = Script()
    script.apply(LinkChanged(True))
    script.lines("*X;2;007; 4;0;250;0")
    assert script.table.view()["phase"] == "betting_open"
    closed = script.apply(LinkChanged(False, "cable pulled"))
    assert [e["type"] for e in closed] == ["betting_closed", "wheel_health"]
    script.wait(30)
    assert script.table.latched == []  # down is shown as down, not as a silent wheel
    script.apply(LinkChanged(True))
    # back after the game: it was never seen launched, its number is not taken
    script.lines("*X;5;007;22;0;250;0", "22", "*X;1;007;22;0;250;0", "*X;1;007;22;0;250;0")
    assert [e["type"] for e in script.events].count("betting_closed") == 1
    assert "winning_number" not in script.kinds()
    void = next(e for e in script.events if e["type"] == "round_void")
    assert void["reason"] == "no_result"  # its last number moved on: a game went unseen
    assert "from 4 to 22" in void["detail"]


def test_a_fault_latches_and_no_round_opens_until_a_supervisor_clears_it() -> None:
    script = Script()
    script.apply(LinkChanged(True))
    script.lines("*X;2;001; 0;0;250;0", "*X;3;001; 0;0;250;0", "*X;3;001; 0;4;250;0",
                 "*X;3;001; 0;4;250;0")  # a fault flag is taken once the wheel repeats it
    latched = next(e for e in script.events if e["type"] == "irregularity")
    assert latched["kind"] == "hardware" and latched["latched"] and latched["round"] == 1
    assert next(e for e in script.events if e["type"] == "round_void")["reason"] == "fault"
    script.lines(*game(9, 0, 2))  # the wheel runs a game meanwhile
    assert "game_not_opened" in script.kinds()
    assert script.table.round_number == 1 and script.table.numbers_accepted == 0
    cleared = script.apply(SupervisorAction("clear", "alice"))
    assert [e["type"] for e in cleared] == ["irregularity_cleared"]
    script.lines(*game(31, 9, 3))
    assert script.table.round_number == 2 and script.table.last_result is not None
    assert script.table.last_result["number"] == 31


def test_a_misspin_voids_and_the_respin_keeps_the_bets() -> None:
    script = Script()
    script.apply(LinkChanged(True))
    script.lines("*X;2;004; 8;0;250;0", "*X;3;004; 8;0;250;0", "*X;3;004; 8;2;250;0",
                 "*X;3;004; 8;2;250;0")
    assert script.commands == [b"*R"]
    script.lines("*X;3;005; 8;0;250;0", "*X;4;005; 8;0;250;0", "*X;5;005;26;0;250;0", "26")
    opened = [e for e in script.events if e["type"] == "round_opened"]
    assert [(e["round"], e["respin_of"]) for e in opened] == [(1, None), (2, 1)]
    assert [e["reason"] for e in script.events if e["type"] == "round_void"] == ["misspin"]
    assert script.table.last_result is not None
    assert (script.table.last_result["round"], script.table.last_result["number"]) == (2, 26)


def test_host_started_games_open_on_the_hosts_word_and_start_with_u() -> None:
    script = Script(host_starts=True)
    script.apply(LinkChanged(True))
    script.lines("*X;1;010; 3;0;250;0")
    assert script.apply(BettingCommand("open", "table-system"))[0]["type"] == "round_opened"
    script.apply(BettingCommand("close", "table-system"))
    assert script.commands[-1].startswith(b"*u ")
    script.lines("*X;2;011; 3;0;250;0", "*X;3;011; 3;0;250;0", "*X;4;011; 3;0;250;0",
                 "*X;5;011;14;0;250;0", "14")
    assert script.table.last_result is not None and script.table.last_result["number"] == 14
    refused = script.apply(BettingCommand("close", "table-system"))
    assert refused[0]["type"] == "refused"


def test_the_session_clock_goes_on_from_the_journal_and_does_not_jump() -> None:
    import time

    from shoe_controller.wheel_table.controller import SessionClock

    future = time.time() + 3600  # the journal's last record, written before the clock stepped
    clock = SessionClock(not_before=future)
    first = clock()
    assert first >= future
    assert 0 <= clock() - first < 1.0


def test_a_number_seen_while_the_ball_still_runs_is_noise_not_a_result() -> None:
    script = Script()
    script.apply(LinkChanged(True))
    # game 1 is running; the last game's 17 shows in every status. One status has its state
    # digit flipped (3 -> 5), and a stray two-digit line arrives: neither may decide the game.
    script.lines("*X;2;030;17;0;250;0", "*X;3;030;17;0;250;0", "*X;3;030;17;0;250;0",
                 "*X;5;030;17;0;250;0", "*X;3;030;17;0;250;0", " 5", "*X;4;030;17;0;250;0")
    script.wait(3.0)  # well past the confirm window
    assert "winning_number" not in script.kinds()
    warnings = [e for e in script.events if e["type"] == "wheel_warning"]
    assert [w["kind"] for w in warnings] == ["line_noise"]
    assert "17 (status), 5 (line)" in warnings[0]["detail"]
    script.lines("*X;5;030;22;0;250;0", "22")
    assert script.table.last_result is not None and script.table.last_result["number"] == 22


def test_the_session_carries_the_settings_that_decide_games() -> None:
    """A journal replays as it was played, whatever the configuration at replay time."""
    from shoe_controller.wheel_table.machine import session_settings

    played = WheelSettings(tracker=TrackerConfig(confirm_window=5.0))
    table = WheelTable(played)
    items = [(SessionStarted("roulette-single-zero", "roulette",
                             settings=session_settings(played)), T0),
             (LinkChanged(True), T0),
             *[(WheelLine.of(line.encode()), T0 + 0.5 * i)
               for i, line in enumerate(["*X;2;001; 3;0;250;0", "*X;3;001; 3;0;250;0",
                                         "*X;3;001; 3;0;250;0", "*X;5;001;21;0;250;0"], 1)],
             (WheelTick(), T0 + 4.0)]  # 2 s after the lone report: within 5 s, past 1.2 s
    events = [e for item, at in items for e in table.handle(item, at).events]
    assert "winning_number" not in [e["type"] for e in events]
    replayed = WheelTable()  # today's configuration: the default 1.2 s window
    again = [e for item, at in items for e in replayed.handle(item, at).events]
    assert again == events
    record = items[0][0].to_data()
    assert record["settings"]["tracker"]["confirm_window"] == 5.0
    assert "settings" not in SessionStarted("baccarat-6d").to_data()  # a card table's record
