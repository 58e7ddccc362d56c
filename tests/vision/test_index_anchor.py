"""An index corner moved so that its rank glyph sits where the deck's does
(vision.index_corner.anchored_index): a card completed from part of it is rectified a few per
cent off, and its glyphs then straddle the boxes they are read in.

References of their own: cards drawn with a rank glyph and a suit glyph under it at known
places (the glyph's top-left is where it was drawn), moved by known shares of the card.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.corner import white_balanced
from vision.index_corner import (
    GLYPH_SEARCH,
    MAX_ANCHOR_SHIFT,
    CornerReader,
    anchored_index,
    corner_vector,
    learn_anchor,
    rank_glyph,
    shifted,
)
from vision.partial import CardShape

BOX = (0.0, 0.0, 0.2, 0.3)  # the index box read, shares of the card
CARD = (200, 290)  # width, height of a rectified card
RANK_AT = (9, 14)  # the rank glyph's top-left (pixels) on a card placed right
RANK_SIZE = (16, 26)  # its width and height


def _card(offset: tuple[float, float] = (0.0, 0.0), rank: str = "bar") -> np.ndarray:
    """A white rectified card with a rank glyph (a bar, or an L) and a suit glyph (a disc)
    under it in its top-left corner, moved by ``offset`` (shares of the card), and a pip
    far from the corner."""
    width, height = CARD
    card = np.full((height, width, 3), 250, np.uint8)
    x = round(RANK_AT[0] + offset[0] * width)
    y = round(RANK_AT[1] + offset[1] * height)
    w, h = RANK_SIZE
    red = (40, 40, 200)
    if rank == "bar":
        cv2.rectangle(card, (x, y), (x + w - 1, y + h - 1), red, -1)
    else:  # an L
        cv2.rectangle(card, (x, y), (x + 4, y + h - 1), red, -1)
        cv2.rectangle(card, (x, y + h - 5), (x + w - 1, y + h - 1), red, -1)
    cv2.circle(card, (x + w // 2, y + h + 12), 7, red, -1)
    cv2.circle(card, (width // 2, height // 2), 20, red, -1)  # a pip in the middle
    return card


def _share(pixels: tuple[int, int]) -> tuple[float, float]:
    return pixels[0] / CARD[0], pixels[1] / CARD[1]


@settings(max_examples=25, deadline=None)
@given(dx=st.floats(-0.03, 0.03), dy=st.floats(-0.03, 0.03))
def test_the_rank_glyph_is_found_where_it_was_drawn(dx: float, dy: float) -> None:
    card = _card((dx, dy))
    found = rank_glyph(white_balanced(card), BOX)
    assert found is not None
    expected = (round(RANK_AT[0] + dx * CARD[0]) / CARD[0],
                round(RANK_AT[1] + dy * CARD[1]) / CARD[1])
    assert abs(found[0] - expected[0]) * CARD[0] <= 1.0
    assert abs(found[1] - expected[1]) * CARD[1] <= 1.0


@pytest.mark.parametrize("offset", [(0.03, 0.0), (-0.02, 0.03), (0.04, -0.04)])
def test_an_index_placed_off_is_read_where_the_deck_has_it(offset: tuple[float, float]
                                                           ) -> None:
    """Moved to the anchor, a card placed off reads as the card placed right (the same
    vector, but for the edge repeated where the card moved in); as it lies, it does not."""
    anchor = _share(RANK_AT)
    right = corner_vector(_card(), None, BOX, anchor)
    off = _card(offset)
    anchored = corner_vector(off, None, BOX, anchor)
    as_it_lies = corner_vector(off, None, BOX)
    assert float(right @ anchored) > 0.99
    assert float(right @ as_it_lies) < float(right @ anchored) - 0.05
    moved = anchored_index(white_balanced(off), BOX, anchor)
    found = rank_glyph(moved, BOX)
    assert found is not None
    assert abs(found[0] - anchor[0]) * CARD[0] <= 1.0
    assert abs(found[1] - anchor[1]) * CARD[1] <= 1.0


def test_two_ranks_stay_apart_once_anchored() -> None:
    """Anchoring moves the card, not the glyph's shape: an L is not made a bar."""
    anchor = _share(RANK_AT)
    bar = corner_vector(_card((0.02, 0.01)), None, BOX, anchor)
    ell = corner_vector(_card((0.02, 0.01), rank="L"), None, BOX, anchor)
    assert float(bar @ ell) < 0.95


