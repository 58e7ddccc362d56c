"""Game tracker: the vendor's cases one by one, then invariants over any status stream."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wheel_protocol import (
    AcknowledgeVoid,
    Direction,
    FaultCode,
    GameTracker,
    GameVoided,
    NoMoreBets,
    NumberAccepted,
    RoundOpened,
    SelfTest,
    SendCommand,
    StartGame,
    StatusPoll,
    TrackerConfig,
    TrackerStateError,
    Unparsed,
    WheelFault,
    WheelParser,
    WheelStatusChanged,
)


def st_line(state: int, number: str = "17", flags: str = "0", spin: str = "012") -> bytes:
    """A status line written the way the guide shows it (not with our encoder)."""
    return f"*X;{state};{spin};{number};{flags};250;0\r\n".encode()


class Wheel:
    """Feeds lines through the real parser into a tracker, on a clock the test moves."""

    def __init__(self, **config: object) -> None:
        config.setdefault("status_timeout", 0)
        self.tracker = GameTracker(TrackerConfig(**config))  # type: ignore[arg-type]
        self.parser = WheelParser()
        self.now = 100.0
        self.out: list[object] = []

    def send(self, *lines: bytes, every: float = 0.5) -> None:
        for line in lines:
            for message in self.parser.feed(line):
                self.out += self.tracker.receive(message, self.now)
            self.now += every
            self.out += self.tracker.poll(self.now)

    def wait(self, seconds: float, step: float = 0.1) -> None:
        end = self.now + seconds
        while self.now < end:
            self.now = round(self.now + step, 6)
            self.out += self.tracker.poll(self.now)

    def events(self) -> list[object]:
        """Game events, faults and commands (status changes left out)."""
        return [e for e in self.out if not isinstance(e, WheelStatusChanged)]

    def kinds(self) -> list[str]:
        names = []
        for e in self.events():
            if isinstance(e, RoundOpened):
                names.append(f"open {e.game}" + (f" respin {e.respin_of}" if e.respin_of else ""))
            elif isinstance(e, NoMoreBets):
                names.append(f"close {e.game}")
            elif isinstance(e, NumberAccepted):
                names.append(f"number {e.game} {e.number} {e.source}")
            elif isinstance(e, GameVoided):
                names.append(f"void {e.game} {e.reason.value}")
            elif isinstance(e, WheelFault):
                names.append(f"fault {e.code.value}" + (" latch" if e.latch else ""))
            elif isinstance(e, SendCommand):
                names.append(f"send {e.command.encode().decode()}")
        return names


def game(number: str, spin: str = "012", repeats: int = 3) -> list[bytes]:
    lines = []
    for state in (1, 2, 3, 4):
        lines += [st_line(state, "17", spin=spin)] * repeats
    lines += [st_line(5, number, spin=spin)] * repeats
    return lines


def test_a_wheel_run_game_with_repeated_statuses() -> None:
    w = Wheel()
    w.send(*game(" 6"), b" 6\r\n", *[st_line(1, " 6")] * 3)
    assert w.kinds() == ["open 1", "close 1", "number 1 6 status"]


def test_stale_last_number_is_never_taken_and_the_spin_counter_may_repeat() -> None:
    """Two games on the same spin counter, each status carrying the last game's 17 until
    state 5; the second game's number is 17 again: each accepted once, in order."""
    w = Wheel()
    w.send(*game("32"), *game("17"), *game("17"))
    assert w.kinds() == ["open 1", "close 1", "number 1 32 status",
                         "open 2", "close 2", "number 2 17 status",
                         "open 3", "close 3", "number 3 17 status"]


def test_result_line_before_the_status_agrees() -> None:
    w = Wheel()
    w.send(*game("17")[:-3], b"21\r\n", st_line(5, "21"), st_line(5, "21"), b"21\r\n")
    assert w.kinds() == ["open 1", "close 1", "number 1 21 both"]


def test_result_line_alone_is_accepted_after_the_confirm_window() -> None:
    w = Wheel(confirm_window=1.0)
    w.send(*game("17")[:-3], b" 9\r\n", every=0.1)
    assert "number 1 9 line" not in w.kinds()
    w.wait(1.0)
    assert w.kinds() == ["open 1", "close 1", "number 1 9 line"]


