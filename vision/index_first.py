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
beyond its distance limit. The nearest card so read is placed again by its own edges beside
the index where they show (:func:`placed_by_edges`), and read again: a glyph pair places a
card to a few per cent, its edges to a pixel (draws 2024, 7, 11 and 3: 690, 702, 696 and 702
read with it, none wrong).

cardai (5 photos per card), the frames every other search declined: draws 2024, 7, 11 and
3 read 684, 699, 692 and 698 of 771 with it (641, 644, 610 and 639 without), none wrong. A
first version, over all 771 frames of draw 2024 whatever the other searches read: the most
confident wrong read of an index found this way was 0.215, under that deck's corner
threshold of 0.3.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import cv2
import numpy as np

from vision.card_edges import edges_on_frame
from vision.partial import SIZE_MARGIN
from vision.quad import CARD_CORNERS, CARD_SIZE, rectify

if TYPE_CHECKING:
    from vision.index_corner import CornerRead, CornerReader, IndexGeometry
    from vision.partial import CardShape

SIZE_SLACK = 1.2
"""How much smaller than the deck's enrolment cards (their least short side in the frame) a
card found by its index may be, and how much larger than the greatest for the window its
glyphs' ink is told from the paper in."""
INK_CONTRAST = 8
"""Grey levels darker than the mean around it that a glyph's ink is: less than the 12 of
:func:`vision.roi.glyph_boxes` (a fixed camera's close view), as a thin red rank in a dim
frame is barely darker than its paper (cardai s1's "10"). cardai, draws 2024, 7, 11 and 3:
684, 699, 692 and 698 of 771 read with 8, 684, 693, 682 and 693 with 12, none wrong."""
MAX_PLACEMENTS = 8
"""The most pairs read in one frame (the likeliest first): each is a corner to read (about
1 ms of one core); a frame of scattered pips may offer dozens."""
MAX_BLOBS = 300
"""The most glyph-sized blobs paired in one frame (those nearest the expected glyph size):
cardai's frames show at most 69, pp2021's 10; a table patterned with glyph-sized dots would
otherwise make every pair of thousands."""
RANK_SPAN = (0.6, 1.6)
"""A rank glyph's bounding box, its larger side, against the height the geometry expects
(turned 45 degrees, a glyph's box is up to 1.4 times its height)."""
SUIT_SPAN = (0.4, 1.4)
SECONDED_SHARE = 0.9
"""An index found alone and read under the corner threshold, though over this share of it,
is taken when the card as its outline placed it (whole or in part) was read, unsurely, as
the same card: a second read, of another placement
(:meth:`vision.recognise.Recogniser.recognise`). The two are reads of the same glyphs, so
they can be wrong together: cardai draw 11 had a 5H read as 3H at 0.214 both ways (under a
threshold of 0.3), draw 3 one at 0.05. At 0.9 of the threshold (0.27 for those decks, 1.25
times the worst, as the corner reader's floor stands over its own worst,
:data:`vision.index_corner.MIN_CORNER_THRESHOLD`), draws 2024, 7, 11 and 3 read 3, 1, 3 and
1 more of 771, none wrong. So too when the card the index placed, read as a whole card,
names the same card (thirteenth round: 3, 2, 1 and 2 more, none wrong)."""


def placements(frame: np.ndarray, geometry: IndexGeometry, shape: CardShape
               ) -> list[np.ndarray]:
    """Affine maps (2 x 3, rectified card pixels to frame pixels) of the cards the frame's
    rank-and-suit pairs place, the likeliest first (the rank glyph's size nearest the
    expected), at most :data:`MAX_PLACEMENTS`; none without the camera's card sizes."""
    if shape.sizes is None:
        return []
    card_width, card_height = CARD_SIZE
    # Rank-to-suit step in frame pixels (square pixels): the card's short side in the frame
    # over the rectified card's width, times the step in rectified pixels.
    step = geometry.step_length * card_height / card_width
    # As much larger than the enrolment's cards as a card found by its outline may be
    # (SIZE_MARGIN): a card held up towards the camera shows larger than any lying on the
    # table (cardai s2's 2H_s2_26, held in both hands: 1.37 times draw 2024's largest).
    least, most = shape.sizes[0] * step / SIZE_SLACK, shape.sizes[1] * step * SIZE_MARGIN
    rank_per_step = geometry.rank_height / geometry.step_length
    blue, green, red = cv2.split(frame)
    dark = cv2.min(cv2.min(blue, green), red)  # red ink as dark as black
    # (the ink's window as before: wider, it would change the ink of every frame searched)
    block = int(2 * shape.sizes[1] * step * SIZE_SLACK * rank_per_step
                * max(shape.stretch, 1.0)) | 1
    ink = cv2.adaptiveThreshold(dark, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV,
                                max(block, 3), INK_CONTRAST)
    # Grana's block-based labelling (BBDT): the same labels and statistics as OpenCV's
    # default (Spaghetti, in 4.14), in about half the time on a whole frame's ink (cardai,
    # 960 x 540: 1.8 against 3.3 ms of one core).
    count, _, stats, centres = cv2.connectedComponentsWithStatsWithAlgorithm(
        ink, 8, cv2.CV_32S, cv2.CCL_BBDT)
    extent = np.maximum(stats[1:count, 2] / shape.stretch, stats[1:count, 3]).astype(float)
    filled = stats[1:count, 4] >= 0.15 * stats[1:count, 2] * stats[1:count, 3]
    sized = (filled & (extent >= SUIT_SPAN[0] * least * rank_per_step)
             & (extent <= RANK_SPAN[1] * most * rank_per_step))
    blobs = np.flatnonzero(sized)
    if len(blobs) < 2:
        return []
    if len(blobs) > MAX_BLOBS:  # a patterned table: the pairs are counted in the square
        typical = np.sqrt(least * most) * rank_per_step
        blobs = blobs[np.argsort(np.abs(np.log(extent[blobs] / typical)),
                                 kind="stable")[:MAX_BLOBS]]
    points = centres[1:count][blobs] / np.array([shape.stretch, 1.0])  # square pixels
    sizes = extent[blobs]
    rank_points, rank_sizes = _with_two_glyph_ranks(points, sizes,
                                                    stats[1:count, 4][blobs].astype(float))
    apart = points[None, :, :] - rank_points[:, None, :]  # [rank, suit]: suit minus rank
    distance = np.hypot(apart[..., 0], apart[..., 1])
    expected = distance * rank_per_step  # the rank glyph's height at that scale
    fits = ((distance >= least) & (distance <= most)
            & (rank_sizes[:, None] >= RANK_SPAN[0] * expected)
            & (rank_sizes[:, None] <= RANK_SPAN[1] * expected)
            & (sizes[None, :] >= SUIT_SPAN[0] * expected)
            & (sizes[None, :] <= SUIT_SPAN[1] * expected))
    ranks, suits = np.nonzero(fits)
    misfit = np.abs(np.log(rank_sizes[ranks] / expected[ranks, suits]))
    maps = []
    for pair in np.argsort(misfit, kind="stable")[:MAX_PLACEMENTS]:
        rank, suit = ranks[pair], suits[pair]
        maps.append(_card_to_frame(rank_points[rank], apart[rank, suit], geometry,
                                   shape.stretch))
    return maps


