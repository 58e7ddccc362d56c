"""A card found by the corners in view, where a hand lies over part of it (issue 16).

A hand over a card bites into its blob of paper (:func:`vision.detect.paper_mask`). On a
court card the picture is not paper either, and the bite opens into it: the blob is then a
broken ring that fills too little of any four-corner outline for
:func:`vision.detect.survey` to take it for a card (cardai, draw 2024: 27 of the 49 frames
in which nothing was found were J, Q or K, 18 of them under a hand). Where no hand lies,
the card's straight sides still show, and so do the corners between them:

- each long straight stretch of the blob's outline is measured on the frame as a side
  (:func:`vision.partial.measure_side`: a clean step from table to paper along most of
  it, which a picture's edge does not give), neighbouring stretches along one straight
  side as one;
- two measured sides that follow each other along the outline and meet square (the
  camera's stretch undone), near where their stretches end, are a *corner in view*;
- three corners in a row fix the card: the fourth lies opposite the middle one, and the
  two sides must have the deck's proportions; two corners of one side fix it with the
  sides leaving them where the deck's shape allows only one length
  (:func:`vision.partial.from_two_corners`: the card reaches at least as far as its sides
  show).

The sides that fix the card must border one table (:func:`vision.table_sides.one_table`: a
hand's straight edge across the paper is a clean step onto paper too, with skin beyond it).
The completed card must hold the whole blob (paper beyond it means another card or a
wrong completion) and be of the deck's size. It is read only at an index corner that is a
corner in view, whose index box lies wholly in the frame and on the blob of paper (not
under the hand). One corner alone is never enough: the card's size along its sides is
then unknown. Every completion of the blob must agree, as in :mod:`vision.partial`.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import cv2
import numpy as np

from vision.card_edges import EDGE_SAMPLES, beyond_side
from vision.corner import Box
from vision.detect import WorkFrame, opened_blobs, work_frame
from vision.partial import (
    ASPECT_TOLERANCE,
    PARTIAL_MIN_AREA,
    CardShape,
    PartialCard,
    are_square,
    closed_paper,
    from_two_corners,
    index_in_frame,
    measure_side,
    pointing,
    same_card,
    usable_corners,
)
from vision.quad import card_shaped, clockwise
from vision.table_sides import one_table

OUTLINE_TOLERANCE = 1.5
"""Work pixels: how far the straight stretches of a blob's outline may stray from it."""
MIN_SIDE = 0.25
"""The shortest stretch taken for a side: this share of the least short side the deck's
cards showed at enrolment (unstretched)."""
BETWEEN_SIDES = 4
"""Most outline stretches from one side to the next at a corner: the rounded corner's own."""
ONE_LINE = (0.1, 4.0)
"""Two neighbouring stretches are one side when their measured lines are within about 6
degrees (the sine) and 4 frame pixels of each other, and measured together they are still
one clean side (cardai 7H_s2_14: a bent card's side split in two 4.7 degrees apart)."""
CORNER_GAP = 0.3
"""How far two sides' meeting point may lie from the ends of their stretches: this share of
the least short side. An index printed near the corner breaks the paper's margin at the
working scale, and the stretches then end where the index does (its box is about a fifth
of the card's width and a quarter of its length across); a rounded corner alone ends them
a few pixels short (cardai, right of 771 on draws 2024, 7, 11 and 3: 0.12 read 573, 586,
541 and 592; 0.3 587, 605, 552 and 604; none wrong either way)."""
HOLDS_BLOB = 0.95
"""Least share of the blob inside the completed card."""
INDEX_ON_PAPER = 0.6
"""Least share of an index box on the blob of paper, holes filled: the glyphs are not
paper, and where they lie near the card's edge they may open the blob there (cardai,
draws 2024 and 7: 0.9 read 1 and 2 photos fewer, none wrong either way); a hand over the
index leaves little of it."""


@dataclass(frozen=True)
class _Side:
    """One or more stretches of the outline measured as a card's side: where they begin on
    the outline (``vertex``), their measured line (``point``, unit ``direction``), their
    ends (frame pixels), where the last of them begins (``last``) and the colours just
    beyond them (:func:`vision.card_edges.beyond_side`)."""

    vertex: int
    point: np.ndarray
    direction: np.ndarray
    start: np.ndarray
    end: np.ndarray
    last: int
    beyond: np.ndarray


@dataclass(frozen=True)
class _Corner:
    """Where measured side ``side`` meets the next one: the corner, and the far ends of
    the side coming into it and of the side going out of it."""

    side: int
    point: np.ndarray
    far_in: np.ndarray
    far_out: np.ndarray


@dataclass(frozen=True)
class _View:
    """One frame as the search sees it: the frame, its scale to work pixels, one blob of
    paper (work pixels, holes filled), the least short side the deck's cards showed at
    enrolment (frame pixels)."""

    frame: np.ndarray
    scale: float
    filled: np.ndarray
    least: float