def test_result_line_alone_is_accepted_when_the_wheel_moves_on() -> None:
    w = Wheel(confirm_window=60)
    w.send(*game("17")[:-3], b" 9\r\n", st_line(1, " 9"))
    assert w.kinds() == ["open 1", "close 1", "number 1 9 line"]


def test_line_and_status_disagreeing_void_the_game() -> None:
    w = Wheel()
    w.send(st_line(2), st_line(3), st_line(4), b" 9\r\n", st_line(5, "19"))
    w.wait(1.5)  # one report each, nothing breaks the tie within the confirm window
    assert w.kinds() == ["open 1", "close 1", "fault number_mismatch latch",
                         "void 1 number_mismatch"]


def test_a_tie_when_the_wheel_moves_on_voids_the_game() -> None:
    w = Wheel()
    w.send(st_line(2), st_line(3), st_line(4), st_line(5, "19"), b" 9\r\n", st_line(1, "19"))
    assert w.kinds() == ["open 1", "close 1", "fault number_mismatch latch",
                         "void 1 number_mismatch"]


def test_the_number_most_reports_agree_on_is_taken_and_the_other_is_outvoted() -> None:
    w = Wheel(confirmations=3)
    w.send(st_line(2), st_line(3), st_line(4), st_line(5, "19"), b" 9\r\n", st_line(5, "19"),
           st_line(5, "19"))
    assert w.kinds() == ["open 1", "close 1", "fault line_noise", "number 1 19 status"]


def test_a_late_disagreeing_line_latches_a_fault_but_keeps_one_number() -> None:
    w = Wheel()
    w.send(*game("19"), b" 9\r\n")
    assert w.kinds()[-1] == "fault line_noise"  # once: a digit flipped on the line
    w.send(b" 9\r\n")  # twice: the wheel says it
    assert w.kinds() == ["open 1", "close 1", "number 1 19 status", "fault line_noise",
                         "fault number_mismatch latch"]


def test_a_late_repeat_of_the_result_line_in_the_next_game_is_ignored() -> None:
    w = Wheel()
    w.send(*game("19"), st_line(1, "19"), st_line(2, "19"), b"19\r\n", st_line(3, "19"),
           st_line(4, "19"), *[st_line(5, " 4")] * 2)
    assert w.kinds() == ["open 1", "close 1", "number 1 19 status",
                         "open 2", "close 2", "number 2 4 status"]


def test_misspin_voids_acknowledges_and_the_respin_is_a_new_closed_game() -> None:
    w = Wheel()
    w.send(st_line(2), st_line(3), st_line(3), st_line(3, flags="2"), st_line(3, flags="2"),
           st_line(3), st_line(4), *[st_line(5, "30")] * 2)
    assert w.kinds() == ["open 1", "close 1", "fault misspin", "void 1 misspin", "send *R",
                         "open 2 respin 1", "close 2", "number 2 30 status"]


def test_ball_not_detected_is_tolerated_for_its_grace() -> None:
    w = Wheel(ball_not_detected_grace=5.0)
    w.send(st_line(2), st_line(3), *[st_line(4, flags="1")] * 8, st_line(4), *[st_line(5, " 1")] * 2)
    assert w.kinds() == ["open 1", "close 1", "number 1 1 status"]
    w = Wheel(ball_not_detected_grace=5.0)
    w.send(st_line(2), st_line(3), *[st_line(4, flags="1")] * 12)
    assert w.kinds() == ["open 1", "close 1", "fault ball_not_detected latch",
                         "void 1 ball_not_detected"]


def test_ball_not_detected_grace_runs_out_without_another_status() -> None:
    w = Wheel(ball_not_detected_grace=2.0)
    w.send(st_line(2), st_line(3), st_line(4, flags="1"))
    w.wait(2.0)
    assert w.kinds()[-1] == "void 1 ball_not_detected"


def test_state_7_voids_once_the_wheel_repeats_it() -> None:
    w = Wheel()
    w.send(st_line(2), st_line(3), st_line(3), st_line(7))
    assert w.kinds() == ["open 1", "close 1"]  # bets locked at once; one status may be noise
    w.send(st_line(7))
    assert w.kinds() == ["open 1", "close 1", "fault ball_not_detected latch",
                         "void 1 ball_not_detected"]


