"""Profiles: the packaged tables, validation that reports every problem, the player-edge guard."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from shoe_controller.errors import ConfigError
from shoe_controller.games.baccarat.profile import (
    ProfileError,
    list_profiles,
    load_profile,
)

PACKAGED = [
    "baccarat-6d",
    "ez-baccarat-8d",
    "punto-banco-1d",
    "punto-banco-8d",
    "super6-8d",
    "zero-commission-8d",
]


def test_packaged_profiles_load() -> None:
    assert list(list_profiles()) == PACKAGED
    for name in PACKAGED:
        profile = load_profile(name)
        assert profile.name == name
        assert profile.burn_procedure == "turn-and-burn" and profile.cut_card == 14
        assert profile.last_round == "finish-and-one-more" and not profile.allow_player_edge


def test_seed_paytables() -> None:
    six = load_profile("baccarat-6d")
    assert six.decks == 6 and six.bets["banker"].pays == Decimal("0.95")
    assert six.bets["player"].pays == 1 and six.bets["tie"].pays == 8
    eight = load_profile("punto-banco-8d")
    assert eight.decks == 8 and eight.bets["banker"].commission == Decimal("0.05")
    one = load_profile("punto-banco-1d")
    assert one.decks == 1 and one.bets["player_pair"].pays == one.bets["banker_pair"].pays == 15
    zero = load_profile("zero-commission-8d")
    assert zero.bets["banker"].pays == 1 and zero.bets["banker"].commission == 0
    assert zero.bets["banker"].exceptions[0].when == "banker_three_card_7"
    super6 = load_profile("super6-8d")
    assert super6.bets["banker"].exceptions[0].pays == Decimal("0.5")
    assert all(
        bet.pushes_on == ("tie",)
        for p in (six, eight, one, zero, super6)
        for name, bet in p.bets.items()
        if name in ("player", "banker")
    )


def write(tmp_path: Path, text: str, name: str = "table.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


GOOD = """
name = "my-table"
decks = 8
[bets.player]
wins_on = "player"
pays = "1"
pushes_on = ["tie"]
"""


def test_user_profile_by_path_and_by_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, GOOD, "my-table.toml")
    assert load_profile(str(path)).name == "my-table"
    assert load_profile(path).path == path
    monkeypatch.setenv("SHOE_PROFILE_PATH", str(tmp_path))
    assert load_profile("my-table").bets["player"].pays == 1
    assert list_profiles()["my-table"] == path
    assert "punto-banco-8d" in list_profiles()


def test_every_problem_is_reported_with_file_key_and_reason(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
name = "bad"
decks = 0
cut_card = -3
last_round = "whenever"
colour = "green"
[burn]
procedure = "fixed"
[bets.banker]
wins_on = "bankr"
pays = "zero point nine five"
commission = "1.5"
pushes_on = ["tie", "draw"]
[[bets.banker.exceptions]]
when = "banker_three_card_7"
result = "push"
pays = "2"
[bets.tie]
wins_on = "tie"
""",
    )
    with pytest.raises(ProfileError) as info:
        load_profile(path)
    problems = info.value.problems
    keys = [p.split(": ")[1] for p in problems]
    assert all(p.startswith(f"{path}: ") for p in problems)
    for key in (
        "decks",
        "cut_card",
        "last_round",
        "colour",
        "burn.count",
        "bets.banker.wins_on",
        "bets.banker.pays",
        "bets.banker.commission",
        "bets.banker.pushes_on[1]",
        "bets.banker.exceptions[0]",
        "bets.tie.pays",
    ):
        assert key in keys, (key, problems)
    assert isinstance(info.value, ConfigError)
    assert str(len(problems)) in str(info.value)


def test_pairs_at_15_to_1_with_8_decks_are_refused_unless_intended(tmp_path: Path) -> None:
    text = (
        GOOD
        + """
[bets.player_pair]
wins_on = "player_pair"
pays = "15"
"""
    )
    with pytest.raises(ProfileError) as info:
        load_profile(write(tmp_path, text))
    (problem,) = info.value.problems
    assert "bets.player_pair.pays" in problem and "19.52 %" in problem
    assert "allow_player_edge" in problem
    allowed = load_profile(write(tmp_path, "allow_player_edge = true\n" + text, "ok.toml"))
    assert allowed.allow_player_edge


def test_one_deck_pairs_at_15_to_1_are_fine(tmp_path: Path) -> None:
    text = (
        GOOD.replace("decks = 8", "decks = 1") + '[bets.bp]\nwins_on = "banker_pair"\npays = 15\n'
    )
    assert load_profile(write(tmp_path, text)).bets["bp"].pays == 15


def test_file_and_toml_errors(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="not found"):
        load_profile(tmp_path / "missing.toml")
    with pytest.raises(ProfileError, match="not valid TOML"):
        load_profile(write(tmp_path, "decks = = 8"))
    with pytest.raises(ProfileError, match="no such profile"):
        load_profile("nonexistent")


def test_decimal_forms_and_mixed_pair_bets(tmp_path: Path) -> None:
    text = (
        GOOD
        + """
[bets.banker]
wins_on = "banker"
pays = 0.95
pushes_on = ["tie"]
[bets.odd]
wins_on = "player_pair"
pays = "5"
pushes_on = ["tie"]
"""
    )
    with pytest.raises(ProfileError) as info:
        load_profile(write(tmp_path, text))
    assert [p.split(": ")[1] for p in info.value.problems] == ["bets.odd.wins_on"]
    fixed_text = text[: text.rindex('pushes_on = ["tie"]')]
    fixed = load_profile(write(tmp_path, fixed_text, "b.toml"))
    assert fixed.bets["banker"].pays == Decimal("0.95")


def test_fixed_burn(tmp_path: Path) -> None:
    profile = load_profile(write(tmp_path, GOOD + '[burn]\nprocedure = "fixed"\ncount = 6\n'))
    assert profile.shoe_rules.burn_procedure == "fixed" and profile.shoe_rules.burn_count == 6
    with pytest.raises(ProfileError, match="burn.count"):
        load_profile(write(tmp_path, GOOD + "[burn]\ncount = 6\n", "x.toml"))
