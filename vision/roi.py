"""A configured region of interest: a fixed camera (inside the shoe, over the exit) whose
frames always show the card's index corner at about the same place.

Such a frame need not show the card's outline at all (a camera inside the shoe sees only the
index corner), so the card is not looked for: the configured crop of the frame (or the whole
frame) *is* the index, read as it lies (a fixed camera sees the card one way up). Enrolment
(:func:`vision.model.enroll` with ``roi``) adds jittered copies of each enrolment crop
(shifted, scaled, turned a little, lighter or darker, colour-cast, blurred), because a card
never stops at exactly the same place and the light changes, and learns a linear classifier
(:class:`Ridge`, ridge regression onto the cards) from them: the region holds much
that is the same on every card (the shoe, the table, the card's edge), which a nearest
neighbour counts as much as the index, and a learnt classifier learns to ignore. The decline
limits come from held-out reads: each enrolment frame read by a classifier learnt without it
(and its copies), :data:`FOLDS` times over.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.corner import REDNESS_WEIGHT, redness_map, unit, white_balanced

Roi = tuple[float, float, float, float]  # x0, y0, x1, y1 as fractions of the frame
WHOLE_FRAME: Roi = (0.0, 0.0, 1.0, 1.0)
ROI_LAYOUT = "roi"
"""The layout name of a deck model read in a region of interest."""

ROI_PATCH = (160, 160)
COARSE_PATCH = (32, 32)
_hog = cv2.HOGDescriptor(ROI_PATCH, (16, 16), (16, 16), (8, 8), 9)
_hog_coarse = cv2.HOGDescriptor(COARSE_PATCH, (16, 16), (8, 8), (8, 8), 9)


class RoiError(ValueError):
    pass


def parse_roi(text: str) -> Roi:
    """``whole`` or ``x0,y0,x1,y1``: fractions of the frame's width and height."""
    if text.strip().lower() == "whole":
        return WHOLE_FRAME
    try:
        numbers = tuple(float(part) for part in text.split(","))
    except ValueError:
        raise RoiError(f"bad region {text!r}: 'whole' or x0,y0,x1,y1 (fractions of the "
                       f"frame, e.g. 0,0,0.5,0.6)") from None
    return check_roi(numbers)


def check_roi(value: object) -> Roi:
    numbers = tuple(float(number) for number in value)  # type: ignore[union-attr]
    if len(numbers) != 4:
        raise RoiError(f"a region is four numbers x0,y0,x1,y1, not {len(numbers)}")
    x0, y0, x1, y1 = numbers
    if not (0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1):
        raise RoiError(f"region {x0},{y0},{x1},{y1} is not inside the frame (fractions, "
                       f"x0 < x1, y0 < y1)")
    return x0, y0, x1, y1


def crop(frame: np.ndarray, roi: Roi) -> np.ndarray:
    """The region of a BGR frame (a grey frame is made BGR)."""
    if frame.ndim == 2:
        frame = cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    height, width = frame.shape[:2]
    x0, y0, x1, y1 = roi
    left, top = round(x0 * width), round(y0 * height)
    right = max(round(x1 * width), left + 2)
    bottom = max(round(y1 * height), top + 2)
    return frame[top:bottom, left:right]


ANCHOR = (0.15, 0.15)
"""Where the index's first glyph is moved to in the region (fractions of its size)."""
INK_CONTRAST = 12  # grey levels darker than the paper around it
GLYPH_HEIGHT = (0.08, 0.5)  # a glyph's height, as a share of the region's
GLYPH_WIDTH = (0.03, 0.5)
UPRIGHT = 1.1  # a rank glyph's greatest width, as a share of its height


