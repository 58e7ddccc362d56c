"""A card partly out of the frame, completed from what shows (issue 16).

An overhead camera sees a card as an affine image of a rectangle (it looks nearly straight
down): its sides come in two parallel pairs, and once the camera's pixel stretch is undone
the pairs are square to each other and their lengths are the deck's own proportions
(:class:`CardShape`, learnt from the whole cards of the enrolment photos, never assumed).
Where the frame's edge cuts a card, what shows fixes the rest:

- three of its corners show (one corner beyond the frame): the fourth is where the two
  sides running out of the frame meet;
- two corners of one side show (the frame cuts across the two sides that leave them): the
  other two lie along those sides at the length the card's shape gives the visible side.
  Whether that side is a short or a long one is what the frame shows: only one of the two
  lengths reaches (within :data:`ASPECT_TOLERANCE`) where the sides leave the frame; if
  both do (a long side in view, little of the short ones), the card is not completed.

Each visible side is measured on the frame the way a whole card's are
(:func:`vision.card_edges.edge_steps`), only where the profiles lie inside the frame, and must
show a clean step from table to paper along most of that length (a hand's edge does not).
A card a hand borders, or the frame cuts (a corner beyond it, or the frame's edge for one
side), found with its sides measured on the frame (:class:`vision.detect.CardInPart`), is
read the same way, at an index corner between two sides that border the table
(:func:`readable_in_part`). The completed card is read only at the index corners whose
index box lies wholly inside the frame: the corner reader (:mod:`vision.index_corner`) is
told which.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import cv2
import numpy as np

from vision.card_edges import EDGE_MIN_CLEAR, EDGE_REACH, EDGE_SAMPLES, edge_steps, fit_edge
from vision.corner import Box
from vision.detect import (
    ON_FRAME_EDGE,
    WORK_WIDTH,
    CardInPart,
    WorkFrame,
    opened_blobs,
    paper_mask,
    work_frame,
)
from vision.quad import CARD_CORNERS, CARD_SIZE, card_shaped, clockwise, following

INDEX_CORNERS = (0, 2)  # a card's index corners, in the rectified card's corner order
FRAME_MARGIN = 2.0  # frame pixels: a usable index box keeps this clear of the frame's edge
MARGIN_CLOSE = 7
"""Work pixels: breaks this wide in the paper's margin are closed. The white margin outside a
face picture or a pip is about 5 % of the card's width, 3 to 4 work pixels for a card a
quarter of the frame wide; a finger is twice as wide as this disc or more."""
PARTIAL_MIN_AREA = 0.015  # the visible part covers at least this fraction of the frame
TIGHT = 0.97
"""Least share of its polygon the visible part's hull fills: its sides are straight (a card's
rounded corners lose far less), and a polygon of too few sides, which cuts across a corner
in view, is not taken (a card turned 30 degrees, one corner beyond the frame: 0.92). Not
every such polygon fills less: see :func:`find_partial_card`."""
SOLID = 0.85  # share of its hull the paper blob fills (no hand bitten out of it)
MIN_PARTIAL_SIDE = 0.25
"""A side that runs out of the frame gives its direction only if at least this share of the
visible side (or sides) shows: a short stub's direction is too uncertain to extend."""
SIDE_SUPPORT = 0.6
"""Least share of a visible side's profiles that must show a clean step onto paper on its
fitted line (a whole card's four sides together need 0.3: here each side alone decides)."""
TOUCH = 6.0  # work pixels: a polygon's corner on the frame's edge from the blob's outline
AGREE_CORNERS = 0.05  # two completions of one blob agree within this share of the short side
AGREE = 0.9  # least overlap of the completed card and the paper blob, inside the frame
SQUARE = 0.16  # |cos| between neighbouring sides, the camera's stretch undone: ~9 degrees
ASPECT_TOLERANCE = 0.16
"""How far a card's proportions may be from the deck's shape (a share of it): the learnt
shape's own spread (perspective, the measured edges) is a few per cent in the middle of
the view, more at its edges, where the cards read only in part lie (a wide webcam's
perspective and lens: cardai's AH_s2_20 is 12.5 % longer, 5H_s2_35 7 degrees off square;
0.12 to 0.16 read 3 to 16 more of 771 on four draws, none wrong; 0.2 no more); a short
side taken for a long one is 40 % off."""
SHAPE_MIN_TURN = 0.1
"""A whole card tells the camera's stretch only if it lies turned from the frame's axes:
at least this |cos a_x b_x| / (|a| |b|) (a card turned by 6 degrees or more)."""
SHAPE_MIN_CARDS = 3
SHAPE_SPREAD = 0.06  # median relative deviation of the cards' aspects: one shape, not many
STRETCH_RANGE = (0.5, 2.0)
ASPECT_RANGE = (1.1, 2.0)
SIZE_MARGIN = 1.5
"""How much larger or smaller than the enrolment photos' whole cards a card read may be, its
short side (cardai, draw 2024: enrolled 171 to 277 pixels, the cards read 166 to 350;
ece395's camera shows its card 110 pixels across, in a frame 172 wide)."""
PART_SIZE_MARGIN = 1.15
"""How much smaller than the smallest of the enrolment photos' whole cards a card read in
part may be. A card completed at the deck's shape from a false corner, where its paper
fades into the dark beyond a lamp's reach, is a smaller card inside the real one (the
simulated camera's 8H_s1_15 of seed 7: 0.85 of the smallest, its index corner on the pips,
read as KH); cardai's cards read in part, on four draws, were 1.17 times the smallest or
more."""


