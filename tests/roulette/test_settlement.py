"""Roulette bets and settlement against the independent reference (roulette_reference.py)."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_controller.games.roulette.bets import (
    NO_ZERO_BETS,
    BetError,
    BetKind,
    ZeroBets,
    make_bet,
    parse_bet,
)
from shoe_controller.games.roulette.profile import load_profile, profile_from_toml
from shoe_controller.games.roulette.settlement import PlacedBet, check_slip, refund, settle

from . import roulette_reference as ref

PROFILE = load_profile("roulette-single-zero")
ALL_ZERO = ZeroBets(True, True, True)
OUTSIDE = {"column", "dozen"}


def engine_bet(kind: str, numbers: frozenset[int], zero: ZeroBets = NO_ZERO_BETS):
    """The engine's bet for a reference bet (outside bets are named by which one)."""
    if kind in OUTSIDE:
        table = ref.columns() if kind == "column" else ref.dozens()
        return make_bet(kind, [table.index(numbers) + 1], zero=zero)
    if kind in ref.even_money():
        return make_bet(kind, zero=zero)
    return make_bet(kind, sorted(numbers), zero=zero)


def test_reference_counts_match_the_felt() -> None:
    assert (len(ref.straights()), len(ref.splits()), len(ref.streets()), len(ref.corners()),
            len(ref.lines())) == (37, 57, 12, 22, 11)


@pytest.mark.parametrize("zero", [ZeroBets(), ALL_ZERO], ids=["seed-003", "zero-bets"])
@pytest.mark.parametrize(("kind", "size"), [("split", 2), ("street", 3), ("corner", 4)])
def test_engine_accepts_exactly_the_bets_the_felt_allows(kind: str, size: int,
                                                         zero: ZeroBets) -> None:
    """Every set of 2, 3 or 4 pockets: accepted iff the reference finds it on the felt."""
    with_zero = zero.splits
    allowed = {"split": ref.splits, "street": ref.streets, "corner": ref.corners}[kind](with_zero)
    accepted = set()
    for numbers in ref.subsets_of_size(size):
        try:
            accepted.add(make_bet(kind, sorted(numbers), zero=zero).numbers)
        except BetError:
            pass
    assert accepted == set(allowed)


@settings(max_examples=300, deadline=None)
@given(st.sets(st.integers(0, 36), min_size=6, max_size=6))
def test_lines_are_two_neighbouring_rows(numbers: set[int]) -> None:
    expected = frozenset(numbers) in set(ref.lines())
    try:
        make_bet("line", sorted(numbers))
        assert expected
    except BetError:
        assert not expected


def test_every_line_is_accepted() -> None:
    for numbers in ref.lines():
        assert make_bet(BetKind.LINE, sorted(numbers)).numbers == numbers


@pytest.mark.parametrize("zero", [ZeroBets(), ALL_ZERO], ids=["seed-003", "zero-bets"])
def test_every_bet_on_every_number_pays_as_the_sheet_says(zero: ZeroBets) -> None:
    for kind, numbers in ref.every_bet(zero_bets=zero.splits):
        bet = engine_bet(kind, numbers, zero)
        assert bet.numbers == numbers, kind
        for number in range(37):
            for stake in (Decimal(1), Decimal("0.05"), Decimal("12.34")):
                (outcome,) = settle(number, [PlacedBet(bet, stake)], PROFILE).outcomes
                assert outcome.returned == ref.returned(numbers, stake, number), (kind, number)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(ref.every_bet(zero_bets=True)), st.integers(0, 36),
       st.integers(1, 10_000_00).map(lambda cents: Decimal(cents) / 100))
def test_settlement_property(bet: tuple[str, frozenset[int]], number: int,
                             stake: Decimal) -> None:
    kind, numbers = bet
    (outcome,) = settle(number, [PlacedBet(engine_bet(kind, numbers, ALL_ZERO), stake)],
                        PROFILE).outcomes
    assert outcome.returned == ref.returned(numbers, stake, number)
    assert outcome.result == ("win" if number in numbers else "lose")


def test_every_bet_keeps_the_published_edge() -> None:
    """REFERENCE-NUMBERS: every European roulette bet's edge is 1/37 = 2.702703 %."""
    for kind, numbers in ref.every_bet(zero_bets=True):
        bet = engine_bet(kind, numbers, ALL_ZERO)
        back = sum(settle(n, [PlacedBet(bet, Decimal(1))], PROFILE).total_returned
                   for n in range(37))
        edge = 1 - Fraction(back) / 37
        assert edge == Fraction(1, 37), kind
        assert f"{float(edge) * 100:.6f}" == "2.702703"


