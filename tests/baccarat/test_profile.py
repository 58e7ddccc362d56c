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
    profile_from_toml,
    read_profile_text,
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


# -- found by tests/fuzz/test_file_decoders_fuzz.py: only ProfileError, whatever the file holds --


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'name = "\xff"\n', "not UTF-8 text (byte 0xff at offset 8)"),  # UnicodeDecodeError
        (b"decks = " + b"{a=" * 2000, "not valid TOML: arrays or tables nested too deeply"),
        (b"decks = " + b"9" * 5000, "not valid TOML: Exceeds the limit (4300 digits)"),
    ],
)
def test_files_that_crashed_the_loader_are_profile_errors(
    tmp_path: Path, data: bytes, expected: str
) -> None:
    path = tmp_path / "table.toml"
    path.write_bytes(data)
    with pytest.raises(ProfileError) as info:
        load_profile(path)
    (problem,) = info.value.problems
    assert problem.startswith(f"{path}: {expected}"), problem


def test_a_byte_order_mark_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "my-table.toml"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD.encode())
    assert load_profile(path).name == "my-table"


@pytest.mark.parametrize(
    ("pays", "expected"),
    [
        ('"1e999999"', "must be more than 0 and at most 1000000"),  # was an OverflowError
        ('"1e999999999"', "must be more than 0 and at most 1000000"),
        ('"1000000.5"', "must be more than 0 and at most 1000000"),
        ('"1e-999999"', "at most 6 decimal places"),
        ('"1.0000001"', "at most 6 decimal places"),
        ('"1.0000000000000000000000000000001"', "at most 6 decimal places"),
    ],
)
def test_pays_are_bounded(tmp_path: Path, pays: str, expected: str) -> None:
    text = f'allow_player_edge = true\n[bets.b]\nwins_on = "banker"\npays = {pays}\n'
    with pytest.raises(ProfileError) as info:
        load_profile(write(tmp_path, text))
    (problem,) = info.value.problems
    assert problem.startswith(f"{tmp_path / 'table.toml'}: bets.b.pays: {expected}"), problem


def test_bounds_allow_real_paytables(tmp_path: Path) -> None:
    text = (
        'allow_player_edge = true\n[bets.b]\nwins_on = "banker"\npays = "1000000"\n'
        'commission = "0.012500"\n[bets.p]\nwins_on = "player"\npays = "0.950000000"\n'
        '[[bets.p.exceptions]]\nwhen = "player_three_card_8"\npays = "0.123456"\n'
    )
    profile = load_profile(write(tmp_path, text))
    assert profile.bets["b"].pays == 1_000_000 and profile.bets["p"].pays == Decimal("0.95")
    assert profile.bets["b"].commission == Decimal("0.0125")
    path = write(tmp_path, text.replace('"0.123456"', '"1e7"'), "x.toml")
    with pytest.raises(ProfileError, match=r"bets\.p\.exceptions\[0\]\.pays: must be more than 0"):
        load_profile(path)


def test_odd_keys_stay_on_one_line(tmp_path: Path) -> None:
    text = '"a\\nb" = 1\n' + GOOD + '[bets."x\\ny"]\nwins_on = "tie"\npays = 8\ncolour = 1\n'
    with pytest.raises(ProfileError) as info:
        load_profile(write(tmp_path, text))
    assert all("\n" not in problem for problem in info.value.problems), info.value.problems
    assert any(": 'a\\nb': unknown key" in p for p in info.value.problems)
    assert any(": bets.'x\\ny'.colour: unknown key" in p for p in info.value.problems)


def test_the_text_read_once_gives_the_same_profile(tmp_path: Path) -> None:
    # What is journalled is the text read once; validating it again (on replay) must give the
    # same profile, named like load_profile names it even without a `name` key.
    path = write(tmp_path, GOOD.replace('name = "my-table"\n', ""), "no-name.toml")
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    text = read_profile_text(path)
    assert not text.startswith("\ufeff")
    assert profile_from_toml(text, str(path)) == load_profile(path)
    assert profile_from_toml(text, str(path)).name == "no-name"
    with pytest.raises(ProfileError, match="not valid TOML: arrays or tables nested too deep"):
        profile_from_toml("decks = " + "[" * 3000, "<journalled profile>")