@dataclass(frozen=True)
class CardShape:
    """A whole card as this camera shows it: ``stretch``, the camera's horizontal pixel
    scale over its vertical (1 for square pixels, 4/3 for a webcam showing 4:3 pixels as
    16:9), and ``aspect``, the card's long side over its short side once the stretch is
    undone (1.40 for a 63 x 88 mm poker card). ``sizes``: the least and greatest short side
    (frame pixels, unstretched) of the enrolment photos' whole cards, None for a deck
    enrolled before it was learnt."""

    stretch: float
    aspect: float
    sizes: tuple[float, float] | None = None

    def size(self, quad: np.ndarray) -> float:
        """A card's short side (``quad`` clockwise, the first side short), unstretched."""
        return float(np.linalg.norm(self.unstretched(_short_long(quad)[0])))

    def fits_size(self, quad: np.ndarray, smaller: float = SIZE_MARGIN) -> bool:
        """The card is about the size this camera showed the deck's cards at enrolment
        (within :data:`SIZE_MARGIN`, or ``smaller`` below the smallest): a card much
        larger or smaller is under another camera, or the camera has moved."""
        if self.sizes is None:
            return True
        size = self.size(quad)
        return self.sizes[0] / smaller <= size <= self.sizes[1] * SIZE_MARGIN

    def aspect_of(self, quad: np.ndarray) -> float:
        """A card's long side over its short side (``quad`` clockwise, the first side
        short), each the mean of two opposite sides, the camera's stretch undone."""
        short, long = _short_long(quad)
        return float(np.linalg.norm(self.unstretched(long))
                     / max(float(np.linalg.norm(self.unstretched(short))), 1e-9))

    def fits_aspect(self, quad: np.ndarray) -> bool:
        """The quad has the deck's proportions (within :data:`ASPECT_TOLERANCE`): not part
        of a card taken for all of it."""
        return abs(self.aspect_of(quad) - self.aspect) <= ASPECT_TOLERANCE * self.aspect

    def unstretched(self, vectors: np.ndarray) -> np.ndarray:
        """Frame-pixel vectors with the camera's stretch undone (square pixels)."""
        undone: np.ndarray = np.asarray(vectors, np.float64) / np.array([self.stretch, 1.0])
        return undone


