"""Where a deck prints its rank and its suit, learnt from the deck's own enrolment frames.

Every card of a deck carries its index at the same place, so over the enrolment frames the
index glyphs stand out from everything else in the card's top band: a pixel inside the suit
glyph is ink on (nearly) every card of that suit and blank on some card of another suit, and a
pixel inside a rank glyph is ink on every card of that rank and blank on some other rank.
Pips and face pictures vary from card to card and fail that test. The boxes around those pixels are
the deck's rank and suit boxes, typically within a pixel of the glyphs, whatever the deck's
typeface and index size: a small suit glyph then fills its feature patch instead of a fifth
of a fixed box, and a big one is not cut.

The rank may sit above the suit (the common index) or beside it on the same row (a deck that
prints its suit in one top corner and its rank in the other). Decks where no consistent
glyphs are found (indices drawn light on dark, face cards without an index on every rank)
keep the fixed candidate boxes of :data:`vision.corner.INDEX_SPLITS`.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from shoe_controller.cards import Card
from vision.corner import Box, Split, white_balanced

REGION = (1.0, 0.4)  # the top band searched, as fractions of the card's width, height
SUIT_INK = 0.7  # ink on this share of a suit's frames (face cards may lack a suit glyph)
RANK_INK = 0.85  # ink on this share of a rank's frames
SAME_PLACE = 6  # pixels: the four suits' glyph boxes must agree this closely
MIN_RANKS = 10  # ranks whose glyph must be found next to the suit
SPECK = 0.25  # a suit glyph has at least this share of the largest consistent glyph's area
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

    suit_inks = [inks[suits == suit].mean(axis=0) for suit in np.unique(suits)]
    per_suit = [_glyphs(ink > SUIT_INK, shape) for ink in suit_inks]
    if len(per_suit) < 2:
        return None
    suit_box = _same_place(per_suit, suit_inks)
    if suit_box is None:
        return None

    rank_ranks = np.unique(ranks)
    needed = min(MIN_RANKS, len(rank_ranks))
    consistent = {rank: _glyphs(inks[ranks == rank].mean(axis=0) > RANK_INK, shape)
                  for rank in rank_ranks}
    stacked = [_union(above) for glyphs in consistent.values()
               if (above := [glyph for glyph in glyphs if _above(glyph, suit_box)])]
    rank_boxes = stacked if len(stacked) >= needed else _beside(consistent, suit_box, needed)
    if len(rank_boxes) < needed:
        return None
    return (_fraction(_union(rank_boxes), width, height),
            _fraction(suit_box, width, height))


def _above(glyph: _Pixels, suit: tuple[int, int, int, int]) -> bool:
    """Above the suit glyph, overlapping it across: the rank of the common index (a "10" is
    two glyphs, both kept)."""
    return glyph[3] <= suit[1] + PAD and glyph[0] < suit[2] and glyph[2] > suit[0]


def _beside(consistent: dict[int, list[_Pixels]], suit: tuple[int, int, int, int],
            needed: int) -> list[tuple[int, int, int, int]]:
    """Per rank, its glyph box on the suit's row, for a deck that prints rank and suit side
    by side. A pip or a court card's frame on that row can be consistent too, but only the
    rank glyph is at the same place on ``needed`` ranks or more: the glyphs kept are those
    in the place that many ranks agree on, with any glyph right next to them (the "1" of a
    "10")."""
    row = {rank: [glyph for glyph in glyphs if _same_row(glyph, suit)]
           for rank, glyphs in consistent.items()}
    shape = (max((glyph[3] for glyphs in row.values() for glyph in glyphs), default=0) + 1,
             max((glyph[2] for glyphs in row.values() for glyph in glyphs), default=0) + 1)
    votes = np.zeros(shape, np.int32)
    for glyphs in row.values():
        mask = np.zeros(shape, bool)
        for x0, y0, x1, y1, _ in glyphs:
            mask[y0:y1, x0:x1] = True
        votes += mask
    agreed = votes >= needed
    boxes = []
    for glyphs in row.values():
        held = [glyph for glyph in glyphs if agreed[glyph[1]:glyph[3], glyph[0]:glyph[2]].any()]
        if not held:
            continue
        box = _union(held)
        near = [glyph for glyph in glyphs
                if glyph[0] <= box[2] + SAME_PLACE and glyph[2] >= box[0] - SAME_PLACE]
        boxes.append(_union(near))
    return boxes


def _same_row(glyph: _Pixels, suit: tuple[int, int, int, int]) -> bool:
    """Beside the suit glyph (not on it), overlapping at least half the smaller's height."""
    x0, y0, x1, y1, _ = glyph
    across = min(x1, suit[2]) - max(x0, suit[0])
    down = min(y1, suit[3]) - max(y0, suit[1])
    return across <= 0 and down >= 0.5 * min(y1 - y0, suit[3] - suit[1])


def _ink(samples: Sequence[tuple[np.ndarray, Card]]
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per enrolment image (all the same way up, :mod:`vision.orientation`): the top band's
    ink (1) and blank (0) pixels, split by Otsu's threshold on that image, with its rank and
    suit."""
    inks, ranks, suits = [], [], []
    for image, card in samples:
        view = white_balanced(image)
        height, width = view.shape[:2]
        band = view[:int(REGION[1] * height), :int(REGION[0] * width)]
        grey = band.min(axis=2)  # ink absorbs in some channel: a yellow or pale blue glyph too
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


def _same_place(per_suit: list[list[_Pixels]], suit_inks: list[np.ndarray]
                ) -> tuple[int, int, int, int] | None:
    """The glyph every suit has at the same place (the suit index); its box covers all the
    suits' glyphs. A pip can be at one place on most cards of a suit too, but not on the
    ace and the court cards, which carry the index as well: of several such glyphs (specks
    aside), the one whose ink is the most constant over each suit's frames."""
    def centre(glyph: _Pixels) -> np.ndarray:
        return np.array([(glyph[0] + glyph[2]) / 2, (glyph[1] + glyph[3]) / 2])

    def constancy(group: list[_Pixels]) -> float:
        shares = []
        for (x0, y0, x1, y1, _), ink in zip(group, suit_inks):
            inside = ink[y0:y1, x0:x1]
            shares.append(float(inside[inside > SUIT_INK].mean()))
        return float(np.mean(shares))

    groups: list[tuple[int, list[_Pixels]]] = []
    for first in per_suit[0]:
        group = [first]
        for others in per_suit[1:]:
            near = [glyph for glyph in others
                    if np.abs(centre(glyph) - centre(first)).max() <= SAME_PLACE]
            if not near:
                break
            group.append(max(near, key=lambda glyph: glyph[4]))
        else:
            groups.append((min(glyph[4] for glyph in group), group))
    if not groups:
        return None
    largest = max(size for size, _ in groups)
    candidates = [group for size, group in groups if size >= SPECK * largest]
    return _union(max(candidates, key=constancy))


def _union(boxes: Sequence[Sequence[int]]) -> tuple[int, int, int, int]:
    return (min(box[0] for box in boxes), min(box[1] for box in boxes),
            max(box[2] for box in boxes), max(box[3] for box in boxes))


def _fraction(box: tuple[int, int, int, int], width: int, height: int) -> Box:
    x0, y0, x1, y1 = box
    return (max(x0 - PAD, 0) / width, max(y0 - PAD, 0) / height,
            min(x1 + PAD, width) / width, min(y1 + PAD, height) / height)
