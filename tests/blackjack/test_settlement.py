"""Settlement of every combination in the reference's table, with a 10-unit bet, and its errors."""

from __future__ import annotations

from decimal import Decimal

import pytest

from shoe_controller.games.blackjack.round import BlackjackRound
from shoe_controller.games.blackjack.settlement import (
    SettlementError,
    insurance_net,
    settle_behind,
    settle_seat,
)

from . import blackjack_reference as ref
from .helpers import PROFILES, cards, codes, play_script

ROWS = ref.settlement_rows()
BET = Decimal(10)


@pytest.mark.parametrize("row", ROWS, ids=[str(i) for i in range(len(ROWS))])
def test_settlement_table(row: dict) -> None:
    profile = PROFILES[row["profile"]]
    seat, dealer = row["seat"], row["dealer"]
    shoe = cards([seat[0], dealer[0], seat[1], dealer[1], *row["then"]])
    round_, used = play_script(profile, [2], shoe, {2: list(row["actions"])},
                               insurance=[2] if row["insurance"] else [])
    assert used == len(shoe), f"the round used {used} of the row's {len(shoe)} cards"
    result = round_.result()
    insurance = Decimal(row["insurance"])
    seated = settle_seat(result, 2, BET, profile.rules, insurance)
    assert seated.net == row["net"], row["line"]
    behind = settle_behind(result, 2, BET, False, profile.rules)
    assert behind.net == row["behind"], row["line"]
    follower = settle_behind(result, 2, BET, True, profile.rules)
    assert follower.net == seated.net - seated.insurance
    # What was staked comes back with the net: never less than nothing.
    assert seated.returned == seated.staked + seated.net >= 0
    # Each hand also agrees with the reference's own arithmetic.
    for hand in result.hands[2]:
        units = ref.hand_units(codes(hand.cards), hand.from_split, hand.doubled,
                               codes(result.dealer))
        assert hand.payout == Decimal(str(units)), row["line"]


def test_the_table_covers_every_combination() -> None:
    lines = [row["line"] for row in ROWS]
    has = {
        "blackjack": any(r["seat"][0][0] == "A" and r["seat"][1][0] in "TJQK" for r in ROWS),
        "double": any("double" in r["actions"] for r in ROWS),
        "split": any("split" in r["actions"] for r in ROWS),
        "insurance": any(r["insurance"] for r in ROWS),
        "late dealer blackjack": any(r["dealer"][0][0] == "K" and r["dealer"][1][0] == "A"
                                     for r in ROWS),
        "peeked dealer blackjack": any(r["dealer"] == ["AH", "KC"] for r in ROWS),
    }
    assert all(has.values()), has
    assert len(lines) == len(set(lines))


def _ace_up_round(hole: str) -> BlackjackRound:
    round_, _ = play_script(PROFILES["S17"], [1], cards(["TS", "AH", "9D", hole, "5S"]),
                            insurance=[1])
    return round_


def test_insurance_amounts_and_limits() -> None:
    rules = PROFILES["S17"].rules
    win = _ace_up_round("KC").result()
    lose = _ace_up_round("7C").result()
    assert insurance_net(win, BET, Decimal(5), rules) == 10
    assert insurance_net(lose, BET, Decimal("2.5"), rules) == Decimal("-2.5")
    with pytest.raises(SettlementError, match=r"more than 0.5 of the bet 10 \(at most 5"):
        insurance_net(win, BET, Decimal("5.01"), rules)
    plain, _ = play_script(PROFILES["S17"], [1], cards("TS 9H 9D 7C 2C"))
    with pytest.raises(SettlementError, match="not offered"):
        settle_seat(plain.result(), 1, BET, rules, Decimal(1))


@pytest.mark.parametrize("stake", [Decimal(-1), Decimal("NaN"), 10.0, True, "10"])
def test_bad_stakes_are_refused(stake: object) -> None:
    plain, _ = play_script(PROFILES["S17"], [1], cards("TS 9H 9D 7C 2C"))
    with pytest.raises(SettlementError, match="the bet on seat 1 must be"):
        settle_seat(plain.result(), 1, stake, PROFILES["S17"].rules)  # type: ignore[arg-type]
    with pytest.raises(SettlementError, match="seat 4 had no bet"):
        settle_seat(plain.result(), 4, BET, PROFILES["S17"].rules)


def test_blackjack_pays_exactly_on_odd_amounts() -> None:
    round_, _ = play_script(PROFILES["S17"], [1], cards("AS 9H KD 7C 2C"))
    assert settle_seat(round_.result(), 1, Decimal("5.01"), PROFILES["S17"].rules).net == \
        Decimal("7.515")
