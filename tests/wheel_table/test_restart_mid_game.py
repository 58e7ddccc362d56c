"""A controller killed while a round is in play and restarted after the wheel moved on to a
later game (found by test_end_to_end.py: round 47, opened for spin 50, was settled with spin
57's number after a SIGKILL).

A journal replay rebuilds the table as it stood, so continuing the same table after a
``SessionStarted`` is what a restarted controller does. The wheel's spin counter says the
game the round was opened for is over (its number was never seen), and so does its "last
number" (the game's own, 30 here, replaced by a later one): that round's number is unknown, it
is void (``no_result``), and the later game's number is never taken for it.
"""

from __future__ import annotations

import pytest

from shoe_controller.wheel_table.inputs import LinkChanged, SessionStarted
from tests.wheel_table.test_machine import Script, game


def later_game_after_a_restart(script: Script) -> None:
    """The controller dies here; the wheel plays spins 50 to 56 unseen; a new controller
    (the same journal) joins spin 57 as its ball runs, and sees its number, 8."""
    script.apply(SessionStarted("roulette-single-zero", "roulette"))
    script.apply(LinkChanged(True))
    script.lines("*X;3;057;13;0;250;0", "*X;3;057;13;0;250;0", "*X;4;057;13;0;250;0",
                 "*X;4;057;13;0;250;0", "*X;5;057; 8;0;250;0", " 8", "*X;5;057; 8;0;250;0",
                 "*X;1;057; 8;0;250;0", "*X;1;057; 8;0;250;0")


@pytest.mark.parametrize("seen", ["ball running", "betting open"])
def test_a_round_in_play_at_a_kill_never_takes_a_later_games_number(seen: str) -> None:
    script = Script()
    script.apply(LinkChanged(True))
    script.lines(*game(30, 12, 49))
    statuses = ["*X;2;050;30;0;250;0"] * 2
    if seen == "ball running":
        statuses += ["*X;3;050;30;0;250;0"] * 2 + ["*X;4;050;30;0;250;0"] * 2
    script.lines(*statuses)
    assert script.table.current is not None and script.table.current.spin == 50

    later_game_after_a_restart(script)

    numbers = [(e["round"], e["number"], e["wheel_spin"]) for e in script.events
               if e["type"] == "winning_number"]
    assert numbers == [(1, 30, 49)], numbers  # round 2 (spin 50) is not settled with 8
    void = [e for e in script.events if e["type"] == "round_void"]
    assert [e["round"] for e in void] == [2]


def test_a_restart_between_games_leaves_the_later_game_unopened() -> None:
    """The same restart with no round in play: spin 57, joined with its ball running, is no
    round of the table's (a warning), and its number is taken for nothing."""
    script = Script()
    script.apply(LinkChanged(True))
    script.lines(*game(30, 12, 49))
    later_game_after_a_restart(script)
    assert [e["number"] for e in script.events if e["type"] == "winning_number"] == [30]
    assert any(e["type"] == "wheel_warning" and e["kind"] == "game_not_opened"
               for e in script.events)
