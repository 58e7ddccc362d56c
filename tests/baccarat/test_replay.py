"""Shoe replay: schema, cut-card handling, short shoes, the CLI, and a statistical check."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from shoe_controller.cards import Card, format_shoe, new_shoe
from shoe_controller.cli import main
from shoe_controller.games.baccarat.profile import load_profile
from shoe_controller.games.baccarat.replay import ShoeTooShortError, replay_shoe
from shoe_controller.games.baccarat.shoe_rules import ShoeRules

ROUND_KEYS = [
    "type",
    "round",
    "player",
    "banker",
    "player_total",
    "banker_total",
    "outcome",
    "natural",
    "player_pair",
    "banker_pair",
]


def cards(codes: str) -> list[Card]:
    return [Card.from_code(c) for c in codes.split()]


def test_replay_schema_and_numbering() -> None:
    shoe = new_shoe(8, 3)
    lines = list(replay_shoe(shoe, load_profile("punto-banco-8d")))
    burn, rounds, end = lines[0], lines[1:-1], lines[-1]
    turned = shoe[0]
    assert burn == {"type": "burn", "cards": [c.code for c in shoe[: 1 + min(turned.rank, 10)]]}
    assert [r["round"] for r in rounds] == list(range(1, len(rounds) + 1))
    assert all(list(r) == ROUND_KEYS for r in rounds)
    assert all(r["outcome"] in ("player", "banker", "tie") for r in rounds)
    assert list(end) == ["type", "rounds", "cards_used"] and end["rounds"] == len(rounds)
    used = len(burn["cards"]) + sum(len(r["player"]) + len(r["banker"]) for r in rounds)
    assert end["cards_used"] == used
    # Cards are dealt in order: re-deriving the shoe prefix from the lines gives the shoe itself.
    order = list(burn["cards"])
    for r in rounds:
        p, b = r["player"], r["banker"]
        order += [p[0], b[0], p[1], b[1]] + p[2:] + b[2:]
    assert order == [c.code for c in shoe[:used]]
    assert all(json.dumps(line) for line in lines)


def _rounds_and_cut(shoe: list[Card], cut: int) -> tuple[int, int]:
    lines = list(replay_shoe(shoe, ShoeRules(), cut_card=cut))
    return lines[-1]["rounds"], lines[-1]["cards_used"]


def test_cut_card_rule_in_replay() -> None:
    # Burn: turn an ace, burn one. Then natural rounds of four cards each.
    shoe = cards("AS AH") + cards("9S KH KD KC") * 10
    # Cut card before card 18 (= 22 - 4): rounds use cards 2-5, 6-9, 10-13, 14-17; the cut card
    # comes out before round 5's first card, so round 5 is the last.
    assert _rounds_and_cut(shoe, 24) == (5, 22)
    # Cut card before card 20: inside round 5 (cards 18-21): finish it and deal one more.
    assert _rounds_and_cut(shoe, 22) == (6, 26)
    # A cut card beyond the first card: the burn, then a single round.
    assert _rounds_and_cut(shoe, 500) == (1, 6)


def test_short_shoes_end_with_a_clear_error() -> None:
    profile = load_profile("punto-banco-8d")
    with pytest.raises(ShoeTooShortError, match="during the burn.*3 more burn"):
        list(replay_shoe(cards("4S 2H"), profile))
    with pytest.raises(
        ShoeTooShortError,
        match=r"round 2 \(3 card\(s\) dealt, banker card due\)"
        r": at least 1 more",
    ):
        list(replay_shoe(cards("AS AH 9S KH KD KC 2S 3H KD"), profile, cut_card=0))
    with pytest.raises(ShoeTooShortError, match="before round 2"):
        list(replay_shoe(cards("AS AH 9S KH KD KC"), profile, cut_card=1))
    with pytest.raises(ShoeTooShortError, match="no cards"):
        list(replay_shoe([], profile))
    # Without a cut card a shoe may simply end between rounds.
    assert _rounds_and_cut(cards("AS AH 9S KH KD KC"), 0) == (1, 6)


def test_cli_replay_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shoe = new_shoe(6, 21)
    path = tmp_path / "shoe.txt"
    path.write_text(format_shoe(shoe))
    assert main(["replay", str(path), "--profile", "baccarat-6d", "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines == list(replay_shoe(shoe, load_profile("baccarat-6d")))
    assert (
        main(["replay", str(path), "--profile", "baccarat-6d", "--json", "--cut-card", "60"]) == 0
    )
    shorter = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert shorter[-1]["rounds"] < lines[-1]["rounds"]
    assert main(["replay", str(path), "--profile", "baccarat-6d"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("burn ") and "rounds" in text.splitlines()[-1]


def test_cli_replay_short_shoe_is_an_error_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "short.txt"
    path.write_text("AS AH 9S KH KD KC 2S 3H\n")
    args = ["replay", str(path), "--profile", "punto-banco-8d", "--json", "--cut-card", "1"]
    assert main(args) == 1
    captured = capsys.readouterr()
    assert "shoe replay: error: the shoe file ended after 8 cards" in captured.err
    assert "Traceback" not in captured.err
    assert json.loads(captured.out.splitlines()[-1])["round"] == 1  # earlier lines were printed


# Statistics ---------------------------------------------------------------------------------
# REFERENCE-NUMBERS.md: per-round facts for 8 decks and rounds per shoe with this procedure.
PER_ROUND_8D = {
    "banker": 0.4585974226,
    "player": 0.4462466093,
    "tie": 0.0951559680,
    "player_natural": 0.1894346617,
    "banker_natural": 0.1894346617,
    "natural": 0.3430490973,
    "four_cards": 0.3788684909,
    "five_cards": 0.3034441685,
    "six_cards": 0.3176873406,
    "player_pair": 31 / 415,
    "banker_pair": 31 / 415,
}
ROUNDS_SD = 1.618  # sd of rounds per 8-deck shoe; used as the sd for all three configurations


def _replay_many(decks: int, shoes: int, cut: int, seed0: int) -> tuple[list[int], dict[str, int]]:
    rules = ShoeRules(decks=decks, cut_card=cut)
    per_shoe: list[int] = []
    tally = dict.fromkeys(PER_ROUND_8D, 0)
    for seed in range(seed0, seed0 + shoes):
        for line in replay_shoe(new_shoe(decks, seed), rules):
            if line["type"] == "round":
                tally[line["outcome"]] += 1
                p, b = line["player"], line["banker"]
                n = len(p) + len(b)
                tally[{4: "four_cards", 5: "five_cards", 6: "six_cards"}[n]] += 1
                pn, bn = (
                    len(p) == 2 and line["player_total"] >= 8,
                    len(b) == 2 and line["banker_total"] >= 8,
                )
                tally["player_natural"] += pn
                tally["banker_natural"] += bn
                tally["natural"] += line["natural"]
                assert line["natural"] == (pn or bn)
                tally["player_pair"] += line["player_pair"]
                tally["banker_pair"] += line["banker_pair"]
            elif line["type"] == "shoe_end":
                per_shoe.append(line["rounds"])
    return per_shoe, tally


@pytest.mark.slow
def test_replayed_8_deck_shoes_match_the_reference_statistics() -> None:
    shoes = 2000
    per_shoe, tally = _replay_many(8, shoes, 14, seed0=10_000)
    rounds = sum(per_shoe)
    mean = rounds / shoes
    assert abs(mean - 81.280) < 4 * ROUNDS_SD / math.sqrt(shoes), mean
    for name, p in PER_ROUND_8D.items():
        freq = tally[name] / rounds
        se = math.sqrt(p * (1 - p) / rounds)
        assert abs(freq - p) < 4 * se, (name, freq, p, se)


@pytest.mark.slow
@pytest.mark.parametrize("decks,cut,reference", [(6, 14, 60.227), (8, 16, 80.875)])
def test_rounds_per_shoe_other_configurations(decks: int, cut: int, reference: float) -> None:
    shoes = 1000
    per_shoe, _ = _replay_many(decks, shoes, cut, seed0=50_000)
    mean = sum(per_shoe) / shoes
    sd = math.sqrt(sum((x - mean) ** 2 for x in per_shoe) / (shoes - 1))
    assert 1.0 < sd < 2.5  # the spread itself is of the published size
    assert abs(mean - reference) < 4 * max(sd, ROUNDS_SD) / math.sqrt(shoes), mean
