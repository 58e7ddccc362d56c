"""A card a hand lies over, found by the corners in view (issue 16,
vision/corners_in_view.py).

The references are the drawing's own parameters: a court card (a picture, not paper,
inside a margin of paper) drawn at a known pose, a hand (skin, from beyond the frame's
edge) over one of its corners or over one end. The picture opens the hand's bite into the
card's middle, so its paper is a broken ring that no four-corner outline fits; the card
found by its corners must land within a few pixels of the drawn one, and be read only at
an index corner in view.
"""

from __future__ import annotations

import cv2
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.vision.test_overhead_partial import (
    ASPECT,
    FELT,
    FRAME,
    INDEX,
    SKIN,
    STRETCH,
    TOLERANCE,
    _corners,
    _draw,
    _matched,
)
from vision.corners_in_view import find_by_corners
from vision.detect import survey
from vision.in_part import find_in_part
from vision.partial import CardShape

SHAPE = CardShape(STRETCH, ASPECT, (150.0, 300.0))  # the sizes a deck's whole cards taught
PICTURE = (40, 140, 210)  # BGR: a court card's picture, not paper
MARGIN = 0.7  # the picture: the card scaled about its middle by this


def _court_card(drawn: np.ndarray) -> np.ndarray:
    """The frame of a court card at ``drawn``: its picture inside a margin of paper."""
    frame = _draw(drawn)
    middle = drawn.mean(axis=0)
    picture = middle + MARGIN * (drawn - middle)
    cv2.fillConvexPoly(frame, np.round(picture).astype(np.int32), PICTURE, cv2.LINE_AA)
    return frame


def _hand_over(frame: np.ndarray, drawn: np.ndarray, corner: int, reach: float) -> None:
    """A hand over one ``corner`` of the card, from beyond the frame's nearest edge: skin
    over the corner, reaching ``reach`` of the way to the card's middle (into the picture,
    so the paper's ring breaks), and on to the frame's edge."""
    rows, columns = frame.shape[:2]
    tip = drawn[corner] + reach * (drawn.mean(axis=0) - drawn[corner])
    out = drawn[corner] - drawn.mean(axis=0)
    out /= np.linalg.norm(out)
    beyond = tip + out * (rows + columns)
    width = 0.3 * np.linalg.norm(drawn[1] - drawn[0])  # half the hand's breadth
    across = np.array([-out[1], out[0]]) * width
    hand = np.array([tip + across, tip - across, beyond - across, beyond + across])
    cv2.fillConvexPoly(frame, np.round(hand).astype(np.int32), SKIN, cv2.LINE_AA)


@settings(max_examples=30, deadline=None)
@given(angle=st.floats(-180, 180), short=st.floats(170, 230), covered=st.sampled_from([1, 3]),
       reach=st.floats(0.45, 0.7), x=st.floats(400, 560), y=st.floats(250, 290))
def test_a_court_card_a_hand_lies_over_is_found_by_its_corners_in_view(
        angle: float, short: float, covered: int, reach: float, x: float, y: float) -> None:
    """A hand over a plain corner (1 or 3), into the picture: whenever the card is found,
    it lies within a few pixels of the drawn one, every corner (the hidden one too), and
    only index corners in view (0 and 2, both here) are read, where drawn."""
    drawn = _corners((x, y), angle, short)
    rows, columns = FRAME
    if not ((drawn >= 10).all() and (drawn <= [columns - 11, rows - 11]).all()):
        return  # the card in the frame: a card the frame cuts is vision.partial's
    frame = _court_card(drawn)
    _hand_over(frame, drawn, covered, reach)
    found = find_by_corners(frame, SHAPE, INDEX)
    if found is None:
        return
    assert _matched(found.quad, drawn) <= TOLERANCE, (found.quad, drawn)
    for usable in found.usable:
        gaps = np.linalg.norm(found.quad[usable] - drawn, axis=1)
        assert int(np.argmin(gaps)) in (0, 2) and gaps.min() <= TOLERANCE


def test_court_cards_under_a_hand_are_found_by_their_corners() -> None:
    """At these poses the hand's bite leaves no card to the whole-card search's masks, and
    the card is found by its corners, near where it was drawn, readable at both index
    corners: through :func:`vision.in_part.find_in_part`, as the recogniser asks. (The
    whole-card search may now find it too, by the ring of paper round its picture, and then
    only where it was drawn: :func:`vision.detect._ring_of_paper`.)"""
    for angle, covered in ((20.0, 1), (-35.0, 3), (110.0, 1), (60.0, 3)):
        drawn = _corners((480.0, 270.0), angle, 200.0)
        frame = _court_card(drawn)
        _hand_over(frame, drawn, covered, 0.6)
        quad, hand = survey(frame)
        assert quad is None or _matched(quad, drawn) <= TOLERANCE, (angle, quad, drawn)
        found = find_in_part(frame, SHAPE, INDEX, hand)
        assert found is not None, angle
        assert _matched(found.quad, drawn) <= TOLERANCE, (angle, found.quad, drawn)
        assert len(found.usable) == 2, (angle, found.usable)


