"""The built-in players' basic strategy: cells of the published chart, only legal decisions,
and the chart in docs/blackjack.md is the one in the code."""

from __future__ import annotations

import random
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shoe_controller.games.blackjack.rules import Action, hand_value
from shoe_controller.games.blackjack.strategy import RemotePlayers, basic_strategy, chart_markdown

from .helpers import H17, RANKS, S17, cards

DOCS = Path(__file__).resolve().parents[2] / "docs" / "blackjack.md"
TWO = (Action.HIT, Action.STAND, Action.DOUBLE)
PAIR = (*TWO, Action.SPLIT)

# Cells of the Wizard of Odds' 4-8 deck chart (3:2, DAS, no surrender, peek), written here
# from the published chart: (hand, up, S17 play, H17 play).
PUBLISHED_CELLS = [
    ("TS 6D", "TH", "hit", "hit"),
    ("TS 6D", "6H", "stand", "stand"),
    ("TS 2D", "2H", "hit", "hit"),
    ("TS 2D", "4H", "stand", "stand"),
    ("6S 5D", "AH", "hit", "double"),
    ("6S 4D", "9H", "double", "double"),
    ("6S 4D", "TH", "hit", "hit"),
    ("5S 4D", "2H", "hit", "hit"),
    ("5S 4D", "3H", "double", "double"),
    ("AS 7D", "2H", "stand", "double"),
    ("AS 7D", "7H", "stand", "stand"),
    ("AS 7D", "9H", "hit", "hit"),
    ("AS 6D", "2H", "hit", "hit"),
    ("AS 6D", "3H", "double", "double"),
    ("AS 8D", "6H", "stand", "double"),
    ("AS 2D", "4H", "hit", "hit"),
    ("AS 2D", "5H", "double", "double"),
    ("9S 9D", "7H", "stand", "stand"),
    ("9S 9D", "8H", "split", "split"),
    ("9S 9D", "AH", "stand", "stand"),
    ("4S 4D", "5H", "split", "split"),
    ("2S 2D", "2H", "split", "split"),
    ("6S 6D", "2H", "split", "split"),
    ("7S 7D", "8H", "hit", "hit"),
    ("8S 8D", "AH", "split", "split"),
    ("TS KD", "6H", "stand", "stand"),
    ("AS AD", "AH", "split", "split"),
    ("5S 5D", "TH", "hit", "hit"),
    ("5S 5D", "9H", "double", "double"),
]


@pytest.mark.parametrize(("hand", "up", "s17", "h17"), PUBLISHED_CELLS)
def test_published_chart_cells(hand: str, up: str, s17: str, h17: str) -> None:
    first, second = cards(hand)
    options = PAIR if S17.rules.can_split(first, second) else TWO
    up_card = cards(up)[0]
    assert basic_strategy([first, second], up_card, options, S17.rules).value == s17
    assert basic_strategy([first, second], up_card, options, H17.rules).value == h17


def test_doubles_fall_back_when_doubling_is_not_allowed() -> None:
    up = cards("5H")[0]
    assert basic_strategy(cards("2S 3D 6C"), up, TWO[:2], S17.rules) is Action.HIT  # hard 11
    assert basic_strategy(cards("AS 3D 4C"), up, TWO[:2], S17.rules) is Action.STAND  # soft 18
    # 8-8 after a split (no resplit) is a hard 16.
    assert basic_strategy(cards("8S 8D"), cards("TH")[0], TWO, S17.rules) is Action.HIT


@given(st.lists(st.sampled_from(RANKS), min_size=2, max_size=6), st.sampled_from(RANKS),
       st.booleans())
def test_only_legal_decisions(ranks: list[str], up: str, from_split: bool) -> None:
    hand = cards([rank + "S" for rank in ranks])
    if hand_value(min(c.rank, 10) for c in hand).total >= 21:
        return  # a hand at 21 or over is never asked
    options = [Action.HIT, Action.STAND]
    if len(hand) == 2:
        options.append(Action.DOUBLE)
        if not from_split and S17.rules.can_split(*hand):
            options.append(Action.SPLIT)
    for profile in (S17, H17):
        assert basic_strategy(hand, cards(up + "H")[0], options, profile.rules) in options


def test_remote_players_are_reproducible_and_sometimes_insure_and_bet_behind() -> None:
    def run(seed: int) -> tuple[list, list]:
        players = RemotePlayers(S17.rules, random.Random(seed))
        insured = [players.insurance([1, 2, 3, 4, 5, 6, 7]) for _ in range(50)]
        behind = [players.bets_behind([1, 4], [Decimal(5), Decimal(25)]) for _ in range(50)]
        return insured, behind

    assert run(3) == run(3)
    insured, behind = run(3)
    taken = sum(len(seats) for seats in insured)
    assert 0 < taken < 350
    bets = [bet for round_bets in behind for bet in round_bets]
    assert bets and {bet.follows for bet in bets} == {True, False}
    assert {bet.stake for bet in bets} <= {Decimal(5), Decimal(25)}


def test_docs_show_the_charts_in_the_code() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert chart_markdown("S17") in text and chart_markdown("H17") in text
