"""The corner index of a rectified card, as a feature vector.

Decks put their index in different places (rank over suit in the top-left corner; suit left
and rank right along the top edge; a wide index on large-print decks), so a deck's *layout*,
the boxes that hold its index, is chosen at enrolment (:mod:`vision.model`) among
:data:`LAYOUTS` by how well each separates the enrolled cards.

Each box becomes a histogram of oriented gradients (shape, robust to exposure and glare) plus
a coarse "redness" map (hearts and diamonds against spades and clubs, robust to a colour
cast because it compares the red channel with the others in the same pixel).
"""

from __future__ import annotations

import cv2
import numpy as np

Box = tuple[float, float, float, float]  # x0, y0, x1, y1 as fractions of the card

WHOLE: Box = (0.0, 0.0, 1.0, 1.0)
WHOLE_CARD = "whole"  # the layout of the whole card alone
LAYOUTS: dict[str, tuple[Box, ...]] = {
    "top-left": ((0.0, 0.0, 0.2, 0.3), WHOLE),
    "top-left-wide": ((0.0, 0.0, 0.28, 0.36), WHOLE),
    "top-corners": ((0.0, 0.0, 0.24, 0.28), (0.76, 0.0, 1.0, 0.28), WHOLE),
    WHOLE_CARD: (WHOLE,),
}
"""Each layout ends with the whole card at coarse resolution: the index glyphs are small and
a blurred 5, 6 or 8 looks alike, but the pip pattern or the face picture around it does not.
``whole`` is the whole card alone, for a deck whose index does not tell the cards apart (no
suit in the index of the number cards, so 2S and 2C differ only in their pips) or whose corners
carry a busy pattern: enrolment takes it only when it reads more held-out frames right."""

PATCH = (32, 64)  # width, height each box is resampled to
REDNESS_CELLS = (4, 8)
REDNESS_WEIGHT = 0.25

WHOLE_PATCH = (48, 64)

_hog = cv2.HOGDescriptor(PATCH, (16, 16), (8, 8), (8, 8), 9)
_hog_whole = cv2.HOGDescriptor(WHOLE_PATCH, (16, 16), (8, 8), (8, 8), 9)


def box_features(card: np.ndarray, box: Box) -> np.ndarray:
    height, width = card.shape[:2]
    x0, y0, x1, y1 = box
    patch = card[int(y0 * height):max(int(y1 * height), int(y0 * height) + 2),
                 int(x0 * width):max(int(x1 * width), int(x0 * width) + 2)]
    whole = box == WHOLE
    patch = cv2.resize(patch, WHOLE_PATCH if whole else PATCH, interpolation=cv2.INTER_AREA)
    grey = cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY)
    shape = unit((_hog_whole if whole else _hog).compute(grey).ravel())
    redness = redness_map(patch, REDNESS_CELLS)
    return np.concatenate([shape, REDNESS_WEIGHT * redness]).astype(np.float32)


WHITE_QUANTILE = 0.95


def white_balanced(card: np.ndarray) -> np.ndarray:
    """Undo a colour cast: scale each channel so the card's brightest twentieth (its 95th
    percentile, on every fourth pixel of every fourth row) is neutral. A read balances a
    card or a corner several times, so this is done cheaply: the percentile by a partial
    sort (numpy's linear interpolation), the gains by a lookup table of each channel's 256
    levels (the product truncated, as a float multiply cast to bytes would be)."""
    if card.ndim != 3 or card.shape[2] != 3 or card.dtype != np.uint8:
        raise ValueError(f"white balance needs a BGR image of bytes, not {card.shape} "
                         f"{card.dtype}")
    small = card[::4, ::4].reshape(-1, 3).T.copy()  # (3, pixels): each channel contiguous
    place = WHITE_QUANTILE * (small.shape[1] - 1)
    low = int(place)
    high = min(low + 1, small.shape[1] - 1)
    ordered = np.partition(small, (low, high), axis=1).astype(np.float32)
    white = ordered[:, low] + (ordered[:, high] - ordered[:, low]) * np.float32(place - low)
    white = np.maximum(white, np.float32(16.0))
    gains = white.max() / white
    levels = np.arange(256, dtype=np.float32)[:, None] * gains[None, :]
    table = np.clip(levels, 0, 255).astype(np.uint8).reshape(256, 1, 3)
    balanced: np.ndarray = cv2.LUT(card, table)
    return balanced


