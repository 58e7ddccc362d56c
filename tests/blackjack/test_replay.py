"""``shoe replay --profile blackjack-*`` with a decisions file: schema, dealing order, the cut
card, and every error it must report clearly (naming round, seat and action)."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_controller.cards import format_shoe, new_shoe
from shoe_controller.cli import main
from shoe_controller.games.blackjack.decisions import (
    DecisionsError,
    parse_decisions,
    read_decisions_file,
)
from shoe_controller.games.blackjack.replay import ShoeTooShortError, replay_blackjack

from . import blackjack_reference as ref
from .helpers import S17, cards

BURN = "2S 3S 4S 5S 6S 7S "


def lines(*rounds: dict) -> str:
    return "\n".join(json.dumps(r) for r in rounds) + "\n"


def replay(shoe: str, decisions: str, profile=S17, cut_card: int | None = 0) -> list[dict]:
    return list(replay_blackjack(cards(shoe), profile, parse_decisions(decisions, "d.jsonl"),
                                 cut_card=cut_card))


def test_issue_example_round_and_schema() -> None:
    # Seats 1, 4, 7; dealer 6 up. Seat 4 splits 8s, hits the first hand, doubles the second.
    shoe = BURN + "5S 8D TH 6C 6H 8H 9C 7D  3S TD 2C 3D  9D  TS"
    decisions = lines({"round": 1, "seats": [1, 4, 7], "insurance": [],
                       "actions": {"1": ["hit", "stand"], "4": ["split", "hit", "stand",
                                                                "double"], "7": []}})
    burn, round_1, end = replay(shoe, decisions)
    assert burn == {"type": "burn", "cards": ["2S", "3S", "4S", "5S", "6S", "7S"]}
    assert list(round_1) == ["type", "round", "dealer", "seats", "insurance"]
    assert round_1["dealer"] == {"cards": ["6C", "7D", "TS"], "total": 23, "blackjack": False,
                                 "bust": True}
    seat_1, = round_1["seats"]["1"]
    assert seat_1["cards"] == ["5S", "6H", "3S"] and seat_1["total"] == 14
    first, second = round_1["seats"]["4"]
    assert first == {"cards": ["8D", "TD", "2C"], "total": 20, "soft": False,
                     "blackjack": False, "bust": False, "doubled": False, "from_split": True,
                     "outcome": "win", "payout": 1}
    assert (second["cards"], second["doubled"], second["payout"]) == (["8H", "3D", "9D"], True, 2)
    assert round_1["seats"]["7"][0]["cards"] == ["TH", "9C"]
    assert list(first) == ["cards", "total", "soft", "blackjack", "bust", "doubled",
                           "from_split", "outcome", "payout"]
    assert round_1["insurance"] == {"offered": False, "dealer_blackjack": False, "taken": []}
    assert end == {"type": "shoe_end", "rounds": 1, "cards_used": 6 + 14}


def test_dealing_order_and_payouts_over_a_whole_shoe(tmp_path: Path) -> None:
    """A real shuffled shoe, every seat betting and standing on 12+: the lines re-deal the file
    in order, the shoe ends at the cut card, and every payout is the reference's."""
    shoe = new_shoe(8, 17)
    plan = [{"round": n, "seats": [1, 2, 3, 4, 5, 6, 7]} for n in range(1, 80)]
    with pytest.raises(DecisionsError) as too_many:  # how many rounds this shoe holds
        list(replay_blackjack(shoe, S17, parse_decisions(lines(*plan))))
    last = int(re.search(r"finished after round (\d+)", str(too_many.value)).group(1))
    records = list(replay_blackjack(shoe, S17, parse_decisions(lines(*plan[:last]))))
    rounds = [r for r in records if r["type"] == "round"]
    end = records[-1]
    order = list(records[0]["cards"])
    for r in rounds:
        seats = r["seats"]
        dealer = r["dealer"]["cards"]
        order += [seats[s][0]["cards"][0] for s in seats] + [dealer[0]]
        order += [seats[s][0]["cards"][1] for s in seats] + [dealer[1]]
        for s in seats:
            order += seats[s][0]["cards"][2:]
            for hand in seats[s]:
                units = ref.hand_units(hand["cards"], hand["from_split"], hand["doubled"],
                                       dealer)
                assert hand["payout"] == units
        order += dealer[2:]
    assert order == [c.code for c in shoe[: end["cards_used"]]]
    # The last round dealt the first card behind the cut card (52 from the back).
    cut_index = len(shoe) - 52
    assert end["cards_used"] > cut_index
    assert end["cards_used"] - len(dealer) - 2 * 7 - sum(
        len(h["cards"]) - 2 for hs in rounds[-1]["seats"].values() for h in hs) <= cut_index