@dataclass(frozen=True)
class PartialCard:
    """A card completed from its visible part: ``quad`` as :func:`vision.detect.find_card`
    gives it (frame pixels, clockwise, the first side short; some corners beyond the
    frame), and ``usable``, the index corners (0 top-left, 2 bottom-right of the rectified
    card) whose index lies wholly inside the frame. ``also``: for a card a hand borders
    along one side, the same card completed from the side opposite the hand
    (:func:`readable_in_part`), whose index must read as the same card."""

    quad: np.ndarray
    usable: tuple[int, ...]
    also: np.ndarray | None = None


def learn_shape(quads: Sequence[np.ndarray]) -> CardShape | None:
    """The camera's stretch, the deck's aspect and the cards' sizes from whole cards'
    quads (clockwise, the first side short, as :func:`vision.detect.find_card` gives
    them); None when too few of
    them lie turned (an upright card does not tell the stretch from the aspect) or they
    disagree (no one shape).

    A card's short side ``a`` and long side ``b`` are square once the stretch ``k`` is
    undone: ``a_x b_x / k^2 + a_y b_y = 0``, so each turned card gives ``k``; the median
    over the cards is kept, and the aspect is the median of ``|b| / |a|`` unstretched."""
    stretches: list[float] = []
    sides: list[tuple[np.ndarray, np.ndarray]] = []
    for quad in quads:
        short, long = _short_long(quad)
        scale = float(np.linalg.norm(short) * np.linalg.norm(long))
        if scale <= 0:
            continue
        sides.append((short, long))
        across, down = short[0] * long[0] / scale, short[1] * long[1] / scale
        if abs(across) >= SHAPE_MIN_TURN and -down / across > 0:
            stretches.append(float(np.sqrt(-across / down)) if down != 0 else np.inf)
    if len(stretches) < SHAPE_MIN_CARDS:
        return None
    stretch = float(np.median(stretches))
    if not STRETCH_RANGE[0] <= stretch <= STRETCH_RANGE[1]:
        return None
    undo = np.array([stretch, 1.0])
    aspects = np.array([np.linalg.norm(long / undo) / np.linalg.norm(short / undo)
                        for short, long in sides])
    aspect = float(np.median(aspects))
    spread = float(np.median(np.abs(aspects - aspect))) / aspect
    if not ASPECT_RANGE[0] <= aspect <= ASPECT_RANGE[1] or spread > SHAPE_SPREAD:
        return None
    sizes = [float(np.linalg.norm(short / undo)) for short, _ in sides]
    return CardShape(stretch, aspect, (min(sizes), max(sizes)))


def complete_side(first: np.ndarray, second: np.ndarray, toward_first: np.ndarray,
                  toward_second: np.ndarray, shape: CardShape, *, short: bool
                  ) -> np.ndarray:
    """The card's four corners from one whole side (its corners ``first`` and ``second``)
    and the directions of the sides leaving them (``toward_*``, into the hidden part):
    ``first, second`` then the two corners the card's shape puts along those directions
    (the visible side is the short one when ``short``)."""
    side = float(np.linalg.norm(shape.unstretched(second - first)))
    length = side * shape.aspect if short else side / shape.aspect
    corners = [first, second]
    for start, toward in ((second, toward_second), (first, toward_first)):
        unit = np.asarray(toward, np.float64) / float(np.linalg.norm(toward))
        corners.append(start + unit * length / float(np.linalg.norm(shape.unstretched(unit))))
    return np.array(corners, np.float32)


def usable_corners(quad: np.ndarray, width: int, height: int, index: Box
                   ) -> tuple[int, ...]:
    """The index corners of a card (``quad`` as :func:`vision.detect.find_card` gives it)
    whose ``index`` box (fractions of the rectified card, at its top-left corner; the
    bottom-right corner's is the same box turned half round) lies wholly inside a
    ``width`` x ``height`` frame, ``FRAME_MARGIN`` clear of its edge."""
    usable = []
    for corner in INDEX_CORNERS:
        points = index_in_frame(quad, corner, index)
        if (points.min(axis=0) >= FRAME_MARGIN).all() and (
                points.max(axis=0) <= [width - 1 - FRAME_MARGIN, height - 1 - FRAME_MARGIN]
                ).all():
            usable.append(corner)
    return tuple(usable)


