"""The pure shoe model: card stop, counter, cut card, empty shoe, misreads, lid and jam."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shoe_controller.cards import new_shoe, parse_shoe
from simulators.shoe_model import CardOut, JamNotice, Notice, ShoeModel, StateNotice

FIVE = parse_shoe("AS 2H 3D 4C 5S")


def notices(outputs: list) -> list[Notice]:
    return [o.notice for o in outputs if isinstance(o, StateNotice)]


def test_exit_starts_locked_and_a_pull_is_refused_and_reported() -> None:
    model = ShoeModel(FIVE)
    assert model.exit_locked
    assert model.pull() == [StateNotice(Notice.PULL_REFUSED, 0)]
    assert model.counter == 0 and model.remaining == 5


def test_cards_come_out_in_order_counted_from_one() -> None:
    model = ShoeModel(FIVE)
    model.set_exit_locked(False)
    drawn = [o for _ in range(5) for o in model.pull() if isinstance(o, CardOut)]
    assert [c.card for c in drawn] == FIVE
    assert [c.counter for c in drawn] == [1, 2, 3, 4, 5]
    assert not any(c.misread or c.while_locked for c in drawn)


def test_an_unlock_for_a_card_that_has_already_left_is_ignored() -> None:
    """An unlock retransmitted after a reconnect, then sent again by the host, must not let
    a second card out: each names the card it is for."""
    model = ShoeModel(FIVE)
    assert model.set_exit_locked(False, 1, for_card=1)
    (first,) = model.pull()
    assert isinstance(first, CardOut) and first.counter == 1 and model.exit_locked
    assert not model.set_exit_locked(False, 1, for_card=1)  # the same unlock, again
    assert model.exit_locked and model.pull() == [StateNotice(Notice.PULL_REFUSED, 1)]
    assert model.set_exit_locked(False, 1, for_card=2)
    (second,) = model.pull()
    assert isinstance(second, CardOut) and second.counter == 2 and model.exit_locked


def test_empty_reported_once_after_the_last_card_and_further_pulls_do_nothing() -> None:
    model = ShoeModel(FIVE)
    model.set_exit_locked(False)
    for _ in range(4):
        assert Notice.SHOE_EMPTY not in notices(model.pull())
    last = model.pull()
    assert notices(last) == [Notice.SHOE_EMPTY]
    assert last[-1] == StateNotice(Notice.SHOE_EMPTY, 5)
    assert model.is_empty and model.pull() == []


def test_cut_card_reported_once_right_before_the_first_card_after_it() -> None:
    model = ShoeModel(FIVE, cut_card=2)  # two cards behind the cut card: 4C and 5S
    model.set_exit_locked(False)
    for _ in range(3):
        assert notices(model.pull()) == []
    out = model.pull()
    assert out[0] == StateNotice(Notice.CUT_CARD_REACHED, 3)
    assert isinstance(out[1], CardOut) and out[1].card.code == "4C"
    assert model.cut_card_reached
    assert notices(model.pull()) == [Notice.SHOE_EMPTY]


def test_forced_pull_takes_the_card_past_the_locked_stop() -> None:
    model = ShoeModel(FIVE)
    (out,) = model.pull(forced=True)
    assert out == CardOut(1, FIVE[0], misread=False, while_locked=True)


def test_misreads_are_seeded_and_keep_the_true_card() -> None:
    cards = new_shoe(2, seed=3)

    def run() -> list[CardOut]:
        model = ShoeModel(cards, misread_rate=0.2, seed=11)
        model.set_exit_locked(False)
        return [o for _ in cards for o in model.pull() if isinstance(o, CardOut)]

    first, second = run(), run()
    assert first == second
    misread = sum(c.misread for c in first)
    assert 5 < misread < 40  # 104 cards at 20 %
    assert [c.card for c in first] == cards


def test_misread_rate_outside_zero_to_one_is_rejected() -> None:
    with pytest.raises(ValueError, match="misread rate"):
        ShoeModel(FIVE, misread_rate=1.5)


def test_cut_card_beyond_the_shoe_is_rejected() -> None:
    with pytest.raises(ValueError, match="cut card"):
        ShoeModel(FIVE, cut_card=6)


def test_lid_and_jam_report_changes_only() -> None:
    model = ShoeModel(FIVE)
    model.set_exit_locked(False)
    assert notices(model.open_lid()) == [Notice.LID_OPENED]
    assert model.open_lid() == []
    assert model.pull()  # the lid does not stop cards
    assert notices(model.close_lid()) == [Notice.LID_CLOSED]
    assert model.jam() == [JamNotice(False, 1)]
    assert model.pull() == []  # nothing comes out of a jammed shoe
    assert model.clear_jam() == [JamNotice(True, 1)]
    assert model.clear_jam() == []
    assert isinstance(model.pull()[0], CardOut)


def test_reload_starts_the_counter_again_and_locks() -> None:
    model = ShoeModel(FIVE)
    model.set_exit_locked(False)
    model.pull()
    assert model.load(FIVE[:2]) == [StateNotice(Notice.SHOE_LOADED, 2)]  # the second load
    assert model.counter == 0 and model.exit_locked and model.remaining == 2


@given(
    decks=st.integers(1, 2),
    seed=st.integers(0, 2**32),
    cut=st.integers(0, 60),
    pulls=st.lists(st.sampled_from(["pull", "lock", "unlock", "force"]), max_size=150),
)
def test_every_card_leaves_at_most_once_and_in_order(
    decks: int, seed: int, cut: int, pulls: list[str]
) -> None:
    cards = new_shoe(decks, seed)
    cut = min(cut, len(cards))
    model = ShoeModel(cards, cut_card=cut)
    out: list[CardOut] = []
    events: list[Notice] = []
    for action in pulls:
        if action in ("lock", "unlock"):
            model.set_exit_locked(action == "lock")
            continue
        for o in model.pull(forced=action == "force"):
            if isinstance(o, CardOut):
                out.append(o)
            elif isinstance(o, StateNotice):
                events.append(o.notice)
    assert [c.card for c in out] == cards[: len(out)]
    assert [c.counter for c in out] == list(range(1, len(out) + 1))
    assert events.count(Notice.CUT_CARD_REACHED) <= 1
    if cut and len(out) > len(cards) - cut:
        assert Notice.CUT_CARD_REACHED in events
