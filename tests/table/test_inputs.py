"""Every table input survives the journal: to_data() -> JSON -> input_from_record()."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shoe_controller.cards import Card, Suit
from shoe_controller.table.inputs import (
    INPUT_TYPES,
    BettingCommand,
    ButtonPressed,
    CameraCheck,
    CameraDeclined,
    CameraRead,
    CardDrawn,
    CardMisread,
    DeviceConnected,
    DeviceFault,
    InsuranceDecision,
    LinkChanged,
    MessageRefused,
    PlayerDecision,
    SessionStarted,
    ShoeEventInput,
    ShoeStatus,
    ShoeUnresponsive,
    SupervisorAction,
    input_from_record,
)

cards = st.builds(Card, st.integers(1, 13), st.sampled_from(list(Suit)))
counters = st.integers(1, 2**32 - 1)
texts = st.text(max_size=20)

inputs = st.one_of(
    st.builds(CardDrawn, cards, counters, texts, st.integers(0, 100), st.booleans(), texts),
    st.builds(CardMisread, counters, texts, st.booleans()),
    st.builds(CameraRead, counters, cards, st.floats(0, 1)),
    st.builds(CameraDeclined, counters, st.sampled_from(["declined", "no_frame"]), texts),
    st.builds(CameraCheck, counters, cards, texts, st.floats(0, 1)),
    st.builds(ShoeEventInput, texts, counters),
    st.builds(ButtonPressed, st.integers(0, 255)),
    st.builds(LinkChanged, st.booleans(), texts),
    st.builds(DeviceFault, texts, texts),
    st.builds(BettingCommand, st.sampled_from(["open", "close"]), texts),
    st.builds(BettingCommand, st.just("close"), texts, st.lists(st.integers(1, 7))),
    st.builds(PlayerDecision, st.integers(1, 7), st.integers(1, 2),
              st.sampled_from(["hit", "stand", "double", "split"]), texts, texts),
    st.builds(InsuranceDecision, st.lists(st.integers(1, 7)), texts, texts),
    st.builds(SupervisorAction, texts, texts, st.none() | cards, texts),
    st.builds(SessionStarted, texts, texts, texts, texts, texts),
    st.builds(DeviceConnected, texts, texts, texts, texts, st.integers(0, 2**32 - 1),
              st.integers(0, 2**32 - 1), st.booleans()),
    st.builds(ShoeStatus, counters, st.booleans(), st.booleans(), st.booleans(), texts),
    st.builds(MessageRefused, texts, texts),
    st.builds(ShoeUnresponsive, texts),
)


@given(inputs)
def test_round_trip_through_json(item) -> None:
    data = json.loads(json.dumps(item.to_data()))
    assert input_from_record(item.KIND, data) == item


def test_every_kind_is_covered() -> None:
    assert len(INPUT_TYPES) == 18


@pytest.mark.parametrize(
    "kind,data,message",
    [
        ("nonsense", {}, "unknown journal record kind"),
        ("card", {"card": "AS", "counter": 1, "colour": "red"}, "unknown field 'colour'"),
        ("card", {"card": {"rank": 1}, "counter": 1}, "card must be a code"),
        ("card", {"counter": 1}, "card"),
        ("card", {"card": "ZZ", "counter": 1}, "unknown card code"),
    ],
)
def test_bad_records_are_clear_errors(kind, data, message) -> None:
    with pytest.raises(ValueError, match=message):
        input_from_record(kind, data)
