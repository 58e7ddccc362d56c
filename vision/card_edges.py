"""A card's edges measured on the full-resolution frame, to a fraction of a pixel.

The masks that find a card work on a frame scaled down (:data:`vision.detect.WORK_WIDTH`),
where a pixel is two or more of the frame's and an index glyph or a dark border stroke near
the edge bends the mask. Each edge is measured again on the frame itself
(:func:`edges_on_frame`): profiles across it, where each rises from the table to the paper
(:func:`edge_steps`, under a :class:`StepRule`), and a robust line through those steps
(:func:`fit_edge`). Also what lies just beyond each side (:func:`beyond_side`), which
:mod:`vision.table_sides` compares with the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from vision.quad import intersections, side_lines_out

EDGE_SAMPLES = 24  # profiles across each edge
EDGE_REACH = 8.0  # frame pixels either side of the coarse edge the profile looks at
EDGE_STEP = 0.5
EDGE_LEVEL = 0.5
EDGE_MIN_CLEAR = 6  # profiles with a clear step needed to measure an edge (a quarter)
EDGE_INLIER = 1.5  # frame pixels: a profile's step this near its edge's line supports it
BEYOND = 8.0  # frame pixels outside an edge where the table's colour is taken: past the
# paper a blurred edge smears onto the table (4 px: cardai's motion-blurred cards had
# paper-grey beyond their sides, and a side on the table passed for one by a hand)
EDGE_STEADY = 0.8  # share of a profile past its step that must stay above the level
EDGE_STEP_LEVELS = 32  # grey levels from table to paper: a clear step (a pale desk: ~45)


@dataclass(frozen=True)
class StepRule:
    """What a clear step from table to paper is on a profile across a card's edge."""

    levels: float
    """Grey levels from the darkest on the table side to the brightest on the paper side."""
    rise: float | None = None
    """Most frame pixels the brightness takes to rise from a quarter to three quarters of
    the step (None: any): a card's edge, even blurred, rises in a pixel or two, the light
    over a table in tens."""


CLEAR_STEP = StepRule(EDGE_STEP_LEVELS)
FLAT_STEP = StepRule(12, rise=3.0)
"""A card found against the table's own light (:func:`vision.detect._flat_outlines`): on a
pale desk in half light the paper is only 10 to 25 grey levels above it. A webcam's noise
is 2 to 4 levels; a noisy profile can rise this far, but its steps do not lie on one line;
a lamp's fall-off over the desk can, but not within a few pixels."""

MIN_IN_FRAME = 0.25  # least share of a side inside the frame that is measured there alone
HIDDEN_MOVE = 0.2  # most a corner beyond the frame moves from the coarse one: of the short side


def edges_on_frame(frame: np.ndarray, quad: np.ndarray, rule: StepRule = CLEAR_STEP
                   ) -> tuple[np.ndarray, float, np.ndarray, tuple[bool, ...] | None]:
    """Sub-pixel edges on the full-resolution frame.

    The coarse corners come from a mask at :data:`vision.detect.WORK_WIDTH`: a pixel there
    is two or more frame pixels, and an index glyph or a dark border stroke near the card's
    edge bends the mask.
    Here each edge is re-measured on the frame itself: profiles across the edge (colour
    brightness), the edge on each profile where it rises, from the darkest pixel on the table
    side (the table, the card's shadow or a dark border stroke the design prints), half way
    to the paper's brightness, and a robust line through those points. That is the paper's
    edge whatever the table's colour and whether or not the design has a border stroke; the
    index glyphs then land within a fraction of a pixel of the same place on every card.
    An edge too little of which shows keeps its coarse line.

    Also returns the *support*: the share of all profiles (four edges) with a clear step
    that lies on its edge's fitted line (within ``EDGE_INLIER`` pixels). A card's edges
    show along most of their length, a hand over one side hides some; the lit felt of a
    vignette or a blob of skin has no straight step from dark to light at all.

    And what lies beyond each edge: the colour (BGR) of each profile's outermost sample,
    ``(4, EDGE_SAMPLES, 3)`` (see :func:`vision.table_sides.one_table`); and which sides
    were measured (the others kept their coarse lines), None when the coarse corners are
    returned.

    ``rule``: what a clear step is (:class:`StepRule`; :data:`FLAT_STEP` for a card found
    against the table's own light).
    """
    positions = np.linspace(0.15, 0.85, EDGE_SAMPLES, dtype=np.float32)
    sides = side_lines_out(quad, shortest=16)
    if sides is None:
        return quad, 0.0, np.zeros((4, EDGE_SAMPLES, 3)), None
    height, width = frame.shape[:2]
    # All four sides' profiles measured at once (one remap, one pass of the arithmetic:
    # this runs several times a frame, and each step of it costs more to start than to do).
    side_bases = []
    for start, length, unit, _ in sides:
        # Profiles along the part of the side inside the frame (all of it for a card in
        # view): a side that runs out of the frame is measured where it shows.
        first, last = _in_frame_span(start, start + unit * length, width, height)
        span = positions if last - first < MIN_IN_FRAME else first + positions * (last - first)
        side_bases.append(start[None, :] + span[:, None] * (unit * length)[None, :])
    side_normals = [normal for _, _, _, normal in sides]  # (each out of the card)
    normals = np.repeat(np.array(side_normals), EDGE_SAMPLES, axis=0)
    rows, found_all, stays_all = _steps(frame, np.concatenate(side_bases), normals, rule)
    side_of_row = rows // EDGE_SAMPLES
    lines = []
    on_line = 0
    measured = []
    for side, (start, _, unit, _) in enumerate(sides):
        found, stays = found_all[side_of_row == side], stays_all[side_of_row == side]
        if len(found) < EDGE_MIN_CLEAR:
            # Too little of this edge shows (a dark picture printed to it, a hand over
            # it): keep its coarse line; the other edges are still measured.
            measured.append(False)
            lines.append((start, unit))
            continue
        point, direction, inliers = fit_edge(found, stays)
        measured.append(True)
        on_line += inliers
        lines.append((point, direction))
    beyond = beyond_sides(frame, side_bases, lines, side_normals)
    support = on_line / (4 * EDGE_SAMPLES)
    corners = intersections(lines)
    if corners is None:
        return quad, support, beyond, None
    # A corner in view moves little from the coarse one; one beyond the frame is where
    # two sides measured only in part meet, and the coarse one there is a guess.
    moved = np.linalg.norm(corners - quad, axis=1)
    inside = ((corners >= 0) & (corners <= [width - 1, height - 1])).all(axis=1)
    shortest = min(length for _, length, _, _ in sides)
    if (moved[inside] > 2 * EDGE_REACH).any() or (moved > HIDDEN_MOVE * shortest).any():
        return quad, support, beyond, None
    return corners, support, beyond, tuple(measured)


