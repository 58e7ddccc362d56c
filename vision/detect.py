"""Find the card in a frame and undo the camera's perspective.

The card is a card-shaped blob of one of two masks: what differs from the table (its colour
estimated from the frame's border, each pixel's distance from it in Lab thresholded by
Otsu), or what looks like paper, bright and colourless (:func:`paper_mask`), whatever the
table; on a pale desk, also the paper brighter than the desk's own light where it lies. A
blob's hull is enclosed by the four-sided polygon that adds the least area
(``cv2.approxPolyN``); of the candidates, the one whose edges show most clearly on the frame
is the card, and a card partly out of the frame or cut off by a hand is none. Its corners
are refined twice: lines fitted to the straight middle of each edge of the mask,
intersected, give the card's sharp (virtual) corners, not points somewhere on its rounded
arcs; and each edge is measured again on the full-resolution frame, to a fraction of a
pixel, where the paper begins (:func:`vision.card_edges.edges_on_frame`). The index glyphs
then sit at the same place on every rectified card (:func:`vision.quad.rectify`).

:func:`survey` also returns, when no card is found, the best card-shaped candidate that may
not be read whole (:class:`CardInPart`: a hand borders it, or one of its corners lies beyond
the frame's edge), which :mod:`vision.partial` may read at an index corner wholly in view
and away from the hand.

The rectified card is portrait, :data:`vision.quad.CARD_SIZE` pixels, its top edge one of the
two short edges: which one depends on how the card lies, so enrolment stores both
orientations.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from vision.card_edges import (
    CLEAR_STEP,
    EDGE_REACH,
    FLAT_STEP,
    StepRule,
    edge_steps,
    edges_on_frame,
)
from vision.quad import (
    card_shaped,
    clockwise,
    following,
    four_corners,
    intersections,
    quad_area,
    rectify,
    same_quad,
    side_lines,
    side_lines_out,
)
from vision.table_sides import like_table, near_corners_from, one_table, paper_colour, sides_from

WORK_WIDTH = 320  # detection runs on a frame scaled to this width (speed)
MIN_AREA = 0.03  # a card covers at least this fraction of the frame
MAX_AREA = 0.9
FILLED = 0.85  # share of its four-corner outline a card's blob fills
BITTEN = 0.7  # ...and of its bounding rectangle, when a dark picture bites into it
LOOSE_TABLE = 3.0  # a loose mask's level: this many times the table's own spread...
LOOSE_OTSU = 0.4  # ...and at least this share of Otsu's level (a flat, noiseless table)
PAPER_OPENINGS = (3, 9, 15)  # discs (work pixels) that cut a touching finger off the paper
PAPER_MAX_AREA = 0.6  # a paper blob larger than this is the table (a white desk), not a card
PAPER_FILLED = 0.5  # least share of its outline a card's paper fills, a hand over it
PAPER_DIM = 0.5
"""The last paper level tried, as a share of Otsu's: a card in dim light whose paper along
one side falls below Otsu's level (cardai: a court card's border ring broken on its shaded
side: on draws 2024, 7, 11 and 3, +10, +34, +11 and +14 of 771 photos read, none wrong;
on draw 2024 0.6 and 0.75 read +9 and +7)."""
OUT_OF_FRAME = 0.10
"""A corner may leave the frame by this share of the card's short side: its rounded tip and
the blank margin beside the index (cardai: no wrong read at 0.10, 3 points more read than
at 0.06, every photo flagged partly out of frame still declined)."""
REFINE_MOVE = 0.35  # most a corner moves to the sharp corner: of the shortest side
ON_FRAME_EDGE = 2.0  # work pixels: two corners this near one edge of the frame: cut by it
REMEASURES = 2
"""How many times a whole card's edges that do not border one table are measured again
from where they were found (:func:`_measured_again`)."""
MIN_EDGE_SUPPORT = 0.3  # least share of edge profiles that show a step from table to paper
FLAT_WINDOW = 0.6
"""The square round each place over which the table's own light is taken
(:func:`paper_over_light`), a share of the frame's shorter side: small enough to follow a
lamp's fall-off, large enough that a card seldom covers two thirds of it (of 0.45, 0.6
and 0.9 with quantiles 0.25 to 0.5, on hand-made frames of a pale desk under a lamp: the
best balance of small and large cards found and shadows across them declined)."""
FLAT_LIT = 40  # paper score: a table under this is dark, not a pale desk
FLAT_LIGHT_RANK = 0.35
"""The table's light is this quantile of the paper score around each place
(:func:`paper_over_light`): the card may cover up to two thirds of the window."""
FLAT_MIN_RATIO = 1.08  # the brightest paper over the table's light under this: none shows
RUN_ON = np.array([0.08, 0.12, 0.16, 0.2, 0.24])
"""Where a side's line is looked at past each of its ends (:func:`_side_runs_on`): shares
of the side's length beyond the corner."""
RUN_ON_STEPS = 0.5  # of those profiles in view, the share with a step: the side runs on
FLAT_TABLE_FLOOR = 0.5
"""The paper score over the table's light beyond a side, at its median, under which what
lies there is no table (skin, an arm's sleeve), though the table in the card's shadow is
(:func:`_bounded_by_table`)."""
FLAT_BEYOND = np.array([3.0, 6.0])
"""Work pixels either side of a side where table and paper are compared
(:func:`_bounded_by_table`)."""
FLAT_CLOSING = 7  # work pixels: the gaps in a court card's ring of paper that are closed
RING_INSET = 1.5  # work pixels inside a court card's sides where its paper margin runs
RING_SHARE = 0.5  # least share of each side with that margin (an index, a pip or a finger
# breaks it; a side across the picture has none)