TWO_GLYPHS = 0.9
"""Two blobs of about one height whose centroids lie closer than this share of it may be one
rank printed as two glyphs (a "10")."""


def _with_two_glyph_ranks(points: np.ndarray, sizes: np.ndarray, areas: np.ndarray
                          ) -> tuple[np.ndarray, np.ndarray]:
    """The blobs that may be a rank: each blob, and each two side by side that may be one
    rank of two glyphs (:data:`TWO_GLYPHS`), at their joint centroid. A "10" read by its
    "1" or its "0" alone places the card turned by some 15 degrees (the suit lies under the
    pair, not under either glyph)."""
    apart = np.hypot(*(points[None, :, :] - points[:, None, :]).transpose(2, 0, 1))
    ratio = sizes[:, None] / sizes[None, :]
    alike = (ratio >= 0.7) & (ratio <= 1 / 0.7)
    near = apart <= TWO_GLYPHS * np.maximum(sizes[:, None], sizes[None, :])
    first, second = np.nonzero(np.triu(alike & near, k=1))
    weight = (areas[first] + areas[second])[:, None]
    joint = (points[first] * areas[first, None] + points[second] * areas[second, None]) / weight
    return (np.vstack([points, joint]),
            np.concatenate([sizes, np.maximum(sizes[first], sizes[second])]))


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


class FoundByIndex(NamedTuple):
    """A card found by its index alone: its corner read, and the rectified card that read
    was made of (placed by the index, or again by its edges)."""

    read: CornerRead
    card: np.ndarray


def find_by_index(frame: np.ndarray, reader: CornerReader) -> FoundByIndex | None:
    """The nearest read, within the reader's distance limit, of the cards the frame's
    index-like pairs place (:func:`placements`), the nearest of them also read once placed
    again by its edges (:func:`placed_by_edges`), with the card read; None if there is
    none, or the deck did not learn its index geometry. (Placing every card read again by
    its edges read no more on cardai's four draws and cost 14 % more at p95.)"""
    if reader.geometry is None:
        return None
    maps = placements(frame, reader.geometry, reader.shape)
    cards = [cv2.warpAffine(frame, matrix, CARD_SIZE,
                            flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                            borderMode=cv2.BORDER_REPLICATE)
             for matrix in maps]
    reads = reader.read_each(cards)
    # A placement whose corner shows no rank glyph where the deck's do is no index: the
    # pair placed the card off it (onto the felt beyond the frame's edge, the simulated
    # overhead camera's Dondorf 6S of draw 2024, a corner of plain felt read as 9C at 0.557).
    near = [(read, matrix, card) for read, matrix, card in zip(reads, maps, cards, strict=True)
            if read.distance <= reader.max_distance and not read.glyphless]
    if not near:
        return None
    best, matrix, card = min(near, key=lambda found: found[0].distance)
    # The nearest is placed again by its own edges beside the index, where they show: the
    # glyphs place a card to a few per cent, its edges to a pixel.
    quad = placed_by_edges(frame, matrix)
    if quad is not None:
        again = rectify(frame, quad)
        (snapped,) = reader.read_each([again])
        if snapped.distance < best.distance and not snapped.glyphless:
            return FoundByIndex(snapped, again)
    return FoundByIndex(best, card)


def _placed_quad(matrix: np.ndarray) -> np.ndarray:
    """The corners in the frame of the card an index placed (``matrix``:
    :func:`placements`), as :func:`vision.quad.rectify` takes them."""
    return (CARD_CORNERS @ matrix[:, :2].T + matrix[:, 2]).astype(np.float32)


def placed_by_edges(frame: np.ndarray, matrix: np.ndarray) -> np.ndarray | None:
    """The corners (frame pixels, as :func:`vision.quad.rectify` takes them, the index
    corner first) of the card an index placed (``matrix``: :func:`placements`), once its
    sides are measured on the frame (:func:`vision.card_edges.edges_on_frame`), as a card found
    by its outline is; None unless the two sides that meet at its index corner were (a hand
    or the frame's edge over them, or no paper where the placement put the card)."""
    corners, _, _, measured = edges_on_frame(frame, _placed_quad(matrix))
    if measured is None or not (measured[3] and measured[0]):  # the left side, the top
        return None
    return corners
