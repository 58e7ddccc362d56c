"""The colour of an index's ink (vision.ink): drawn index corners, red or black, under tinted
light and blur, against what the colour says of the card a reader named."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_controller.cards import Card
from vision.ink import contradicts, ink_shares, plain_colour, red_ink_shows
from vision.quad import CARD_SIZE

BOX = (0.0, 0.0, 0.2, 0.3)
PAPER = (236, 238, 240)
BLACK_INK = (30, 30, 30)
RED_INK = (40, 40, 200)  # BGR


def _corner(ink: tuple[int, int, int], *, tint: tuple[float, float, float] = (1, 1, 1),
            blur: int = 0, seed: int = 0) -> np.ndarray:
    """A rectified card with a "10" and a suit glyph drawn in ``ink`` at its top-left, under
    light of ``tint`` (B, G, R gains), blurred and noisy."""
    width, height = CARD_SIZE
    card = np.full((height, width, 3), PAPER, np.float64)
    cv2.putText(card, "10", (4, 30), cv2.FONT_HERSHEY_SIMPLEX, 0.8, ink, 3)
    cv2.fillConvexPoly(card, np.array([[18, 40], [28, 52], [18, 64], [8, 52]]), ink)
    if blur:
        card = cv2.GaussianBlur(card, (blur, blur), 0)
    card = card * np.array(tint) + np.random.default_rng(seed).normal(0, 3, card.shape)
    return np.clip(card, 0, 255).astype(np.uint8)


@settings(max_examples=40, deadline=None)
@given(red=st.booleans(), warm=st.booleans(), strength=st.floats(0.6, 1.0),
       blur=st.sampled_from([0, 3, 5]), seed=st.integers(0, 1000))
def test_ink_is_plainly_its_own_colour_under_tinted_light(red: bool, warm: bool,
                                                          strength: float, blur: int,
                                                          seed: int) -> None:
    """The corner is white-balanced first: a warm or cool cast (blue at 0.6 of red, or the
    other way round) makes black ink no redder and red ink no less red."""
    tint = (strength, (1 + strength) / 2, 1.0) if warm else (1.0, (1 + strength) / 2, strength)
    corner = _corner(RED_INK if red else BLACK_INK, tint=tint, blur=blur, seed=seed)
    assert plain_colour(ink_shares(corner, BOX)) == ("red" if red else "black")


def test_a_read_is_contradicted_only_by_ink_plainly_of_the_other_colour() -> None:
    black, red = _corner(BLACK_INK), _corner(RED_INK)
    blank = np.full_like(black, PAPER)  # no ink: says nothing
    assert ink_shares(blank, BOX) is None
    assert contradicts(Card.from_code("TD"), [black], BOX)
    assert contradicts(Card.from_code("TS"), [red], BOX)
    assert not contradicts(Card.from_code("TS"), [black], BOX)
    assert not contradicts(Card.from_code("TH"), [red], BOX)
    assert not contradicts(Card.from_code("TD"), [blank], BOX)
    assert contradicts(Card.from_code("TD"), [black, blank], BOX)  # (the blank one says nothing)
    assert not contradicts(Card.from_code("TD"), [black, red], BOX)  # (one agrees: doubt)
    pale = _corner((150, 150, 235))  # pale red: neither plainly red nor black
    assert not contradicts(Card.from_code("TD"), [black, pale], BOX)  # (one not plain: doubt)


@pytest.mark.parametrize("shares, colour", [
    (None, None), ((0.0, 1.0), "black"), ((0.02, 0.6), "black"),
    ((0.0, 0.3), None),  # (dark but not grey: felt or a picture in the box, not black ink)
    ((0.3, 0.7), None), ((0.8, 0.0), None), ((0.85, 0.0), "red"), ((1.0, 0.0), "red")])
def test_between_plainly_black_and_plainly_red_the_ink_says_nothing(
        shares: tuple[float, float] | None, colour: str | None) -> None:
    assert plain_colour(shares) == colour


def test_a_pale_red_index_beside_a_dark_picture_is_not_plainly_black() -> None:
    """A court card's picture, its dark frame in the index box, beside a pale red index
    (cardai's JH_s1_10): the dark pixels are not red, the pale glyph's are."""
    corner = _corner((150, 150, 235))  # a pale red "10" and suit
    cv2.rectangle(corner, (38, 0), (60, 90), BLACK_INK, 3)  # the picture's frame
    assert plain_colour(ink_shares(corner, BOX)) != "black"


def _grey(corner: np.ndarray) -> np.ndarray:
    """A corner as a camera without colour takes it (a monochrome or infrared camera)."""
    return cv2.cvtColor(cv2.cvtColor(corner, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)


def test_a_camera_without_colour_is_told_by_its_red_cards_ink() -> None:
    """Enrolment corners of red cards: red ink on a colour camera (under a cast too), grey
    on a camera without colour, where it reads plainly black. A deck of black cards only,
    or none whose ink shows, says nothing against the camera."""
    hearts = [Card.from_code(code) for code in ("TH", "JD", "2H")]
    spades = [Card.from_code(code) for code in ("TS", "KC")]
    red = [(_corner(RED_INK, seed=seed), card) for seed, card in enumerate(hearts)]
    warm = [(_corner(RED_INK, tint=(0.6, 0.8, 1.0), seed=seed), card)
            for seed, card in enumerate(hearts)]
    black = [(_corner(BLACK_INK, seed=seed), card) for seed, card in enumerate(spades)]
    assert red_ink_shows(red + black, BOX)
    assert red_ink_shows(warm, BOX)
    assert not red_ink_shows([(_grey(corner), card) for corner, card in red + black], BOX)
    assert plain_colour(ink_shares(_grey(red[0][0]), BOX)) == "black"
    assert red_ink_shows(black, BOX)
    blank = np.full_like(red[0][0], PAPER)
    assert red_ink_shows([(blank, card) for card in hearts], BOX)
    # One red card's corner in shadow, grey, among plainly red ones: the camera shows red.
    assert red_ink_shows(red + [(_grey(red[0][0]), hearts[0])], BOX)


def test_where_the_camera_shows_no_colour_a_red_cards_black_ink_contradicts_nothing() -> None:
    """Its grey ink reads plainly black, as every red card's does on that camera; a black
    card's ink plainly red still contradicts it (a colour frame shown to such a deck)."""
    grey_ten = _grey(_corner(RED_INK))
    assert contradicts(Card.from_code("TD"), [grey_ten], BOX)
    assert not contradicts(Card.from_code("TD"), [grey_ten], BOX, red_shows=False)
    assert contradicts(Card.from_code("TS"), [_corner(RED_INK)], BOX, red_shows=False)
