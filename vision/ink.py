"""The colour of an index's ink, where it is plain: red (hearts, diamonds) or black (spades,
clubs).

The index readers compare shapes, and a suit glyph's colour is a small part of what they
compare (:data:`vision.corner.REDNESS_WEIGHT`): a simulated 52-card deck's TS, cut by the
frame's edge, was read by its index corner as TD at 0.333 over a threshold of 0.3, the "10"
the same and the blurred spade near enough a diamond. Its ink was plainly black. A read
whose card's colour its ink plainly contradicts is declined (:func:`contradicts`); ink that
is neither plainly red nor plainly black (blur, shadow, a corner that is not the index)
says nothing.

The ink is the index box's pixels whose green falls :data:`INK_DROP` grey levels or more
under the paper's (its 90th percentile), on the white-balanced corner: red and black ink are
both dark in green, a pale red glyph too. Of the ink, the share that is red (red over green
and blue by :data:`RED_OVER` and :data:`RED_LEVELS`: a dim, desaturated red too) and the
share that is grey (black ink and its blurred edge; a shadow or the felt in the box is
seldom grey). Plainly red: :data:`PLAINLY_RED` of it red; plainly black: hardly any of it
red and :data:`MOSTLY_GREY` of it grey. Four photos set the rules: the simulated TS above
(no red, all grey: black); cardai's JH_s1_10, whose index box takes in the court picture's
dark frame beside a pale red J; cardai's 8H_s1_06, one of whose corners lies over a hand's
shadow; and cardai's TH_s1_17, its "10" a dim, desaturated red. Measured by the darkest
pixels alone, or with a looser grey and a stricter red, each of the three read black, and a
right read was lost.

A camera that shows no colour (a monochrome or infrared camera, or one whose night mode
drops colour) shows red ink as grey, plainly "black": there, black ink says nothing of the
card. Enrolment measures which the camera is (:func:`red_ink_shows`) and the deck keeps it
(:attr:`vision.index_corner.CornerReader.red_ink`).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from shoe_controller.cards import Card, Suit
from vision.corner import Box, white_balanced

INK_DROP = 25  # grey levels of green under the paper's: ink
RED_OVER = 1.15  # red over the larger of green and blue: a red pixel of ink...
RED_LEVELS = 12.0  # ...and by this many grey levels (a dim, desaturated red ink too)
MIN_INK = 15  # pixels of ink, at least, for its colour to say anything
PLAINLY_BLACK = 0.02
"""Red share at most this (and mostly grey): black ink. The same corners: 213 of the 221
black plainly black, 1 of cardai's 337 red (and none of the simulated deck's 226)."""
PLAINLY_RED = 0.85
"""Red share at least this: red ink. Whole cards found in every third photo, both index
corners: the simulated deck's black corners, 2 of 221 over 0.58 (court cards' pictures), the
most 0.83; red corners 0.81 at the median, cardai's 0.80."""
GREY_SPREAD, GREY_NOISE = 0.12, 8.0  # grey: its channels within an eighth + 8 levels
MOSTLY_GREY = 0.6  # and black ink is mostly grey (felt in the box is not)
RED_SUITS = (Suit.HEARTS, Suit.DIAMONDS)


def ink_shares(corner: np.ndarray, box: Box) -> tuple[float, float] | None:
    """The shares of the ink in ``box`` (fractions of the card) of a rectified card whose
    index is at the top-left that are red, and that are grey (black ink, and its blurred
    edge); None where too little ink shows. Ink neither red nor grey is something else in
    the box: the felt under a corner misplaced, a court picture's colours."""
    balanced = white_balanced(corner)
    height, width = balanced.shape[:2]
    x0, y0, x1, y1 = box
    patch = balanced[int(y0 * height):int(y1 * height),
                     int(x0 * width):int(x1 * width)].astype(np.float32)
    if patch.size == 0:
        return None
    blue, green, red = patch[..., 0], patch[..., 1], patch[..., 2]
    ink = float(np.percentile(green, 90)) - green >= INK_DROP
    count = int(ink.sum())
    if count < MIN_INK:
        return None
    high, low = patch.max(axis=2), patch.min(axis=2)
    other = np.maximum(green, blue)
    reddish = ink & (red >= RED_OVER * other) & (red - other >= RED_LEVELS)
    grey = ink & (high - low <= GREY_SPREAD * high + GREY_NOISE)
    return int(reddish.sum()) / count, int(grey.sum()) / count


def plain_colour(shares: tuple[float, float] | None) -> str | None:
    """"red", "black", or None where the ink (:func:`ink_shares`: its red and grey shares)
    is neither plainly: red when most of it is red, black when none of it is red and most
    of it grey."""
    if shares is None:
        return None
    red, grey = shares
    if red >= PLAINLY_RED:
        return "red"
    if red <= PLAINLY_BLACK and grey >= MOSTLY_GREY:
        return "black"
    return None


def contradicting_ink(card: Card, corners: list[np.ndarray], box: Box,
                      red_shows: bool = True) -> str | None:
    """The colour ("red" or "black") of the ink when every one of the index ``corners``
    (rectified, each index at the top-left) in which ink shows is plainly of the other
    colour than ``card``'s suit, and one at least shows ink; else None. One corner not
    plain is doubt enough: a shadow or the felt in one box is as dark and as grey as black
    ink (cardai's 8H_s1_06: one corner's ink 62 % red, the other's box over the hand's
    shadow, none of it red). ``red_shows``: whether the camera shows red ink red
    (:func:`red_ink_shows`); where it does not, a red card's ink contradicts nothing."""
    if card.suit in RED_SUITS and not red_shows:
        return None
    colours = [plain_colour(shares) for shares in (ink_shares(corner, box)
                                                   for corner in corners)
               if shares is not None]
    other = "black" if card.suit in RED_SUITS else "red"
    return other if colours and all(colour == other for colour in colours) else None


def contradicts(card: Card, corners: list[np.ndarray], box: Box,
                red_shows: bool = True) -> bool:
    """The ink of ``corners`` plainly contradicts ``card`` (:func:`contradicting_ink`)."""
    return contradicting_ink(card, corners, box, red_shows) is not None


RED_INK_SEEN = 0.25
"""The least median red share (:func:`ink_shares`) of the red cards' ink at enrolment for
the camera to show red ink red (:func:`red_ink_shows`). cardai, 5 photos per card (draw
2024): 0.78 (a tenth of the corners under 0.53); the same photos without colour: 0."""


def red_ink_shows(corners: Iterable[tuple[np.ndarray, Card]], box: Box) -> bool:
    """Whether the camera shows red ink red, from enrolment ``corners`` (rectified, each
    index at the top-left) and their cards: the median red share of the ink of the red
    cards' corners is at least :data:`RED_INK_SEEN`. A camera without colour shows it
    grey, plainly black (a share of 0). True when no red card's ink shows (nothing says
    the camera cannot show it). Not by the corners plainly red: in cardai's dim light
    only 5 of draw 2024's 70 red enrolment corners are (64 are neither red nor black
    plainly)."""
    shares = [shares[0] for shares in (ink_shares(corner, box)
                                       for corner, card in corners if card.suit in RED_SUITS)
              if shares is not None]
    return not shares or float(np.median(shares)) >= RED_INK_SEEN
