"""Finding a card by its index alone, when its outline cannot be found (issue 16).

A card under a hand, cut by the frame at two sides, or lying where its edges do not stand
out from the table is declined by the searches for its outline (:mod:`vision.detect`,
:mod:`vision.partial`), yet often shows an index corner whole. An index has a signature of
its own: a rank glyph with its suit glyph under it, of the size the deck's camera shows them.
Every pair of glyph-like blobs of the frame that could be such a rank and its suit places a
card: its long side runs from the rank to the suit, its scale is their distance against the
deck's learnt :class:`vision.index_corner.IndexGeometry`, and its corner lies where the deck's
index puts it. The card so placed is rectified (only its index matters) and read by the
deck's corner reader under its own limits, as any index corner read alone; a pair that is
not an index (two pips, a crease of a hand) looks like none of the deck's indexes and is
beyond its distance limit.

cardai (5 photos per card), the frames every other search declined: draws 2024, 7 and 11
read 20, 30 and 51 more of 771, none wrong; over all 771 frames of draw 2024 the most
confident wrong read of an index found this way was 0.215, under that deck's corner
threshold of 0.3.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import cv2
import numpy as np

from vision.detect import CARD_SIZE

if TYPE_CHECKING:
    from vision.index_corner import CornerRead, CornerReader, IndexGeometry
    from vision.partial import CardShape

SIZE_SLACK = 1.2
"""How much smaller or larger than the deck's enrolment cards (their least and greatest
short side in the frame) a card found by its index may be."""
INK_CONTRAST = 12  # grey levels darker than the paper around it (as vision.roi.glyph_boxes)
MAX_PLACEMENTS = 8
"""The most pairs read in one frame (the likeliest first): each is a corner read (about
1.5 ms of one core); a frame of scattered pips may offer dozens."""
RANK_SPAN = (0.6, 1.6)
"""A rank glyph's bounding box, its larger side, against the height the geometry expects
(turned 45 degrees, a glyph's box is up to 1.4 times its height)."""
SUIT_SPAN = (0.4, 1.4)


def placements(frame: np.ndarray, geometry: IndexGeometry, shape: CardShape
               ) -> list[np.ndarray]:
    """Affine maps (2 x 3, rectified card pixels to frame pixels) of the cards the frame's
    rank-and-suit pairs place, the likeliest first (the rank glyph's size nearest the
    expected), at most :data:`MAX_PLACEMENTS`. None without the camera's card sizes."""
    if shape.sizes is None:
        return []
    card_width, card_height = CARD_SIZE
    # Rank-to-suit step in frame pixels (square pixels): the card's short side in the frame
    # over the rectified card's width, times the step in rectified pixels.
    step = geometry.step_length * card_height / card_width
    least, most = shape.sizes[0] * step / SIZE_SLACK, shape.sizes[1] * step * SIZE_SLACK
    rank_per_step = geometry.rank_height / geometry.step_length
    blue, green, red = cv2.split(frame)
    dark = cv2.min(cv2.min(blue, green), red)  # red ink as dark as black
    block = int(2 * most * rank_per_step * max(shape.stretch, 1.0)) | 1
    ink = cv2.adaptiveThreshold(dark, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV,
                                max(block, 3), INK_CONTRAST)
    count, _, stats, centres = cv2.connectedComponentsWithStats(ink, connectivity=8)
    extent = np.maximum(stats[1:count, 2] / shape.stretch, stats[1:count, 3]).astype(float)
    filled = stats[1:count, 4] >= 0.15 * stats[1:count, 2] * stats[1:count, 3]
    sized = (filled & (extent >= SUIT_SPAN[0] * least * rank_per_step)
             & (extent <= RANK_SPAN[1] * most * rank_per_step))
    blobs = np.flatnonzero(sized)
    if len(blobs) < 2:
        return []
    points = centres[1:count][blobs] / np.array([shape.stretch, 1.0])  # square pixels
    sizes = extent[blobs]
    apart = points[None, :, :] - points[:, None, :]  # [rank, suit] -> suit minus rank
    distance = np.hypot(apart[..., 0], apart[..., 1])
    expected = distance * rank_per_step  # the rank glyph's height at that scale
    fits = ((distance >= least) & (distance <= most)
            & (sizes[:, None] >= RANK_SPAN[0] * expected)
            & (sizes[:, None] <= RANK_SPAN[1] * expected)
            & (sizes[None, :] >= SUIT_SPAN[0] * expected)
            & (sizes[None, :] <= SUIT_SPAN[1] * expected))
    ranks, suits = np.nonzero(fits)
    misfit = np.abs(np.log(sizes[ranks] / expected[ranks, suits]))
    maps = []
    for pair in np.argsort(misfit, kind="stable")[:MAX_PLACEMENTS]:
        rank, suit = ranks[pair], suits[pair]
        maps.append(_card_to_frame(points[rank], apart[rank, suit], geometry, shape.stretch))
    return maps


def _card_to_frame(rank: np.ndarray, step: np.ndarray, geometry: IndexGeometry,
                   stretch: float) -> np.ndarray:
    """The affine map from rectified card pixels to frame pixels of a card whose rank glyph
    has its centroid at ``rank`` and its suit glyph's ``step`` from it (square pixels)."""
    card_width, card_height = CARD_SIZE
    scale = float(np.hypot(*step)) / (geometry.step_length * card_height)  # frame / card px
    turn = np.arctan2(step[1], step[0]) - np.arctan2(geometry.step[1], geometry.step[0])
    across = np.array([np.cos(turn), np.sin(turn)])  # the card's short side, left to right
    along = np.array([-np.sin(turn), np.cos(turn)])  # its long side, top to bottom
    centre = np.array([geometry.rank_centre[0] * card_width,
                       geometry.rank_centre[1] * card_height])
    origin = rank - scale * (centre[0] * across + centre[1] * along)
    square = np.array([[scale * across[0], scale * along[0], origin[0]],
                       [scale * across[1], scale * along[1], origin[1]]])
    return (np.diag([stretch, 1.0]) @ square).astype(np.float32)  # the camera's stretch


def read_by_index(frame: np.ndarray, reader: CornerReader) -> CornerRead | None:
    """The nearest read, within the reader's distance limit, of the cards the frame's
    index-like pairs place (:func:`placements`); None if there is none, or the deck did not
    learn its index geometry."""
    if reader.geometry is None:
        return None
    best = None
    for matrix in placements(frame, reader.geometry, reader.shape):
        card = cv2.warpAffine(frame, matrix, CARD_SIZE,
                              flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                              borderMode=cv2.BORDER_REPLICATE)
        read = reader.read(card, (0,))
        if read is not None and read.distance <= reader.max_distance and (
                best is None or read.distance < best.distance):
            best = read
    return best