def _in_frame_span(start: np.ndarray, end: np.ndarray, width: int, height: int
                   ) -> tuple[float, float]:
    """The part of the segment from ``start`` to ``end`` inside a ``width`` x ``height``
    frame, as fractions of the segment (Liang and Barsky's clipping); (0, 0) when none."""
    first, last = 0.0, 1.0
    delta = end - start
    for along, low, high, at in ((delta[0], 0.0, width - 1.0, start[0]),
                                 (delta[1], 0.0, height - 1.0, start[1])):
        if abs(along) < 1e-9:
            if not low <= at <= high:
                return 0.0, 0.0
            continue
        enter, leave = sorted(((low - at) / along, (high - at) / along))
        first, last = max(first, enter), min(last, leave)
    return (first, last) if first < last else (0.0, 0.0)


def edge_steps(frame: np.ndarray, bases: np.ndarray, normal: np.ndarray,
               rule: StepRule = CLEAR_STEP) -> tuple[np.ndarray, np.ndarray]:
    """Where the paper begins on profiles across one edge: a profile through each of
    ``bases`` (frame pixels, on the coarse edge) along ``normal`` (out of the card).

    Returns the points (frame pixels) of the profiles with a clear step from table to
    paper, and for each whether the profile stays paper past its step (see
    :func:`edges_on_frame`); what a clear step is, ``rule``."""
    _, found, stays = _steps(frame, bases, normal, rule)
    return found, stays