@dataclass(frozen=True)
class Detection:
    """Where the card is: its four corners in frame pixels, clockwise from the top-left of
    the rectified card, and the rectified card image (BGR)."""

    quad: np.ndarray
    card: np.ndarray


@dataclass(frozen=True)
class CardInPart:
    """A card found but not to be read whole: some of its sides border something else than
    the table (a hand lying along or across them), or a corner of it lies beyond the
    frame's edge (its four sides measured on the frame, none along the frame's edge). Its
    corners as :func:`find_card` gives them, and which of its sides (side ``k`` from corner
    ``k`` to corner ``k + 1``) border the table along their whole length. An index corner
    between two such sides, wholly in view, may be read (:mod:`vision.partial`)."""

    quad: np.ndarray
    table_sides: tuple[bool, ...]
    frame_side: int | None = None
    """The side that lies along the frame's edge (the frame cuts the card there: not the
    card's own side, and the card's length beyond it unknown), if any."""
    measured: tuple[bool, ...] = (True, True, True, True)
    """Which sides were measured on the frame; a side the frame cuts to a stub keeps the
    mask's coarse line, and the corners at its ends are no better than that."""
    table_corners: tuple[bool, ...] | None = None
    """Which corners (corner ``k`` between sides ``k - 1`` and ``k``) border the table
    along the half of both their sides next to them, those sides measured; None: those
    between two ``table_sides``."""

    def corner_on_table(self, corner: int) -> bool:
        """The table lies beyond both sides next to ``corner``, at least near it."""
        if self.table_corners is not None:
            return self.table_corners[corner]
        return self.table_sides[corner - 1] and self.table_sides[corner]


def find_card(frame: np.ndarray, *, loose: bool = False, work: WorkFrame | None = None
              ) -> np.ndarray | None:
    """The card's four corners (float32, shape (4, 2), frame pixels) or None if no card
    (:func:`survey`)."""
    return survey(frame, loose=loose, work=work)[0]


