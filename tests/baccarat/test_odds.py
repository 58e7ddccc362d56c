"""Exact odds against ../shared/REFERENCE-NUMBERS.md (to 1e-8) and a brute-force enumeration."""

from __future__ import annotations

import json
import random
from fractions import Fraction
from pathlib import Path

import pytest

from shoe_controller.cards import format_shoe, new_shoe
from shoe_controller.cli import main
from shoe_controller.games.baccarat.odds import (
    OddsError,
    exact_odds,
    full_shoe,
    remaining,
)
from shoe_controller.games.baccarat.profile import load_profile, parse_profile

from .baccarat_reference import brute_force_counts

# REFERENCE-NUMBERS.md, by decks: probabilities as fractions of 1, edges in percent.
REFERENCE = {
    1: {
        "banker": 0.4596241552,
        "player": 0.4467604303,
        "tie": 0.0936154145,
        "banker_edge": 1.011748,
        "player_edge": 1.286372,
        "tie8": 15.746127,
        "tie9": 6.384585,
        "ez_banker": 0.967785,
        "dragon7": 7.579523,
        "panda8": 10.611416,
        "super6": 1.385210,
        "pair": Fraction(1, 17),
        "pair11": 29.411765,
        "pair15": 5.882353,
    },
    6: {
        "banker": 0.4586527188,
        "player": 0.4462785698,
        "tie": 0.0950687113,
        "banker_edge": 1.055849,
        "player_edge": 1.237415,
        "tie8": 14.438160,
        "tie9": 4.931289,
        "ez_banker": 1.016093,
        "dragon7": 7.606190,
        "panda8": 10.207383,
        "super6": 1.454808,
        "pair": Fraction(23, 311),
        "pair11": 11.254019,
        "pair15": -18.33,
    },
    8: {
        "banker": 0.4585974226,
        "player": 0.4462466093,
        "tie": 0.0951559680,
        "banker_edge": 1.057906,
        "player_edge": 1.235081,
        "tie8": 14.359629,
        "tie9": 4.844032,
        "ez_banker": 1.018301,
        "dragon7": 7.611334,
        "panda8": 10.187632,
        "super6": 1.458104,
        "pair": Fraction(31, 415),
        "pair11": 10.361446,
        "pair15": -19.52,
    },
}


def all_bets_profile(decks: int):
    """One profile holding every bet of the reference tables (player edge allowed: pairs 15:1)."""
    bets = {
        "player": {"wins_on": "player", "pays": "1", "pushes_on": ["tie"]},
        "banker": {"wins_on": "banker", "pays": "1", "commission": "0.05", "pushes_on": ["tie"]},
        "tie8": {"wins_on": "tie", "pays": "8"},
        "tie9": {"wins_on": "tie", "pays": "9"},
        "ez_banker": {
            "wins_on": "banker",
            "pays": "1",
            "pushes_on": ["tie"],
            "exceptions": [{"when": "banker_three_card_7", "result": "push"}],
        },
        "dragon7": {"wins_on": "banker_three_card_7", "pays": "40"},
        "panda8": {"wins_on": "player_three_card_8", "pays": "25"},
        "super6": {
            "wins_on": "banker",
            "pays": "1",
            "pushes_on": ["tie"],
            "exceptions": [{"when": "banker_wins_with_6", "pays": "0.5"}],
        },
        "pair11": {"wins_on": "player_pair", "pays": "11"},
        "pair15": {"wins_on": "banker_pair", "pays": "15"},
    }
    data = {"name": f"all-{decks}", "decks": decks, "allow_player_edge": True, "bets": bets}
    return parse_profile(data, Path(f"all-{decks}.toml"))


@pytest.mark.parametrize("decks", [1, 6, 8])
def test_reference_numbers(decks: int) -> None:
    ref = REFERENCE[decks]
    odds = exact_odds(full_shoe(decks), all_bets_profile(decks))
    for outcome in ("banker", "player", "tie"):
        assert float(odds.probability(outcome)) == pytest.approx(ref[outcome], abs=1e-8)
    edges = {name: float(bet.house_edge) * 100 for name, bet in odds.bets.items()}
    assert edges["banker"] == pytest.approx(ref["banker_edge"], abs=1e-6)
    assert edges["player"] == pytest.approx(ref["player_edge"], abs=1e-6)
    for name in ("tie8", "tie9", "ez_banker", "dragon7", "panda8", "super6", "pair11"):
        assert edges[name] == pytest.approx(ref[name], abs=1e-6), name
    assert edges["pair15"] == pytest.approx(ref["pair15"], abs=0.005)
    assert odds.probability("player_pair") == odds.probability("banker_pair") == ref["pair"]
    for bet in odds.bets.values():
        assert bet.rtp == 1 - bet.house_edge
        assert bet.win + bet.push + bet.lose == 1


def test_eight_deck_counts_and_facts_exactly() -> None:
    odds = exact_odds(full_shoe(8))
    assert odds.sequences == 4_998_398_275_503_360
    assert odds.counts["banker"] == 2_292_252_566_437_888
    assert odds.counts["player"] == 2_230_518_282_592_256
    assert odds.counts["tie"] == 475_627_426_473_216
    facts = {
        "banker_three_card_7": 0.0225338209,
        "player_three_card_8": 0.0345432184,
        "player_natural": 0.1894346617,
        "banker_natural": 0.1894346617,
        "natural": 0.3430490973,
        "player_draws": 0.5034137701,
        "banker_draws": 0.4354050796,
        "four_cards": 0.3788684909,
        "five_cards": 0.3034441685,
        "six_cards": 0.3176873406,
    }
    for name, value in facts.items():
        assert float(odds.probability(name)) == pytest.approx(value, abs=1e-10), name
    assert float(odds.mean_cards_per_round) == pytest.approx(4.9388188497, abs=1e-10)