def test_decisions_beyond_the_shoes_last_round_are_an_error() -> None:
    shoe = new_shoe(8, 17)
    plan = [{"round": n, "seats": [1, 2, 3, 4, 5, 6, 7]} for n in range(1, 200)]
    with pytest.raises(DecisionsError, match=r"d.jsonl:\d+: round \d+: the shoe finished after "
                       r"round \d+ \(cut card\)"):
        list(replay_blackjack(shoe, S17, parse_decisions(lines(*plan), "d.jsonl")))


def test_last_round_rules() -> None:
    # Rounds of four cards for one seat that stands (20 v 20). Cut card before the card at 14.
    shoe = BURN + "TS TH KD QC " * 4
    plan = lines(*({"round": n, "seats": [1]} for n in range(1, 4)))
    # 22 cards, cut card 8 from the back: before card 14, the first of round 3 -> the last.
    assert replay(shoe, plan, cut_card=8)[-1] == {"type": "shoe_end", "rounds": 3,
                                                   "cards_used": 18}
    # Cut card before card 15, inside round 3: that round is the last.
    assert replay(shoe, plan, cut_card=7)[-1]["rounds"] == 3
    one_more = dataclasses.replace(
        S17, shoe=dataclasses.replace(S17.shoe, last_round="finish-and-one-more"))
    assert replay(shoe, plan + lines({"round": 4, "seats": [1]}), one_more,
                  cut_card=7)[-1]["rounds"] == 4