def survey(frame: np.ndarray, *, loose: bool = False, work: WorkFrame | None = None
           ) -> tuple[np.ndarray | None, CardInPart | None]:
    """The card's four corners (float32, shape (4, 2), frame pixels) or None if no card;
    and, when there is none, the best-supported card a hand borders or the frame's edge
    cuts at a corner (:class:`CardInPart`; None if none).

    Candidates come from two masks that fail in different places: pixels far from the
    table's colour (estimated on the frame's border: right on an evenly lit table of any
    colour, wrong where a vignette or a lamp makes the border unlike the table under the
    card), and *paper*, the bright and colourless (:func:`paper_mask`: right on felt of any
    colour and under uneven light, wrong on a white table; where the light tints the
    frame's white, the paper is looked for again as colourless as that white,
    :func:`tint`). Each card-shaped blob of either
    is refined to the paper's edges on the frame, and the candidate whose four edges show
    most clearly as steps from table to paper is the card (:func:`edges_on_frame`): the
    lit felt of a vignette or a hand has no such edges. What may be only part of a card is
    no card, never a guess: corners beyond the frame by more than the card's blank corner
    (:data:`OUT_OF_FRAME`), a side along the frame's edge, or a side bordering something
    else than the table the other sides border (a hand lying along it, :func:`one_table`).

    On a pale table (a desk nearly as light as the paper, :func:`paper_over_light`), a
    third search when those two find nothing: the paper brighter than the table's own
    light where it lies (:func:`_flat_outlines`), its faint edges measured with a faint
    but sharp step (:data:`FLAT_STEP`), all four of them. The colour beyond a side cannot
    tell paper from a colourless desk, so there a whole card must also have the table,
    not paper, just beyond every side (:func:`_bounded_by_table`), and no side whose
    step runs on past the card's corners (:func:`_side_runs_on`: a shadow's edge).

    ``loose``: the table's mask alone, everything the table's texture does not explain, not
    just what stands out most (Otsu's threshold). A second try, for a frame whose card was
    not recognised: a picture printed to the card's edge in nearly the table's colour (a
    red cloak on red felt) is cut off by Otsu's threshold, and the card-shaped part that is
    left is not the card. The loose mask may take in the card's shadow, which the edges
    measured on the frame then leave out; tried first, it would do so on every frame.

    ``work``: the frame's :func:`work_frame`, when the caller has it already (a frame is
    searched several ways, each starting from it)."""
    if work is None:
        work = work_frame(frame)  # (which checks the frame)
    else:
        _check_frame(frame)
    scale, blurred = work
    score = paper_mask(blurred)
    outlines = [_table_outline(blurred, loose)]
    if not loose:
        outlines += _paper_outlines(score)
        gains = tint(blurred)
        if gains is not None:
            # Paper tinted by the light: found again as colourless as the frame's white.
            # Its candidates compete with the others by how clearly their edges show (a
            # finger under tinted light joins the untinted mask's paper, and the quad
            # that blob gives can show edges enough to be taken, far off the card).
            outlines += _paper_outlines(paper_mask(blurred, gains))
    best: tuple[float, np.ndarray] | None = None
    # (support, corners, what lies beyond its sides unless on one table, the side along
    # the frame's edge, which sides were measured on the frame)
    in_part: tuple[float, np.ndarray, np.ndarray | None, int | None, tuple[bool, ...]
                   ] | None = None
    height, width = blurred.shape[:2]
    light = paper_over_light(score)  # None on a dark table (felt, wood)
    # The masks' own candidates first; only when none of them is a card or a card in part,
    # on a pale table, the paper against the table's own light (:func:`_flat_outlines`),
    # whose faint edges are measured with a faint but sharp step (:data:`FLAT_STEP`).
    for against_light, rule in ((False, CLEAR_STEP), (True, FLAT_STEP)):
        candidates: Sequence[tuple[np.ndarray, np.ndarray] | None] = outlines
        if against_light:
            supported = [one[0] for one in (best, in_part) if one is not None]
            if loose or light is None or max(supported, default=0.0) >= MIN_EDGE_SUPPORT:
                break
            candidates = _flat_outlines(light)
        measured: list[np.ndarray] = []  # (again in the second: measured another way)
        for found in candidates:
            if found is None or any(same_quad(found[0], quad) for quad in measured):
                continue  # the same card found by both masks is measured once
            quad, outline = found
            measured.append(quad)
            # Twice: the first fit starts from corners on the rounded arcs, so its edges may
            # be a little askew; the second starts from sharp corners and keeps only edge
            # points.
            refined = clockwise(_edge_corners(outline, _edge_corners(outline, quad, 0.05),
                                              0.02))
            on_edge = _sides_along_frame_edge(refined, width, height)
            if len(on_edge) > 1:
                continue  # more than one side may be the frame's: what shows may be any part
            cut = bool(on_edge) or _leaves_frame(refined, width, height)
            corners, support, beyond, on_frame = edges_on_frame(frame, refined / scale, rule)
            if not card_shaped(corners) and not cut and not same_quad(refined, quad):
                # The outline followed a shadow or a finger across a side, not the card's
                # edge, and the fit to it moved a corner off the card (3H_s2_12: a finger's
                # shadow over the corner): measured from the coarse corners, the edges may
                # still show the card.
                corners, support, beyond, on_frame = edges_on_frame(
                    frame, clockwise(quad) / scale, rule)
            if not card_shaped(corners) or (cut and on_frame is None):
                continue  # (a card the frame cuts is placed by its measured sides alone)
            if against_light and (cut or on_frame is None or not all(on_frame)):
                continue  # against the table's light, only a whole card every side shows
            # The frame's edge is no side of the card: what lies beyond it says nothing.
            on_one_table = one_table(np.delete(beyond, on_edge, axis=0))
            if not on_one_table and not cut and on_frame is not None:
                corners, support, beyond, on_frame, on_one_table = _measured_again(
                    frame, corners, support, beyond, on_frame, rule)
            if against_light and not on_one_table:
                continue  # (only whole cards are looked for against the table's light)
            if on_one_table and not cut and light is not None and not _whole_on_pale_table(
                    frame, corners, on_frame, light, scale):
                continue
            if on_one_table and not cut:
                if best is None or support > best[0]:
                    best = (support, corners)
            elif in_part is None or support > in_part[0]:
                in_part = (support, corners, None if on_one_table else beyond,
                           on_edge[0] if on_edge else None,
                           on_frame if cut and on_frame else (True,) * 4)
    if best is not None and best[0] >= MIN_EDGE_SUPPORT:
        return best[1], None
    if in_part is None or in_part[0] < MIN_EDGE_SUPPORT:
        return None, None
    support, corners, outside, frame_side, on_frame = in_part
    if outside is None:
        # Only cut by the frame, its sides on one table as a whole card's are: the test a
        # whole card passes. Not each profile against the frame's border, which a
        # vignette darkens to a deeper green than the lit felt by the card (cardai s1:
        # the felt there is then nearer the paper's grey, and no side would pass).
        sides: tuple[bool, ...] = (True,) * 4
        near: tuple[bool, ...] = (True,) * 4
    else:
        table = np.median(_border(blurred).astype(np.float64), axis=0)
        like, out_of_frame = like_table(outside, table, paper_colour(frame, corners))
        sides, near = sides_from(like, out_of_frame), near_corners_from(like, out_of_frame)
    # A side borders the table only where it was measured on the frame (not the frame's
    # edge, not a coarse line through a side too little of which shows).
    usable = [side != frame_side and on_frame[side] for side in range(4)]
    sides = tuple(table_side and usable[side] for side, table_side in enumerate(sides))
    near = tuple(table and usable[corner - 1] and usable[corner]
                 for corner, table in enumerate(near))
    return None, CardInPart(corners, sides, frame_side, on_frame, near)