def test_zero_loses_every_outside_bet() -> None:
    for kind, numbers in ref.every_bet():
        if len(numbers) >= 12:
            assert settle(0, [PlacedBet(engine_bet(kind, numbers), Decimal(5))],
                          PROFILE).total_returned == 0


def _variant(**changes: str) -> str:
    text = (PROFILE.path.read_text() if PROFILE.path else "")  # type: ignore[union-attr]
    for key, value in changes.items():
        old = next(line for line in text.splitlines() if line.startswith(f"{key} ="))
        text = text.replace(old, f"{key} = {value}")
    return text


def test_la_partage_returns_half_rounded_down() -> None:
    profile = profile_from_toml(_variant(even_money_on_zero='"la-partage"'))
    red = make_bet("red")
    outcomes = settle(0, [PlacedBet(red, Decimal(10)), PlacedBet(red, Decimal("0.05")),
                          PlacedBet(make_bet("dozen", [1]), Decimal(4))], profile).outcomes
    assert [(o.result, o.returned) for o in outcomes] == [
        ("half", Decimal(5)), ("half", Decimal("0.02")), ("lose", Decimal(0))]
    back = sum(settle(n, [PlacedBet(red, Decimal(2))], profile).total_returned
               for n in range(37))
    assert 1 - Fraction(back) / 74 == Fraction(1, 74)  # 1.351351 %, half the usual edge


def test_en_prison_holds_the_stake_for_one_more_spin() -> None:
    profile = profile_from_toml(_variant(even_money_on_zero='"en-prison"'))
    odd = make_bet("odd")
    first = settle(0, [PlacedBet(odd, Decimal(10))], profile)
    assert [o.result for o in first.outcomes] == ["imprisoned"]
    assert first.total_returned == 0 and first.outcomes[0].net == 0
    (held,) = first.imprisoned
    check_slip([held], profile)
    assert settle(7, [held], profile).outcomes[0].result == "released"
    assert settle(7, [held], profile).total_returned == Decimal(10)
    assert settle(8, [held], profile).total_returned == 0
    assert settle(0, [held], profile).total_returned == 0  # zero again: lost
    with pytest.raises(BetError, match="En Prison"):
        check_slip([held], PROFILE)


def test_refund_returns_every_stake() -> None:
    bets = [PlacedBet(parse_bet("straight 0"), Decimal(3)),
            PlacedBet(parse_bet("black"), Decimal("2.50"))]
    result = refund(bets)
    assert result.number is None and result.total_returned == Decimal("5.50")
    assert {o.result for o in result.outcomes} == {"void"}


def test_slip_outside_limits_is_refused_naming_each_problem() -> None:
    bets = [PlacedBet(parse_bet("straight 17"), Decimal("100.01")),
            PlacedBet(parse_bet("red"), Decimal("0.50")),
            PlacedBet(parse_bet("split 1-2"), Decimal("1.005")),
            PlacedBet(parse_bet("split 0-1", zero=ALL_ZERO), Decimal(5))]
    with pytest.raises(BetError) as caught:
        check_slip(bets, PROFILE)
    message = str(caught.value)
    assert "bet 1 (straight 17): stake 100.01 outside the table's limits" in message
    assert "bet 2 (red): stake 0.50 outside" in message
    assert "bet 3 (split 1-2): stake must be a positive amount in whole cents" in message
    assert "bet 4 (split 0-1): this table does not offer bets joining zero" in message
    check_slip([PlacedBet(parse_bet("straight 17"), Decimal(100))], PROFILE)
    with pytest.raises(BetError, match="above the table maximum"):
        check_slip([PlacedBet(parse_bet("red"), Decimal(3000))] * 4, PROFILE)


@pytest.mark.parametrize(("text", "reason"), [
    ("split 3-4", "side by side"), ("split 0-1", "does not offer zero splits"),
    ("street 3-4-5", "one row"), ("corner 3-4-6-7", "meeting at one point"),
    ("line 3-8", "two neighbouring rows"), ("straight 37", "not a pocket"),
    ("column 4", "1, 2 or 3"), ("red 3", "names no numbers"), ("lucky 7", "unknown bet kind"),
    ("split 1-1", "2 different numbers"), ("street 0-1-2", "zero streets"),
    ("corner 0-1-2-3", "first four"), ("split 0-4", "zero is not part"), ("", "cannot read"),
    ("split 1-2-3-4-5-6-7", "too many"),
])
def test_bad_bets_say_why(text: str, reason: str) -> None:
    with pytest.raises(BetError, match=reason):
        parse_bet(text)


def test_labels_read_back() -> None:
    for kind, numbers in ref.every_bet(zero_bets=True):
        bet = engine_bet(kind, numbers, ALL_ZERO)
        assert parse_bet(bet.label, zero=ALL_ZERO) == bet
