"""Roulette profiles: the packaged one says what seed 003 says; bad files name every problem."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_controller.errors import ConfigError
from shoe_controller.games.roulette.profile import (
    ProfileError,
    list_profiles,
    load_profile,
    profile_from_toml,
)

from . import roulette_reference as ref

PACKAGED = load_profile("roulette-single-zero")


def test_packaged_profile_pays_seed_003() -> None:
    by_cover = {"straight": 1, "split": 2, "street": 3, "corner": 4, "line": 6, "column": 12,
                "dozen": 12, "even_money": 18}
    for key, cover in by_cover.items():
        assert PACKAGED.pays[key] == ref.PAYS_BY_COVER[cover]
    assert PACKAGED.even_money_on_zero == "lose"
    assert not (PACKAGED.zero.splits or PACKAGED.zero.streets or PACKAGED.zero.first_four)
    assert "roulette-single-zero" in list_profiles()


MINIMAL = """
game = "roulette"
[limits.straight]
min = "1"
max = "10"
[limits.split]
min = "1"
max = "10"
[limits.street]
min = "1"
max = "10"
[limits.corner]
min = "1"
max = "10"
[limits.line]
min = "1"
max = "10"
[limits.column]
min = "1"
max = "10"
[limits.dozen]
min = "1"
max = "10"
[limits.even_money]
min = "1"
max = "10"
"""


def test_minimal_profile_defaults_to_seed_003() -> None:
    profile = profile_from_toml(MINIMAL, Path("my-wheel.toml"))
    assert profile.name == "my-wheel" and profile.pays["straight"] == Decimal(35)


def test_every_problem_is_listed() -> None:
    text = MINIMAL.replace('game = "roulette"', 'game = "baccarat"\nzero_splits = "yes"\n'
                           'even_money_on_zero = "half"\ncolour = 1\n[pays]\nstraight = "37"\n'
                           'split = "-1"\nline = "5.1234567"')
    text = text.replace('[limits.dozen]\nmin = "1"\nmax = "10"', '[limits.dozen]\nmin = "20"\n'
                        'max = "10"').replace('[limits.even_money]\nmin = "1"\nmax = "10"', "")
    with pytest.raises(ProfileError) as caught:
        profile_from_toml(text, "t.toml")
    problems = "\n".join(caught.value.problems)
    for expected in ["t.toml: game: must be \"roulette\"", "zero_splits: must be true or false",
                     "even_money_on_zero: must be one of lose, la-partage, en-prison",
                     "colour: unknown key",
                     "pays.straight: 37 to 1 on 1 numbers gives the player an edge of 2.70 %",
                     "pays.split: must be more than 0",
                     "pays.line: at most 6 decimal places",
                     "limits.dozen: min 20 is above max 10",
                     "limits.even_money: required"]:
        assert expected in problems
    assert isinstance(caught.value, ConfigError)


def test_player_edge_allowed_when_said() -> None:
    text = 'allow_player_edge = true\n' + MINIMAL + '[pays]\nstraight = "37"\n'
    assert profile_from_toml(text).pays["straight"] == 37


def test_unknown_profile_and_missing_file() -> None:
    with pytest.raises(ProfileError, match="no such roulette profile"):
        load_profile("no-such-wheel")
    with pytest.raises(ProfileError, match="not found"):
        load_profile("/nonexistent/x.toml")


def test_user_directory_profiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "club.toml").write_text(MINIMAL)
    (tmp_path / "baccarat-like.toml").write_text('decks = 8\n')
    monkeypatch.setenv("SHOE_PROFILE_PATH", str(tmp_path))
    assert set(list_profiles()) == {"club", "roulette-single-zero"}
    assert load_profile("club").name == "club"


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_any_text_loads_or_says_why(text: str) -> None:
    try:
        profile_from_toml(text)
    except ProfileError as exc:
        assert exc.problems and all(p.startswith("<profile>: ") for p in exc.problems)
