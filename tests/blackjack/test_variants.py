"""Profile options other than the packaged ones, each against the rule it states."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest

from shoe_controller.games.blackjack.profile import BlackjackProfile
from shoe_controller.games.blackjack.round import (
    BlackjackRound,
    DecisionDue,
    IllegalActionError,
    InsuranceDue,
)
from shoe_controller.games.blackjack.rules import Action

from .helpers import S17, cards, play_script


def variant(**changes: object) -> BlackjackProfile:
    return dataclasses.replace(S17, rules=dataclasses.replace(S17.rules, **changes))


def opening(profile: BlackjackProfile, codes: str) -> BlackjackRound:
    round_ = BlackjackRound(profile.rules, [1])
    for card in cards(codes):
        round_.deal(card)
    return round_


def options(round_: BlackjackRound) -> set[str]:
    due = round_.due()
    assert isinstance(due, DecisionDue)
    return {a.value for a in due.options}


def test_peek_on_a_ten_ends_the_round_before_play() -> None:
    round_ = opening(variant(peeks_on=frozenset({1, 10})), "TS KH QD AC")
    assert round_.due() is None and round_.result().hands[1][0].payout == -1


def test_no_peek_with_an_ace_up_lets_players_double_into_a_blackjack() -> None:
    profile = variant(peeks_on=frozenset())
    round_, _ = play_script(profile, [1], cards("6S AH 5D KC TD"), {1: ["double"]})
    result = round_.result()
    assert result.insurance_offered and not result.peeked and result.dealer_blackjack
    assert result.hands[1][0].payout == -1  # only the original bet of the double
    round_, _ = play_script(variant(peeks_on=frozenset(), double_loses_original_only=False), [1],
                            cards("6S AH 5D KC TD"), {1: ["double"]})
    assert round_.result().hands[1][0].payout == -2


def test_split_extension_returns_the_second_hands_bet() -> None:
    shoe = cards("8S KH 8D AC TC QH")
    plain, _ = play_script(S17, [1], shoe, {1: ["split"]})
    extended, _ = play_script(variant(split_loses_original_only=True), [1], shoe, {1: ["split"]})
    assert [h.payout for h in plain.result().hands[1]] == [-1, -1]
    assert [h.payout for h in extended.result().hands[1]] == [-1, 0]


def test_split_by_rank_and_no_split_aces() -> None:
    by_rank = variant(split_by="rank")
    assert "split" not in options(opening(by_rank, "KS 9H QD 5C"))
    assert "split" in options(opening(by_rank, "KS 9H KD 5C"))
    no_aces = opening(variant(split_aces=False), "AS 9H AD 5C")
    with pytest.raises(IllegalActionError, match="aces may not be split at this table"):
        no_aces.decide(1, "split")


def test_double_restrictions() -> None:
    nine_to_eleven = variant(double_totals=frozenset({9, 10, 11}))
    assert "double" in options(opening(nine_to_eleven, "6S 9H 5D 5C"))
    round_ = opening(nine_to_eleven, "6S 9H 6D 5C")
    with pytest.raises(IllegalActionError, match="this table doubles only on 9, 10, 11"):
        round_.decide(1, "double")
    no_das = opening(variant(double_after_split=False), "8S 9H 8D 5C")
    no_das.decide(1, "split")
    no_das.deal(cards("3H")[0])
    with pytest.raises(IllegalActionError, match="no double after a split at this table"):
        no_das.decide(1, "double")


def test_split_aces_may_draw_where_the_table_allows() -> None:
    round_ = opening(variant(split_aces_one_card=False), "AS 9H AD 5C")
    round_.decide(1, Action.SPLIT)
    round_.deal(cards("2H")[0])
    assert options(round_) == {"hit", "stand", "double"}


def test_six_to_five_blackjack() -> None:
    round_, _ = play_script(variant(blackjack_pays=Decimal("1.2")), [1], cards("AS 9H KD 8C"))
    assert round_.result().to_json_dict(1)["seats"]["1"][0]["payout"] == 1.2


def test_insurance_is_offered_without_a_peek_too() -> None:
    round_ = opening(variant(peeks_on=frozenset()), "9S AH 9D KC")
    assert isinstance(round_.due(), InsuranceDue)
    round_.insure([1])
    assert isinstance(round_.due(), DecisionDue)  # no peek: the seat plays on
