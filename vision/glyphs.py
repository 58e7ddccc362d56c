"""Where a deck prints its rank and its suit, learnt from the deck's own enrolment frames.

Every card of a deck carries its index at the same place, so over the enrolment frames the
index glyphs stand out from everything else in the corner: a pixel inside the suit glyph is
ink on (nearly) every card of that suit and blank on some card of another suit, and a pixel
inside a rank glyph is ink on every card of that rank and blank on some other rank. Pips and
face pictures vary from card to card and fail that test. The boxes around those pixels are
the deck's rank and suit boxes, typically within a pixel of the glyphs, whatever the deck's
typeface and index size: a small suit glyph then fills its feature patch instead of a fifth
of a fixed box, and a big one is not cut.

Only decks whose rank sits above its suit are located here (the common index); others, and
decks where no consistent glyphs are found (indices drawn light on dark, face cards without
an index on every rank), keep the fixed candidate boxes of :data:`vision.corner.INDEX_SPLITS`.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from shoe_controller.cards import Card
from vision.corner import Box, Split, orientations, white_balanced

REGION = (0.3, 0.5)  # the top-left corner searched, as fractions of the card's width, height
SUIT_INK = 0.7  # ink on this share of a suit's frames (face cards may lack a suit glyph)
RANK_INK = 0.85  # ink on this share of a rank's frames
SAME_PLACE = 6  # pixels: the four suits' glyph boxes must agree this closely
MIN_RANKS = 10  # ranks whose glyph must be found above the suit
PAD = 2  # pixels added round each box: a frame's glyphs sit within about a pixel

_Pixels = tuple[int, int, int, int, int]  # x0, y0, x1, y1, area


def locate_index(samples: Sequence[tuple[np.ndarray, Card]]) -> Split | None:
    """The rank box and the suit box of a deck (fractions of the rectified card), from
    rectified enrolment images and their cards; None when the index cannot be located."""
    if not samples:
        return None
    height, width = samples[0][0].shape[:2]
    inks, ranks, suits = _ink(samples)
    shape = inks.shape[1:]

    per_suit = [_glyphs(inks[suits == suit].mean(axis=0) > SUIT_INK, shape)
                for suit in np.unique(suits)]
    if len(per_suit) < 2:
        return None
    suit_box = _same_place(per_suit)
    if suit_box is None:
        return None

    rank_boxes = []
    for rank in np.unique(ranks):
        above = [glyph for glyph in _glyphs(inks[ranks == rank].mean(axis=0) > RANK_INK, shape)
                 if glyph[3] <= suit_box[1] + PAD and glyph[0] < suit_box[2]
                 and glyph[2] > suit_box[0]]
        if above:  # a "10" is two glyphs: take them together
            rank_boxes.append(_union(above))
    if len(rank_boxes) < min(MIN_RANKS, len(np.unique(ranks))):
        return None
    rank_box = _union(rank_boxes)
    return _fraction(rank_box, width, height), _fraction(suit_box, width, height)


def _ink(samples: Sequence[tuple[np.ndarray, Card]]
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per enrolled view (both orientations): the corner's ink (1) and blank (0) pixels,
    split by Otsu's threshold on that view, with its rank and suit."""
    inks, ranks, suits = [], [], []
    for image, card in samples:
        for view in orientations(white_balanced(image)):
            height, width = view.shape[:2]
            corner = view[:int(REGION[1] * height), :int(REGION[0] * width)]
            grey = cv2.cvtColor(corner, cv2.COLOR_BGR2GRAY)
            _, ink = cv2.threshold(grey, 0, 1, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
            inks.append(ink.astype(np.float32))
            ranks.append(card.rank)
            suits.append(int(card.suit))
    return np.stack(inks), np.array(ranks), np.array(suits)


def _glyphs(mask: np.ndarray, shape: tuple[int, ...]) -> list[_Pixels]:
    """Glyph-like blobs of a mask: not touching the corner's border (the card's edge stroke,
    a pip cut by the region), not a thin line (a frame), not a speck."""
    count, _, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    height, width = shape
    found = []
    for index in range(1, count):
        x, y, w, h, area = (int(value) for value in stats[index])
        if area < 12 or min(w, h) < 4 or max(w, h) > 3 * min(w, h) + 2:
            continue
        if x == 0 or y == 0 or x + w >= width or y + h >= height:
            continue
        found.append((x, y, x + w, y + h, area))
    return found


def _same_place(per_suit: list[list[_Pixels]]) -> tuple[int, int, int, int] | None:
    """The glyph every suit has at the same place (the suit index), the largest such if
    several; its box covers all the suits' glyphs."""
    def centre(glyph: _Pixels) -> np.ndarray:
        return np.array([(glyph[0] + glyph[2]) / 2, (glyph[1] + glyph[3]) / 2])

    best: tuple[int, list[_Pixels]] | None = None
    for first in per_suit[0]:
        group = [first]
        for others in per_suit[1:]:
            near = [glyph for glyph in others
                    if np.abs(centre(glyph) - centre(first)).max() <= SAME_PLACE]
            if not near:
                break
            group.append(max(near, key=lambda glyph: glyph[4]))
        else:
            size = min(glyph[4] for glyph in group)
            if best is None or size > best[0]:
                best = (size, group)
    return None if best is None else _union(best[1])


def _union(boxes: Sequence[Sequence[int]]) -> tuple[int, int, int, int]:
    return (min(box[0] for box in boxes), min(box[1] for box in boxes),
            max(box[2] for box in boxes), max(box[3] for box in boxes))


def _fraction(box: tuple[int, int, int, int], width: int, height: int) -> Box:
    x0, y0, x1, y1 = box
    return (max(x0 - PAD, 0) / width, max(y0 - PAD, 0) / height,
            min(x1 + PAD, width) / width, min(y1 + PAD, height) / height)
