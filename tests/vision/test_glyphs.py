"""Locating a deck's rank and suit glyphs from its enrolment frames (vision.glyphs)."""

from __future__ import annotations

import numpy as np
import pytest

from shoe_controller.cards import Suit
from tests.vision.synthetic_deck import (
    FOUR_COLOURS,
    HEIGHT,
    SIDE_RANK_AT,
    SIDE_SUIT_AT,
    SUIT_AT,
    WIDTH,
    deck,
    printed_rank_box,
)
from vision.glyphs import PAD, locate_index


def _pixels(box: tuple[float, float, float, float]) -> np.ndarray:
    return np.array(box) * [WIDTH, HEIGHT, WIDTH, HEIGHT]


@pytest.mark.parametrize("style", [
    {},
    # A pale yellow suit is nearly paper in grey, and a dark edge stroke then takes the
    # ink threshold: ink is what any colour channel absorbs.
    {"colours": FOUR_COLOURS, "edge": True},
], ids=["black and red", "four colours"])
def test_the_rank_and_suit_glyphs_are_found_where_the_deck_prints_them(style) -> None:
    located = locate_index(deck(1, **style))
    assert located is not None
    rank_box, suit_box = (_pixels(box) for box in located)
    # Each box holds its glyph, padded by PAD pixels, and not much more.
    for found, printed in ((rank_box, printed_rank_box()), (suit_box, SUIT_AT)):
        assert np.all(found[:2] <= np.array(printed[:2]) - PAD + 1), (found, printed)
        assert np.all(found[2:] >= np.array(printed[2:]) + PAD - 1), (found, printed)
        assert np.abs(found - printed).max() <= PAD + 4, (found, printed)
    assert rank_box[3] <= suit_box[1] + 2 * PAD  # the rank sits above the suit


def test_a_deck_without_a_suit_glyph_in_a_fixed_place_is_not_located() -> None:
    """Suits printed anywhere (or not at all) give no box: the fixed candidates take over."""
    assert locate_index(deck(2, suit_at=None)) is None


def test_too_few_cards_to_tell_are_not_located() -> None:
    assert locate_index([]) is None
    one_suit = [(image, card) for image, card in deck(3) if card.suit is Suit.SPADES]
    assert locate_index(one_suit) is None


def test_a_suit_and_rank_printed_side_by_side_are_found_and_pips_on_that_row_are_not() -> None:
    """Suit in one top corner, rank in the other, and the first row of pips level with
    them: the pips are at one place on several ranks too, but not on nearly all of them."""
    located = locate_index(deck(4, side_by_side=True, point_symmetric=False))
    assert located is not None
    rank_box, suit_box = (_pixels(box) for box in located)
    for found, printed in ((rank_box, printed_rank_box(SIDE_RANK_AT)),
                           (suit_box, SIDE_SUIT_AT)):
        assert np.abs(found - printed).max() <= PAD + 4, (found, printed)