def index_in_frame(quad: np.ndarray, corner: int, index: Box) -> np.ndarray:
    """The four corners (frame pixels) of the ``index`` box at one index ``corner`` (0 or 2)
    of a card (``quad`` as :func:`vision.detect.find_card` gives it)."""
    card_width, card_height = CARD_SIZE
    to_frame = cv2.getPerspectiveTransform(CARD_CORNERS, quad.astype(np.float32))
    x0, y0, x1, y1 = index
    box = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float32)
    turned = box if corner == 0 else 1.0 - box  # the bottom-right: turned half round
    points: np.ndarray = cv2.perspectiveTransform(
        (turned * [card_width - 1, card_height - 1])[None].astype(np.float32), to_frame)[0]
    return points


def find_partial_card(frame: np.ndarray, shape: CardShape, index: Box,
                      work: WorkFrame | None = None) -> PartialCard | None:
    """A card the frame's edge cuts, completed (see the module's doc), with the index
    corners that can be read; None when no such card can be completed with confidence (a
    blob of paper that is not a cut rectangle, a side without a clean edge, a completion
    the frame contradicts, no ``index`` box wholly in view: see :func:`usable_corners`).
    ``work``: the frame's :func:`vision.detect.work_frame`, if made already."""
    scale, blurred = work_frame(frame) if work is None else work
    mask = closed_paper(blurred)
    for blobs in opened_blobs(mask, PARTIAL_MIN_AREA, cv2.CHAIN_APPROX_SIMPLE):
        for contour, blob in blobs:
            # Each polygon that fits the blob tightly is completed: one of few sides may
            # cut across a corner in view near the frame's edge (a four-sided polygon
            # over three corners and the frame's cut), so they must all agree.
            completed = [found for polygon in _visible_polygons(contour, blob, mask.shape)
                         if (found := _complete(frame, polygon / scale, shape, index))
                         is not None and _covers(found.quad * scale, contour, mask.shape)]
            if completed and all(same_card(other.quad, completed[0].quad)
                                 for other in completed[1:]):
                return completed[0]
    return None


def closed_paper(blurred: np.ndarray) -> np.ndarray:
    """The paper of a frame scaled and smoothed by :func:`vision.detect.work_frame`: its
    :func:`vision.detect.paper_mask` over Otsu's level, closed. A picture or pips printed
    near the card's edge break its thin paper margin at the working scale: closed, the blob
    is the card's outline again (a hand's bite is wider)."""
    _, mask = cv2.threshold(paper_mask(blurred), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    closed: np.ndarray = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, cv2.getStructuringElement(
        cv2.MORPH_ELLIPSE, (MARGIN_CLOSE, MARGIN_CLOSE)))
    return closed


def readable_in_part(seen: CardInPart, shape: CardShape, index: Box, width: int, height: int
                     ) -> PartialCard | None:
    """A card a hand borders or the frame cuts at a corner (:func:`vision.detect.survey`),
    read only at an index corner both of whose sides border the table along the half next
    to it (``seen.corner_on_table``: a hand over the corner crosses one of them; one over
    the far end of a side leaves the index in view) and whose ``index`` box lies wholly
    in the ``width`` x ``height`` frame; and only when the card has the deck's shape, square
    and of its proportions (a hand's edge taken for one of its sides would make it shorter
    or askew). None when no corner is usable.

    A card one of whose sides is the frame's edge (``seen.frame_side``) is first completed
    from the side opposite it (:func:`from_two_corners`: only where the frame allows just one
    of the card's lengths), and read at the corners of that side."""
    if seen.frame_side is not None:
        return _from_frame_side(seen, shape, index, width, height)
    quad = seen.quad
    stub = [side for side, measured in enumerate(seen.measured) if not measured]
    if len(stub) == 1:
        # One side the frame cuts to a stub too short to measure: its line is the mask's,
        # and so are its corners. The opposite side, measured, and the deck's shape place
        # them (the sides leaving it are measured too).
        quad = _from_far_side(quad, stub[0], shape)
    short, long = _short_long(quad)
    if not (are_square(short, long, shape) and shape.fits_aspect(quad)):
        return None
    sides = seen.table_sides
    usable = tuple(corner for corner in usable_corners(quad, width, height, index)
                   if seen.corner_on_table(corner))
    if not usable:
        return None
    also = (None if sides.count(False) != 1 or stub == [sides.index(False)]
            else _from_far_side(quad, sides.index(False), shape))
    return PartialCard(quad, usable, also)