def features(card: np.ndarray, layout: str) -> np.ndarray:
    """The unit-length feature vector of the card's index boxes for ``layout``."""
    card = white_balanced(card)
    return unit(np.concatenate([box_features(card, box) for box in LAYOUTS[layout]]))


def features_by_layout(card: np.ndarray) -> dict[str, np.ndarray]:
    """:func:`features` for every layout, each box computed once (enrolment tries every
    layout, and they all share the whole card)."""
    card = white_balanced(card)
    boxes = {box: box_features(card, box)
             for box in dict.fromkeys(box for boxes in LAYOUTS.values() for box in boxes)}
    return {layout: unit(np.concatenate([boxes[box] for box in layout_boxes]))
            for layout, layout_boxes in LAYOUTS.items()}


def unit(vector: np.ndarray) -> np.ndarray:
    """``vector`` scaled to length 1 (a zero vector stays zero)."""
    return vector / (float(np.linalg.norm(vector)) + 1e-6)


def redness_map(patch: np.ndarray, cells: tuple[int, int]) -> np.ndarray:
    """How much redder than grey each of ``cells`` of a BGR patch is (0..1), flattened: a
    heart and a spade differ in colour as well as shape."""
    blue, green, red = cv2.split(patch.astype(np.float32) / 255.0)
    redness = np.clip(red - (green + blue) / 2, 0, 1)
    return cv2.resize(redness, cells, interpolation=cv2.INTER_AREA).ravel()


def orientations(card: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rectified card and the card turned half round: which short edge came out on top
    depends on how the card lies, so both are enrolled."""
    return card, cv2.rotate(card, cv2.ROTATE_180)


# ----------------------------------------------------------------- rank and suit apart
Split = tuple[Box, Box]  # rank box, suit box

INDEX_SPLITS: dict[str, Split] = {
    "stacked": ((0.0, 0.0, 0.17, 0.14), (0.0, 0.12, 0.17, 0.25)),
    "stacked-large": ((0.0, 0.0, 0.2, 0.17), (0.0, 0.15, 0.2, 0.3)),
    "stacked-small": ((0.0, 0.0, 0.14, 0.12), (0.0, 0.1, 0.14, 0.21)),
}
"""Fixed candidates for where a deck's rank glyph and suit glyph sit, read apart: a card is
then told by a rank seen on every suit (four times the examples) and a suit seen on every rank
(thirteen times), and a small suit glyph is no longer outweighed by the rank beside it. Only
usable once the card's corners are the sharp ones (:func:`vision.detect.find_card`), so the
glyphs sit at the same place in every frame. Enrolment first tries the boxes it locates on the
deck itself (:func:`vision.glyphs.locate_index`); decks that put their index elsewhere keep a
card-level layout."""

GLYPH_PATCH = (32, 40)  # width, height: about the glyph's own size on the rectified card
_hog_glyph = cv2.HOGDescriptor(GLYPH_PATCH, (8, 8), (4, 4), (4, 4), 9)


def glyph_features(card: np.ndarray, box: Box, *, colour: bool) -> np.ndarray:
    """A unit vector for one glyph box: fine HOG (cells of 4 pixels), plus redness for the
    suit (a heart and a spade differ in shape *and* colour; a rank glyph does not)."""
    height, width = card.shape[:2]
    x0, y0, x1, y1 = box
    patch = card[int(y0 * height):int(y1 * height), int(x0 * width):int(x1 * width)]
    patch = cv2.resize(patch, GLYPH_PATCH, interpolation=cv2.INTER_AREA)
    parts = [unit(_hog_glyph.compute(cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY)).ravel())]
    if colour:
        parts.append(REDNESS_WEIGHT * redness_map(patch, (4, 4)))
    return unit(np.concatenate(parts).astype(np.float32))


def index_features(card: np.ndarray, split: Split) -> tuple[np.ndarray, np.ndarray]:
    """The rank and the suit vectors of a rectified card, read in ``split``'s boxes."""
    card = white_balanced(card)
    rank_box, suit_box = split
    return (glyph_features(card, rank_box, colour=False),
            glyph_features(card, suit_box, colour=True))