def test_published_rtps_of_the_seeds() -> None:
    """The RTPs printed on the rule sheets, to their two decimals."""
    six = exact_odds(full_shoe(6), load_profile("baccarat-6d")).bets
    assert [round(float(six[b].rtp) * 100, 2) for b in ("banker", "player", "tie")] == [
        98.94,
        98.76,
        85.56,
    ]
    eight = exact_odds(full_shoe(8), load_profile("punto-banco-8d")).bets
    assert [round(float(eight[b].rtp) * 100, 2) for b in ("banker", "player", "tie")] == [
        98.94,
        98.76,
        85.64,
    ]
    one = exact_odds(full_shoe(1), load_profile("punto-banco-1d")).bets
    assert round(float(one["banker"].rtp) * 100, 2) == 98.99


def _value_counts(rank_counts: tuple[int, ...]) -> list[int]:
    values = [0] * 10
    for rank, n in enumerate(rank_counts, start=1):
        values[rank if rank < 10 else 0] += n
    return values


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_depleted_compositions_against_brute_force(seed: int) -> None:
    """Random part-dealt shoes (some values exhausted) agree exactly with the reference walk."""
    rng = random.Random(seed)
    shoe = new_shoe(1, seed)
    rest = shoe[rng.randrange(10, 40) :]
    odds = exact_odds(rest)
    expected = brute_force_counts(_value_counts(odds.rank_counts))
    for name, count in expected.items():
        assert odds.counts[name] == count, name
    assert sum(odds.counts[n] for n in ("banker", "player", "tie")) == odds.sequences


def test_full_deck_against_brute_force() -> None:
    odds = exact_odds(full_shoe(1))
    for name, count in brute_force_counts([16] + [4] * 9).items():
        assert odds.counts[name] == count


def test_big_shoes_fall_back_to_python_integers() -> None:
    """Beyond int64 (about 27 decks) the same code runs on Python ints and stays exact."""
    odds = exact_odds(full_shoe(40))
    assert odds.sequences > 2**63
    assert sum(odds.counts[n] for n in ("banker", "player", "tie")) == odds.sequences
    assert float(odds.probability("banker")) == pytest.approx(0.4585, abs=3e-4)


def test_composition_inputs_and_errors() -> None:
    cards = new_shoe(8, 7)[:100]
    assert exact_odds(cards).rank_counts == exact_odds(list(cards)).rank_counts
    assert sum(remaining(8, cards)) == 316
    with pytest.raises(OddsError, match="six cards"):
        exact_odds([0] * 12 + [5])
    with pytest.raises(OddsError, match="13 rank counts"):
        exact_odds([4] * 10)
    with pytest.raises(OddsError, match="negative"):
        exact_odds([-1] + [4] * 12)
    with pytest.raises(OddsError, match="holds only 4"):
        remaining(1, new_shoe(2, 1))


def test_cli_odds_json_full_shoe(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["odds", "--profile", "punto-banco-8d", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["profile"] == "punto-banco-8d" and out["decks"] == 8 and out["cards_left"] == 416
    ref = REFERENCE[8]
    for outcome in ("banker", "player", "tie"):
        assert out["outcomes"][outcome] == pytest.approx(ref[outcome], abs=1e-8)
    assert out["bets"]["banker"]["house_edge"] == pytest.approx(ref["banker_edge"] / 100, abs=1e-8)
    assert out["bets"]["player"]["rtp"] == pytest.approx(1 - ref["player_edge"] / 100, abs=1e-8)
    assert out["bets"]["tie"]["house_edge"] == pytest.approx(ref["tie8"] / 100, abs=1e-8)


@pytest.mark.parametrize(
    "profile,decks",
    [
        ("punto-banco-1d", 1),
        ("baccarat-6d", 6),
        ("zero-commission-8d", 8),
        ("super6-8d", 8),
        ("ez-baccarat-8d", 8),
    ],
)
def test_cli_odds_json_every_packaged_profile(
    profile: str, decks: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["odds", "--profile", profile, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    ref = REFERENCE[decks]
    assert out["outcomes"]["tie"] == pytest.approx(ref["tie"], abs=1e-8)
    expected = {
        "punto-banco-1d": ("banker", "banker_edge"),
        "baccarat-6d": ("banker", "banker_edge"),
        "zero-commission-8d": ("banker", "ez_banker"),
        "super6-8d": ("banker", "super6"),
        "ez-baccarat-8d": ("dragon7", "dragon7"),
    }[profile]
    assert out["bets"][expected[0]]["house_edge"] == pytest.approx(ref[expected[1]] / 100, abs=1e-8)


def test_cli_odds_after_seen_cards(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shoe = new_shoe(8, 11)
    seen = tmp_path / "seen.txt"
    seen.write_text(format_shoe(shoe[:57]))
    assert main(["odds", "--profile", "punto-banco-8d", "--seen", str(seen), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    direct = exact_odds(shoe[57:], load_profile("punto-banco-8d"))
    assert out["cards_left"] == 416 - 57
    assert out["outcomes"]["banker"] == float(direct.probability("banker"))
    assert out["bets"]["banker"]["house_edge"] == float(direct.bets["banker"].house_edge)


def test_cli_odds_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seen = tmp_path / "seen.txt"
    seen.write_text(format_shoe(new_shoe(2, 1)))
    assert main(["odds", "--profile", "punto-banco-1d", "--seen", str(seen)]) == 1
    assert "1-deck shoe holds only 4" in capsys.readouterr().err
    assert main(["odds", "--profile", "no-such-profile"]) == 1
    assert "no such profile" in capsys.readouterr().err