def test_a_lone_status_that_would_end_the_game_is_noise_when_the_next_denies_it() -> None:
    w = Wheel()
    # 3 -> 7, 2, 1 or 6 by one flipped bit, a misspin or fault flag by another: each alone
    # and denied by the next status
    w.send(st_line(2), st_line(3), st_line(3), st_line(7), st_line(3), st_line(2), st_line(3),
           st_line(1), st_line(4), st_line(6), st_line(4), st_line(4, flags="2"), st_line(4),
           st_line(4, flags="4"), st_line(4), *[st_line(5, "30")] * 2)
    assert w.kinds() == ["open 1", "close 1", *["fault line_noise"] * 6, "number 1 30 status"]


def test_a_held_status_nothing_contradicts_stands_after_the_confirm_window() -> None:
    w = Wheel(confirm_window=1.0)
    w.send(st_line(2), st_line(3), st_line(3), st_line(6))  # and then the wheel is silent
    w.wait(1.2)
    assert w.kinds()[:4] == ["open 1", "close 1", "fault wheel_idle latch", "void 1 wheel_idle"]


def test_launch_failed_is_ignored_early_in_state_3_then_warned_once() -> None:
    w = Wheel(launch_fail_grace=3.0)
    w.send(st_line(2), *[st_line(3, flags="8")] * 6)  # 2.5 s of state 3
    assert w.kinds() == ["open 1"]
    w.send(*[st_line(3, flags="8")] * 6, st_line(4), *[st_line(5, "11")] * 2)
    assert w.kinds() == ["open 1", "fault launch_retry", "close 1", "number 1 11 status"]


def test_hardware_fault_mid_game_latches_and_voids() -> None:
    w = Wheel()
    w.send(st_line(2), st_line(3), st_line(3), st_line(3, flags="4"), st_line(3, flags="4"))
    assert w.kinds() == ["open 1", "close 1", "fault hardware latch", "void 1 fault"]


def test_silent_drop_to_idle_mid_game_voids_and_asks_for_a_self_test() -> None:
    w = Wheel()
    w.send(st_line(2), st_line(3), st_line(4), st_line(6), st_line(6))
    assert w.kinds() == ["open 1", "close 1", "fault wheel_idle latch", "void 1 wheel_idle",
                         "send *F"]
    assert SendCommand(SelfTest()) in w.events()


def test_wheel_idle_between_games_is_not_a_fault() -> None:
    w = Wheel()
    w.send(*game(" 5"), *[st_line(6, " 5")] * 4, *game(" 8"))
    assert w.kinds() == ["open 1", "close 1", "number 1 5 status",
                         "open 2", "close 2", "number 2 8 status"]


def test_joining_mid_game_settles_nothing_until_a_round_opens() -> None:
    w = Wheel()
    w.send(st_line(4, "17"), st_line(4, "17"), st_line(5, "22"), st_line(1, "22"),
           st_line(2, "22"), st_line(3, "22"), st_line(3, "22"), st_line(4, "22"),
           *[st_line(5, " 3")] * 2)
    assert w.kinds() == ["fault game_not_opened", "open 1", "close 1", "number 1 3 status"]


def test_a_new_game_before_a_number_voids_the_old_one() -> None:
    w = Wheel()
    w.send(st_line(2), st_line(3), st_line(3), st_line(4), st_line(2), st_line(2), st_line(3),
           st_line(3), *[st_line(5, "14")] * 2)
    assert w.kinds() == ["open 1", "close 1", "void 1 no_result", "open 2", "close 2",
                         "number 2 14 status"]


def test_host_started_game_ignores_the_previous_games_state_5() -> None:
    w = Wheel(host_starts=True)
    w.send(*game("25"))  # the wheel's own last game: no round was opened by the host
    w.out.clear()
    w.out += w.tracker.open_betting(w.now)
    w.send(st_line(5, "25"), st_line(1, "25"))
    w.out += w.tracker.close_betting(w.now)
    w.send(st_line(5, "25"), st_line(1, "25"), st_line(2, "25"), st_line(3, "25"),
           st_line(4, "25"), *[st_line(5, " 7")] * 2)
    assert w.kinds() == ["open 1", "close 1", "send *u 3", "number 1 7 status"]