def test_a_glyph_found_too_far_from_the_anchor_is_not_moved() -> None:
    card = white_balanced(_card())
    far = (RANK_AT[0] / CARD[0] + MAX_ANCHOR_SHIFT + 0.01, RANK_AT[1] / CARD[1])
    assert np.array_equal(anchored_index(card, BOX, far), card)


def test_a_corner_with_no_glyph_is_read_as_it_lies() -> None:
    blank = np.full((CARD[1], CARD[0], 3), 250, np.uint8)
    assert rank_glyph(blank, BOX) is None
    assert np.array_equal(anchored_index(blank, BOX, _share(RANK_AT)), blank)


def test_the_deck_s_anchor_is_the_median_of_its_glyphs() -> None:
    views = [_card((dx, 0.0)) for dx in (-0.02, 0.0, 0.01)]
    anchor = learn_anchor(views, BOX)
    assert anchor is not None
    assert abs(anchor[0] * CARD[0] - RANK_AT[0]) <= 1.0
    assert abs(anchor[1] * CARD[1] - RANK_AT[1]) <= 1.0


def test_no_anchor_is_learnt_where_few_corners_show_a_glyph() -> None:
    blank = np.full((CARD[1], CARD[0], 3), 250, np.uint8)
    assert learn_anchor([_card(), blank, blank], BOX) is None
    assert learn_anchor([], BOX) is None


@settings(max_examples=25, deadline=None)
@given(dx=st.floats(-0.03, 0.05), dy=st.floats(-0.03, 0.05),
       anchor=st.tuples(st.floats(0.03, 0.07), st.floats(0.03, 0.07)))
def test_only_the_index_corner_is_moved_and_exactly_as_the_whole_card_would_be(
        dx: float, dy: float, anchor: tuple[float, float]) -> None:
    """Anchoring moves just the corner the glyph search reaches (a read does it for every
    corner it reads): there, the very pixels of the whole card moved; elsewhere, the card as
    it lies. (The glyph stays clear of the card's edge: one touching it is no glyph.)"""
    card = white_balanced(_card((dx, dy)))
    moved = anchored_index(card, BOX, anchor)
    found = rank_glyph(card, BOX)
    assert found is not None
    shift = (anchor[0] - found[0], anchor[1] - found[1])
    if max(map(abs, shift)) > MAX_ANCHOR_SHIFT:
        assert np.array_equal(moved, card)
        return
    right = int(BOX[2] * GLYPH_SEARCH[0] * CARD[0])
    bottom = int(BOX[3] * GLYPH_SEARCH[1] * CARD[1])
    assert np.array_equal(moved[:bottom, :right], shifted(card, shift)[:bottom, :right])
    assert np.array_equal(moved[bottom:], card[bottom:])
    assert np.array_equal(moved[:, right:], card[:, right:])


def test_a_corner_without_a_rank_glyph_is_read_as_glyphless_where_the_deck_has_one() -> None:
    """A corner with no glyph near it (a blank corner, or a card completed to a wrong one)
    is marked: the deck's enrolment corners showed a rank glyph there."""
    cards = [_card(), _card(rank="L")]
    anchor = learn_anchor(cards, BOX)
    assert anchor is not None
    vectors = np.stack([corner_vector(card, None, BOX, anchor) for card in cards])
    reader = CornerReader(vectors, np.array([0, 1]), None, BOX, CardShape(1.0, 1.4), 10.0,
                          0.3, anchor=anchor)
    blank = np.full((CARD[1], CARD[0], 3), 250, np.uint8)
    cv2.circle(blank, (CARD[0] // 2, CARD[1] // 2), 20, (40, 40, 200), -1)  # a pip alone
    plain, empty = reader.read_each([_card(), blank])
    assert not plain.glyphless and plain.label == 0
    assert empty.glyphless
    # A deck that learnt no anchor looks for no glyph: nothing is marked.
    loose = CornerReader(vectors, np.array([0, 1]), None, BOX, CardShape(1.0, 1.4), 10.0, 0.3)
    assert not any(read.glyphless for read in loose.read_each([_card(), blank]))