def glyph_boxes(region: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Boxes (x, y, width, height) of glyph-like ink in a white-balanced region: darker than
    the paper around it in every channel (red ink as much as black), glyph-sized, not thin
    lines, clear of the region's edges (a rod, the card's edge, a shadow run off them)."""
    dark = region.min(axis=2)
    height, width = dark.shape
    block = max(3, (min(height, width) // 4) | 1)
    ink = cv2.adaptiveThreshold(dark, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV,
                                block, INK_CONTRAST)
    count, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    boxes = []
    for x, y, box_width, box_height, area in stats[1:count]:
        if x <= 0 or y <= 0 or x + box_width >= width or y + box_height >= height:
            continue
        if not (GLYPH_HEIGHT[0] * height <= box_height <= GLYPH_HEIGHT[1] * height
                and GLYPH_WIDTH[0] * width <= box_width <= GLYPH_WIDTH[1] * width):
            continue
        if area < 0.15 * box_width * box_height or not (
                0.15 * box_height <= box_width <= 1.5 * box_height):
            continue
        boxes.append((int(x), int(y), int(box_width), int(box_height)))
    return boxes


def first_glyph(boxes: list[tuple[int, int, int, int]]) -> tuple[int, int, int, int]:
    """The index's first glyph among glyph boxes: a rank with its suit under it (the
    standard index's signature, which a blob of the shoe or the table does not have), the
    leftmost such; else the leftmost of the tall ones. Only upright boxes can be a rank (a
    rank glyph, even a "10" printed as one blob, is no wider than about its height): the
    edge of the shoe's top plate over a low card is a wide blob with the rank under it, and
    anchoring on it moved pp2021's 6D_26 far from every enrolment photo."""
    upright = [box for box in boxes if box[2] <= UPRIGHT * box[3]] or boxes
    indexed = [box for box in upright if suit_under(box, boxes) is not None]
    if indexed:
        return min(indexed, key=lambda box: box[0])
    tallest = max(box[3] for box in upright)
    return min((box for box in upright if box[3] >= 0.5 * tallest), key=lambda box: box[0])


def suit_under(rank: tuple[int, int, int, int], boxes: list[tuple[int, int, int, int]]
               ) -> tuple[int, int, int, int] | None:
    """The box among ``boxes`` that sits under ``rank`` as an index's suit sits under its
    rank (below it, about centred, not taller), the nearest; None if there is none."""
    x, y, width, height = rank
    under = [other for other in boxes
             if other is not rank and y + 0.6 * height <= other[1] <= y + 1.6 * height
             and abs((other[0] + other[2] / 2) - (x + width / 2)) <= 0.5 * width
             and 0.3 * height <= other[3] <= 1.2 * height]
    return min(under, key=lambda other: other[1]) if under else None


def anchored(region: np.ndarray) -> np.ndarray:
    """The region moved so that its first glyph (the leftmost of the tall ones: a standard
    index's rank) sits at :data:`ANCHOR`: a card never stops at exactly the same place in
    a fixed camera's view. Unmoved when no glyph is seen."""
    boxes = glyph_boxes(region)
    if not boxes:
        return region
    x, y, _, _ = first_glyph(boxes)
    height, width = region.shape[:2]
    shift = np.float32([[1, 0, ANCHOR[0] * width - x], [0, 1, ANCHOR[1] * height - y]])
    return cv2.warpAffine(region, shift, (width, height), borderMode=cv2.BORDER_REPLICATE)


def roi_features(region: np.ndarray) -> np.ndarray:
    """A unit vector for an index region: HOG at two scales (shape, robust to exposure; the
    coarse one to blur and small shifts) and a coarse redness map, after white balance, the
    index's first glyph moved to one place (:func:`anchored`)."""
    region = anchored(white_balanced(region))
    patch = cv2.resize(region, ROI_PATCH, interpolation=cv2.INTER_AREA)
    grey = cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY)
    parts = []
    for hog, size in ((_hog, None), (_hog_coarse, COARSE_PATCH)):
        image = grey if size is None else cv2.resize(grey, size, interpolation=cv2.INTER_AREA)
        parts.append(unit(hog.compute(image).ravel()))
    parts.append(REDNESS_WEIGHT * redness_map(patch, (8, 8)))
    return unit(np.concatenate(parts).astype(np.float32))


SCENE_GRID = (8, 8)
SCENE_CHROMA_GRID = (4, 4)
SCENE_CHROMA_SCALE = 16.0
"""Lab a/b units per unit of the scene vector: a colour 16 units off grey (felt, a tinted
wall) weighs as much as one standard deviation of the region's lightness layout."""