def _measured_again(frame: np.ndarray, corners: np.ndarray, support: float,
                    beyond: np.ndarray, on_frame: tuple[bool, ...], rule: StepRule
                    ) -> tuple[np.ndarray, float, np.ndarray, tuple[bool, ...], bool]:
    """A whole card in view whose sides did not border one table, its edges measured again
    from the corners just measured (up to :data:`REMEASURES` times), and taken as soon as
    they do. A mask cut short by a shadow over the card's edge (cardai's 4H_s1_08, a hand's
    shadow over one end of it) starts a side askew, and the profiles near its far end
    cannot reach the edge (:data:`EDGE_REACH`): the line fitted to the rest turns part way
    towards the edge, and the card's own paper lies beyond that end. Measured again from
    there, the side lies on the edge. A side too little of which showed a step kept the
    mask's line, which may lie further inside the card than a profile reaches: measured
    again from a reach further out (:func:`_pushed_out`) when nothing nearer borders one
    table. When no measure borders one table (still only part of a card: a hand along a
    side), the first measure is returned as it was, and False.
    ``rule``: the first measure's (:func:`edges_on_frame`)."""
    starts = [corners]
    if not all(on_frame):
        # A side not measured kept the mask's line, which a finger cut off with the paper
        # under it may have left further inside the card than a profile reaches (the
        # opening that cuts a touching finger off the paper takes a slice of the card
        # with it): measured again from a reach further out, it lies on the card's edge.
        starts.append(_pushed_out(corners, on_frame, EDGE_REACH))
    for again in starts:
        for _ in range(REMEASURES):
            again, support_again, beyond_again, on_frame_again = edges_on_frame(
                frame, again, rule)
            if on_frame_again is None or not card_shaped(again):
                break
            if one_table(beyond_again):
                return again, support_again, beyond_again, on_frame_again, True
    return corners, support, beyond, on_frame, False


def _pushed_out(corners: np.ndarray, measured: tuple[bool, ...], distance: float
                ) -> np.ndarray:
    """The quad with each side not ``measured`` moved ``distance`` pixels out of it (the
    corners at its ends moved along its outward normal)."""
    sides = side_lines_out(corners, shortest=0)
    if sides is None:
        return corners
    moved = corners.astype(np.float32)  # (a copy)
    for side, (_, _, _, normal) in enumerate(sides):
        if not measured[side]:
            moved[side] += distance * normal
            moved[(side + 1) % 4] += distance * normal
    return moved


def _check_frame(frame: np.ndarray) -> None:
    """A BGR frame large enough to search, else a ValueError saying what came instead."""
    if frame.ndim != 3 or frame.shape[2] != 3 or frame.shape[0] < 32 or frame.shape[1] < 32:
        raise ValueError(f"expected a BGR frame, got an array of shape {frame.shape}")


WorkFrame = tuple[float, np.ndarray]
"""A frame as the masks see it: its scale to :data:`WORK_WIDTH` and the scaled frame,
smoothed (:func:`work_frame`)."""


def work_frame(frame: np.ndarray) -> WorkFrame:
    """The frame as the masks see it: scaled to :data:`WORK_WIDTH` (the scale returned),
    and smoothed."""
    _check_frame(frame)
    scale = WORK_WIDTH / frame.shape[1]
    small = cv2.resize(frame, (WORK_WIDTH, max(1, round(frame.shape[0] * scale))),
                       interpolation=cv2.INTER_AREA)
    return scale, cv2.GaussianBlur(small, (5, 5), 0)


def _border(image: np.ndarray) -> np.ndarray:
    """The pixels (rows of channels) of the image's 3-pixel border: the table, wherever
    the card lies."""
    return np.concatenate([image[:3].reshape(-1, 3), image[-3:].reshape(-1, 3),
                           image[:, :3].reshape(-1, 3), image[:, -3:].reshape(-1, 3)])