@pytest.mark.parametrize(
    ("shoe", "decisions", "message"),
    [
        (BURN + "9S 7H 5D 8C", {"round": 1, "seats": [1], "actions": {"1": ["split"]}},
         r"d.jsonl:1: round 1: Seat 1: cannot split: not a pair"),
        (BURN + "9S 7H 5D 8C 2C 3C", {"round": 1, "seats": [1], "actions": {"1": ["hit",
                                                                             "double"]}},
         r"round 1: Seat 1: cannot double: double only on the first two cards"),
        (BURN + "9S 7H 5D 8C", {"round": 1, "seats": [1], "insurance": [1]},
         r"round 1, seat 1: insurance listed, but the up card 7H is not an ace"),
        (BURN + "AS 7H KD 8C", {"round": 1, "seats": [1], "actions": {"1": ["stand"]}},
         r"round 1, seat 1: action 'stand' left over: the seat's hands were finished"),
        (BURN + "9S AH 8D KC", {"round": 1, "seats": [1], "actions": {"1": ["hit"]}},
         r"action 'hit' left over: the dealer's blackjack ended the round before play"),
        (BURN + "9S 7H 5D", {"round": 1, "seats": [1]},
         r"ended after 9 cards, in the middle of round 1 \(Deal the dealer's hole card"),
        (BURN + "9S 7H 5D 8C", {"round": 1, "seats": [1], "actions": {"1": ["hit"]}},
         r"in the middle of round 1 \(Seat 1: hit\)"),
        ("2S 3S", {"round": 1, "seats": [1]}, r"during the burn: 4 more burn card"),
    ],
)
def test_errors_name_the_round_seat_and_action(shoe: str, decisions: dict, message: str) -> None:
    with pytest.raises((DecisionsError, ShoeTooShortError), match=message):
        replay(shoe, lines(decisions))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"round": 1, "seats": [1]}\n{"round": 3, "seats": [1]}',
         r"d.jsonl:2: expected round 2 .* got 3"),
        ('{"round": 1.0, "seats": [1]}', r"expected round 1 .* got 1.0"),
        ('{"round": true, "seats": [1]}', r"expected round 1 .* got True"),
        ('{"round": 1, "seats": [1], "actions": {"01": []}}', r"actions for seat '01'"),
        ('{"round": 1, "seats": []}', r"seats: must be a list of seat numbers, at least one"),
        ('{"round": 1, "seats": [8]}', r"round 1: seats: 8 is not a seat \(1 to 7\)"),
        ('{"round": 1, "seats": [1, 1]}', r"a seat is listed twice"),
        ('{"round": 1, "seats": [true]}', r"True is not a seat"),
        ('{"round": 1, "seats": [1], "insurance": [2]}', r"insurance for seat 2, which has no bet"),
        ('{"round": 1, "seats": [1], "actions": {"2": []}}', r"actions for seat '2', which has no bet"),
        ('{"round": 1, "seats": [1], "actions": {"1": ["surrender"]}}',
         r"round 1, seat 1: unknown action 'surrender' \(known: hit, stand, double, split\)"),
        ('{"round": 1, "seats": [1], "actions": {"1": "hit"}}', r"actions must be a list"),
        ('{"round": 1, "seats": [1], "actions": {"1": [["hit"]]}}', r"unknown action \[.hit.\]"),
        ('{"round": 1, "seat": [1]}', r"unknown key 'seat'"),
        ('{"round": 1, "seats": [1], "schema": 2}', r"schema 2 is not supported"),
        ('[1, 2]', r"each line must be a JSON object"),
        ('{"round": 1, "seats": [1]', r"d.jsonl:1: not a JSON object"),
        ("[" * 100_000, r"not a JSON object"),
    ],
)
def test_malformed_decisions_files(text: str, message: str) -> None:
    with pytest.raises(DecisionsError, match=message):
        parse_decisions(text, "d.jsonl")


def test_unreadable_decisions_file(tmp_path: Path) -> None:
    with pytest.raises(DecisionsError, match="cannot read decisions file"):
        read_decisions_file(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"round": 1, "seats": [1]}\n\xff\n')
    with pytest.raises(DecisionsError, match="not UTF-8"):
        read_decisions_file(bad)


def _files(tmp_path: Path, shoe: str, decisions: str) -> tuple[str, str]:
    shoe_file, decisions_file = tmp_path / "shoe.txt", tmp_path / "d.jsonl"
    shoe_file.write_text(shoe, encoding="utf-8")
    decisions_file.write_text(decisions, encoding="utf-8")
    return str(shoe_file), str(decisions_file)