def test_host_started_round_opened_while_a_voided_games_ball_runs_never_takes_it() -> None:
    """The supervisor voids a host-started game while its ball runs, and the host opens the
    next round at once: that ball is not the new round's (its bets were taken while it ran).
    Betting stays open until the host closes it; the round's ball is the one its ``*u``
    launched, and its number the round's."""
    w = Wheel(host_starts=True)
    w.send(st_line(1, "25"))
    w.out += w.tracker.open_betting(w.now)
    w.out += w.tracker.close_betting(w.now)
    w.send(st_line(2, "25", spin="013"), st_line(3, "25", spin="013"),
           st_line(3, "25", spin="013"))
    w.out += w.tracker.void(w.now, "ball jumped out")
    w.out += w.tracker.open_betting(w.now)
    w.send(st_line(3, "25", spin="013"), st_line(4, "25", spin="013"),
           st_line(4, "25", spin="013"), st_line(5, "30", spin="013"),
           st_line(5, "30", spin="013"), b" 30\r\n")
    assert w.kinds()[-1] == "open 2"  # betting still open, nothing taken
    w.out += w.tracker.close_betting(w.now)
    w.send(st_line(5, "30", spin="013"), st_line(1, "30", spin="013"),
           st_line(2, "30", spin="014"), st_line(3, "30", spin="014"),
           st_line(3, "30", spin="014"), st_line(4, "30", spin="014"),
           *[st_line(5, " 4", spin="014")] * 2)
    assert w.kinds()[3:] == ["void 1 supervisor", "open 2", "close 2", "send *u 3",
                             "number 2 4 status"]


def test_host_started_next_round_knows_the_number_taken_from_the_result_line() -> None:
    """The number was taken from the result line and the state-5 statuses were lost, so
    the last status taken still shows the game before's number; the host opens the next
    round at once. The wheel's "last number" from then on is the number taken, not a sign
    of a game finished unseen."""
    w = Wheel(host_starts=True, confirm_window=0.4)
    w.send(st_line(1, "25"))
    w.out += w.tracker.open_betting(w.now)
    w.out += w.tracker.close_betting(w.now)
    w.send(st_line(2, "25"), st_line(3, "25"), st_line(3, "25"), st_line(4, "25"),
           b"17\r\n")  # the state-5 statuses lost: the line alone, after its window
    assert w.kinds()[-1] == "number 1 17 line"
    w.out += w.tracker.open_betting(w.now)
    w.send(st_line(5, "17"), st_line(1, "17"), st_line(1, "17"))
    w.out += w.tracker.close_betting(w.now)
    w.send(st_line(1, "17"), st_line(2, "17"), st_line(3, "17"), st_line(3, "17"),
           *[st_line(5, " 2")] * 2)
    assert w.kinds()[4:] == ["open 2", "close 2", "send *u 3", "number 2 2 status"]


def test_host_start_refused_by_the_wheel_is_sent_again_when_it_is_ready() -> None:
    """A state digit flipped to 1 ("before a game") in the middle of the last game's state
    5: the pending ``*u`` goes out, and the wheel refuses it (``*u NO``). It goes out again
    when the wheel really is before a game, and the game is played."""
    w = Wheel(host_starts=True)
    w.send(*game("25"))
    w.out.clear()
    w.out += w.tracker.open_betting(w.now)
    w.out += w.tracker.close_betting(w.now)  # the wheel still shows state 5: *u waits
    w.send(st_line(5, "25"), st_line(1, "25"), b"*u NO\r\n", st_line(5, "25"),
           st_line(5, "25"), st_line(1, "25"), st_line(2, "25"), st_line(3, "25"),
           st_line(3, "25"), *[st_line(5, " 7")] * 2)
    assert w.kinds() == ["open 1", "close 1", "send *u 3", "fault line_noise", "send *u 3",
                         "number 1 7 status"]


def test_host_started_game_that_never_launches_is_void() -> None:
    w = Wheel(host_starts=True, start_timeout=4.0, direction="clockwise")
    w.out += w.tracker.open_betting(w.now)
    w.out += w.tracker.close_betting(w.now)
    assert SendCommand(StartGame(Direction.CLOCKWISE)) in w.out
    w.send(*[st_line(1)] * 4)
    w.wait(2.5)
    assert w.kinds() == ["open 1", "close 1", "send *u 1", "fault not_started latch",
                         "void 1 not_started"]