def _table_outline(blurred: np.ndarray, loose: bool
                   ) -> tuple[np.ndarray, np.ndarray] | None:
    """The coarse quad and outline of what differs from the table's colour (the frame's
    border), on the frame scaled to ``WORK_WIDTH``; None if nothing card-shaped."""
    lab = cv2.cvtColor(blurred, cv2.COLOR_BGR2LAB).astype(np.float32)
    border = _border(lab)
    table = np.median(border, axis=0)
    away = lab - table
    distance = np.sqrt(np.einsum("ijk,ijk->ij", away, away))  # (numpy's norm: slower)
    to_level = 255.0 / max(float(distance.max()), 1.0)  # Lab distance to a uint8 level
    distance = np.clip(distance * to_level, 0, 255)
    level, mask = cv2.threshold(distance.astype(np.uint8), 0, 255,
                                cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    if loose:
        # Anything the table's own texture and noise do not reach (its 99th percentile
        # along the border, with room): a picture close to the table's colour is card too.
        spread = np.linalg.norm(border - table, axis=1) * to_level
        level = max(LOOSE_TABLE * float(np.percentile(spread, 99)), LOOSE_OTSU * level)
        _, mask = cv2.threshold(distance.astype(np.uint8), level, 255, cv2.THRESH_BINARY)
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    return _pieces_outline(mask)


def _pieces_outline(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The coarse quad and outline of a ``mask``'s large pieces taken together (a card a
    face picture cuts in pieces); None if they are not card-shaped."""
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not contours:
        return None
    area = mask.shape[0] * mask.shape[1]
    # Dark lines in a face picture can cut the card's blob in pieces: keep every large piece.
    sizes = [cv2.contourArea(contour) for contour in contours]
    floor = max(0.1 * max(sizes), 0.002 * area)
    pieces = [contour for contour, size in zip(contours, sizes) if size >= floor]
    if not pieces:  # only specks (dust, noise, glints): no card
        return None
    hull = cv2.convexHull(np.concatenate(pieces))
    hull_area = cv2.contourArea(hull)
    if not MIN_AREA * area <= hull_area <= MAX_AREA * area:
        return None
    quad = four_corners(hull)
    # A card is a filled rectangle: its blob fills most of its four-corner outline.
    if quad is None or not card_shaped(quad) or hull_area < FILLED * quad_area(quad):
        # A dark picture printed to the card's edge, on a dark table, bites a piece out of
        # the blob and the four-corner fit follows the bite. The card's visible edges still
        # bound it: the smallest rectangle round the blob is close, and the edges are then
        # measured where they show.
        quad = cv2.boxPoints(cv2.minAreaRect(hull)).astype(np.float32)
        if hull_area < BITTEN * quad_area(quad):
            return None
    return quad, np.concatenate(pieces).reshape(-1, 2).astype(np.float32)


def paper_mask(blurred: np.ndarray, gains: tuple[float, float, float] | None = None
               ) -> np.ndarray:
    """How much a pixel looks like the card's paper: bright in its *darkest* channel and
    colourless, ``min - 2 x (max - min)`` of B, G, R (uint8). Felt of any colour is dark in at
    least one channel, skin and wood in blue, and a vignette or a lamp off to one side
    scales the paper and the table alike, so the paper stays above the table it lies on.
    ``gains`` (B, G, R; :func:`white_gains`): colourless as the frame's white is, not
    as grey is (under warm light the paper is orange to the camera)."""
    blue, green, red = cv2.split(blurred)  # (OpenCV: numpy's min over 3 channels is slow)
    if gains is not None:
        blue, green, red = (cv2.multiply(channel, gain)
                            for channel, gain in zip((blue, green, red), gains, strict=True))
    low = cv2.min(cv2.min(blue, green), red)
    high = cv2.max(cv2.max(blue, green), red)
    score: np.ndarray = cv2.addWeighted(low, 3.0, high, -2.0, 0.0)  # saturated to 0..255
    return score


WHITE_SHARE = 0.005
"""The brightest share of the frame whose colour is taken for white (:func:`white_gains`):
a card covers a few per cent of the frame or more."""
MAX_WHITE_GAIN = 2.0  # tungsten light on a webcam that does not correct it: blue x 1.7
TINTED = 1.15  # a frame's white this far from grey in some channel: its paper is tinted


def white_gains(blurred: np.ndarray) -> tuple[float, float, float]:
    """The gains (B, G, R) that make the frame's white colourless: the mean colour of the
    frame's :data:`WHITE_SHARE` brightest in their *darkest* channel, each channel brought
    to its brightest (at most x :data:`MAX_WHITE_GAIN`). Those are the card's paper where a
    card lies in view (skin and felt are dark in some channel, however lit); the camera's
    white balance may have left it tinted (warm light: blue under red by a quarter or
    more), and tinted paper is not colourless."""
    blue, green, red = cv2.split(blurred)
    low = cv2.min(cv2.min(blue, green), red)
    histogram = cv2.calcHist([low], [0], None, [256], [0, 256]).ravel()
    from_top = np.cumsum(histogram[::-1])
    level = 255 - int(np.searchsorted(from_top, WHITE_SHARE * low.size))
    white = np.array(cv2.mean(blurred, (low >= level).astype(np.uint8))[:3])
    gains = np.minimum(MAX_WHITE_GAIN, white.max() / np.maximum(white, 1.0))
    return float(gains[0]), float(gains[1]), float(gains[2])


def tint(blurred: np.ndarray) -> tuple[float, float, float] | None:
    """The frame's :func:`white_gains` when its white is tinted (a gain of :data:`TINTED`
    or more), else None: a paper white to within what the paper mask takes for colourless
    is looked for as it is (corrected anyway, a frame whose paper and felt share a faint
    tint, the felt's light reflected, loses colour from the felt too: of the 248 cards
    found whole in every second cardai photo, 8 were lost)."""
    gains = white_gains(blurred)
    return gains if max(gains) >= TINTED else None


def _paper_outlines(score: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Coarse quads and outlines of card-shaped blobs of paper (``score``, the work frame's
    :func:`paper_mask`).

    Otsu's level first, then half way from it to the brightest paper (a lit hand or sleeve
    can pass Otsu's level and join the card), and when neither finds a card,
    :data:`PAPER_DIM` of Otsu's level (paper in shadow). Each mask is opened with growing
    discs, so a finger touching the card is cut off it (a finger is narrower than the
    card). A blob is card-shaped when its hull is nearly its four-corner outline and it
    fills at least half of it (a hand over the card bites into the blob, not into its
    hull)."""
    level, otsu = cv2.threshold(score, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)

    def masks() -> Iterator[np.ndarray]:  # each made only if the one before found no card
        yield otsu
        brightest = float(np.percentile(score, 99.5))
        yield cv2.threshold(score, (level + brightest) / 2, 255, cv2.THRESH_BINARY)[1]
        yield cv2.threshold(score, PAPER_DIM * level, 255, cv2.THRESH_BINARY)[1]

    for mask in masks():
        found = _card_blobs(mask)
        if found:  # a card found: the next level would find less of it, or more than it
            return found
    return _ring_of_paper(otsu)


