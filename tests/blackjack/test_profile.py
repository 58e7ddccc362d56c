"""Blackjack profiles: the packaged ones say what seed 003 says; every bad value is reported."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_controller.games.baccarat.profile import ProfileError
from shoe_controller.games.blackjack.profile import (
    PACKAGED_DIR,
    is_blackjack_profile,
    list_profiles,
    load_profile,
    parse_profile,
    profile_from_toml,
)


def test_packaged_profiles_state_seed_003() -> None:
    assert set(list_profiles()) >= {"blackjack-8d", "blackjack-6d-h17"}
    eight = load_profile("blackjack-8d")
    rules, shoe = eight.rules, eight.shoe
    assert (rules.decks, rules.seats, rules.hits_soft_17) == (8, 7, False)
    assert (rules.blackjack_pays, rules.insurance_pays, rules.insurance_max) == (
        Decimal("1.5"), 2, Decimal("0.5"))
    assert rules.peeks_on == {1} and rules.double_totals is None and rules.double_after_split
    assert rules.double_loses_original_only and not rules.split_loses_original_only
    assert (rules.split_by, rules.split_aces, rules.split_aces_one_card) == ("value", True, True)
    assert (shoe.burn_after_shuffle, shoe.burn_after_error, shoe.cut_card) == (6, 3, 52)
    assert shoe.last_round == "finish-current"
    six = load_profile("blackjack-6d-h17")
    assert (six.rules.decks, six.rules.hits_soft_17, six.shoe.decks) == (6, True, 6)
    assert six.rules.__class__(**{**vars_of(six.rules), "decks": 8, "hits_soft_17": False}) \
        == rules


def vars_of(rules: object) -> dict:
    return {name: getattr(rules, name) for name in rules.__slots__}  # type: ignore[attr-defined]


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(ProfileError) as caught:
        parse_profile({
            "game": "blackjack", "decks": 0, "colour": "green", "seats": 9,
            "dealer": {"soft_17": "maybe", "peeks_on": ["K"]},
            "payouts": {"blackjack": "1.2.3", "insurance_max": "0.75x", "win": "-1"},
            "double": {"totals": [3, 11], "after_split": "yes"},
            "split": {"pairs": "suit", "dealer_blackjack_takes": "some"},
            "burn": {"after_shuffle": -1},
        }, Path("t.toml"))
    problems = caught.value.problems
    keys = [p.split(": ")[1] for p in problems]
    assert keys == ["colour", "decks", "burn.after_shuffle", "seats", "dealer.soft_17",
                    "dealer.peeks_on", "payouts.win", "payouts.blackjack",
                    "payouts.insurance_max", "double.totals", "double.after_split",
                    "split.pairs", "split.dealer_blackjack_takes"]
    assert all(p.startswith("t.toml: ") for p in problems)


@pytest.mark.parametrize("raw", [float("nan"), "NaN", "inf", "1e999999", "0", "0.0000001", True])
def test_payouts_must_be_finite_positive_and_short(raw: object) -> None:
    with pytest.raises(ProfileError, match="payouts.blackjack: "):
        parse_profile({"game": "blackjack", "payouts": {"blackjack": raw}})


def test_another_games_profile_is_not_a_blackjack_profile(tmp_path: Path) -> None:
    assert not is_blackjack_profile("punto-banco-8d")
    assert not is_blackjack_profile(tmp_path / "missing.toml")
    with pytest.raises(ProfileError, match="no such blackjack profile .*blackjack-8d"):
        load_profile("punto-banco-8d")
    with pytest.raises(ProfileError, match='game: must be "blackjack"'):
        profile_from_toml('decks = 8\n', "x.toml")
    with pytest.raises(ProfileError, match="not valid TOML"):
        profile_from_toml('decks = = 8\n', "x.toml")


def test_user_directory_profiles_shadow_packaged_ones(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    text = (PACKAGED_DIR / "blackjack-8d.toml").read_text(encoding="utf-8")
    (tmp_path / "blackjack-8d.toml").write_text(
        text.replace('soft_17 = "stand"', 'soft_17 = "hit"'), encoding="utf-8")
    (tmp_path / "baccarat-like.toml").write_text('decks = 8\n', encoding="utf-8")
    monkeypatch.setenv("SHOE_PROFILE_PATH", str(tmp_path))
    assert load_profile("blackjack-8d").rules.hits_soft_17
    assert "baccarat-like" not in list_profiles()
    assert is_blackjack_profile(tmp_path / "blackjack-8d.toml")


toml_values = st.recursive(
    st.none().map(lambda _: "") | st.booleans() | st.integers(-10**6, 10**6)
    | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3),
    max_leaves=8,
)
keys = st.sampled_from(["game", "decks", "seats", "cut_card", "last_round", "burn", "dealer",
                        "payouts", "double", "split", "name", "x"])


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(keys, toml_values, max_size=6), st.data())
def test_any_document_loads_or_is_refused_with_problems(doc: dict, data: st.DataObject) -> None:
    doc = {**doc, "game": data.draw(st.sampled_from(["blackjack", doc.get("game", 1)]))}
    for table in ("dealer", "payouts", "double", "split", "burn"):
        if data.draw(st.booleans()):
            doc[table] = data.draw(st.dictionaries(
                st.sampled_from(["soft_17", "peeks_on", "win", "blackjack", "insurance_max",
                                 "totals", "after_split", "pairs", "aces", "after_shuffle",
                                 "dealer_blackjack_takes"]), toml_values, max_size=3))
    try:
        profile = parse_profile(doc)
    except ProfileError as exc:
        assert exc.problems and all(p.startswith("<profile>: ") for p in exc.problems)
    else:
        assert 1 <= profile.rules.seats <= 7 and profile.rules.blackjack_pays > 0