def test_host_actions_refused_out_of_turn() -> None:
    wheel_run = GameTracker()
    with pytest.raises(TrackerStateError, match="host-started"):
        wheel_run.open_betting(0)
    host = GameTracker(TrackerConfig(host_starts=True))
    with pytest.raises(TrackerStateError, match="no betting round"):
        host.close_betting(0)
    host.open_betting(0)
    with pytest.raises(TrackerStateError, match="in progress"):
        host.open_betting(1)
    with pytest.raises(TrackerStateError, match="no game"):
        GameTracker().void(0, "x")


def test_supervisor_void() -> None:
    w = Wheel()
    w.send(st_line(2), st_line(3), st_line(3))
    w.out += w.tracker.void(w.now, "ball jumped out")
    w.send(st_line(5, "10"))
    assert w.kinds() == ["open 1", "close 1", "void 1 supervisor"]
    assert w.events()[-1].detail == "ball jumped out"  # type: ignore[attr-defined]


def test_polling_sends_status_polls_at_the_interval() -> None:
    tracker = GameTracker(TrackerConfig(poll_interval=0.25, status_timeout=0))
    sent = []
    now = 0.0
    while now < 1.0:
        sent += [(now, o) for o in tracker.poll(now) if isinstance(o, SendCommand)]
        deadline = tracker.next_deadline()
        assert deadline is not None and deadline > now
        now = deadline
    assert [t for t, _ in sent] == [0.0, 0.25, 0.5, 0.75]
    assert all(o.command == StatusPoll() for _, o in sent)


def test_silence_latches_no_status_once() -> None:
    tracker = GameTracker(TrackerConfig(status_timeout=3.0))
    assert tracker.poll(0.0) == []
    assert tracker.next_deadline() == 3.0
    (fault,) = tracker.poll(3.0)
    assert isinstance(fault, WheelFault) and fault.code is FaultCode.NO_STATUS and fault.latch
    assert "cable" in fault.remedy
    assert tracker.poll(10.0) == []
    assert fault.detail == "nothing from the wheel for 3.0 s"


def test_a_wheel_heard_only_as_noise_is_not_called_silent() -> None:
    """Lines that cannot be read do not count as hearing the wheel (the silence fault still
    latches), but the fault says how many came: a wrong speed or parity, not a dead line."""
    tracker = GameTracker(TrackerConfig(status_timeout=3.0))
    assert tracker.poll(0.0) == []
    for at in (0.5, 1.0, 2.5):
        assert tracker.receive(Unparsed(b"\x9f\x13garbled", "not a message"), at) == []
    (fault,) = tracker.poll(3.0)
    assert isinstance(fault, WheelFault) and fault.code is FaultCode.NO_STATUS and fault.latch
    assert fault.detail == ("no readable line from the wheel for 3.0 s (3 unreadable: check "
                            "the line's speed, parity and cable)")