def test_an_index_corner_under_the_hand_is_not_read() -> None:
    """A hand over index corner 2: the card is found from the other three corners, and
    read only at index corner 0."""
    drawn = _corners((480.0, 270.0), 25.0, 200.0)
    frame = _court_card(drawn)
    _hand_over(frame, drawn, 2, 0.6)
    found = find_by_corners(frame, SHAPE, INDEX)
    assert found is not None
    assert _matched(found.quad, drawn) <= TOLERANCE
    assert len(found.usable) == 1
    assert np.linalg.norm(found.quad[found.usable[0]] - drawn[0]) <= TOLERANCE


def test_two_corners_in_view_complete_the_card_only_at_the_length_the_sides_allow() -> None:
    """A hand over the whole bottom end (corners 2 and 3): the two top corners and the
    long sides leaving them show. Where they show longer than the card is wide, only the
    long completion reaches as far: the card is found where drawn, read at corner 0."""
    drawn = _corners((480.0, 230.0), 0.0, 180.0)
    frame = _court_card(drawn)
    rows, columns = FRAME
    top = round(drawn[0, 1] + 0.75 * (drawn[3, 1] - drawn[0, 1]))
    cv2.rectangle(frame, (0, top), (columns - 1, rows - 1), SKIN, -1)
    found = find_by_corners(frame, SHAPE, INDEX)
    assert found is not None
    assert _matched(found.quad, drawn) <= TOLERANCE, (found.quad, drawn)
    assert len(found.usable) == 1
    assert np.linalg.norm(found.quad[found.usable[0]] - drawn[0]) <= TOLERANCE


def test_a_hand_s_straight_edge_across_the_card_is_no_side_of_it() -> None:
    """A hand with a straight edge square to the long sides lies over the card's bottom
    tenth: where that edge crosses the long sides looks like two corners, and a card ending
    there is within the deck's proportions' tolerance. Skin, not felt, lies beyond it: the
    card is completed from its two top corners at its full length, where drawn."""
    drawn = _corners((480.0, 250.0), 0.0, 180.0)
    frame = _court_card(drawn)
    rows = FRAME[0]
    top = round(drawn[0, 1] + 0.9 * (drawn[3, 1] - drawn[0, 1]))
    left, right = round(drawn[0, 0]) - 40, round(drawn[1, 0]) + 40
    cv2.rectangle(frame, (left, top), (right, rows - 1), SKIN, -1)
    found = find_by_corners(frame, SHAPE, INDEX)
    assert found is not None
    assert _matched(found.quad, drawn) <= TOLERANCE, (found.quad, drawn)


def test_one_corner_in_view_is_no_card() -> None:
    """A hand over all but the top-left corner's sides: the card's size along them is
    unknown, so no card."""
    drawn = _corners((480.0, 270.0), 0.0, 200.0)
    frame = _court_card(drawn)
    left, top = drawn[0]
    cv2.rectangle(frame, (round(left + 70), round(top + 70)), (FRAME[1] - 1, FRAME[0] - 1),
                  SKIN, -1)
    cv2.rectangle(frame, (round(left + 70), 0), (FRAME[1] - 1, FRAME[0] - 1), SKIN, -1)
    cv2.rectangle(frame, (0, round(top + 70)), (FRAME[1] - 1, FRAME[0] - 1), SKIN, -1)
    assert find_by_corners(frame, SHAPE, INDEX) is None


def test_felt_a_hand_or_a_deck_without_sizes_finds_no_card() -> None:
    rows, columns = FRAME
    felt = np.full((rows, columns, 3), FELT, np.uint8)
    hand = felt.copy()
    cv2.ellipse(hand, (480, 270), (200, 120), 30, 0, 360, SKIN, -1)
    for image in (np.zeros((rows, columns, 3), np.uint8), felt, hand):
        assert find_by_corners(image, SHAPE, INDEX) is None
    drawn = _corners((480.0, 270.0), 20.0, 200.0)
    frame = _court_card(drawn)
    _hand_over(frame, drawn, 1, 0.6)
    assert find_by_corners(frame, CardShape(STRETCH, ASPECT), INDEX) is None
