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
pixel, where the paper begins (see :func:`edges_on_frame`). The index glyphs then sit at
the same place on every rectified card.

:func:`survey` also returns, when no card is found, the best card-shaped candidate that may
not be read whole (:class:`CardInPart`: a hand borders it, or one of its corners lies beyond
the frame's edge), which :mod:`vision.partial` may read at an index corner wholly in view
and away from the hand.

The rectified card is portrait, ``CARD_SIZE`` pixels, its top edge one of the two short
edges: which one depends on how the card lies, so enrolment stores both orientations.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

CARD_SIZE = (200, 290)  # width, height of the rectified card
WORK_WIDTH = 320  # detection runs on a frame scaled to this width (speed)
MIN_AREA = 0.03  # a card covers at least this fraction of the frame
MAX_AREA = 0.9
FILLED = 0.85  # share of its four-corner outline a card's blob fills
BITTEN = 0.7  # ...and of its bounding rectangle, when a dark picture bites into it
CORNER_ANGLES = (60.0, 120.0)  # degrees: a card's corners, under the camera's perspective
OPPOSITE_SIDES = 1.6  # longest over shortest of two opposite sides
ELONGATION = 2.2
"""Long sides over short sides, at most: a card is 1.4 to 1.6, and a webcam that stretches
its picture (cardai's: 4:3 pixels shown 16:9) makes it up to 2.1 or as little as 1.05."""
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
    colour and under uneven light, wrong on a white table). Each card-shaped blob of either
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
            if found is None or any(_same_quad(found[0], quad) for quad in measured):
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
            if not card_shaped(corners) and not cut and not _same_quad(refined, quad):
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
        like, out_of_frame = _like_table(outside, table, paper_colour(frame, corners))
        sides, near = _sides_from(like, out_of_frame), _near_corners_from(like, out_of_frame)
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
    there, the side lies on the edge. When no measure borders one table (still only part of
    a card: a hand along a side), the first measure is returned as it was, and False.
    ``rule``: the first measure's (:func:`edges_on_frame`)."""
    again = corners
    for _ in range(REMEASURES):
        again, support_again, beyond_again, on_frame_again = edges_on_frame(
            frame, again, rule)
        if on_frame_again is None or not card_shaped(again):
            break
        if one_table(beyond_again):
            return again, support_again, beyond_again, on_frame_again, True
    return corners, support, beyond, on_frame, False


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
    quad = _four_corners(hull)
    # A card is a filled rectangle: its blob fills most of its four-corner outline.
    if quad is None or not card_shaped(quad) or hull_area < FILLED * _area(quad):
        # A dark picture printed to the card's edge, on a dark table, bites a piece out of
        # the blob and the four-corner fit follows the bite. The card's visible edges still
        # bound it: the smallest rectangle round the blob is close, and the edges are then
        # measured where they show.
        quad = cv2.boxPoints(cv2.minAreaRect(hull)).astype(np.float32)
        if hull_area < BITTEN * _area(quad):
            return None
    return quad, np.concatenate(pieces).reshape(-1, 2).astype(np.float32)


def paper_mask(blurred: np.ndarray) -> np.ndarray:
    """How much a pixel looks like the card's paper: bright in its *darkest* channel and
    colourless, ``min - 2 x (max - min)`` of B, G, R (uint8). Felt of any colour is dark in at
    least one channel, skin and wood in blue, and a vignette or a lamp off to one side
    scales the paper and the table alike, so the paper stays above the table it lies on."""
    blue, green, red = cv2.split(blurred)  # (OpenCV: numpy's min over 3 channels is slow)
    low = cv2.min(cv2.min(blue, green), red)
    high = cv2.max(cv2.max(blue, green), red)
    score: np.ndarray = cv2.addWeighted(low, 3.0, high, -2.0, 0.0)  # saturated to 0..255
    return score


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
    return []