def _from_frame_side(seen: CardInPart, shape: CardShape, index: Box, width: int,
                     height: int) -> PartialCard | None:
    """A card the frame cuts across two of its sides, found with the frame's edge as its
    fourth side (:func:`readable_in_part`): the side opposite the frame's edge and the two
    sides leaving it are measured, and where the latter meet the frame's edge the card is
    known to reach at least."""
    assert seen.frame_side is not None
    quad = np.asarray(seen.quad, np.float64)
    far = (seen.frame_side + 2) % 4
    first, second = quad[far], quad[(far + 1) % 4]
    reached = quad[(far - 1) % 4], quad[(far + 2) % 4]  # on the frame's edge
    # Not checked square: a card the frame's edge cuts lies at the edge of the camera's
    # view, where its perspective is strongest (cardai: most such cards nearer the
    # camera at the frame's bottom, 2H_s2_12's sides 11 degrees off square). The corner
    # reader's own limits judge the index it finds (draws 2024, 7, 11 and 3: 3, 9, 5 and
    # 11 more read with no square test, none wrong).
    completed = from_two_corners(first, second, reached[0] - first, reached[1] - second,
                                 shape, reached, square=False)
    if completed is None:
        return None
    ordered = clockwise(completed)
    if not card_shaped(ordered):
        return None
    # The corners of the far side lie between measured sides; an index corner is read
    # there only where both border the table, at least near it.
    between = [point for point, table in ((first, seen.corner_on_table(far)),
                                          (second, seen.corner_on_table((far + 1) % 4)))
               if table]
    usable = tuple(corner for corner in usable_corners(ordered, width, height, index)
                   if any(np.linalg.norm(ordered[corner] - point) < 1.0 for point in between))
    return PartialCard(ordered, usable) if usable else None


def _from_far_side(quad: np.ndarray, hand_side: int, shape: CardShape) -> np.ndarray:
    """A card a hand borders along one side, completed from the side opposite the hand:
    both its corners lie between sides on the table, measured, while where the hand's
    side lies is a guess (the hand's edge, or a shadow's across the paper: the card then
    looks shorter than it is, within the shape's tolerance, and its index, read through
    that quad, is stretched into another rank's: simulated 6H, 9H and TH read as 8H, 8H
    and 6H). The sides leaving the far side give the directions, the deck's shape the
    length: right where the hand's side is not, a little off where the camera's
    perspective makes this card's proportions differ from the deck's (so a second
    opinion, not the reading: :meth:`vision.recognise.Recogniser._read_corner`)."""
    far = (hand_side + 2) % 4
    first, second = quad[far], quad[(far + 1) % 4]
    completed = complete_side(first, second, quad[(far - 1) % 4] - first,
                              quad[(far + 2) % 4] - second, shape, short=far % 2 == 0)
    return np.roll(completed, far, axis=0).astype(np.float32)