def find_by_corners(frame: np.ndarray, shape: CardShape, index: Box,
                    work: WorkFrame | None = None) -> PartialCard | None:
    """The card of the frame found by its corners in view (see the module's doc), with the
    index corners that can be read; None when none is found with confidence, or when the
    deck did not learn its cards' size (``shape.sizes``). ``work``: the frame's
    :func:`vision.detect.work_frame`, if made already."""
    if shape.sizes is None:
        return None
    scale, blurred = work_frame(frame) if work is None else work
    mask = closed_paper(blurred)
    for blobs in opened_blobs(mask, PARTIAL_MIN_AREA, cv2.CHAIN_APPROX_NONE):
        found = []
        for contour, _ in blobs:
            filled = np.zeros(mask.shape, np.uint8)
            cv2.drawContours(filled, [contour], -1, 1, -1)
            view = _View(frame, scale, filled, shape.sizes[0])
            outline = cv2.approxPolyDP(contour, OUTLINE_TOLERANCE, True).reshape(-1, 2)
            sides = _measured_sides(view, outline.astype(np.float64) / scale, shape)
            corners = _corners(sides, len(outline), shape, view.least)
            for quad, seen, used in _completions(sides, corners, shape):
                # A hand's edge across the paper is a clean step onto paper too, but skin,
                # not the table the card's other sides border, lies beyond it.
                if not one_table(np.stack([sides[side].beyond for side in used])):
                    continue
                card = _verified(view, quad, seen, shape, index)
                if card is not None:
                    found.append(card)
        if found:  # a larger disc would find the same card again, less exactly
            if not all(same_card(other.quad, found[0].quad) for other in found[1:]):
                return None
            # One card, found from several runs of corners: the run that saw most of its
            # index corners says where it can be read.
            return max(found, key=lambda card: len(card.usable))
    return None


def _measured_sides(view: _View, outline: np.ndarray, shape: CardShape) -> list[_Side]:
    """The stretches of the blob's ``outline`` (frame pixels) long enough to be a side and
    measured as one on the frame, in the outline's order; neighbouring stretches along one
    straight side (the outline's polygon splits a side a little bent, or broken by an index
    printed near it) measured as one side."""
    sides: list[_Side] = []
    for vertex, (start, end) in enumerate(pairwise(np.vstack([outline, outline[:1]]))):
        if float(np.linalg.norm(shape.unstretched(end - start))) < MIN_SIDE * view.least:
            continue
        side = _measure(view, start, end, vertex, vertex)
        if side is None:
            continue
        if sides and _one_line(sides[-1], side, len(outline)):
            joined = _measure(view, sides[-1].start, end, sides[-1].vertex, vertex)
            if joined is not None:
                sides[-1] = joined
                continue
        sides.append(side)
    if len(sides) > 2 and _one_line(sides[-1], sides[0], len(outline)):
        joined = _measure(view, sides[-1].start, sides[0].end, sides[-1].vertex, sides[0].last)
        if joined is not None:  # the outline began part way along a side
            sides[0] = joined
            sides.pop()
    return sides


def _measure(view: _View, start: np.ndarray, end: np.ndarray, vertex: int, last: int
             ) -> _Side | None:
    """One or more stretches, from ``start`` to ``end``, measured as a side
    (:func:`vision.partial.measure_side`)."""
    height, width = view.filled.shape
    along = (end - start) / float(np.linalg.norm(end - start))
    normal = np.array([-along[1], along[0]])
    # The card lies on the blob's side of its outline: a point just off the middle of the
    # stretch, on the blob, tells which way (measure_side takes a point inside).
    probe = np.round(((start + end) / 2 + normal * 4 / view.scale) * view.scale).astype(int)
    if (0 <= probe[0] < width and 0 <= probe[1] < height
            and bool(view.filled[probe[1], probe[0]])):
        normal = -normal  # (out of the card)
    line = measure_side(view.frame, start, end, (start + end) / 2 - normal * view.least)
    if line is None:
        return None
    bases = start + np.linspace(0.15, 0.85, EDGE_SAMPLES)[:, None] * (end - start)
    return _Side(vertex, line[0], line[1], start, end, last,
                 beyond_side(view.frame, bases, line[0], line[1], normal))


def _one_line(side: _Side, following: _Side, vertices: int) -> bool:
    """A measured stretch continues ``side`` (a few stretches on, nearly parallel, and on
    its line)."""
    if (following.vertex - side.last) % vertices > BETWEEN_SIDES:
        return False
    direction = following.direction
    parallel = abs(float(side.direction[0] * direction[1] - side.direction[1] * direction[0]))
    away = abs(float((following.point - side.point)
                     @ np.array([-side.direction[1], side.direction[0]])))
    return parallel <= ONE_LINE[0] and away <= ONE_LINE[1]


