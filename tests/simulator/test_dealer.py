"""The virtual dealer: pace, one card in flight, button presses, the mistakes plan."""

from __future__ import annotations

import pytest

from shoe_controller.errors import ConfigError
from simulators.dealer import (
    DealerAction,
    Mistake,
    PlannedMistake,
    TableView,
    VirtualDealer,
    parse_mistakes,
)


def view(
    locked: bool = False,
    counter: int = 0,
    empty: bool = False,
    in_flight: bool = False,
    confirm: bool = False,
) -> TableView:
    return TableView(locked, counter, empty, in_flight, confirm)


def test_parse_mistakes_plan() -> None:
    assert parse_mistakes("extra-card@12, lid-open@40,forced-pull@0") == [
        PlannedMistake(Mistake.EXTRA_CARD, 12),
        PlannedMistake(Mistake.LID_OPEN, 40),
        PlannedMistake(Mistake.FORCED_PULL, 0),
    ]
    assert parse_mistakes("") == []
    assert str(PlannedMistake(Mistake.EARLY_PULL, 3)) == "early-pull@3"


@pytest.mark.parametrize(
    ("text", "message"),
    [("drop-deck@3", "unknown dealer mistake"), ("extra-card", "needs '@N'"),
     ("extra-card@x", "needs '@N'"), ("lid-open@-1", "needs '@N'")],
)
def test_parse_mistakes_rejects_bad_items(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_mistakes(text)


def test_no_pull_while_locked() -> None:
    dealer = VirtualDealer()
    assert dealer.step(0.0, view(locked=True)) == []


def test_pace_zero_pulls_as_soon_as_the_previous_card_is_acknowledged() -> None:
    dealer = VirtualDealer(pace=0)
    assert dealer.step(0.0, view()) == [DealerAction.PULL]
    assert dealer.step(0.0, view(counter=1, in_flight=True)) == []
    assert dealer.step(0.0, view(counter=1)) == [DealerAction.PULL]
    assert dealer.step(0.0, view(counter=2, empty=True)) == []


def test_pace_is_measured_from_the_unlock_and_between_cards() -> None:
    dealer = VirtualDealer(pace=1.0)
    assert dealer.step(10.0, view()) == []
    assert dealer.next_deadline() == 11.0
    assert dealer.step(10.9, view()) == []
    assert dealer.step(11.0, view()) == [DealerAction.PULL]
    assert dealer.step(11.5, view(counter=1)) == []
    assert dealer.step(12.0, view(counter=1)) == [DealerAction.PULL]
    dealer.step(12.1, view(locked=True, counter=2))
    assert dealer.next_deadline() is None
    assert dealer.step(20.0, view(counter=2)) == []  # newly unlocked: wait a pace again
    assert dealer.step(21.0, view(counter=2)) == [DealerAction.PULL]


def test_button_pressed_once_per_confirmation_request_after_the_delay() -> None:
    dealer = VirtualDealer(button_delay=0.5)
    assert dealer.step(1.0, view(locked=True, confirm=True)) == []
    assert dealer.next_deadline() == 1.5
    assert dealer.step(1.5, view(locked=True, confirm=True)) == [DealerAction.PRESS_BUTTON]
    assert dealer.step(3.0, view(locked=True, confirm=True)) == []
    dealer.step(3.1, view(locked=True))
    dealer.step(3.2, view(locked=True, confirm=True))
    assert dealer.step(3.7, view(locked=True, confirm=True)) == [DealerAction.PRESS_BUTTON]


def test_extra_card_and_forced_pull_wait_for_the_card_count_and_a_locked_exit() -> None:
    dealer = VirtualDealer(
        mistakes=parse_mistakes("forced-pull@6,extra-card@4"), auto_pull=False
    )
    assert dealer.step(0.0, view(locked=True, counter=3)) == []
    assert dealer.step(0.0, view(locked=False, counter=4)) == []
    assert dealer.step(0.0, view(locked=True, counter=5)) == [DealerAction.PULL]
    assert dealer.step(0.0, view(locked=True, counter=6)) == [DealerAction.FORCED_PULL]
    assert dealer.step(0.0, view(locked=True, counter=6)) == []
    assert [str(m) for m in dealer.done] == ["extra-card@4", "forced-pull@6"]


def test_early_pull_happens_after_a_confirmation_while_betting_is_open() -> None:
    dealer = VirtualDealer(mistakes=parse_mistakes("early-pull@2"), button_delay=0)
    assert dealer.step(0.0, view(locked=True, counter=2)) == []
    assert dealer.step(1.0, view(locked=True, counter=2, confirm=True)) == [
        DealerAction.PRESS_BUTTON
    ]
    # Not while the CONFIRM light is still on (the host has not taken the press yet).
    assert dealer.step(2.0, view(locked=True, counter=2, confirm=True)) == []
    assert dealer.step(3.0, view(locked=True, counter=2)) == [DealerAction.PULL]


def test_lid_opened_mid_round_and_closed_again() -> None:
    dealer = VirtualDealer(mistakes=parse_mistakes("lid-open@1"), lid_open_seconds=2.0,
                           auto_pull=False)
    assert dealer.step(0.0, view(counter=1)) == [DealerAction.OPEN_LID]
    assert dealer.next_deadline() == 2.0
    assert dealer.step(1.0, view(counter=1)) == []
    assert dealer.step(2.0, view(counter=1)) == [DealerAction.CLOSE_LID]


def test_negative_pace_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        VirtualDealer(pace=-1)


def shuffle_view(*, requested: bool, lit: bool, locked: bool = True, counter: int = 1) -> TableView:
    return TableView(locked, counter, False, False, False, shuffle_requested=requested,
                     shuffle_lit=lit)


def test_careful_dealer_reloads_only_on_a_fresh_request_after_a_card_with_the_exit_locked() -> None:
    dealer = VirtualDealer(auto_pull=False)
    assert dealer.step(0.0, shuffle_view(requested=False, lit=True)) == []  # a stale light
    assert dealer.step(0.0, shuffle_view(requested=True, lit=True, counter=0)) == []  # unused
    assert dealer.step(0.0, shuffle_view(requested=True, lit=True, locked=False)) == []
    assert dealer.step(0.0, shuffle_view(requested=True, lit=True)) == [DealerAction.LOAD_SHOE]


def test_careless_dealer_reloads_on_any_lit_shuffle_light() -> None:
    dealer = VirtualDealer(auto_pull=False, careless_reload=True)
    assert dealer.step(0.0, shuffle_view(requested=False, lit=True)) == [DealerAction.LOAD_SHOE]
    assert dealer.step(0.0, shuffle_view(requested=False, lit=True, counter=0)) == []
    assert dealer.step(0.0, shuffle_view(requested=False, lit=False)) == []