def _card_blobs(mask: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The coarse quads and outlines of a paper ``mask``'s card-shaped blobs, at the
    smallest opening (:func:`opened_blobs`) that shows any."""
    found: list[tuple[np.ndarray, np.ndarray]] = []
    for blobs in opened_blobs(mask, MIN_AREA, cv2.CHAIN_APPROX_NONE):
        for contour, blob in blobs:
            hull = cv2.convexHull(contour)
            hull_area = cv2.contourArea(hull)
            quads = []
            quad = _four_corners(hull)
            if quad is not None and hull_area >= FILLED * _area(quad):
                quads.append(quad)
            # A hand over a corner cuts the hull there, and the four-corner fit follows
            # the cut; the smallest rectangle round the blob keeps the card's sides.
            box = cv2.boxPoints(cv2.minAreaRect(hull)).astype(np.float32)
            if hull_area >= BITTEN * _area(box) and not (quads and _same_quad(quads[0], box)):
                quads.append(box)
            outline = contour.reshape(-1, 2).astype(np.float32)
            found += [(quad, outline) for quad in quads
                      if card_shaped(quad) and blob >= PAPER_FILLED * _area(quad)]
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
    closed = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, cv2.getStructuringElement(
        cv2.MORPH_ELLIPSE, (FLAT_CLOSING, FLAT_CLOSING)))
    found = _card_blobs(closed)
    if not found:  # the ring broken where the picture reaches the index: its pieces
        pieces = _pieces_outline(closed)
        found = [] if pieces is None else [pieces]
    return found


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
    for start, length, unit, normal in _sides_out(corners, shortest=0.0) or []:
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
    for start, length, unit, normal in _sides_out(quad, shortest=0.0) or []:
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


def _same_quad(first: np.ndarray, second: np.ndarray) -> bool:
    """The same four corners, in any order, within a work pixel or two: measure once."""
    gaps = np.linalg.norm(first[:, None, :] - second[None, :, :], axis=2).min(axis=1)
    return bool(gaps.max() <= 2.0)


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


def following(points: np.ndarray) -> np.ndarray:
    """Each row's next, the last's the first (``np.roll(points, -1, axis=0)``, without its
    overhead: a frame's search measures many quads of four corners)."""
    return np.concatenate((points[1:], points[:1]))


def preceding(points: np.ndarray) -> np.ndarray:
    """Each row's previous, the first's the last (``np.roll(points, 1, axis=0)``)."""
    return np.concatenate((points[-1:], points[:-1]))


def _area(quad: np.ndarray) -> float:
    return float(cv2.contourArea(quad.reshape(-1, 1, 2).astype(np.float32)))


def card_shaped(quad: np.ndarray) -> bool:
    """Convex, each corner near a right angle and opposite sides of similar length, as a
    card seen from a camera above the table is (75 to 106 degrees and sides within 1.25
    of each other on every simulated frame): not a blob bitten by a dark picture. And no
    longer than ``ELONGATION`` times its width: not a strip of pips or of a hand."""
    after = following(quad) - quad
    before = preceding(quad) - quad
    lengths = np.linalg.norm(after, axis=1)
    if lengths.min() < 1e-3:
        return False
    cosines = np.sum(after * before, axis=1) / (lengths * preceding(lengths))
    angles = np.degrees(np.arccos(np.clip(cosines, -1.0, 1.0)))
    then = following(after)
    turns = after[:, 0] * then[:, 1] - after[:, 1] * then[:, 0]
    long_over_short = max(lengths[0] + lengths[2], lengths[1] + lengths[3]) / min(
        lengths[0] + lengths[2], lengths[1] + lengths[3])
    return bool(np.all(np.sign(turns) == np.sign(turns[0]))
                and long_over_short <= ELONGATION
                and CORNER_ANGLES[0] <= angles.min() and angles.max() <= CORNER_ANGLES[1]
                and max(lengths[0], lengths[2]) <= OPPOSITE_SIDES * min(lengths[0], lengths[2])
                and max(lengths[1], lengths[3]) <= OPPOSITE_SIDES * min(lengths[1], lengths[3]))


def _edge_corners(outline: np.ndarray, quad: np.ndarray, tolerance: float) -> np.ndarray:
    """The card's true (sharp) corners: a line fitted to the straight middle of each edge,
    intersected with its neighbours.

    The four-corner fit lands somewhere on each rounded corner, and where depends on the
    frame: the rectified index then moves and shrinks from frame to frame. The edges are
    straight under perspective, so their intersections are the same card point every time.
    Falls back to ``quad`` when an edge is not clean (a hand over it, a cut-off card).
    """
    sides = _sides(quad, shortest=8)
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
ONE_TABLE = 0.12  # most a channel's share of the colour beyond two edges may differ by
HUED = 90  # B + G + R: a colour darker than this has no reliable hue (8-bit, JPEG)
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
"""A card found against the table's own light (:func:`_flat_outlines`): on a pale desk in
half light the paper is only 10 to 25 grey levels above it. A webcam's noise is 2 to 4
levels; a noisy profile can rise this far, but its steps do not lie on one line; a lamp's
fall-off over the desk can, but not within a few pixels."""
MIN_IN_FRAME = 0.25  # least share of a side inside the frame that is measured there alone
HIDDEN_MOVE = 0.2  # most a corner beyond the frame moves from the coarse one: of the short side


def edges_on_frame(frame: np.ndarray, quad: np.ndarray, rule: StepRule = CLEAR_STEP
                   ) -> tuple[np.ndarray, float, np.ndarray, tuple[bool, ...] | None]:
    """Sub-pixel edges on the full-resolution frame.

    The coarse corners come from a mask at ``WORK_WIDTH``: a pixel there is two or more frame
    pixels, and an index glyph or a dark border stroke near the card's edge bends the mask.
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
    ``(4, EDGE_SAMPLES, 3)`` (see :func:`one_table`); and which sides were measured
    (the others kept their coarse lines), None when the coarse corners are returned.

    ``rule``: what a clear step is (:class:`StepRule`; :data:`FLAT_STEP` for a card found
    against the table's own light).
    """
    positions = np.linspace(0.15, 0.85, EDGE_SAMPLES, dtype=np.float32)
    sides = _sides_out(quad, shortest=16)
    if sides is None:
        return quad, 0.0, np.zeros((4, EDGE_SAMPLES, 3)), None
    lines = []
    on_line = 0
    measured = []
    beyond = []
    height, width = frame.shape[:2]
    for start, length, unit, normal in sides:  # (each normal out of the card)
        # Profiles along the part of the side inside the frame (all of it for a card in
        # view): a side that runs out of the frame is measured where it shows.
        first, last = _in_frame_span(start, start + unit * length, width, height)
        span = positions if last - first < MIN_IN_FRAME else first + positions * (last - first)
        bases = start[None, :] + span[:, None] * (unit * length)[None, :]
        found, stays = edge_steps(frame, bases, normal, rule)
        if len(found) < EDGE_MIN_CLEAR:
            # Too little of this edge shows (a dark picture printed to it, a hand over
            # it): keep its coarse line; the other edges are still measured.
            measured.append(False)
            lines.append((start, unit))
            beyond.append(beyond_side(frame, bases, start, unit, normal))
            continue
        point, direction, inliers = fit_edge(found, stays)
        measured.append(True)
        on_line += inliers
        lines.append((point, direction))
        beyond.append(beyond_side(frame, bases, point, direction, normal))
    support = on_line / (4 * EDGE_SAMPLES)
    corners = intersections(lines)
    if corners is None:
        return quad, support, np.array(beyond), None
    # A corner in view moves little from the coarse one; one beyond the frame is where
    # two sides measured only in part meet, and the coarse one there is a guess.
    moved = np.linalg.norm(corners - quad, axis=1)
    inside = ((corners >= 0) & (corners <= [width - 1, height - 1])).all(axis=1)
    shortest = min(length for _, length, _, _ in sides)
    if (moved[inside] > 2 * EDGE_REACH).any() or (moved > HIDDEN_MOVE * shortest).any():
        return quad, support, np.array(beyond), None
    return corners, support, np.array(beyond), tuple(measured)


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
    offsets = np.arange(EDGE_REACH, -EDGE_REACH - EDGE_STEP / 2, -EDGE_STEP, dtype=np.float32)
    middle, steps = len(offsets) // 2, np.arange(len(offsets))
    points = bases[:, None, :] + offsets[None, :, None] * normal[None, None, :]
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
    found = bases[rows] + where[:, None] * normal[None, :]
    # Support is a step onto paper that stays paper: past the edge, the profile stays
    # above the level (noise or a textured table crosses it back and forth).
    past = steps[None, :] >= step[:, None]
    stays = ((brightness[rows] >= level[rows, None]) & past).sum(axis=1) >= (
        EDGE_STEADY * past.sum(axis=1))
    return found, stays


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
    direction = direction / max(float(np.linalg.norm(direction)), 1e-9)
    along = (bases - point) @ direction
    points = (point[None, :] + along[:, None] * direction[None, :]
              + BEYOND * normal[None, :]).astype(np.float32)
    colours = cv2.remap(frame, points[None, :, 0], points[None, :, 1], cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_REPLICATE)
    table: np.ndarray = colours[0].astype(np.float64)
    height, width = frame.shape[:2]
    outside = ((points < 0) | (points > [width - 1, height - 1])).any(axis=1)
    table[outside] = np.nan
    return table


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


def _table_sides(beyond: np.ndarray, table: np.ndarray, paper: np.ndarray
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
    return _sides_from(*_like_table(beyond, table, paper))


def _sides_from(like: np.ndarray, outside: np.ndarray) -> tuple[bool, ...]:
    """:func:`_table_sides` from the profiles' verdicts (:func:`_like_table`)."""
    return tuple(bool(count <= 1) for count in (~(like | outside)).sum(axis=1))


def _table_near_corners(beyond: np.ndarray, table: np.ndarray, paper: np.ndarray
                        ) -> tuple[bool, ...]:
    """Which corners (corner ``k`` between sides ``k - 1`` and ``k``) have the table beyond
    both their sides along the half of each next to them (:func:`_table_sides`' test,
    one stray profile let through in each half, and enough of each half in the frame): a
    hand over the far end of a side leaves the corner at its near end bordered by table,
    and its index as readable as a whole card's; a hand over the corner does not."""
    return _near_corners_from(*_like_table(beyond, table, paper))


def _near_corners_from(like: np.ndarray, outside: np.ndarray) -> tuple[bool, ...]:
    """:func:`_table_near_corners` from the profiles' verdicts (:func:`_like_table`)."""
    half = like.shape[1] // 2
    # (side, near its start / near its end): in view, and at most one stray profile
    clear = np.array([[(~outside[side, part]).sum() >= half // 2
                       and (~(like | outside)[side, part]).sum() <= 1
                       for part in (slice(0, half), slice(half, None))] for side in range(4)])
    return tuple(bool(clear[corner - 1, 1] and clear[corner, 0]) for corner in range(4))


def _like_table(beyond: np.ndarray, table: np.ndarray, paper: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """Per profile beyond the sides (``(4, samples)``): whether its colour passes for the
    table's (see :func:`_table_sides`), and whether it lies outside the frame."""
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


def _sides_out(quad: np.ndarray, shortest: float
               ) -> list[tuple[np.ndarray, float, np.ndarray, np.ndarray]] | None:
    """:func:`_sides`, each normal pointing out of the quad (onto the table)."""
    sides = _sides(quad, shortest)
    if sides is None:
        return None
    centre = quad.mean(axis=0)
    return [(start, length, unit,
             -normal if float((start + unit * length / 2 - centre) @ normal) < 0 else normal)
            for start, length, unit, normal in sides]


def _sides(quad: np.ndarray, shortest: float
           ) -> list[tuple[np.ndarray, float, np.ndarray, np.ndarray]] | None:
    """Each side of the quad as (start, length, unit direction, unit normal); None if a side
    is shorter than ``shortest`` pixels (no card there to measure)."""
    sides = []
    for start, end in zip(quad, following(quad)):
        along = end - start
        length = float(np.linalg.norm(along))
        if length < shortest:
            return None
        unit = along / length
        sides.append((start, length, unit, np.array([-unit[1], unit[0]], np.float32)))
    return sides


def intersections(lines: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray | None:
    """Corner ``i`` where the line of edge ``i - 1`` meets that of edge ``i``."""
    corners = []
    for index in range(4):
        (p, d), (q, e) = lines[index - 1], lines[index]
        cross = d[0] * e[1] - d[1] * e[0]
        if abs(cross) < 0.2:  # neighbouring edges nearly parallel: not a card's corner
            return None
        t = ((q[0] - p[0]) * e[1] - (q[1] - p[1]) * e[0]) / cross
        corners.append(p + t * d)
    return np.array(corners, np.float32)


def _four_corners(hull: np.ndarray) -> np.ndarray | None:
    """The four-sided polygon around the hull that adds the least area (cv2.approxPolyN):
    its sides lie along the card's straight edges, so a corner cut off in the mask (an index
    glyph against a dark border) does not pull the quad inwards."""
    quad = cv2.approxPolyN(hull.astype(np.float32), 4, epsilon_percentage=-1.0,
                           ensure_convex=True)
    if quad is None or len(quad.reshape(-1, 2)) != 4:
        return None
    return quad.reshape(4, 2).astype(np.float32)


def clockwise(quad: np.ndarray) -> np.ndarray:
    """Corners clockwise (image coordinates), starting so that the first edge is short."""
    centre = quad.mean(axis=0)
    angles = np.arctan2(quad[:, 1] - centre[1], quad[:, 0] - centre[0])
    quad = quad[np.argsort(angles)]  # clockwise on screen (y points down)
    edges = np.linalg.norm(quad - following(quad), axis=1)
    if edges[0] + edges[2] > edges[1] + edges[3]:
        quad = following(quad)  # first edge was a long one: start one corner later
    return quad.astype(np.float32)


CARD_CORNERS = np.array([[0, 0], [CARD_SIZE[0] - 1, 0], [CARD_SIZE[0] - 1, CARD_SIZE[1] - 1],
                         [0, CARD_SIZE[1] - 1]], np.float32)
"""The rectified card's corners (pixels), in the order of a quad's."""


def rectify(frame: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """The card seen square-on, ``CARD_SIZE`` pixels, portrait."""
    matrix = cv2.getPerspectiveTransform(quad.astype(np.float32), CARD_CORNERS)
    return cv2.warpPerspective(frame, matrix, CARD_SIZE, flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE)


def in_view(frame: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """Where the card :func:`rectify` makes of ``quad`` lies inside ``frame``: a mask of
    the rectified card, 255 in view, 0 beyond the frame's edge."""
    matrix = cv2.getPerspectiveTransform(quad.astype(np.float32), CARD_CORNERS)
    inside = np.full(frame.shape[:2], 255, np.uint8)
    return cv2.warpPerspective(inside, matrix, CARD_SIZE, flags=cv2.INTER_NEAREST,
                               borderMode=cv2.BORDER_CONSTANT, borderValue=0)


def detect(frame: np.ndarray, *, loose: bool = False, work: WorkFrame | None = None
           ) -> Detection | None:
    """Find and rectify the card; None when the frame shows no card (``loose`` and
    ``work``: see :func:`survey`)."""
    quad = find_card(frame, loose=loose, work=work)
    if quad is None:
        return None
    return Detection(quad, rectify(frame, quad))