def _corners(sides: list[_Side], vertices: int, shape: CardShape, least: float
             ) -> list[_Corner]:
    """Where each measured side meets the next along the outline, square and near the
    ends of both stretches: the corners in view."""
    corners: list[_Corner] = []
    if len(sides) < 2:
        return corners
    for number, (side, following) in enumerate(zip(sides, sides[1:] + sides[:1])):
        if (following.vertex - side.last) % vertices > BETWEEN_SIDES:
            continue
        point = _meeting(side, following)
        if (point is None or not are_square(side.direction, following.direction, shape)
                or np.linalg.norm(point - side.end) > CORNER_GAP * least
                or np.linalg.norm(point - following.start) > CORNER_GAP * least):
            continue
        corners.append(_Corner(number, point, side.start, following.end))
    return corners


def _meeting(first: _Side, second: _Side) -> np.ndarray | None:
    """Where two measured sides' lines cross; None when nearly parallel."""
    (p, d), (q, e) = (first.point, first.direction), (second.point, second.direction)
    cross = d[0] * e[1] - d[1] * e[0]
    if abs(cross) < 0.2:
        return None
    meeting: np.ndarray = p + d * ((q[0] - p[0]) * e[1] - (q[1] - p[1]) * e[0]) / cross
    return meeting


def _completions(sides: list[_Side], corners: list[_Corner], shape: CardShape
                 ) -> list[tuple[np.ndarray, np.ndarray, list[int]]]:
    """The cards that runs of corners in view fix, each with the corners seen and the sides
    that fixed it: three corners in a row (the fourth opposite the middle one), else two of
    one side."""
    after = {corner.side: corner for corner in corners}
    completed = []
    for corner in corners:
        second = after.get((corner.side + 1) % len(sides))
        if second is None or second is corner:
            continue
        third = after.get((second.side + 1) % len(sides))
        if third is not None and third is not corner:
            first, middle, last = corner.point, second.point, third.point
            lengths = sorted(float(np.linalg.norm(shape.unstretched(vector)))
                             for vector in (middle - first, last - middle))
            if abs(lengths[1] / lengths[0] - shape.aspect) <= ASPECT_TOLERANCE * shape.aspect:
                completed.append((np.array([first, middle, last, first + last - middle]),
                                  np.array([first, middle, last]),
                                  [corner.side, second.side, third.side,
                                   (third.side + 1) % len(sides)]))
        # Two corners of one side (also of a run of three, whose third may be where a
        # hand's straight edge crosses a side): the sides leaving them, measured, point
        # where the card goes on, and it reaches at least as far as they show.
        leaving_first = pointing(sides[corner.side].direction, corner.far_in - corner.point)
        leaving_second = pointing(sides[(second.side + 1) % len(sides)].direction,
                                  second.far_out - second.point)
        quad = from_two_corners(corner.point, second.point, leaving_first, leaving_second,
                                shape, (corner.far_in, second.far_out))
        if quad is not None:
            completed.append((quad.astype(np.float64), np.array([corner.point, second.point]),
                              [corner.side, second.side, (second.side + 1) % len(sides)]))
    return completed


def _verified(view: _View, quad: np.ndarray, seen: np.ndarray, shape: CardShape, index: Box
              ) -> PartialCard | None:
    """The completed card, if it is card-shaped, of the deck's size and holds the blob,
    with its index corners that are corners in view, wholly in the frame and on paper."""
    quad = clockwise(quad.astype(np.float32))
    if not card_shaped(quad) or not shape.fits_size(quad):
        return None
    card = np.zeros(view.filled.shape, np.uint8)
    cv2.fillConvexPoly(card, np.round(quad * view.scale).astype(np.int32), 1)
    grown = cv2.dilate(card, np.ones((5, 5), np.uint8))  # its edges, measured, lie on the blob's
    if np.count_nonzero(grown & view.filled) < HOLDS_BLOB * np.count_nonzero(view.filled):
        return None
    height, width = view.frame.shape[:2]
    usable = tuple(
        corner for corner in usable_corners(quad, width, height, index)
        if np.linalg.norm(seen - quad[corner], axis=1).min() < 1.0
        and _on_paper(index_in_frame(quad, corner, index) * view.scale, view.filled)
        >= INDEX_ON_PAPER)
    return PartialCard(quad, usable) if usable else None


def _on_paper(box: np.ndarray, filled: np.ndarray) -> float:
    """The share of a box (work pixels) on the blob."""
    inside = np.zeros(filled.shape, np.uint8)
    cv2.fillConvexPoly(inside, np.round(box).astype(np.int32), 1)
    return float(np.count_nonzero(inside & filled)) / max(int(np.count_nonzero(inside)), 1)