def scene_features(region: np.ndarray) -> np.ndarray:
    """What a fixed camera sees, coarsely: the region's lightness on an 8 x 8 grid, as
    standard scores (exposure and contrast taken out), and its colour (Lab a, b) on a
    4 x 4 grid, after white balance. The same camera's frames share it whatever card is in
    view (the shoe, the rod, the table round the card); another camera's frames (green felt
    under a webcam, a card whole in a slot) do not, even where their index shapes come as
    near as the deck's own photos (:func:`roi_features` compares shapes only). Compared by
    Euclidean distance, scaled by :data:`SCENE_GRID`'s size."""
    small = cv2.resize(white_balanced(region), SCENE_GRID, interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB).astype(np.float32)
    lightness = lab[..., 0].ravel()
    lightness = (lightness - lightness.mean()) / (float(lightness.std()) + 1e-3)
    chroma = cv2.resize(lab[..., 1:], SCENE_CHROMA_GRID, interpolation=cv2.INTER_AREA)
    chroma = (chroma.ravel() - 128.0) / SCENE_CHROMA_SCALE
    return (np.concatenate([lightness, chroma]) / SCENE_GRID[0]).astype(np.float32)


JITTERS = 16
"""Jittered copies of each enrolment region (besides the region itself)."""
RIDGE = 0.1
"""The ridge penalty of :class:`Ridge` (features are unit vectors; 1.0 and 0.01 read
fewer held-out pp2021 frames right)."""
FOLDS = 5


def jittered(region: np.ndarray, rng: np.random.Generator, count: int = JITTERS
             ) -> list[np.ndarray]:
    """``count`` copies of a region as a fixed camera might see it next time: shifted up to
    10 % of its size, scaled by up to 15 %, turned up to 4 degrees, lighter or darker (gain
    and gamma), a colour cast of up to 25 % per channel, some blurred. (A cast of 15 % and
    a scale of 10 % left more held-out pp2021 reads wrong, and the threshold higher: 66.7 %
    read on draw 7 against 80.7 %; 98.3 % against 97.9 % on draw 2024.)"""
    height, width = region.shape[:2]
    copies = []
    for _ in range(count):
        angle = rng.uniform(-4, 4)
        scale = rng.uniform(0.85, 1.15)
        matrix = cv2.getRotationMatrix2D((width / 2, height / 2), angle, scale)
        matrix[:, 2] += (rng.uniform(-0.1, 0.1) * width, rng.uniform(-0.1, 0.1) * height)
        moved = cv2.warpAffine(region, matrix, (width, height), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE).astype(np.float32) / 255.0
        cast = rng.uniform(0.75, 1.25, size=3).astype(np.float32)
        moved = np.clip(moved * cast * rng.uniform(0.7, 1.3), 0, 1) ** rng.uniform(0.7, 1.4)
        image = (moved * 255).astype(np.uint8)
        if rng.random() < 0.4:
            sigma = rng.uniform(0.5, 1.5) * max(width, height) / 128
            image = cv2.GaussianBlur(image, (0, 0), sigma)
        copies.append(image)
    return copies


class Ridge:
    """Ridge regression onto card scores, learnt from ``design`` (rows of features with a
    constant 1 appended) and ``targets`` (rows of 52 scores); :meth:`weights` for any subset
    of the rows (held-out reads) without recomputing the products: the primal form when
    there are more rows than features, else the dual (kernel) form."""

    def __init__(self, design: np.ndarray, targets: np.ndarray) -> None:
        self.design, self.targets = design, targets
        self.dual = len(design) < design.shape[1]
        if self.dual:
            self.kernel = design @ design.T
        else:
            self.gram, self.cross = design.T @ design, design.T @ targets

    def weights(self, keep: np.ndarray | None = None) -> np.ndarray:
        """(features + 1, 52) weights learnt from the rows ``keep`` (boolean; all if None)."""
        keep = np.ones(len(self.design), bool) if keep is None else keep
        if self.dual:
            kernel = self.kernel[np.ix_(keep, keep)]
            alpha = np.linalg.solve(kernel + RIDGE * np.eye(len(kernel)), self.targets[keep])
            return (self.design[keep].T @ alpha).astype(np.float32)
        out = ~keep
        gram = self.gram - self.design[out].T @ self.design[out]
        cross = self.cross - self.design[out].T @ self.targets[out]
        return np.linalg.solve(gram + RIDGE * np.eye(len(gram)), cross).astype(np.float32)


def with_bias(vectors: np.ndarray) -> np.ndarray:
    return np.hstack([vectors, np.ones((len(vectors), 1), vectors.dtype)])
