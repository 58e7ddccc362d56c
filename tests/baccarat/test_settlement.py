"""Settlement with Decimal and the profile's rounding, on the seeds' own examples."""

from __future__ import annotations

from decimal import Decimal

import pytest

from shoe_controller.cards import Card
from shoe_controller.games.baccarat.coup import deal_coup
from shoe_controller.games.baccarat.profile import load_profile
from shoe_controller.games.baccarat.settlement import SettlementError, settle


def deal(codes: str):
    return deal_coup([Card.from_code(c) for c in codes.split()])


BANKER_WIN = deal("KS 9H 5D KC")  # Player 5, Banker 9 natural
PLAYER_WIN = deal("9S 5H KD KC")
TIE = deal("6S 6H KD KC")
BANKER_3CARD_7 = deal("KS 2H 4D 2C 2D 3S")  # Player 6 (3 cards), Banker 2+2+3 = 7
BANKER_6 = deal("5S 6H KD KC 9H")  # Player 5+9 = 4, Banker 6 stands
PAIRS = deal("4S KH 4D KC")  # Player 4-4 (natural 8), Banker K-K: both hands pairs


@pytest.mark.parametrize(
    "stake,returned",
    [
        ("0.10", "0.19"),
        ("0.20", "0.39"),
        ("0.30", "0.58"),
        ("1.01", "1.96"),
        ("10.10", "19.69"),
        ("12.34", "24.06"),
        ("100", "195.00"),
    ],
)
def test_seed_002_banker_returns_1_95_rounded_down(stake: str, returned: str) -> None:
    profile = load_profile("punto-banco-8d")
    payout = settle(BANKER_WIN, {"banker": Decimal(stake)}, profile).payouts["banker"]
    assert payout.returned == Decimal(returned) and payout.result == "win"
    assert payout.net == Decimal(returned) - Decimal(stake)


def test_player_tie_and_pushes() -> None:
    profile = load_profile("punto-banco-8d")
    bets = {"player": Decimal(10), "banker": Decimal(10), "tie": Decimal(5)}
    on_tie = settle(TIE, bets, profile)
    assert on_tie.payouts["player"].returned == 10 and on_tie.payouts["player"].result == "push"
    assert on_tie.payouts["banker"].returned == 10
    assert on_tie.payouts["tie"].returned == 45  # 8 to 1 plus the stake
    on_player = settle(PLAYER_WIN, bets, profile)
    assert on_player.payouts["player"].returned == 20
    assert on_player.payouts["banker"].returned == 0 and on_player.payouts["tie"].returned == 0
    assert on_player.total_stake == 25 and on_player.total_returned == 20 and on_player.net == -5


def test_seed_000_and_001_banker() -> None:
    six = settle(BANKER_WIN, {"banker": Decimal("0.30")}, load_profile("baccarat-6d"))
    assert six.payouts["banker"].returned == Decimal("0.58")
    one = settle(BANKER_WIN, {"banker": Decimal("0.10")}, load_profile("punto-banco-1d"))
    assert one.payouts["banker"].returned == Decimal("0.19")


def test_zero_commission_three_card_7_pushes() -> None:
    profile = load_profile("zero-commission-8d")
    assert BANKER_3CARD_7.banker_three_card_7
    payout = settle(BANKER_3CARD_7, {"banker": Decimal(5)}, profile).payouts["banker"]
    assert payout.result == "push" and payout.returned == 5
    assert settle(BANKER_WIN, {"banker": Decimal(5)}, profile).payouts["banker"].returned == 10


def test_super6_pays_half_and_rounds_down() -> None:
    profile = load_profile("super6-8d")
    assert BANKER_6.banker_wins_with_6
    payout = settle(BANKER_6, {"banker": Decimal("0.25")}, profile).payouts["banker"]
    assert payout.returned == Decimal("0.37")  # 0.25 + 0.125 rounded down
    assert settle(BANKER_WIN, {"banker": Decimal("0.25")}, profile).payouts[
        "banker"
    ].returned == Decimal("0.50")


def test_pairs_and_side_bets() -> None:
    assert PAIRS.player_pair and PAIRS.banker_pair
    profile = load_profile("punto-banco-1d")
    settlement = settle(PAIRS, {"player_pair": Decimal(1), "banker_pair": Decimal(2)}, profile)
    assert settlement.payouts["player_pair"].returned == 16
    assert settlement.payouts["banker_pair"].returned == 32
    ez = load_profile("ez-baccarat-8d")
    dragon = settle(BANKER_3CARD_7, {"dragon7": Decimal(1), "panda8": Decimal(1)}, ez)
    assert dragon.payouts["dragon7"].returned == 41 and dragon.payouts["panda8"].returned == 0
    assert dragon.to_json_dict()["dragon7"] == {
        "stake": "1",
        "result": "win",
        "returned": "41.00",
        "net": "40.00",
    }


def test_bad_bets_are_refused() -> None:
    profile = load_profile("punto-banco-8d")
    with pytest.raises(SettlementError, match="no bet 'dragon7'"):
        settle(BANKER_WIN, {"dragon7": Decimal(1)}, profile)
    with pytest.raises(SettlementError, match="Decimal"):
        settle(BANKER_WIN, {"banker": 0.1}, profile)  # type: ignore[dict-item]
    with pytest.raises(SettlementError, match=">= 0"):
        settle(BANKER_WIN, {"banker": Decimal(-1)}, profile)