@pytest.mark.parametrize("bad", [
    {"poll_interval": 0.05}, {"ball_not_detected_grace": -1}, {"direction": "up"},
    {"first_game": 0}, {"status_timeout": float("nan")},
])
def test_config_refuses_bad_values(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        TrackerConfig(**bad)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- invariants

wheel_input = st.one_of(
    st.tuples(st.just("status"), st.integers(1, 7), st.integers(0, 36),
              st.sampled_from([0, 0, 0, 0, 1, 2, 4, 8]), st.sampled_from([1, 1, 1, 2])),
    st.tuples(st.just("line"), st.integers(0, 36), st.just(0), st.just(0), st.just(0)),
    st.tuples(st.just("wait"), st.integers(1, 80), st.just(0), st.just(0), st.just(0)),
    # the host (open or close betting, when it starts games) or a supervisor (a void)
    st.tuples(st.just("act"), st.sampled_from(["open", "close", "void"]), st.just(0),
              st.just(0), st.just(0)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(wheel_input, max_size=60), st.booleans())
def test_invariants_over_any_stream(inputs: list[tuple[Any, ...]],
                                    host: bool) -> None:
    """Whatever the wheel sends: games are numbered 1, 2, 3...; each ends at most once
    (a number or a void); betting closes before it ends; and an accepted number is one the
    wheel reported (state 5 or result line) after that game's round opened and its ball was
    seen running (state 3/4), so never a stale one; when the host starts games, running
    after the host's ``*u`` for it (a ball running before is the game before's)."""
    tracker = GameTracker(TrackerConfig(host_starts=host, status_timeout=0))
    parser = WheelParser()
    now = 0.0
    opened: list[int] = []
    ended: set[int] = set()
    closed: set[int] = set()
    reported_since_launch: set[int] = set()
    launched = misspun = started = False
    for kind, a, b, flags, spin in inputs:
        out: list[object] = []
        if kind == "wait":
            now += a / 10
            out += tracker.poll(now)
        elif kind == "act":
            if a == "void" and tracker.in_progress:
                out += tracker.void(now, "supervisor")
            elif a == "open" and host and not tracker.in_progress:
                out += tracker.open_betting(now)
            elif a == "close" and host and tracker.phase.value == "betting":
                out += tracker.close_betting(now)
        else:
            line = (f"*X;{a};{spin:03d};{b:>2};{flags:X};100;0" if kind == "status"
                    else f"{a:>2}")
            for message in parser.feed(line.encode() + b"\n"):
                if kind == "status" and a in (3, 4):
                    launched = launched or not host or started
                    misspun = misspun or bool(flags & 2)
                if ((kind == "status" and a == 5) or kind == "line") and launched:
                    reported_since_launch.add(b if kind == "status" else a)
                out += tracker.receive(message, now)
        if host and not tracker.in_progress and len(opened) % 3 == 0:
            out += tracker.open_betting(now)
        elif host and tracker.phase.value == "betting" and kind == "wait":
            out += tracker.close_betting(now)
        for event in out:
            if isinstance(event, RoundOpened):
                assert event.game == len(opened) + 1
                opened.append(event.game)
                launched = started = event.respin_of is not None
                reported_since_launch = set()
            elif isinstance(event, NoMoreBets):
                assert event.game == opened[-1] and event.game not in closed
                closed.add(event.game)
            elif isinstance(event, (NumberAccepted, GameVoided)):
                assert event.game == opened[-1]
                assert event.game in closed and event.game not in ended
                ended.add(event.game)
                if isinstance(event, NumberAccepted):
                    assert event.number in reported_since_launch
            elif isinstance(event, SendCommand) and isinstance(event.command, StartGame):
                started = True
            elif isinstance(event, SendCommand) and isinstance(event.command, AcknowledgeVoid):
                # *R answers a misspin the wheel reported (in this table's game or not)
                assert misspun
                misspun = False


def test_a_lone_state_5_status_is_taken_after_the_window() -> None:
    w = Wheel(confirm_window=1.0)
    w.send(st_line(2), st_line(3), st_line(4), st_line(5, "12"), every=0.1)
    assert w.kinds() == ["open 1", "close 1"]
    w.wait(1.0)
    assert w.kinds() == ["open 1", "close 1", "number 1 12 status"]


def test_a_digit_flipped_by_noise_cannot_decide_a_game() -> None:
    """No checksum: a corrupted but well-formed status must not settle bets on its own; the
    wheel's next reports outvote it."""
    w = Wheel()
    w.send(st_line(2), st_line(3), st_line(4), st_line(5, "11"), st_line(5, "17"))
    assert w.kinds() == ["open 1", "close 1"]  # one each: undecided
    w.send(st_line(5, "17"))
    assert w.kinds() == ["open 1", "close 1", "fault line_noise", "number 1 17 status"]


def test_a_lone_report_of_the_prior_number_waits_for_a_second() -> None:
    """A state digit flipped to 5 in a status of this game shows the number the wheel drew
    the game before: reported once, with the statuses after it garbled, it is not taken
    when the window passes; the ball still running then shows it was noise, and the
    game's own number is taken."""
    w = Wheel(confirm_window=0.3)
    w.send(st_line(2), st_line(3), st_line(3), st_line(5, "17"), b"*X;4;0\x9c2;17\r\n",
           b"*X;\x814;012;17;0;250;0\r\n", every=0.2)
    w.wait(1.0)
    assert w.kinds() == ["open 1", "close 1"]
    w.send(st_line(4), st_line(4), st_line(5, "30"), st_line(5, "30"))
    assert w.kinds() == ["open 1", "close 1", "fault line_noise", "number 1 30 status"]


def test_a_lone_report_waits_while_a_status_is_held() -> None:
    """A report, then a status held for confirmation: the report's window does not settle
    the game before the held status is borne out (here: the ball still running, so the
    report was noise)."""
    w = Wheel(confirm_window=0.3)
    w.send(st_line(2), st_line(3), st_line(4), st_line(5, "11"), every=0.05)
    w.send(st_line(4), every=0.28)  # held (after a 5): the report's window passes meanwhile
    w.send(st_line(4), st_line(5, "30"), st_line(5, "30"))
    assert w.kinds() == ["open 1", "close 1", "fault line_noise", "number 1 30 status"]


def test_one_confirmation_takes_the_first_report() -> None:
    w = Wheel(confirmations=1)
    w.send(st_line(2), st_line(3), st_line(4), st_line(5, "12"))
    assert w.kinds() == ["open 1", "close 1", "number 1 12 status"]


def test_host_start_waits_for_the_wheel_to_be_ready() -> None:
    w = Wheel(host_starts=True, direction="anticlockwise")
    w.send(st_line(5, "25"))  # still showing the last game's result
    w.out += w.tracker.open_betting(w.now)
    w.out += w.tracker.close_betting(w.now)
    assert w.kinds() == ["open 1", "close 1"]
    w.send(st_line(5, "25"), st_line(1, "25"), st_line(1, "25"))
    assert w.kinds() == ["open 1", "close 1", "send *u 3"]


def test_a_fault_reported_with_star_f_during_play_voids_the_game() -> None:
    w = Wheel()
    w.send(st_line(2), st_line(3), b"*F 0\r\n", b"*F 12\r\n", st_line(4))
    assert w.kinds() == ["open 1", "close 1", "fault hardware latch", "void 1 fault"]
    w = Wheel()
    w.send(b"*F 12\r\n", *game("15"))  # a self-test's answer between games: passed on only
    assert w.kinds() == ["open 1", "close 1", "number 1 15 status"]


def test_a_report_the_next_games_launch_bears_out_is_taken() -> None:
    """State 5 once, then the wheel's next game already running (its "before a game" and
    "place your bets" lost on the line): the new game's "last number" is the report, so the
    report stands, and the new game, which no round was opened for, is only watched."""
    w = Wheel()
    w.send(st_line(2), st_line(3), st_line(4), st_line(5, "12"),
           st_line(3, "12", spin="013"), st_line(3, "12", spin="013"), every=0.1)
    assert w.kinds() == ["open 1", "close 1", "number 1 12 status", "fault game_not_opened"]


def test_the_next_games_launch_after_a_game_finished_unseen_is_said_not_opened() -> None:
    """Every report of game 1's number lost, then the wheel's next game already running: its
    "last number" changed, so game 1 is void (never settled with a later number), and the
    running game, which no round was opened for, is said so like any other (it was played:
    the table must be able to account for it)."""
    w = Wheel()
    w.send(st_line(2), st_line(3), st_line(4), st_line(3, "12", spin="013"),
           st_line(3, "12", spin="013"), st_line(4, "12", spin="013"), every=0.1)
    assert w.kinds() == ["open 1", "close 1", "void 1 no_result", "fault game_not_opened"]
    w.send(st_line(5, " 8", spin="013"), st_line(5, " 8", spin="013"), st_line(1, " 8"),
           st_line(2, " 8"), every=0.1)
    assert w.kinds()[4:] == ["open 2"]  # the foreign game's number is nobody's


def test_a_game_finished_unseen_with_the_same_number_is_told_by_the_spin_counter() -> None:
    """Game 1 opened (spin 051, the last number 32), then the host was away (a restart, the
    line down) while the wheel played nine games; the first status it sees again is of spin
    060, whose last number is 32 again (1 game in 37). The last number cannot tell; the spin
    counter can: game 1 is void, never settled with spin 060's number."""
    for running in (True, False):
        w = Wheel()
        w.send(st_line(2, "32", spin="051"), st_line(2, "32", spin="051"), every=0.1)
        state = 3 if running else 2
        w.send(st_line(state, "32", spin="060"), st_line(state, "32", spin="060"),
               st_line(4, "32", spin="060"), st_line(4, "32", spin="060"),
               st_line(5, "30", spin="060"),
               st_line(5, "30", spin="060"), every=0.1)
        if running:  # its ball already running: a game no round was opened for
            assert w.kinds() == ["open 1", "close 1", "void 1 no_result",
                                 "fault game_not_opened"]
        else:  # its betting still open: its own round
            assert w.kinds() == ["open 1", "close 1", "void 1 no_result", "open 2",
                                 "close 2", "number 2 30 status"]
        voided = next(e for e in w.events() if isinstance(e, GameVoided))
        assert "spin counter went from 051 to 060" in voided.detail


def test_a_wheel_that_counts_its_games_at_the_launch_plays_normally() -> None:
    """The guide does not say when the counter moves: a wheel that moves it at the launch
    (state 3) rather than at state 2 shows the next counter for the rest of the game. That
    is the same game; a counter further on is not."""
    w = Wheel()
    w.send(st_line(2, spin="050"), st_line(2, spin="050"), st_line(3, spin="051"),
           st_line(3, spin="051"), st_line(4, spin="051"), *[st_line(5, " 9", spin="051")] * 2,
           st_line(1, " 9", spin="051"), st_line(2, " 9", spin="051"),
           st_line(2, " 9", spin="051"), st_line(3, " 9", spin="053"),
           st_line(3, " 9", spin="053"))
    assert w.kinds() == ["open 1", "close 1", "number 1 9 status", "open 2", "close 2",
                         "void 2 no_result", "fault game_not_opened"]


def test_a_spin_digit_flipped_by_noise_voids_nothing() -> None:
    """One status of the game with its spin counter's digit flipped: the next one does not
    bear it out, so it is line noise, and the game goes on to its number."""
    w = Wheel()
    w.send(st_line(2, spin="051"), st_line(2, spin="051"), st_line(3, spin="051"),
           st_line(3, spin="051"), st_line(3, spin="057"), st_line(3, spin="051"),
           st_line(4, spin="051"), st_line(5, " 9", spin="051"), st_line(5, " 9", spin="051"))
    assert w.kinds() == ["open 1", "fault line_noise", "close 1", "number 1 9 status"]


def test_a_launch_with_a_spin_digit_flipped_to_the_next_counter_voids_nothing() -> None:
    """The launch's status has its counter's last digit flipped to the next counter (050 to
    051, one bit): taken as the launch, but the game's counter is learnt again from the
    statuses after it, so the game's own 050 does not look like another game."""
    w = Wheel()
    w.send(st_line(2, spin="050"), st_line(2, spin="050"), st_line(3, spin="051"),
           st_line(3, spin="050"), st_line(3, spin="050"), st_line(4, spin="050"),
           *[st_line(5, " 9", spin="050")] * 2)
    assert w.kinds() == ["open 1", "close 1", "number 1 9 status"]


def test_a_report_of_the_prior_games_number_is_borne_out_by_the_spin_counter() -> None:
    """The game drew the number the game before drew (17), reported once; then the wheel's
    next game is already running: its last number (17) cannot tell it from a state digit
    flipped in this game, but its spin counter does: the report stands."""
    w = Wheel()
    w.send(st_line(2, spin="051"), st_line(3, spin="051"), st_line(4, spin="051"),
           st_line(5, "17", spin="051"), st_line(3, spin="052"), st_line(3, spin="052"),
           every=0.1)
    assert w.kinds() == ["open 1", "close 1", "number 1 17 status", "fault game_not_opened"]


def test_a_report_a_running_ball_denies_is_still_noise() -> None:
    """The same order with the prior game's number: a state digit flipped to 5 made the
    report, and the ball is still running in this game."""
    w = Wheel()
    w.send(st_line(2), st_line(3), st_line(4), st_line(5, "17"), st_line(4), st_line(4),
           every=0.1)
    assert w.kinds() == ["open 1", "close 1", "fault line_noise"]
    w.send(st_line(5, "30"), st_line(5, "30"))  # the ball falls: this game's number
    assert w.kinds()[-1] == "number 1 30 status"