def test_cli_json_and_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shoe, decisions = _files(tmp_path, BURN + "AS 9H KD 7C 4D",
                             lines({"round": 1, "seats": [3]}))
    assert main(["replay", shoe, "--profile", "blackjack-8d", "--decisions", decisions,
                 "--json"]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["type"] for r in out] == ["burn", "round", "shoe_end"]
    assert out[1]["seats"]["3"][0]["payout"] == 1.5 and out[1]["seats"]["3"][0]["blackjack"]
    assert main(["replay", shoe, "--profile", "blackjack-8d", "--decisions", decisions]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[1].split() == ["1", "D", "9H", "7C", "(16)", "3:", "AS", "KD", "(BJ)", "win",
                               "+1.5"]


def test_cli_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shoe, decisions = _files(tmp_path, BURN + "9S 7H 5D 8C",
                             lines({"round": 1, "seats": [1], "actions": {"1": ["split"]}}))
    assert main(["replay", shoe, "--profile", "blackjack-8d", "--decisions", decisions]) == 1
    assert "shoe replay: error: " in capsys.readouterr().err
    assert main(["replay", shoe, "--profile", "blackjack-8d"]) == 1
    assert "needs the players' choices, --decisions FILE" in capsys.readouterr().err
    assert main(["replay", shoe, "--profile", "punto-banco-8d", "--decisions", decisions]) == 1
    assert "no such blackjack profile" in capsys.readouterr().err


def test_cli_process_prints_no_traceback(tmp_path: Path) -> None:
    shoe = tmp_path / "shoe.txt"
    shoe.write_text(format_shoe(new_shoe(8, 5)), encoding="utf-8")
    decisions = tmp_path / "d.jsonl"
    decisions.write_text('{"round": 1, "seats": [1], "actions": {"1": ["fly"]}}\n',
                         encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "shoe_controller.cli", "replay", str(shoe), "--profile",
         "blackjack-6d-h17", "--decisions", str(decisions), "--json"],
        capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert "round 1, seat 1: unknown action 'fly'" in run.stderr


def test_a_shoe_played_by_the_built_in_players_replays_to_the_same_rounds() -> None:
    """Decisions recorded while the remote players played a shoe (splits, doubles, insurance,
    random seats) replay to exactly the rounds they played."""
    import random

    from shoe_controller.games.blackjack.simulate import play_shoe
    from shoe_controller.games.blackjack.strategy import RemotePlayers

    shoe = new_shoe(8, 99)
    rng = random.Random(99)
    played = list(play_shoe(shoe, S17, RemotePlayers(S17.rules, rng, insurance_rate=0.5), rng))
    assert any(p.result.insurance_taken for p in played)
    assert any(len(hands) == 2 for p in played for hands in p.result.hands.values())
    records = list(replay_blackjack(shoe, S17, parse_decisions(lines(*(p.decisions
                                                                          for p in played)))))
    assert [r for r in records if r["type"] == "round"] == [
        p.result.to_json_dict(p.number) for p in played]


def test_output_and_decisions_match_their_json_schemas() -> None:
    import random

    import jsonschema

    from shoe_controller.games.blackjack.simulate import play_shoe
    from shoe_controller.games.blackjack.strategy import RemotePlayers

    docs = Path(__file__).resolve().parents[2] / "docs" / "blackjack"
    replay_schema = json.loads((docs / "replay.schema.json").read_text(encoding="utf-8"))
    decisions_schema = json.loads((docs / "decisions.schema.json").read_text(encoding="utf-8"))
    shoe = new_shoe(6, 4)
    rng = random.Random(4)
    plan = [p.decisions for p in play_shoe(shoe, S17, RemotePlayers(S17.rules, rng), rng)]
    for line in plan:
        jsonschema.validate(line, decisions_schema)
    issue_example = {"round": 1, "seats": [1, 4, 7], "insurance": [4], "actions": {
        "1": ["hit", "stand"], "4": ["split", "hit", "stand", "double"], "7": []}}
    jsonschema.validate(issue_example, decisions_schema)
    for record in replay_blackjack(shoe, S17, parse_decisions(lines(*plan))):
        jsonschema.validate(record, replay_schema)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 9) | st.floats() | st.text(max_size=6)
    | st.sampled_from(["hit", "stand", "double", "split", "1", "4"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["1", "4", "7", "01", "x"]), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["round", "seats", "insurance", "actions",
                                                 "schema", "seat"]), json_values, max_size=5),
                max_size=3),
       st.text(max_size=30))
def test_any_decisions_text_parses_or_is_refused_clearly(objects: list, junk: str) -> None:
    for text in ("\n".join(json.dumps(o) for o in objects), junk):
        try:
            rounds = parse_decisions(text, "d.jsonl")
        except DecisionsError as exc:
            assert str(exc).startswith("d.jsonl:")
        else:
            assert [r.round for r in rounds] == list(range(1, len(rounds) + 1))
            assert all(r.seats and set(r.actions) <= set(r.seats) for r in rounds)
