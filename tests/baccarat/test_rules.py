"""Rules and the incremental coup, against an independent table-driven statement of the rules."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shoe_controller.cards import Card, Suit
from shoe_controller.games.baccarat.coup import Coup, Hand, deal_coup
from shoe_controller.games.baccarat.rules import (
    Outcome,
    banker_draws,
    hand_total,
    is_natural,
    is_pair,
    player_draws,
    points,
)

from .baccarat_reference import (
    BANKER_TABLE,
    reference_deal,
    reference_winner,
    table_from_rules_md,
    table_from_seed_001,
    table_from_seed_004,
)


def card(code: str) -> Card:
    return Card.from_code(code)


def cards(codes: str) -> list[Card]:
    return [Card.from_code(c) for c in codes.split()]


def value_card(value: int, suit: Suit = Suit.SPADES) -> Card:
    """A card worth ``value`` points (0 is a ten)."""
    return Card(value if value else 10, suit)


def test_points_of_every_rank() -> None:
    expected = {1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 8: 8, 9: 9, 10: 0, 11: 0, 12: 0, 13: 0}
    for rank, value in expected.items():
        for suit in Suit:
            assert points(Card(rank, suit)) == value


def test_hand_totals_are_modulo_ten() -> None:
    assert hand_total(cards("7S 6H")) == 3  # seed 000's example 7 + 6 = 13 -> 3
    assert hand_total(cards("5S 9H")) == 4  # seed 001's example
    assert hand_total(cards("KS QH TD")) == 0
    assert hand_total([]) == 0


def test_naturals_and_pairs() -> None:
    assert is_natural(cards("8S KH")) and is_natural(cards("4S 5H"))
    assert not is_natural(cards("4S 3H AD"))  # three cards totalling 8 are not a natural
    assert not is_natural(cards("7S KH"))
    assert is_pair(cards("7S 7H")) and is_pair(cards("KS KD 3C"))
    assert not is_pair(cards("KS QS"))  # same points, different ranks: no pair
    assert not is_pair(cards("KS"))


def test_the_three_statements_of_the_banker_table_agree() -> None:
    assert table_from_rules_md() == table_from_seed_001() == table_from_seed_004()


@pytest.mark.parametrize("banker_total", range(8))
@pytest.mark.parametrize("p3", range(10))
def test_banker_draws_matches_the_table(banker_total: int, p3: int) -> None:
    assert banker_draws(banker_total, p3) is BANKER_TABLE[banker_total, p3]


def test_draws_when_the_player_stood_and_the_player_rule() -> None:
    assert [banker_draws(t, None) for t in range(8)] == [True] * 6 + [False] * 2
    assert [player_draws(t) for t in range(8)] == [True] * 6 + [False] * 2


def test_draw_functions_reject_naturals_and_bad_values() -> None:
    for bad in (8, 9, -1):
        with pytest.raises(ValueError):
            player_draws(bad)
        with pytest.raises(ValueError):
            banker_draws(bad, 3)
    with pytest.raises(ValueError):
        banker_draws(3, 10)


def _coup_tree() -> dict[tuple[int, ...], Coup]:
    """Every complete coup reachable from card values 0..9, keyed by the values it consumed."""
    complete: dict[tuple[int, ...], Coup] = {}
    frontier = [((), Coup())]
    while frontier:
        values, coup = frontier.pop()
        for v in range(10):
            nxt = coup.add(value_card(v))
            if nxt.is_complete:
                complete[values + (v,)] = nxt
            else:
                frontier.append((values + (v,), nxt))
    return complete


def test_every_six_card_value_sequence_against_the_reference() -> None:
    """All 10**6 sequences of six card values: same hands, totals and winner as the reference.

    The engine is dealt once per distinct consumed prefix (a round that uses k cards is the same
    round for all 10**(6-k) continuations); the reference deals every one of the 10**6 sequences.
    """
    engine = {}
    for prefix, coup in _coup_tree().items():
        result = coup.result()
        engine[prefix] = (
            tuple(points(c) for c in result.player),
            tuple(points(c) for c in result.banker),
            result.outcome.value,
        )
    seen_prefixes = set()
    for values in itertools.product(range(10), repeat=6):
        p, b = reference_deal(values)
        used = values[: len(p) + len(b)]
        seen_prefixes.add(used)
        # KeyError here: the engine used a different number of cards than the reference.
        assert engine[used] == (p, b, reference_winner(p, b)), values
    assert seen_prefixes == set(engine)


@given(
    st.lists(
        st.builds(Card, st.integers(1, 13), st.sampled_from(list(Suit))), min_size=6, max_size=6
    )
)
def test_coup_flags_match_the_reference(six: list[Card]) -> None:
    p, b = reference_deal(tuple(points(c) for c in six))
    result = deal_coup(six)
    winner = reference_winner(p, b)
    assert result.outcome.value == winner
    assert result.player == tuple(six[0:4:2]) + tuple(six[4:5] if len(p) == 3 else ())
    assert result.natural == (sum(p[:2]) % 10 >= 8 or sum(b[:2]) % 10 >= 8)
    assert result.player_pair == (six[0].rank == six[2].rank)
    assert result.banker_pair == (six[1].rank == six[3].rank)
    assert result.banker_three_card_7 == (winner == "banker" and len(b) == 3 and sum(b) % 10 == 7)
    assert result.player_three_card_8 == (winner == "player" and len(p) == 3 and sum(p) % 10 == 8)
    assert result.banker_wins_with_6 == (winner == "banker" and sum(b) % 10 == 6)


def test_coup_is_incremental_and_immutable() -> None:
    empty = Coup()
    assert empty.next_due() is Hand.PLAYER and empty.decision_text() == "Deal Player"
    one = empty.add(card("6C"))
    assert empty.cards == () and one.cards == (card("6C"),)
    assert one.next_due() is Hand.BANKER and one.decision_text() == "Deal Banker"
    four = one.add(card("2D")).add(card("KH")).add(card("3S"))
    assert four.player == (card("6C"), card("KH")) and four.banker == (card("2D"), card("3S"))
    assert four.decision_text() == "Player stands, Banker draws"
    done = four.add(card("4H"))
    assert done.is_complete and done.next_due() is None
    assert done.decision_text() == "Banker wins 9 to 6"
    with pytest.raises(ValueError, match="complete"):
        done.add(card("AS"))
    with pytest.raises(ValueError, match="not complete"):
        four.result()


def test_decision_texts_through_a_three_card_round() -> None:
    coup = Coup()
    texts = []
    for c in cards("2S 3H KD 2C 7H 9S"):
        coup = coup.add(c)
        texts.append(coup.decision_text())
    # Player 2+K = 2 draws a 7 (-> 9); Banker 5 draws on a 7 and gets a 9 (-> 4).
    assert texts == [
        "Deal Banker",
        "Deal Player",
        "Deal Banker",
        "Player draws",
        "Banker draws",
        "Player wins 9 to 4",
    ]


def test_natural_and_tie_texts_and_result_fields() -> None:
    natural = deal_coup(cards("8S 2H KD KC"))
    assert natural.describe() == "Player wins 8 to 2 (natural)"
    assert natural.natural and natural.player_natural and not natural.banker_natural
    tie = deal_coup(cards("6S 6H KD KC"))
    assert tie.outcome is Outcome.TIE and tie.describe() == "Tie 6 to 6"
    # Player 4 draws a 3 (-> 7); Banker 5 stands on a third card of 3: Player wins 7 to 5.
    stood = deal_coup(cards("4S 3H KD 2C 3D 2D"))
    assert stood.player_total == 7 and stood.banker == tuple(cards("3H 2C"))
    assert stood.outcome is Outcome.PLAYER and stood.describe() == "Player wins 7 to 5"


def test_three_card_flags() -> None:
    banker_7 = deal_coup(cards("KS 2H 4D 2C 2D 3S"))  # P 4 + 2 = 6; B 4 draws on a 2 -> 7
    assert banker_7.banker == tuple(cards("2H 2C 3S")) and banker_7.banker_total == 7
    assert banker_7.outcome is Outcome.BANKER and banker_7.banker_three_card_7
    panda = deal_coup(cards("KS KH 5D 7C 3D"))  # P 5 + 3 = 8; B 7 stands
    assert panda.player_three_card_8 and panda.outcome is Outcome.PLAYER
    six = deal_coup(cards("KS 6H 7D KC"))  # both stand: Player 7 beats Banker 6
    assert six.outcome is Outcome.PLAYER and not six.banker_wins_with_6
    six = deal_coup(cards("5S 6H KD KC 9H"))  # P 5 draws 9 -> 4; B 6 stands on 9
    assert six.banker_wins_with_6 and not six.banker_three_card_7


def test_to_json_dict_has_exactly_the_schema_keys() -> None:
    line = deal_coup(cards("8S 8H KD KC")).to_json_dict(3)
    assert list(line) == [
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
    assert line["player"] == ["8S", "KD"] and line["outcome"] == "tie" and line["round"] == 3
