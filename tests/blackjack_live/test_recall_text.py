"""``shoe journal recall`` (text) of blackjack rounds, through the real command line, over a
journal of real table inputs (the table driver's, journalled as ``shoe run`` does).

The expected blocks are written out by hand from the cards dealt (docs/blackjack.md's rules),
not computed by the engine. The hole card is hidden exactly as ``--json`` hides it: at every
step of a round, the cards the text shows are the cards the JSON has.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from shoe_controller.cards import Card
from shoe_controller.cli import main
from shoe_controller.journal import Journal
from shoe_controller.table.inputs import CardDrawn, TableInput

from .table_driver import Driver

CARD = re.compile(r"\b([2-9TJQKA][SHDC])(?:\((\w+)\))?(?=\s|$)")


def write_journal(path: Path, inputs: list[TableInput]) -> None:
    with Journal(path, durability="normal") as journal:
        for item in inputs:
            data = item.to_data()
            if getattr(item, "card", None) is not None:
                data["card"] = item.card.code
            journal.append(item.KIND, data)


def recall(capsys: pytest.CaptureFixture[str], path: Path, *options: str) -> str:
    assert main(["journal", "recall", str(path), *options]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out


def played() -> Driver:
    """Round 1: a split, a double, a card read by the camera, the dealer busts. Round 2: an
    ace up, insurance taken, the dealer's blackjack. Round 3: in play, the hole card dealt
    (QC, the only one in the journal) and seat 2 still to decide."""
    driver = Driver()
    driver.burn()
    driver.round([1, 4])
    driver.cards("8D 8H 6C")
    driver.counter += 1
    driver.give(CardDrawn(Card.from_code("TD"), driver.counter, source="camera"))
    driver.cards("8C 7D")
    driver.decide(1, 1, "stand")
    driver.decide(4, 1, "split")
    driver.cards("3D")
    driver.decide(4, 1, "double")
    driver.cards("9D 2C")
    driver.decide(4, 2, "hit")
    driver.cards("9S")
    driver.decide(4, 2, "stand")
    driver.cards("TS")
    driver.confirm()

    driver.round([3])
    driver.cards("9H AC 9C KD")
    driver.insure([3])
    driver.confirm()

    driver.round([2])
    driver.cards("AS KH 5S QC")
    return driver


def test_settled_rounds_and_the_round_in_play(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "journal.db"
    write_journal(path, played().inputs)
    lines = [line.split() for line in recall(capsys, path).splitlines()]
    assert lines == [
        ["shoe", "1", "round", "1"],
        ["dealer", "6C", "7D", "TS", "23", "bust"],
        ["seat", "1", "8D", "TD(camera)", "18", "win", "+1"],
        ["seat", "4.1", "8H", "3D", "9D", "20", "x2", "win", "+2"],
        ["seat", "4.2", "8C", "2C", "9S", "19", "win", "+1"],
        ["shoe", "1", "round", "2"],
        ["dealer", "AC", "KD", "BJ"],
        ["seat", "3", "9H", "9C", "18", "lose", "-1"],
        ["insurance:", "taken", "by", "3;", "pays", "2:1"],
        ["shoe", "1", "round", "3", "(in", "play)"],
        ["dealer", "KH"],  # the hole card face down: neither shown nor a total
        ["seat", "2", "AS", "5S", "soft", "16"],
    ]
    # The columns line up across the rounds.
    text = recall(capsys, path).splitlines()
    starts = {match.start() for line in text if (match := CARD.search(line))
              and not line.lstrip().startswith("insurance")}
    assert len(starts) == 1

    assert recall(capsys, path, "--last", "1").splitlines()[0].split()[:4] == [
        "shoe", "1", "round", "3"]


def test_the_text_shows_the_cards_the_json_shows_at_every_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Journal after journal, one input longer each time, through round 3 to its end: the
    last round's text has exactly the JSON's cards (so the hole card QC neither before the
    dealer turns it over), and QC appears once it is turned."""
    driver = played()
    driver.decide(2, 1, "hit")
    driver.cards("2H")
    driver.decide(2, 1, "stand")  # soft 18; the dealer's K Q stands on 20
    start = len(played().inputs) - 6  # from betting open in round 3
    seen_hidden = seen_shown = False
    for end in range(start, len(driver.inputs) + 1):
        path = tmp_path / f"j{end}.db"
        write_journal(path, driver.inputs[:end])
        last = json.loads(recall(capsys, path, "--last", "1", "--json").splitlines()[-1])
        text = recall(capsys, path, "--last", "1")
        json_cards = Counter(card["card"] for card in last["cards"])
        if last.get("result"):
            # Settled: the result's cards (the shown cards are those of the result).
            json_cards = Counter(last["result"]["dealer"]["cards"]) + Counter(
                code for hands in last["result"]["seats"].values() for hand in hands
                for code in hand["cards"])
        assert Counter(match[0] for match in CARD.findall(text)) == json_cards, text
        if last["round"] == 3 and not last.get("result"):
            hole_dealt = end >= len(played().inputs)
            seen_hidden = seen_hidden or (hole_dealt and "QC" not in text)
        seen_shown = seen_shown or "QC" in text
    assert seen_hidden and seen_shown


def test_a_journal_of_baccarat_and_blackjack_rounds_each_in_its_form() -> None:
    from shoe_controller.commands.journal import format_recall

    baccarat = {"shoe": 1, "round": 1, "irregularities": [], "cards": [
        {"target": "player", "position": 1, "card": "9H", "source": "scanner"}]}
    blackjack = {"shoe": 2, "round": 1, "irregularities": ["extra_card"], "cards": [
        {"target": "seat 5", "position": 1, "card": "7H", "source": "supervisor"},
        {"target": "dealer", "position": 2, "card": "9C", "source": "scanner"}]}
    voided = {"shoe": 2, "round": 2, "cards": [], "irregularities": [],
              "void": {"supervisor": "alice", "reason": "misdeal"}}
    lines = [line.split() for line in format_recall([baccarat, blackjack, voided]).splitlines()]
    assert lines[0][:3] == ["shoe", "round", "player"]
    assert lines[2][:3] == ["1", "1", "9H"]
    assert lines[3:] == [
        ["shoe", "2", "round", "1", "(in", "play)"],
        ["dealer", "9C"],
        ["seat", "5", "7H(supervisor)", "7"],
        ["irregularities:", "extra_card"],
        ["shoe", "2", "round", "2", "VOID", "(voided", "by", "alice:", "misdeal)"],
        ["dealer", "-"],
    ]