def _ring_of_paper(mask: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """A court card whose picture fills most of it as a paper ``mask`` shows it: a thin
    ring of paper round the picture, which the openings break and whose blob fills too
    little of its outline to be a card. Closed as on a pale desk (:func:`_closed_outlines`),
    and each candidate kept only where paper runs along every side (:func:`_ringed`): the
    paper of a card the frame cuts, closed, can be card-shaped short of the card's end, one
    side across the picture (the simulated overhead camera's Bellot KD, draw 2024, read so
    as KC: none of that side's samples was paper). Tried only when no paper mask shows
    a card (:func:`_paper_outlines`): the simulated overhead camera's Paris deck, draw
    2024, found 3 of its 12 court cards in 2 or more of their 5 enrolment photos before
    and read 46 of 260 frames (a card the deck lacks declines every card of its rank and
    suit); 6 of 12, and 160 frames, after."""
    closed, found = _closed_outlines(mask)
    return [(quad, outline) for quad, outline in found if _ringed(closed, quad)]


def _ringed(paper: np.ndarray, quad: np.ndarray) -> bool:
    """Whether paper (nonzero in ``paper``) runs along each side of ``quad`` just inside
    it, over :data:`RING_SHARE` of the side: a card's margin round its picture. A quad
    whose side crosses a picture (part of a card the frame cuts, or the vignette darkens,
    closed short of its end) has picture there, not paper."""
    height, width = paper.shape
    centre = quad.mean(axis=0)
    along = np.linspace(0.1, 0.9, 24)[:, None]
    for start, end in zip(quad, np.roll(quad, -1, axis=0), strict=True):
        points = start + along * (end - start)
        inward = centre - points
        points = points + RING_INSET * inward / np.linalg.norm(inward, axis=1, keepdims=True)
        x = np.clip(np.round(points[:, 0]).astype(int), 0, width - 1)
        y = np.clip(np.round(points[:, 1]).astype(int), 0, height - 1)
        if float(np.mean(paper[y, x] > 0)) < RING_SHARE:
            return False
    return True


def _card_blobs(mask: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The coarse quads and outlines of a paper ``mask``'s card-shaped blobs, at the
    smallest opening (:func:`opened_blobs`) that shows any."""
    found: list[tuple[np.ndarray, np.ndarray]] = []
    for blobs in opened_blobs(mask, MIN_AREA, cv2.CHAIN_APPROX_NONE):
        for contour, blob in blobs:
            hull = cv2.convexHull(contour)
            hull_area = cv2.contourArea(hull)
            quads = []
            quad = four_corners(hull)
            if quad is not None and hull_area >= FILLED * quad_area(quad):
                quads.append(quad)
            # A hand over a corner cuts the hull there, and the four-corner fit follows
            # the cut; the smallest rectangle round the blob keeps the card's sides.
            box = cv2.boxPoints(cv2.minAreaRect(hull)).astype(np.float32)
            if hull_area >= BITTEN * quad_area(box) and not (quads and same_quad(quads[0], box)):
                quads.append(box)
            outline = contour.reshape(-1, 2).astype(np.float32)
            found += [(quad, outline) for quad in quads
                      if card_shaped(quad) and blob >= PAPER_FILLED * quad_area(quad)]
        if found:  # a larger disc would find the same card again, less exactly
            break
    return found


def paper_over_light(score: np.ndarray) -> np.ndarray | None:
    """Each pixel's paper ``score`` (:func:`paper_mask`) over the table's own light there (1:
    as bright as the table around it), or None when the table is dark (felt, wood: the
    paper stands out by itself). The table's light is a low quantile of the score
    (:data:`FLAT_LIGHT_RANK`) over a square of :data:`FLAT_WINDOW` round each place,
    smoothed: the table, even where the card covers most of the square. On a pale desk
    under a lamp to one side the paper is only a little brighter than the desk next to
    it, and the lit desk is brighter than the paper in the dim half: no level of the score
    or of the distance from the border's colour separates them, this ratio does."""
    height, width = score.shape
    # At an eighth of the work size: the table's light varies over the frame, not over
    # pixels.
    small = cv2.resize(score, (max(1, width // 8), max(1, height // 8)),
                       interpolation=cv2.INTER_AREA)
    if float(np.median(small)) < FLAT_LIT:
        return None  # most of the frame is table, and the table is dark
    side = max(3, int(FLAT_WINDOW * min(small.shape)) | 1)
    padded = np.pad(small.astype(np.float32), side // 2, mode="reflect")
    windows = sliding_window_view(padded, (side, side)).reshape(*small.shape, -1)
    rank = int(FLAT_LIGHT_RANK * (windows.shape[2] - 1))
    light = np.partition(windows, rank, axis=2)[:, :, rank]
    light = cv2.blur(light, (side // 2 | 1, side // 2 | 1))
    light = cv2.resize(light, (width, height), interpolation=cv2.INTER_LINEAR)
    # Where the table is dark after all (a dark cloth on part of the desk), no ratio.
    ratio: np.ndarray = np.where(light >= FLAT_LIT,
                                 score.astype(np.float32) / np.maximum(light, 1.0), 1.0)
    return ratio


def _flat_outlines(ratio: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Coarse quads and outlines of card-shaped blobs of paper brighter than the table
    where it lies (``ratio``, :func:`paper_over_light`), half way from the table (1) to
    the brightest paper; none when no paper stands out."""
    brightest = float(np.percentile(ratio, 99.5))
    if brightest < FLAT_MIN_RATIO:
        return []
    mask = ((ratio >= (1.0 + brightest) / 2) * 255).astype(np.uint8)
    # A court card's picture, darker than the desk, leaves a ring of paper that a corner
    # index or a pip may break: closed, the ring is one blob round the card.
    return _closed_outlines(mask)[1]


def _closed_outlines(mask: np.ndarray
                     ) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """A paper ``mask`` closed (:data:`FLAT_CLOSING`: a court card's ring of paper, which
    an index, a pip or the openings break, made one blob round its picture), and the coarse
    quads and outlines of its card-shaped blobs; where there are none (the ring broken where
    the picture reaches an edge), of its large pieces taken together."""
    closed = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, cv2.getStructuringElement(
        cv2.MORPH_ELLIPSE, (FLAT_CLOSING, FLAT_CLOSING)))
    found = _card_blobs(closed)
    if not found:
        pieces = _pieces_outline(closed)
        found = [] if pieces is None else [pieces]
    return closed, found


def _whole_on_pale_table(frame: np.ndarray, corners: np.ndarray,
                         on_frame: tuple[bool, ...] | None, light: np.ndarray,
                         scale: float) -> bool:
    """A whole card on a pale table (``light``, :func:`paper_over_light`) shows as one:
    every side measured on the frame, the table beyond each (not paper, not a hand:
    :func:`_bounded_by_table`), and no side a shadow's edge running on past the card's
    corners (:func:`_side_runs_on`). The colour beyond the sides (:func:`one_table`)
    cannot tell these on a colourless desk."""
    return (on_frame is not None and all(on_frame)
            and _bounded_by_table(light, corners * scale)
            and not _side_runs_on(frame, corners))


def _side_runs_on(frame: np.ndarray, corners: np.ndarray) -> bool:
    """A side's step from dark to light runs on past the card's corners, along the same
    line: the edge of a shadow or of a lamp's light across the card and the table, not
    the card's edge, which ends at its corners. Profiles across each side's line beyond
    both its ends (:data:`RUN_ON`), with the faint step of :data:`FLAT_STEP`."""
    height, width = frame.shape[:2]
    # (Each normal out of the card: the paper's side of a step is the card's.)
    for start, length, unit, normal in side_lines_out(corners, shortest=0.0) or []:
        end = start + unit * length
        bases = np.concatenate([start + np.outer(-RUN_ON, unit) * length,
                                end + np.outer(RUN_ON, unit) * length]).astype(np.float32)
        inside = ((bases >= EDGE_REACH) & (bases < [width - EDGE_REACH, height - EDGE_REACH])
                  ).all(axis=1)
        if inside.sum() < len(RUN_ON):
            continue  # too little of the line beyond the card lies in the frame to tell
        found, _ = edge_steps(frame, bases[inside], normal, FLAT_STEP)
        if len(found) >= RUN_ON_STEPS * inside.sum():
            return True
    return False


def _bounded_by_table(ratio: np.ndarray, quad: np.ndarray) -> bool:
    """Every side of ``quad`` (work pixels) has the table beyond it, not more paper: just
    outside each side, the paper's brightness over the table's light (``ratio``,
    :func:`paper_over_light`) stays nearer the table's (1) than the paper's just inside.
    On a colourless desk the colour beyond a side cannot tell (:func:`one_table`); a
    "side" found along a row of pips or the edge of a lamp's light across the card has
    paper on both sides. The upper quartile of each: the paper between pips counts, the
    ink and the card's shadow do not. And beyond each side, mostly the table: not a hand
    or an arm lying along it (skin has no paper score, and its hue is too near a pale
    desk's grey for :func:`one_table`), which leaves only part of the card in view."""
    height, width = ratio.shape
    along = np.linspace(0.2, 0.8, 9)[:, None]
    for start, length, unit, normal in side_lines_out(quad, shortest=0.0) or []:
        points = start + along * (unit * length)
        sampled = []
        for depths in (FLAT_BEYOND, -FLAT_BEYOND):  # outside, then inside
            at = np.round(np.concatenate([points + depth * normal for depth in depths])
                          ).astype(int)
            seen = ((at >= 0) & (at < [width, height])).all(axis=1)
            if not seen.any():
                return False
            sampled.append(ratio[at[seen, 1], at[seen, 0]])
        beyond, within = (float(np.percentile(one, 75)) for one in sampled)
        # (A side whose inside is no brighter than the table, a picture printed to the
        # card's edge, cannot tell.)
        if within >= FLAT_MIN_RATIO and beyond - 1.0 >= (within - 1.0) / 2:
            return False
        if float(np.median(sampled[0])) < FLAT_TABLE_FLOOR:
            return False  # along most of the side lies something else: an arm, a hand
    return True


def opened_blobs(mask: np.ndarray, min_area: float, approximation: int
                 ) -> Iterator[list[tuple[np.ndarray, float]]]:
    """The blobs of a paper ``mask`` (contours and areas, between ``min_area`` and
    :data:`PAPER_MAX_AREA` of the mask), once per disc of :data:`PAPER_OPENINGS` it is
    opened with, smallest first: a finger touching the card comes off at the first disc
    wider than it. A caller that found its card stops asking (a larger disc would find
    the same card again, less exactly)."""
    area = mask.shape[0] * mask.shape[1]
    for size in PAPER_OPENINGS:
        disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (size, size))
        opened = cv2.morphologyEx(mask, cv2.MORPH_OPEN, disc)
        contours, _ = cv2.findContours(opened, cv2.RETR_EXTERNAL, approximation)
        blobs = [(contour, cv2.contourArea(contour)) for contour in contours]
        yield [(contour, blob) for contour, blob in blobs
               if min_area * area <= blob <= PAPER_MAX_AREA * area]


def _leaves_frame(quad: np.ndarray, width: int, height: int) -> bool:
    """The card is partly out of view: a corner beyond the frame's edge by more than a
    card's rounded corner. Never read as a whole card; its sides, measured on the frame,
    still place an index corner in view (:class:`CardInPart`)."""
    sides = np.linalg.norm(quad - following(quad), axis=1)
    slack = OUT_OF_FRAME * float(sides.min())
    low = np.array([0.0, 0.0])
    high = np.array([width - 1.0, height - 1.0])
    return bool(((quad < low - slack) | (quad > high + slack)).any())


def _sides_along_frame_edge(quad: np.ndarray, width: int, height: int) -> list[int]:
    """The sides (side ``k`` from corner ``k`` to corner ``k + 1``) that lie along the
    frame's edge: the frame cut the card there, and the piece that shows may itself look
    like a whole card. Its length beyond that side is unknown: never read whole."""
    low = np.array([0.0, 0.0])
    high = np.array([width - 1.0, height - 1.0])
    # (corners, 4): at or beyond each of the frame's four edges (left, top, right, bottom)
    at_edge = np.concatenate([quad <= low + ON_FRAME_EDGE, quad >= high - ON_FRAME_EDGE],
                             axis=1)
    return [int(side) for side in np.nonzero((at_edge & following(at_edge)).any(
        axis=1))[0]]


def _edge_corners(outline: np.ndarray, quad: np.ndarray, tolerance: float) -> np.ndarray:
    """The card's true (sharp) corners: a line fitted to the straight middle of each edge,
    intersected with its neighbours.

    The four-corner fit lands somewhere on each rounded corner, and where depends on the
    frame: the rectified index then moves and shrinks from frame to frame. The edges are
    straight under perspective, so their intersections are the same card point every time.
    Falls back to ``quad`` when an edge is not clean (a hand over it, a cut-off card).
    """
    sides = side_lines(quad, shortest=8)
    if sides is None:
        return quad
    lines = []
    for start, length, unit, normal in sides:
        offset = outline - start
        position = offset @ unit / length
        near = ((position > 0.15) & (position < 0.85)
                & (np.abs(offset @ normal) < max(1.5, tolerance * length)))
        if near.sum() < 8:
            return quad
        vx, vy, x0, y0 = cv2.fitLine(outline[near], cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        lines.append((np.array([x0, y0]), np.array([vx, vy])))
    refined = intersections(lines)
    if refined is None:
        return quad
    shortest = min(length for _, length, _, _ in sides)
    if np.linalg.norm(refined - quad, axis=1).max() > REFINE_MOVE * shortest:
        return quad
    return refined


def detect(frame: np.ndarray, *, loose: bool = False, work: WorkFrame | None = None
           ) -> Detection | None:
    """Find and rectify the card; None when the frame shows no card (``loose`` and
    ``work``: see :func:`survey`)."""
    quad = find_card(frame, loose=loose, work=work)
    if quad is None:
        return None
    return Detection(quad, rectify(frame, quad))
