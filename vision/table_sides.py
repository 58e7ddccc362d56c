"""What lies beyond a card's sides: the table, or something else (a hand, the card's own
paper past a shadow's edge).

A card whose four sides all border one table is a whole card (:func:`one_table`); a side with
something else beyond it is only part of one, read at most at an index corner between sides
that border the table (:func:`table_sides`, :func:`table_near_corners`;
:class:`vision.detect.CardInPart`). The colours compared are those
:func:`vision.card_edges.beyond_side` takes just outside each side.
"""

from __future__ import annotations

import numpy as np

from vision.quad import rectify

ONE_TABLE = 0.12  # most a channel's share of the colour beyond two edges may differ by
HUED = 90  # B + G + R: a colour darker than this has no reliable hue (8-bit, JPEG)


def _in_frame(beyond: np.ndarray) -> np.ndarray:
    """Which of the colours beyond the edges (``(4, samples, 3)``) lie inside the frame."""
    seen: np.ndarray = ~np.isnan(beyond).any(axis=2)
    return seen


def one_table(beyond: np.ndarray) -> bool:
    """The four edges border one table: the colours just beyond them (``(4, samples, 3)``
    BGR), each edge's median, have nearly the same hue (each channel's share of the sum: a
    vignette or a lamp to one side changes the table's brightness more than its hue). A
    "card" one of whose sides is a hand lying across the card (skin beyond it, felt beyond
    the others) is only part of the card, and read it would be a wrong card; a finger over
    less than half a side leaves that side's median on the table. A median too dark to
    have a reliable hue (the card's shadow, an unlit corner) is left out, and so is a side
    beyond which nothing lies inside the frame."""
    seen = _in_frame(beyond)
    medians = np.array([np.median(side[inside], axis=0) if inside.any() else np.zeros(3)
                        for side, inside in zip(beyond, seen, strict=True)]).reshape(-1, 3)
    lit = medians[medians.sum(axis=1) >= HUED]
    shares = lit / lit.sum(axis=1, keepdims=True)
    return bool(len(lit) < 2 or np.abs(shares[:, None, :] - shares[None, :, :]).max()
                <= ONE_TABLE)


def table_sides(beyond: np.ndarray, table: np.ndarray, paper: np.ndarray
                ) -> tuple[bool, ...]:
    """Which sides border the table along their whole length: the colour beyond each of
    its profiles (``(4, samples, 3)`` BGR) has the table's hue (``table``, the frame's
    border: see :func:`one_table`) or is too dark to have one (a shadow); one stray
    profile is let through (noise), a finger over two or more is not.

    Where the table's hue and the card's ``paper`` (:func:`paper_colour`) differ, a colour
    nearer the paper's hue than the table's is paper, not table: a side found on a
    shadow's straight edge across the card has the card's own shaded paper beyond it, and
    a dim table's hue is faint enough for grey to pass for it (a simulated 6H so cut read
    as 3H by its index). A profile whose outside lies beyond the frame says nothing."""
    return sides_from(*like_table(beyond, table, paper))


def sides_from(like: np.ndarray, outside: np.ndarray) -> tuple[bool, ...]:
    """:func:`table_sides` from the profiles' verdicts (:func:`like_table`)."""
    return tuple(bool(count <= 1) for count in (~(like | outside)).sum(axis=1))


def table_near_corners(beyond: np.ndarray, table: np.ndarray, paper: np.ndarray
                       ) -> tuple[bool, ...]:
    """Which corners (corner ``k`` between sides ``k - 1`` and ``k``) have the table beyond
    both their sides along the half of each next to them (:func:`table_sides`' test,
    one stray profile let through in each half, and enough of each half in the frame): a
    hand over the far end of a side leaves the corner at its near end bordered by table,
    and its index as readable as a whole card's; a hand over the corner does not."""
    return near_corners_from(*like_table(beyond, table, paper))


def near_corners_from(like: np.ndarray, outside: np.ndarray) -> tuple[bool, ...]:
    """:func:`table_near_corners` from the profiles' verdicts (:func:`like_table`)."""
    half = like.shape[1] // 2
    # (side, near its start / near its end): in view, and at most one stray profile
    clear = np.array([[(~outside[side, part]).sum() >= half // 2
                       and (~(like | outside)[side, part]).sum() <= 1
                       for part in (slice(0, half), slice(half, None))] for side in range(4)])
    return tuple(bool(clear[corner - 1, 1] and clear[corner, 0]) for corner in range(4))


def like_table(beyond: np.ndarray, table: np.ndarray, paper: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Per profile beyond the sides (``(4, samples)``): whether its colour passes for the
    table's (see :func:`table_sides`), and whether it lies outside the frame."""
    outside = ~_in_frame(beyond)
    beyond = np.where(outside[..., None], 0.0, beyond)
    shares = beyond / np.maximum(beyond.sum(axis=2, keepdims=True), 1.0)
    table_hue = table / max(float(table.sum()), 1.0)
    paper_hue = paper / max(float(paper.sum()), 1.0)
    to_table = np.abs(shares - table_hue).max(axis=2)
    dark = beyond.sum(axis=2) < HUED
    like = (to_table <= ONE_TABLE) | dark
    if float(np.abs(table_hue - paper_hue).max()) > ONE_TABLE / 2:
        like &= (to_table < np.abs(shares - paper_hue).max(axis=2)) | dark
    return like, outside


PAPER_BAND = (0.03, 0.08)
"""Where a card's white border is taken (:func:`paper_colour`): this band of the rectified
card's width inside each edge, short of the corners; the index glyphs and a picture's frame
reach into little of it, and the median passes over them."""


def paper_colour(frame: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """The card's paper (BGR): the median of a band just inside its four edges, rectified
    (a hand over less than half of it leaves the median on the paper)."""
    card = rectify(frame, quad)
    height, width = card.shape[:2]
    near, far = (round(share * width) for share in PAPER_BAND)
    band = np.concatenate([card[near:far, far:width - far].reshape(-1, 3),
                           card[height - far:height - near, far:width - far].reshape(-1, 3),
                           card[far:height - far, near:far].reshape(-1, 3),
                           card[far:height - far, width - far:width - near].reshape(-1, 3)])
    colour: np.ndarray = np.median(band.astype(np.float64), axis=0)
    return colour
