"""Reading a card by one index corner alone: a card partly out of the frame (issue 16).

A whole card is read by its deck's layout, which takes in the whole card
(:mod:`vision.model`). A card the frame cuts shows only part of itself: it is read by an
index corner that lies wholly inside the frame (:mod:`vision.partial` says which), against
the enrolment photos' own index corners (both of each: the top-left, and the bottom-right
turned half round, the same index). The index is the deck's rank and suit boxes when it has
them (:attr:`vision.model.DeckModel.split`), else the top-left box of its layout.

Each enrolment corner is kept with jittered copies of itself (:func:`jittered_corners`): a
card completed from part of it is rectified a little off. For the same reason every corner,
enrolled or read, is first moved so that its index's rank glyph sits where the deck's
enrolment photos have it (:func:`anchored_index`, at the reader's learnt ``anchor``). The
corners and copies are kept projected onto their principal directions
(:data:`CORNER_COMPONENTS`). Its limits come from the enrolment photos alone, as a whole
card's do: each corner read against the other photos' corners and their copies (never its
own photo's), the nearest distance's 99th percentile x 1.5 is how far a corner may be and
still be this deck, and the threshold lies above the confidence of every wrong held-out read
(:func:`vision.calibration.held_out_limits`), of those reads shifted (:data:`ALIGN_SHIFTS`), and
of enough held-out reads of the copies (:func:`_copies_thresholds`), never under
:data:`MIN_CORNER_THRESHOLD`. That is the deck's threshold, its strictest card's: a card
that took part in no wrong held-out read (neither read as another, nor another read as it)
needs less (:func:`card_thresholds`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING

import cv2
import numpy as np

from vision.calibration import (
    THRESHOLD_FACTOR,
    THRESHOLD_SLACK,
    calibrated_threshold,
    held_out_limits,
)
from vision.corner import (
    LAYOUTS,
    WHOLE,
    Box,
    Split,
    box_features,
    glyph_features,
    unit,
    white_balanced,
)
from vision.ink import red_ink_shows
from vision.model import card_of
from vision.partial import CardShape, learn_shape
from vision.roi import first_glyph, glyph_boxes, suit_under

if TYPE_CHECKING:
    from vision.index_glyphs import GlyphReader

TOP_LEFT: Box = LAYOUTS["top-left"][0]


def index_box(split: Split | None, layout: str) -> Box:
    """The box (fractions of the rectified card, top-left) an index is read in: the rank
    and suit boxes together, else the layout's first box (the top-left one when the
    layout has only the whole card)."""
    if split is not None:
        (a0, b0, a1, b1), (c0, d0, c1, d1) = split
        return min(a0, c0), min(b0, d0), max(a1, c1), max(b1, d1)
    first = LAYOUTS[layout][0]
    return TOP_LEFT if first == WHOLE else first


Anchor = tuple[float, float]
"""Where an index's rank glyph has its top-left corner, as shares of the card's width and
height."""


def corner_vector(card: np.ndarray, split: Split | None, box: Box,
                  anchor: Anchor | None = None) -> np.ndarray:
    """The unit feature vector of a rectified card's top-left index: its rank and suit
    glyphs (``split``), else the ``box`` as a layout reads it; with ``anchor``, read once
    its rank glyph is moved there (:func:`anchored_index`)."""
    return _corner_vector_and_glyph(card, split, box, anchor)[0]


def _corner_vector_and_glyph(card: np.ndarray, split: Split | None, box: Box,
                             anchor: Anchor | None) -> tuple[np.ndarray, bool]:
    """:func:`corner_vector`, and whether a rank glyph was found near the corner (always
    True without an ``anchor``: nothing was looked for)."""
    card = white_balanced(card)
    found = True
    if anchor is not None:
        card, found = _anchored(card, box, anchor)
    if split is None:
        return unit(box_features(card, box)), found
    rank_box, suit_box = split
    return unit(np.concatenate([glyph_features(card, rank_box, colour=False),
                                glyph_features(card, suit_box, colour=True),
                                box_features(card, box)])), found


GLYPH_SEARCH = (1.6, 1.4)
"""The index's rank glyph is looked for this many times the index box's width and height
from the card's corner: a card completed from part of it may place its index a few per cent
off, and the glyph must still lie in the search."""
MAX_ANCHOR_SHIFT = 0.08
"""The most a corner is moved to its anchor, as a share of the card's width and height: a
glyph found further off is something else (a pip, a finger's shadow), and the corner is read
as it lies. (cardai, draw 2024: 0.12 let one wrong read through.)"""
MIN_ANCHORED = 0.5
"""The least share of enrolment corners whose rank glyph must be found for the deck to
learn an anchor; a deck whose index the search does not find reads its corners as they
lie."""


def rank_glyph(card: np.ndarray, box: Box) -> Anchor | None:
    """The top-left corner of the rank glyph of a rectified, white-balanced card's top-left
    index (shares of its width and height), or None when no glyph is found: the first glyph
    (:func:`vision.roi.first_glyph`, a rank with its suit under it) among the glyph-like ink
    near the corner (:data:`GLYPH_SEARCH`)."""
    boxes = corner_glyphs(card, box)
    if not boxes:
        return None
    x, y, _, _ = first_glyph(boxes)
    height, width = card.shape[:2]
    return x / width, y / height


def corner_glyphs(card: np.ndarray, box: Box) -> list[tuple[int, int, int, int]]:
    """The glyph-like ink (:func:`vision.roi.glyph_boxes`) of a white-balanced rectified
    card near its top-left corner, as far as :data:`GLYPH_SEARCH` reaches."""
    right, bottom = _search_reach(card, box)
    return glyph_boxes(card[:bottom, :right])


def _search_reach(card: np.ndarray, box: Box) -> tuple[int, int]:
    """How far (pixels right and down of a rectified card's top-left corner) the search for
    its index's glyphs looks: :data:`GLYPH_SEARCH` times the index ``box``, which it takes
    in whole."""
    height, width = card.shape[:2]
    return (max(int(min(1.0, box[2] * GLYPH_SEARCH[0]) * width), 8),
            max(int(min(1.0, box[3] * GLYPH_SEARCH[1]) * height), 8))


def anchored_index(card: np.ndarray, box: Box, anchor: Anchor) -> np.ndarray:
    """The white-balanced rectified ``card`` moved so that its index's rank glyph
    (:func:`rank_glyph`) sits at ``anchor``; as it lies when none is found or the move
    would be more than :data:`MAX_ANCHOR_SHIFT`. A card whose corners were placed a little
    off (completed from part of it, or found with a hand along a side) then has its glyphs
    in the boxes they are read in, as a card found whole does. (cardai, 5 photos per card,
    under the corner floor of the time, 0.2: draws 2024 and 7 read 658 and 655 of 771
    photos, against 634 and 636 before, none wrong; see :data:`MIN_CORNER_THRESHOLD`.)

    Only the index corner is moved, as far as the glyph search reaches (which takes in the
    ``box`` the index is read in); the rest of the card, never read as an index, is left
    as it lies. A read does this for every corner it reads (up to 8 placements of an index
    found alone), and the corner is a tenth of the card (0.02 ms of one core against 0.2)."""
    return _anchored(card, box, anchor)[0]


def _anchored(card: np.ndarray, box: Box, anchor: Anchor) -> tuple[np.ndarray, bool]:
    """:func:`anchored_index`, and whether a rank glyph was found at all."""
    found = rank_glyph(card, box)
    if found is None:
        return card, False
    dx, dy = anchor[0] - found[0], anchor[1] - found[1]
    if max(abs(dx), abs(dy)) > MAX_ANCHOR_SHIFT:
        return card, True
    right, bottom = _search_reach(card, box)
    moved = card.copy()
    moved[:bottom, :right] = shifted(card, (dx, dy), (right, bottom))
    return moved, True


def learn_anchor(views: Sequence[np.ndarray], box: Box) -> Anchor | None:
    """Where the deck's rank glyph sits, from rectified enrolment corners (each turned to the
    top-left): the median of the glyphs found, None if they are found in fewer than
    :data:`MIN_ANCHORED` of them."""
    found = [glyph for glyph in (rank_glyph(white_balanced(view), box) for view in views)
             if glyph is not None]
    if not views or len(found) < MIN_ANCHORED * len(views):
        return None
    x, y = np.median(np.array(found), axis=0)
    return float(x), float(y)


@dataclass(frozen=True)
class IndexGeometry:
    """How a deck's index lies on its card, for finding the index without the card's outline
    (:mod:`vision.index_first`): the rank glyph's centroid (shares of the card's width and
    height), the step from it to its suit glyph's centroid (across and down the card, both
    as shares of the card's height: a rank's centroid need not lie straight above its
    suit's) and the rank glyph's height (a share of the card's height)."""

    rank_centre: tuple[float, float]
    step: tuple[float, float]
    rank_height: float

    @property
    def step_length(self) -> float:
        return float(np.hypot(*self.step))

    def to_list(self) -> list[float]:
        return [*self.rank_centre, *self.step, self.rank_height]

    @classmethod
    def from_list(cls, value: Sequence[float]) -> IndexGeometry:
        x, y, across, down, height = (float(number) for number in value)
        if not (0 <= x < 1 and 0 <= y < 1 and 0 < down < 1 and abs(across) < down
                and 0 < height < 1):
            raise ValueError(f"index geometry {list(value)!r} does not lie on the card "
                             f"with the suit under the rank")
        return cls((x, y), (across, down), height)


def learn_geometry(views: Sequence[np.ndarray], box: Box) -> IndexGeometry | None:
    """The deck's :class:`IndexGeometry` from rectified enrolment corners (each turned to
    the top-left): the medians over the corners whose rank glyph and the suit under it are
    found (:func:`vision.roi.suit_under`), None if fewer than :data:`MIN_ANCHORED` of them.
    (cardai, draw 2024: 66 of 130 corners; the step 0.097 of the card's height, 1.3 degrees
    off its long side.)"""
    found = []
    for view in views:
        card = white_balanced(view)
        height, width = card.shape[:2]
        boxes = corner_glyphs(card, box)
        if not boxes:
            continue
        rank = first_glyph(boxes)
        suit = suit_under(rank, boxes)
        if suit is None:
            continue
        dark = card.min(axis=2)
        (rank_x, rank_y), (suit_x, suit_y) = _ink_centre(dark, rank), _ink_centre(dark, suit)
        found.append((rank_x / width, rank_y / height, (suit_x - rank_x) / height,
                      (suit_y - rank_y) / height, rank[3] / height))
    if not views or len(found) < MIN_ANCHORED * len(views):
        return None
    x, y, across, down, rank_height = np.median(np.array(found), axis=0)
    return IndexGeometry((float(x), float(y)), (float(across), float(down)),
                         float(rank_height))


def _ink_centre(dark: np.ndarray, box: tuple[int, int, int, int]) -> tuple[float, float]:
    """The centroid (pixels) of the ink in a glyph's ``box`` of a card's darkest channel: a
    glyph's centroid turns with the card, as its box's centre does not
    (:func:`vision.index_first.placements` finds glyphs by their centroids)."""
    x, y, width, height = box
    _, ink = cv2.threshold(dark[y:y + height, x:x + width], 0, 255,
                           cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    moments = cv2.moments(ink, binaryImage=True)
    if moments["m00"] == 0:
        return x + width / 2, y + height / 2
    return x + moments["m10"] / moments["m00"], y + moments["m01"] / moments["m00"]


def turned(card: np.ndarray, corner: int) -> np.ndarray:
    """The card turned so that index corner ``corner`` (0 top-left, 2 bottom-right) is at
    the top-left."""
    return card if corner == 0 else cv2.rotate(card, cv2.ROTATE_180)


@dataclass(frozen=True)
class CornerRead:
    """The nearest enrolled index to a corner: card index (0..51), the relative margin over
    the nearest other card, the distance, the runner-up's card index (None if only one)."""

    label: int
    confidence: float
    distance: float
    runner_up: int | None
    #: Another usable corner of the card read as another card, though unsurely (under
    #: :data:`MIN_CORNER_THRESHOLD`): this read then stands only with a second read that
    #: bears it out (:meth:`vision.recognise.Recogniser._read_index`).
    disputed: bool = False
    #: The read of the corner shifted a little (:meth:`CornerReader.read_aligned`), surer
    #: than the corner as it lies: it too stands only with a second read that bears it out.
    lifted: bool = False
    #: No rank glyph was found near the corner, where the deck's enrolment corners showed
    #: one (:attr:`CornerReader.anchor`): a blank corner, or one the card was completed to
    #: wrongly. Not read (:meth:`vision.recognise.Recogniser._read_index`).
    glyphless: bool = False


@dataclass(frozen=True)
class CornerReader:
    """A deck's index corners and the camera's card shape, learnt at enrolment."""

    vectors: np.ndarray  # (rows, D) unit vectors, two per enrolment photo
    labels: np.ndarray  # (rows,) card index 0..51
    split: Split | None
    box: Box
    shape: CardShape
    max_distance: float
    threshold: float
    centre: np.ndarray | None = None
    """The mean corner vector (D,), and the principal directions (D, k) the rows are
    projected onto (:data:`CORNER_COMPONENTS`); None for a deck enrolled before: its rows
    are the unit vectors themselves."""
    projection: np.ndarray | None = None
    anchor: Anchor | None = None
    """Where the deck's rank glyph sits (:func:`learn_anchor`); None for a deck enrolled
    before, or whose glyphs were not found: its corners are read as they lie."""
    geometry: IndexGeometry | None = None
    """How the index lies on the card (:func:`learn_geometry`), to find an index without
    its card's outline (:mod:`vision.index_first`); None for a deck enrolled before, or
    whose glyphs were not found."""
    glyphs: GlyphReader | None = None
    """The index read again by its glyphs cut out (:mod:`vision.index_glyphs`), to bear
    out an unsure read; None for a deck enrolled before, or whose glyphs were not found."""
    card_thresholds: dict[int, float] | None = None
    """The cards (card index 0..51) whose reads need less than :attr:`threshold`, and what
    they need (:func:`card_thresholds`); None for a deck enrolled before: every card needs
    :attr:`threshold`."""
    red_ink: bool = True
    """Whether the camera shows red ink red (:func:`vision.ink.red_ink_shows`); False for a
    camera without colour, whose red cards' ink reads black. True for a deck enrolled
    before."""

    def threshold_for(self, label: int) -> float:
        """The confidence a read naming card ``label`` must reach: its own threshold, or the
        deck's (the strictest, :attr:`threshold`)."""
        return threshold_of(label, self.threshold, self.card_thresholds)

    def vector(self, view: np.ndarray) -> np.ndarray:
        """The feature vector of a rectified card's top-left index corner, as enrolled."""
        return corner_vector(view, self.split, self.box, self.anchor)

    def read(self, card: np.ndarray, corners: Sequence[int]) -> CornerRead | None:
        """The card by its usable index ``corners`` of the rectified ``card``; when two
        corners are usable, the nearer read, and if they disagree no confidence, or a
        disputed read (:func:`combined_read`)."""
        return combined_read(self.read_each([turned(card, corner) for corner in corners]))

    def read_aligned(self, card: np.ndarray, corners: Sequence[int]) -> CornerRead | None:
        """:meth:`read`, and when it is unsure, the nearer corner read again shifted by each
        of :data:`ALIGN_SHIFTS`: the most confident read that names the same card and looks
        like the deck. A card completed from part of it is rectified a little off, and its
        index glyphs then straddle the boxes they are read in; the shift that puts them
        back reads the card more surely. Never another card: a shift that reads as
        another is a doubt, not an answer. The threshold is set with the same shifts
        (:func:`learn_corners`)."""
        views = {corner: turned(card, corner) for corner in corners}
        reads = dict(zip(corners, self.read_each([views[corner] for corner in corners]),
                         strict=True))
        plain = combined_read(list(reads.values()))
        if (plain is None or plain.confidence >= self.threshold_for(plain.label)
                or any(read.label != plain.label for read in reads.values())):
            return plain
        corner = min(reads, key=lambda one: reads[one].distance)
        best = reads[corner]
        for read in self.read_each([shifted(views[corner], shift) for shift in ALIGN_SHIFTS]):
            if (read.label == plain.label and read.distance <= self.max_distance
                    and read.confidence > best.confidence + SAME_READ
                    and read.confidence >= ALIGN_MIN_CONFIDENCE):
                best = replace(read, lifted=True)
        return best

    def read_each(self, views: Sequence[np.ndarray]) -> list[CornerRead]:
        """Each of ``views`` (rectified cards, the index to read at the top-left) read on
        its own: the nearest enrolled corner and the margin over the nearest other card."""
        if not views:
            return []
        made = [_corner_vector_and_glyph(view, self.split, self.box, self.anchor)
                for view in views]
        vectors = np.stack([vector for vector, _ in made])
        # One matrix product for all of a read's corners, not one per corner: the
        # projection (cardai: 5340 x 512 numbers, 11 MB) is then read from memory once.
        # Each product has the large matrix on the left, its rows along the sum: OpenBLAS
        # runs the other way round, a few rows on the left and a large matrix stored by
        # columns on the right, about twice as slowly. On one core (the benches run
        # numpy's BLAS on one thread, OPENBLAS_NUM_THREADS=1), 2 to 8 corners take about
        # 1.1 ms so, against 2.3 ms the other way round and 0.5 ms per corner one at a time.
        if self.projection is None or self.centre is None:
            similarity = (self.vectors @ vectors.T).T
            distances = np.sqrt(np.maximum(2.0 - 2.0 * similarity, 0.0))
        else:
            points = (self._directions @ (vectors - self.centre).T).T
            squared = (self._row_norms[None, :] - 2.0 * (self.vectors @ points.T).T
                       + (points * points).sum(axis=1)[:, None])
            distances = np.sqrt(np.maximum(squared, 0.0))
        return [self._nearest(row) if found else replace(self._nearest(row), glyphless=True)
                for row, (_, found) in zip(distances, made, strict=True)]

    def _nearest(self, distances: np.ndarray) -> CornerRead:
        """The read of one corner from its distances to every enrolled row."""
        return CornerRead(*nearest_with_margin(distances, self.labels))

    @cached_property
    def _directions(self) -> np.ndarray:
        """The projection's principal directions as rows (k, D), each contiguous in memory:
        a view of the projection as enrolled or loaded (stored by columns), a copy of one
        stored by rows."""
        assert self.projection is not None
        return np.ascontiguousarray(self.projection.T)

    @cached_property
    def _row_norms(self) -> np.ndarray:
        """Each row's squared length: the same for every read, worked out once."""
        norms: np.ndarray = np.einsum("ij,ij->i", self.vectors, self.vectors)
        return norms


def nearest_with_margin(distances: np.ndarray, labels: np.ndarray
                        ) -> tuple[int, float, float, int | None]:
    """A nearest-neighbour read from the ``distances`` to rows of ``labels``: the nearest
    row's label, its relative margin over the nearest row of another label (the
    confidence), the nearest distance, and that other label; with no other label within
    reach (none, or all at an infinite distance), no margin and no runner-up."""
    best = int(np.argmin(distances))
    label = int(labels[best])
    others = np.where(labels != label, distances, np.inf)
    second = int(np.argmin(others))
    d_best, d_other = float(distances[best]), float(others[second])
    if not np.isfinite(d_other):
        return label, 0.0, d_best, None
    confidence = (d_other - d_best) / d_other if d_other > 0 else 0.0
    return label, confidence, d_best, int(labels[second])


def combined_read(reads: list[CornerRead]) -> CornerRead | None:
    """One read from those of a card's usable corners: the nearer; if they disagree, with no
    confidence, unless the nearer is over the floor and the others under it (a corner under
    a hand, in shadow, or placed a little off by a completion reads unsurely as anything):
    then with its own, marked disputed. None if there are none."""
    if not reads:
        return None
    best = min(reads, key=lambda read: read.distance)
    others = [read for read in reads if read.label != best.label]
    if not others:
        return best
    if best.confidence >= MIN_CORNER_THRESHOLD and all(
            read.confidence < MIN_CORNER_THRESHOLD for read in others):
        return replace(best, disputed=True)
    return CornerRead(best.label, 0.0, best.distance, best.runner_up)


ALIGN_SHIFTS = ((0.03, 0.0), (-0.03, 0.0), (0.0, 0.03), (0.0, -0.03))
"""Shifts (shares of the card's width and height) at which an unsure index corner is read
again (:meth:`CornerReader.read_aligned`). cardai, right of 771 on draws 2024, 7, 11 and 3:
587, 605, 552 and 604 without, 613, 624, 566 and 610 with (none wrong either way; the
corner threshold rose from 0.22 to 0.28 on draw 2024); every one of draw 2024's unsure index
reads was of a card found in part, most of them with their glyphs in plain view. Tried
before: the most confident shift whatever card it names, and a threshold the shifts may
lower: one wrong read on draw 11 (a card completed turned a quarter round, read as 3H by a
blank corner)."""


ALIGN_MIN_CONFIDENCE = 0.25
"""The least confidence of a read a shift lifted, whatever the threshold: the most confident
of five reads is surer than one by chance alone, and the held-out reads of the enrolment
photos (whole cards, well placed) do not show how much for a card found in part. The
simulated camera showed it (overhead_felt, frames of seed 7, draw 2024: an 8H cut by the
frame, plainly read as 6H at 0.191, lifted to 0.216 over a threshold of 0.2); on cardai
draw 7 (threshold 0.2) 8 right reads between 0.2 and 0.25 are lost, on draws 2024, 11 and 3
(thresholds 0.28 to 0.37) none."""


SAME_READ = 1e-4
"""Confidences closer than this are the same read: a shifted corner the anchoring moves back
where it was reads as the corner did, but the product of several corners at once may round
it differently in the last digits (it then passed for a read the shift made surer: cardai
draw 2024's QH_s1_01, 0.5690687 against 0.5690693)."""


def shifted(view: np.ndarray, shift: tuple[float, float],
            reach: tuple[int, int] | None = None) -> np.ndarray:
    """A rectified card (or a corner turned to the top-left) moved by ``shift`` (shares of
    its width and height), its edge repeated where it moves in; with ``reach`` (width,
    height), only that much of it from the top-left (the same pixels there)."""
    height, width = view.shape[:2]
    matrix = np.array([[1, 0, shift[0] * width], [0, 1, shift[1] * height]], np.float32)
    moved: np.ndarray = cv2.warpAffine(view, matrix, reach or (width, height),
                                       flags=cv2.INTER_LINEAR,
                                       borderMode=cv2.BORDER_REPLICATE)
    return moved


def pair_distances(rows: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Euclidean distances (rows, points) between two sets of projected vectors."""
    squared = ((rows * rows).sum(axis=1)[:, None] - 2.0 * (rows @ points.T)
               + (points * points).sum(axis=1)[None, :])
    result: np.ndarray = np.sqrt(np.maximum(squared, 0.0))
    return result


CORNER_COMPONENTS = 512
"""The corner vectors (5340 numbers for cardai's index) are kept as their projection onto
this many principal directions of the enrolment corners and their copies: what the copies
vary in most, the index's glyphs, and not the finest detail of each HOG cell (cardai, draws
2024, 7, 11 and 3: 536, 548, 522 and 552 of 771 read, against 527, 533, 520 and 536
unprojected; with the exact decomposition, 512 directions: 537, 548, 522 and 553, 256: 523,
551, 522 and 548, 128: two wrong reads). A 52-card deck of 5 photos keeps 8840 rows of 512
numbers, not of 5340."""
OVERSAMPLE = 64  # extra random directions for the randomised decomposition
PROJECTION_SEED = 16


def principal_directions(rows: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The mean of ``rows`` (n, D) and their ``count`` principal directions (D, count;
    fewer when there are fewer rows): exactly when the rows are few, else by the
    randomised decomposition of Halko, Martinsson and Tropp (2011) with one power
    iteration (random rows the size of a 52-card deck's, 8840 x 5340, in 3.1 s of one core;
    the exact decomposition of cardai's 1394 rows took 2.3 s)."""
    centre = rows.mean(axis=0)
    centred = (rows - centre).astype(np.float32)
    count = min(count, *centred.shape)
    if min(centred.shape) <= count + OVERSAMPLE:
        _, _, across = np.linalg.svd(centred, full_matrices=False)
    else:
        rng = np.random.default_rng(PROJECTION_SEED)
        probe = rng.standard_normal((centred.shape[1], count + OVERSAMPLE)).astype(np.float32)
        basis, _ = np.linalg.qr(centred @ probe)
        basis, _ = np.linalg.qr(centred @ (centred.T @ basis))  # the power iteration
        _, _, across = np.linalg.svd(basis.T @ centred, full_matrices=False)
    projection: np.ndarray = across[:count].T.astype(np.float32)
    return centre.astype(np.float32), projection


MIN_CORNER_THRESHOLD = 0.3
"""The least threshold of a corner reader: an index corner read alone (a card in part, or a
whole card whose whole read was unsure) has less to go on than a whole card, and the
held-out reads of well-found enrolment corners, anchored (:func:`anchored_index`), are
seldom wrong enough to set one. Since corners are anchored, reads are surer, the wrong ones
too: on cardai (5 photos per card), a 5H cut by the frame read as 3H at 0.242 (draw 11) and
a motion-blurred 9H as TH at 0.242, its whole card agreeing (draw 3), both over the floor
of 0.2 that held before; at 0.3 (about 1.25 times that) none of draws 2024, 7, 11 and 3 is
wrong, and 642, 647, 619 and 640 of 771 were read (0.2: 658, 655, 639 and 658; since a
lifted read needs a second read, 641, 644, 610 and 639)."""


CORNER_JITTERS = 16
"""Jittered copies of each enrolment corner (besides the corner itself)."""
JITTER_SHIFT = 0.05  # of the card's width, either way along each axis
JITTER_SCALE = 0.12  # either way
JITTER_TURN = 4.0  # degrees, either way
JITTER_SEED = 16  # the same copies for the same enrolment photos


def jittered_corners(card: np.ndarray, rng: np.random.Generator,
                     count: int = CORNER_JITTERS) -> list[np.ndarray]:
    """``count`` copies of a rectified card (its index corner at the top-left) as a card
    found in part may be rectified: the corner shifted, the card scaled and turned a
    little about it. A card completed from what shows (:mod:`vision.partial`) lands its
    index a few per cent off where a whole card's edges put it, and the index glyphs are
    read on a fine grid (cardai, draws 2024, 7, 11 and 3: 13, 15, 9 and 7 more of 771
    photos read, none wrong; 8 copies of about half the spread: 7 more on draw 2024)."""
    height, width = card.shape[:2]
    copies = []
    for _ in range(count):
        matrix = cv2.getRotationMatrix2D((0.0, 0.0), rng.uniform(-JITTER_TURN, JITTER_TURN),
                                         rng.uniform(1 - JITTER_SCALE, 1 + JITTER_SCALE))
        matrix[:, 2] += rng.uniform(-JITTER_SHIFT, JITTER_SHIFT, size=2) * width
        copies.append(cv2.warpAffine(card, matrix, (width, height), flags=cv2.INTER_LINEAR,
                                     borderMode=cv2.BORDER_REPLICATE))
    return copies


Partly = tuple[np.ndarray, Sequence[int], int]
"""An enrolment photo whose card was found only partly (:mod:`vision.partial`): the
rectified card, its usable index corners and its card index."""


def learn_corners(images: Sequence[np.ndarray], labels: np.ndarray, quads: Sequence[np.ndarray],
                  split: Split | None, layout: str,
                  partly: Sequence[Partly] = ()) -> CornerReader | None:
    """A deck's corner reader from its enrolment photos: rectified whole cards, their card
    indices and their quads in the frame, and the usable corners of photos whose card was
    found only partly (``partly``, with the shape the whole cards taught:
    :func:`vision.bench.learn_partly_found`). A card with fewer than two photos is left
    out (no other photo to read it against). None when the whole cards do not tell the
    camera's card shape (:func:`vision.partial.learn_shape`)."""
    from vision.index_glyphs import learn_glyph_reader  # (it imports this module)

    shape = learn_shape(quads)
    if shape is None:
        return None
    box = index_box(split, layout)
    views = [(turned(image, corner), photo, int(label)) for corner in (0, 2)
             for photo, (image, label) in enumerate(zip(images, labels, strict=True))]
    views += [(turned(card, corner), len(images) + extra, label)
              for extra, (card, usable, label) in enumerate(partly) for corner in usable]
    photos_of: dict[int, set[int]] = {}
    for _, photo, label in views:
        photos_of.setdefault(label, set()).add(photo)
    views = [view for view in views if len(photos_of[view[2]]) >= 2]
    if len({label for _, _, label in views}) < 2:
        return None
    seen = len(views)  # the photos' own corners; their jittered copies follow
    rng = np.random.default_rng(JITTER_SEED)
    views += [(copy, photo, label) for view, photo, label in views[:seen]
              for copy in jittered_corners(view, rng)]
    anchor = learn_anchor([view for view, _, _ in views[:seen]], box)
    red_ink = red_ink_shows([(view, card_of(label)) for view, _, label in views[:seen]], box)
    geometry = learn_geometry([view for view, _, _ in views[:seen]], box)
    rows = np.stack([corner_vector(view, split, box, anchor) for view, _, _ in views])
    row_photos = np.array([photo for _, photo, _ in views])
    row_labels = np.array([label for _, _, label in views])
    centre, projection = principal_directions(rows, CORNER_COMPONENTS)
    rows = ((rows - centre) @ projection).astype(np.float32)

    def held_out(points: np.ndarray, photos: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # Each corner (of the photos ``photos``) read against every other photo's corners
        # and copies (never its own photo's: a copy of itself would always be nearest): the
        # nearest distance, the card read and the confidence.
        distances = pair_distances(points, rows)
        distances[photos[:, None] == row_photos[None, :]] = np.inf
        nearest = np.argmin(distances, axis=1)
        d_best = distances[np.arange(len(points)), nearest]
        predicted = row_labels[nearest]
        other = np.where(row_labels[None, :] != predicted[:, None], distances,
                         np.inf).min(axis=1)
        confidence = np.where(np.isfinite(other) & (other > 0), (other - d_best) / other, 0.0)
        return d_best, predicted, confidence

    d_best, predicted, confidence = held_out(rows[:seen], row_photos[:seen])
    max_distance, _, _ = held_out_limits(row_labels[:seen], d_best, predicted, confidence,
                                         MIN_CORNER_THRESHOLD)
    # Read as CornerReader.read_aligned reads: each held-out corner also shifted, the most
    # confident read naming the same card kept (for every corner, not only unsure ones:
    # the threshold then stands above any wrong read a shift could lift). The shifts
    # never lower the threshold, nor move the distance limit.
    aligned = confidence.copy()
    for shift in ALIGN_SHIFTS:
        moved = np.stack([corner_vector(shifted(view, shift), split, box, anchor)
                          for view, _, _ in views[:seen]])
        _, moved_read, moved_confidence = held_out(
            ((moved - centre) @ projection).astype(np.float32), row_photos[:seen])
        aligned = np.where(moved_read == predicted, np.maximum(aligned, moved_confidence),
                           aligned)
    # The photos' corners and a few copies of each, read held out once: they set the
    # corner threshold, and teach the glyph reader what a corner read it is to bear out
    # looks like.
    chosen = _calibration_rows(seen)
    calibration = [held_out(rows[part], row_photos[part])
                   for part in np.array_split(chosen, max(1, len(chosen) // CALIBRATION_CHUNK))]
    chosen_best, chosen_read, chosen_confidence = (np.concatenate(values)
                                                   for values in zip(*calibration))
    considered = d_best <= max_distance
    guarded = np.maximum.reduce([
        card_thresholds(row_labels[:seen][considered], predicted[considered],
                        reads[considered], MIN_CORNER_THRESHOLD)
        for reads in (confidence, aligned)])
    by_card = _copies_thresholds(row_labels[chosen], chosen < seen, chosen_best, chosen_read,
                                 chosen_confidence, max_distance, guarded)
    deck_threshold, relaxed = split_thresholds(by_card, row_labels)
    glyphs = learn_glyph_reader(
        [views[row] for row in chosen], box,
        list(zip(chosen_read.tolist(), chosen_confidence.tolist(), strict=True)))
    return CornerReader(rows.astype(np.float32), row_labels, split, box, shape,
                        max_distance, deck_threshold, centre, projection, anchor, geometry,
                        glyphs, relaxed, red_ink)


def split_thresholds(by_card: np.ndarray, labels: np.ndarray) -> tuple[float, dict[int, float]]:
    """A reader's thresholds as kept: the strictest card's (``by_card``, 52 values), and
    the cards among ``labels`` (the reader's rows) that need less, with what they need."""
    strictest = float(by_card.max())
    return strictest, {label: float(by_card[label]) for label in np.unique(labels).tolist()
                       if by_card[label] < strictest}


def threshold_of(label: int, strictest: float, relaxed: dict[int, float] | None) -> float:
    """What a read naming card ``label`` must reach: its own threshold in ``relaxed`` (the
    cards that need less, :func:`split_thresholds`), else ``strictest``."""
    return strictest if relaxed is None else relaxed.get(label, strictest)


def card_thresholds(labels: np.ndarray, predicted: np.ndarray, confidence: np.ndarray,
                    floor: float) -> np.ndarray:
    """Each card's threshold (52 values) from the held-out reads of the enrolment corners
    that look like the deck (``labels`` their cards, ``predicted`` and ``confidence`` their
    reads): over the most confident wrong read that names the card or is of it, with the
    outline decks' margin (:func:`vision.calibration.held_out_limits`), never under ``floor``.

    One threshold for the whole deck, over its single most confident wrong read, guards
    every card against the one pair of cards that is hardest to tell apart: on a simulated
    52-card deck under the overhead camera, a 3H read held out as 5H at 0.48 raised the
    deck's threshold to 0.67, and a third of its frames, right reads of other cards, were
    declined. A wrong read is guarded against where it can happen: a read that names either
    card of the pair. Its strictest card's threshold is the deck's."""

    thresholds = np.full(52, floor, dtype=np.float64)
    wrong = predicted != labels
    for truth, read, sure in zip(labels[wrong], predicted[wrong], confidence[wrong],
                                 strict=True):
        needed = THRESHOLD_FACTOR * float(sure) + THRESHOLD_SLACK
        thresholds[[truth, read]] = np.maximum(thresholds[[truth, read]], needed)
    return thresholds


CALIBRATION_COPIES = 4
"""Jittered copies of each enrolment corner read held out to set the corner threshold
(:func:`_copies_thresholds`) and to calibrate the glyph reader
(:func:`vision.index_glyphs.learn_glyph_reader`); a 52-card deck's 8840 rows would take
minutes to read all."""
CALIBRATION_CHUNK = 1024


def _calibration_rows(seen: int) -> np.ndarray:
    """The rows read held out at enrolment: the ``seen`` photos' own corners, then the first
    :data:`CALIBRATION_COPIES` jittered copies of each (the rows hold the photos' corners,
    then :data:`CORNER_JITTERS` copies of each in turn)."""
    copies = seen + np.arange(seen)[:, None] * CORNER_JITTERS + np.arange(
        min(CALIBRATION_COPIES, CORNER_JITTERS))[None, :]
    return np.concatenate([np.arange(seen), copies.ravel()])


def _copies_thresholds(labels: np.ndarray, own: np.ndarray, d_best: np.ndarray,
                       predicted: np.ndarray, confidence: np.ndarray,
                       max_distance: float, guarded: np.ndarray) -> np.ndarray:
    """Each card's corner threshold (52 values): ``guarded`` (each card's threshold so far),
    raised over the wrong held-out reads of the photos' own corners with a margin, per card
    (:func:`card_thresholds`), and then, all cards together, to the least confidence at
    which the held-out reads of the enrolment corners *and of their jittered copies*
    (:func:`jittered_corners`: a corner rectified a little off, as a card completed from
    part of it is) that look like the deck and that their cards' thresholds let through are
    :data:`vision.calibration.TARGET_PRECISION` right
    (:func:`vision.calibration.calibrated_threshold`). Measured over the reads each card's
    threshold lets through, it is the precision of the reads the reader will accept: over
    every read, the many unsure right reads under the floor could make up for wrong ones
    just over it. The photos' own corners, well found and anchored, are seldom read wrong
    held out; a copy is what a completed card looks like (cardai, draw 11: a 5H cut
    by the frame read as 3H at 0.242 over a floor of 0.2). One entry per row of
    :func:`_calibration_rows`: its card, whether it is a photo's own corner (``own``), and
    its held-out read."""

    near = d_best <= max_distance
    labels, own, predicted, confidence = (values[near] for values in (
        labels, own, predicted, confidence))
    per_card = np.maximum(guarded, card_thresholds(labels[own], predicted[own],
                                                   confidence[own], 0.0))
    through = confidence >= per_card[predicted]
    if not through.any():
        return per_card
    pooled = calibrated_threshold(labels[through], predicted[through], confidence[through],
                                  np.zeros(int(through.sum()), dtype=bool))
    if pooled <= float(confidence[through].min()):
        return per_card  # every read let through is accepted: nothing calls for more
    return np.maximum(per_card, pooled)