def _short_long(quad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A card's short and long side as vectors, each the mean of its two opposite sides
    (``quad`` clockwise, the first side short)."""
    quad = np.asarray(quad, np.float64).reshape(4, 2)
    return (quad[1] - quad[0] + quad[2] - quad[3]) / 2, (quad[3] - quad[0] + quad[2] - quad[1]) / 2


def _on_edge(points: np.ndarray, width: float, height: float, edge: float) -> np.ndarray:
    """Which ``points`` lie within ``edge`` of a ``width`` x ``height`` frame's edge."""
    return ((points[:, 0] <= edge) | (points[:, 0] >= width - 1 - edge)
            | (points[:, 1] <= edge) | (points[:, 1] >= height - 1 - edge))


def same_card(first: np.ndarray, second: np.ndarray) -> bool:
    """Two completions of one blob agree: each corner within ``AGREE_CORNERS`` of the
    card's short side of one of the other's corners."""
    sides = np.linalg.norm(first - following(first), axis=1)
    gaps = np.linalg.norm(first[:, None, :] - second[None, :, :], axis=2).min(axis=1)
    return bool(gaps.max() <= AGREE_CORNERS * float(sides.min()))


def _covers(quad: np.ndarray, contour: np.ndarray, size: tuple[int, ...]) -> bool:
    """The completed card (work pixels) and the paper blob agree inside the frame: their
    overlap is at least ``AGREE`` of either (paper beyond a completed side means the card
    is longer than completed, or the blob more than one card)."""
    card = np.zeros(size[:2], np.uint8)
    cv2.fillConvexPoly(card, np.round(quad).astype(np.int32), 1)
    blob = np.zeros(size[:2], np.uint8)
    cv2.drawContours(blob, [contour], -1, 1, -1)
    both = int(np.count_nonzero(card & blob))
    return both >= AGREE * max(int(card.sum()), int(blob.sum()))


def _visible_polygons(contour: np.ndarray, blob: float, size: tuple[int, ...]
                      ) -> list[np.ndarray]:
    """The straight-sided polygons (4 to 6 corners, work pixels) a paper blob fills;
    none when it is not one (a hand bitten out of it, a ragged blob). Their corners lie in
    the frame (``size``: rows, columns): a polygon of too few sides may cut across the
    piece the frame's edge took off a corner, with a corner of its own beyond the frame."""
    height, width = size[:2]
    hull = cv2.convexHull(contour)
    hull_area = cv2.contourArea(hull)
    if blob < SOLID * hull_area:
        return []
    outline = contour.reshape(-1, 2).astype(np.float64)
    border = outline[_on_edge(outline, width, height, ON_FRAME_EDGE)]  # where the frame cuts it
    polygons = []
    for sides in (4, 5, 6):
        if len(hull) < sides:
            break  # (a paper tip in a corner of the frame: OpenCV fits no more sides)
        polygon = cv2.approxPolyN(hull.astype(np.float32), sides, epsilon_percentage=-1.0,
                                  ensure_convex=True)
        polygon = polygon.reshape(-1, 2)
        in_frame = ((polygon >= -ON_FRAME_EDGE).all()
                    and (polygon <= [width - 1 + ON_FRAME_EDGE, height - 1 + ON_FRAME_EDGE]
                         ).all())
        if (len(polygon) == sides and in_frame
                and hull_area >= TIGHT * cv2.contourArea(polygon)
                and _touches(polygon.astype(np.float64), border, width, height)):
            polygons.append(polygon.astype(np.float64))
    return polygons


def _touches(polygon: np.ndarray, border: np.ndarray, width: int, height: int) -> bool:
    """Each of the polygon's corners on the frame's edge is where the blob meets it (within
    ``TOUCH`` work pixels of the blob's outline along the edge, ``border``): a polygon of too
    few sides fitted across a corner in view just inside the frame puts a corner on the
    edge where there is no paper."""
    on_frame = _on_edge(polygon, width, height, ON_FRAME_EDGE)
    if not on_frame.any():
        return True
    if len(border) == 0:
        return False
    gaps = np.linalg.norm(polygon[on_frame][:, None, :] - border[None, :, :], axis=2)
    return bool(gaps.min(axis=1).max() <= TOUCH)


def _complete(frame: np.ndarray, polygon: np.ndarray, shape: CardShape, index: Box
              ) -> PartialCard | None:
    """Complete the card from the visible polygon (frame pixels): one run of two or three
    corners inside the frame, the rest of the polygon along the frame's edge."""
    height, width = frame.shape[:2]
    on_frame = _on_edge(polygon, width, height, ON_FRAME_EDGE * width / WORK_WIDTH)
    count = len(polygon)
    if on_frame.all() or not on_frame.any():
        return None  # a whole card is find_card's; all along the edge is no card
    # Start the walk at the first corner in view after one on the frame's edge.
    start = next(i for i in range(count) if on_frame[i - 1] and not on_frame[i])
    order = [(start + i) % count for i in range(count)]
    inside = [i for i in order if not on_frame[i]]
    if len(inside) not in (2, 3) or order[:len(inside)] != inside:
        return None  # not one run of corners in view
    before, after = polygon[order[-1]], polygon[order[len(inside)]]  # on the frame's edge
    corners = polygon[inside]
    # The visible sides: out of the frame into the first corner, between the corners,
    # from the last corner out of the frame again.
    segments = [(before, corners[0])] + list(pairwise(corners)) + [
        (corners[-1], after)]
    whole = min(float(np.linalg.norm(b - a)) for a, b in segments[1:-1])
    if min(np.linalg.norm(segments[0][1] - segments[0][0]),
           np.linalg.norm(segments[-1][1] - segments[-1][0])) < MIN_PARTIAL_SIDE * whole:
        return None
    centre = polygon.mean(axis=0)
    lines = []
    for a, b in segments:
        line = measure_side(frame, a, b, centre)
        if line is None:
            return None
        lines.append(line)
    # Where neighbouring sides meet: the corners in view, measured.
    seen = []
    for (p, d), (q, e) in pairwise(lines):
        cross = d[0] * e[1] - d[1] * e[0]
        if abs(cross) < 0.2:  # nearly parallel: not a card's corner
            return None
        seen.append(p + d * ((q[0] - p[0]) * e[1] - (q[1] - p[1]) * e[0]) / cross)
    out_first = pointing(lines[0][1], before - seen[0])
    out_last = pointing(lines[-1][1], after - seen[-1])
    if len(seen) == 3:
        quad = _three_corners(seen, out_first, out_last, shape, width, height)
    else:
        quad = from_two_corners(seen[0], seen[1], out_first, out_last, shape, (before, after))
    if quad is None:
        return None
    quad = clockwise(quad)
    if not card_shaped(quad):
        return None
    usable = usable_corners(quad, width, height, index)
    return PartialCard(quad, usable) if usable else None


def pointing(direction: np.ndarray, toward: np.ndarray) -> np.ndarray:
    """``direction`` (unit) turned to point along ``toward``."""
    return direction if float(direction @ toward) >= 0 else -direction


def are_square(first: np.ndarray, second: np.ndarray, shape: CardShape) -> bool:
    """Two sides are a card's neighbouring sides: square once the stretch is undone."""
    a, b = shape.unstretched(first), shape.unstretched(second)
    return abs(float(a @ b)) <= SQUARE * float(np.linalg.norm(a) * np.linalg.norm(b))


def _three_corners(seen: list[np.ndarray], out_first: np.ndarray, out_last: np.ndarray,
                   shape: CardShape, width: int, height: int) -> np.ndarray | None:
    """Three corners in view: the fourth opposite the middle one (the sides are two
    parallel pairs), checked against the two sides that run out of the frame and the
    deck's shape."""
    first, middle, last = seen
    if not (are_square(middle - first, last - middle, shape)
            and are_square(out_first, middle - first, shape)
            and are_square(out_last, last - middle, shape)):
        return None
    sides = sorted([float(np.linalg.norm(shape.unstretched(middle - first))),
                    float(np.linalg.norm(shape.unstretched(last - middle)))])
    if abs(sides[1] / sides[0] - shape.aspect) > ASPECT_TOLERANCE * shape.aspect:
        return None
    hidden = first + last - middle
    if not _beyond(hidden, width, height):
        return None
    return np.array([first, middle, last, hidden], np.float32)


def from_two_corners(first: np.ndarray, second: np.ndarray, out_first: np.ndarray,
                 out_second: np.ndarray, shape: CardShape,
                 reached: tuple[np.ndarray, np.ndarray], square: bool = True
                 ) -> np.ndarray | None:
    """Two corners of one side in view: the card's length along the sides that leave
    them, short side or long side, whichever alone the frame allows (the card reaches the
    frame's edge where its sides leave the frame). A long side in view with little of the
    short sides showing fits both: not completed. ``square``: the sides leaving the
    corners must be square to the side between them."""
    side = second - first
    if square and not (are_square(out_first, side, shape) and are_square(out_second, side, shape)):
        return None
    fits = []
    for short in (True, False):
        quad = complete_side(first, second, out_first, out_second, shape, short=short)
        # quad[3] lies along the side leaving ``first``, quad[2] along the one leaving
        # ``second``: each must reach at least where that side meets the frame's edge
        # (which also puts the hidden corners beyond it), within the shape's tolerance.
        lengths = [float(np.linalg.norm(quad[3] - first)),
                   float(np.linalg.norm(quad[2] - second))]
        shown = [float(np.linalg.norm(reached[0] - first)),
                 float(np.linalg.norm(reached[1] - second))]
        if all(length >= (1 - ASPECT_TOLERANCE) * seen
               for length, seen in zip(lengths, shown, strict=True)):
            fits.append(quad)
    if len(fits) == 2 and shape.sizes is not None:
        # Both lengths reach the frame's edge: the card is then the one as large as the
        # deck's cards were at enrolment, if only one is (cardai draw 2024: of 16 such
        # cuts, 11 had one completion 26-72 % larger than any enrolled card).
        low, high = shape.sizes
        fits = [quad for quad in fits if low <= shape.size(clockwise(quad)) <= high]
    return fits[0] if len(fits) == 1 else None


def _beyond(point: np.ndarray, width: int, height: int) -> bool:
    """A hidden corner lies beyond the frame's edge by ``EDGE_REACH`` pixels or more: one
    just at the edge is too near to tell where the card's sides meet."""
    margin = EDGE_REACH
    return bool(point[0] < -margin or point[0] > width - 1 + margin
                or point[1] < -margin or point[1] > height - 1 + margin)


def measure_side(frame: np.ndarray, start: np.ndarray, end: np.ndarray,
                  centre: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The line of one visible side (a point, its unit direction) measured on the frame
    between ``start`` and ``end`` (frame pixels), only where its profiles lie inside the
    frame; None unless most of them show a clean step onto paper on that line."""
    height, width = frame.shape[:2]
    along = end - start
    length = float(np.linalg.norm(along))
    if length < 16:
        return None
    unit = along / length
    normal = np.array([-unit[1], unit[0]])
    if float((start + along / 2 - centre) @ normal) < 0:
        normal = -normal  # out of the card, onto the table
    bases = start + np.linspace(0.15, 0.85, EDGE_SAMPLES)[:, None] * along
    reach = EDGE_REACH + 1
    ends = np.concatenate([bases + reach * normal, bases - reach * normal])
    ends = ends.reshape(2, -1, 2)
    inside = ((ends >= 0).all(axis=2) & (ends[..., 0] <= width - 1)
              & (ends[..., 1] <= height - 1)).all(axis=0)
    bases = bases[inside]
    if len(bases) < EDGE_MIN_CLEAR:
        return None
    found, stays = edge_steps(frame, bases.astype(np.float32), normal.astype(np.float32))
    if len(found) < EDGE_MIN_CLEAR:
        return None
    point, direction, inliers = fit_edge(found, stays)
    if inliers < SIDE_SUPPORT * len(bases):
        return None
    return point.astype(np.float64), direction.astype(np.float64)