def _steps(frame: np.ndarray, bases: np.ndarray, normal: np.ndarray, rule: StepRule
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`edge_steps`, and which profiles (rows of ``bases``) the steps were found on;
    ``normal`` one for all, or one per profile (rows)."""
    normals = normal[:, None, :] if normal.ndim == 2 else normal[None, None, :]
    offsets = np.arange(EDGE_REACH, -EDGE_REACH - EDGE_STEP / 2, -EDGE_STEP, dtype=np.float32)
    middle, steps = len(offsets) // 2, np.arange(len(offsets))
    points = bases[:, None, :] + offsets[None, :, None] * normals
    profile = cv2.remap(frame, points[..., 0].astype(np.float32),
                        points[..., 1].astype(np.float32), cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_REPLICATE).astype(np.float32)
    # (samples, steps), the table side first. All profiles at once: this runs for
    # every frame, four edges of EDGE_SAMPLES profiles each.
    brightness = profile.mean(axis=2).astype(np.float64)
    table_side = brightness[:, :middle + 3]
    # Darkest on the table side (the table, its shadow or the card's border stroke),
    # brightest on the card side (the paper): the edge is where the paper begins.
    low, darkest = table_side.min(axis=1), table_side.argmin(axis=1)
    high = brightness[:, middle - 3:].max(axis=1)
    level = low + EDGE_LEVEL * (high - low)
    above = (brightness >= level[:, None]) & (steps[None, :] >= darkest[:, None])
    # A clear step from table to paper (not a hand, not a dark picture at the edge),
    # crossing the level after the darkest pixel (so never at the first sample).
    clear = (high - low >= rule.levels) & above.any(axis=1)
    if rule.rise is not None:
        clear &= _rise(brightness, low, high, above) <= rule.rise / EDGE_STEP
    rows = np.nonzero(clear)[0]
    step = above[rows].argmax(axis=1)
    # Linear interpolation between the last sample below and the first above.
    before, after = brightness[rows, step - 1], brightness[rows, step]
    rise = np.where(after > before, after - before, 1.0)
    fraction = np.where(after > before, (level[rows] - before) / rise, 0.0)
    where = offsets[step - 1] - fraction * EDGE_STEP
    found = bases[rows] + where[:, None] * (normal[rows] if normal.ndim == 2 else normal[None, :])
    # Support is a step onto paper that stays paper: past the edge, the profile stays
    # above the level (noise or a textured table crosses it back and forth).
    past = steps[None, :] >= step[:, None]
    stays = ((brightness[rows] >= level[rows, None]) & past).sum(axis=1) >= (
        EDGE_STEADY * past.sum(axis=1))
    return rows, found, stays


def _rise(brightness: np.ndarray, low: np.ndarray, high: np.ndarray, above: np.ndarray
          ) -> np.ndarray:
    """Samples each profile takes to rise from a quarter of its step to three quarters,
    about where it crosses the half (the first sample ``above``); infinite where it has
    none."""
    count = brightness.shape[1]
    samples = np.arange(count)[None, :]
    crossing = np.where(above.any(axis=1), above.argmax(axis=1), count)[:, None]
    quarter = low + 0.25 * (high - low)
    three = low + 0.75 * (high - low)
    # The last sample at or under a quarter before the crossing, the first at or over
    # three quarters from it.
    start = np.where((brightness <= quarter[:, None]) & (samples < crossing), samples,
                     -1).max(axis=1)
    end = np.where((brightness >= three[:, None]) & (samples >= crossing), samples,
                   count).min(axis=1)
    return np.where((start >= 0) & (end < count), end - start, np.inf).astype(np.float64)


def fit_edge(found: np.ndarray, stays: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """A robust line (a point on it, its unit direction) through an edge's steps
    (:func:`edge_steps`), and how many steps that stay paper lie on it (within
    ``EDGE_INLIER``): the edge's support."""
    vx, vy, x0, y0 = cv2.fitLine(found.astype(np.float32), cv2.DIST_HUBER, 0, 0.01,
                                 0.01).ravel()
    off_line = (found - np.array([x0, y0])) @ np.array([-vy, vx])
    inliers = int(((np.abs(off_line) <= EDGE_INLIER) & stays).sum())
    return np.array([x0, y0]), np.array([vx, vy]), inliers


def beyond_side(frame: np.ndarray, bases: np.ndarray, point: np.ndarray,
                direction: np.ndarray, normal: np.ndarray) -> np.ndarray:
    """The frame's colours ``BEYOND`` pixels outside an edge's line (through ``point``
    along ``direction``), level with each profile's base: the table next to the card, not a
    blur of table and paper where the coarse line lies inside the card. NaN where that lies
    outside the frame (a card the frame cuts: the frame's edge repeated there would be
    the card's own paper)."""
    table: np.ndarray = beyond_sides(frame, [bases], [(point, direction)], [normal])[0]
    return table


def beyond_sides(frame: np.ndarray, bases: Sequence[np.ndarray],
                 lines: Sequence[tuple[np.ndarray, np.ndarray]],
                 normals: Sequence[np.ndarray]) -> np.ndarray:
    """:func:`beyond_side` of several sides at once (each side's profile ``bases``, its
    line as a point and a direction, its outward normal), shape (sides, profiles, 3); the
    sides have as many profiles each."""
    points = []
    for side_bases, (point, direction), normal in zip(bases, lines, normals, strict=True):
        direction = direction / max(float(np.linalg.norm(direction)), 1e-9)
        along = (side_bases - point) @ direction
        points.append((point[None, :] + along[:, None] * direction[None, :]
                       + BEYOND * normal[None, :]).astype(np.float32))
    every = np.stack(points)  # (sides, profiles, 2)
    colours = cv2.remap(frame, every[..., 0], every[..., 1], cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_REPLICATE)
    table: np.ndarray = colours.astype(np.float64)
    height, width = frame.shape[:2]
    outside = ((every < 0) | (every > [width - 1, height - 1])).any(axis=2)
    table[outside] = np.nan
    return table
