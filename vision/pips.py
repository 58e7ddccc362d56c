"""Reading a number card by its pips: how many there are, and where (issue 16).

A whole card's read (:mod:`vision.model`) and its index's (:mod:`vision.index_corner`) both
compare appearances, and a blurred or shadowed 5, 6 or 8 can look like its neighbour to
both. Its pips say which it is another way: a number card carries as many pips as its rank
(an ace one), each the same size, laid out the same way on every card of that rank. So a
card whose pips are all in view and clean is read by counting them and by checking that
they lie as the same card's pips lay in the enrolment photos; a finger over a pip, a
shadow cutting one in two, or a card found a little off leaves a mark of another size
or a layout that fits no card's, and the pips then say nothing.

The pips tell the rank, not the suit (an 8 of hearts and an 8 of diamonds lie alike): a read
by the pips is taken only where one card that the appearance reads name is the pips' card
(:meth:`vision.recognise.Recogniser._read_pips`). What is learnt comes from the deck's own
enrolment photos, so a deck with another pip design is read by its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from vision.corner import Box

PIP_COUNTS = {rank: rank for rank in range(1, 11)}
"""The pips of each number card's rank (1, the ace, to 10); a court card has a picture."""
INK_SHARE = 0.3
"""A pixel is ink where it is this much darker than the paper around it (the paper's level
measured over more than a pip's width, so a card lit unevenly still has its pips found)."""
PAPER_REACH = 0.25
"""The paper's level around a pixel: the lightest over this share of the card's width, then
the darkest over the same (a closing): wider than any pip, so a pip never sets its own."""
MARGIN = 0.04
"""Each side of the rectified card left out (of its width): where a card found a little off
shows the table beside it."""
NOISE_SHARE = 0.2
"""Marks under this share of the deck's smallest pip are noise (the paper's texture, dust);
any larger mark counts, and must be a pip."""
AREA_SPREAD = (0.6, 1.6)
"""Every mark of a card read by its pips lies within these shares of that card's pip area
(learnt): a pip half hidden, or two run together, is not a pip."""
LEARN_NOISE = 0.002
"""At enrolment, before the pips' size is known: marks under this share of the card's area
are noise."""
PIP_RADIUS = 1.2
"""How far from its centre a pip reaches, over the radius of a disc of its area (a pip is
taller than it is wide)."""
MIN_IN_VIEW = 0.5
"""The least share of a card the frame cuts that must show for its pips in view to be read."""
MIN_TOLERANCE = 0.03
TOLERANCE_SLACK = 1.5
MAX_TOLERANCE = 0.08
"""How far (in card widths) a pip may lie from where the enrolment photos of the same card
had it: the farthest any enrolment photo's pips lay from the nearest other photo's of the
same card, times the slack, within these bounds."""


@dataclass(frozen=True)
class PipRead:
    """The cards (card indices) whose enrolled pips the card's pips match, and how near:
    the farthest pip from its place, in card widths (the nearest card's)."""

    labels: frozenset[int]
    offset: float


@dataclass(frozen=True)
class PipsInView:
    """A card the frame cuts, by its pips in view: the cards (card indices) whose pips
    there they match, those they surely do not, and how near the nearest match lies."""

    matched: frozenset[int]
    unmatched: frozenset[int]
    offset: float


@dataclass(frozen=True)
class PipReader:
    """A deck's number cards by their pips, learnt from its enrolment photos."""

    layouts: dict[int, tuple[np.ndarray, ...]]
    """Card index -> the enrolment photos' pip centres, each (pips, 2: x across, y down)
    as fractions of the card's width and height, as the photo's card lay (the card turned
    half round is tried too)."""
    areas: dict[int, float]
    """Card index -> the median area of its pips, in pixels of the rectified card."""
    tolerance: float
    box: Box
    """The deck's index box (fractions of the card, top-left); the index is no pip."""

    def _marks(self, card: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:func:`pip_marks` of a rectified card, noise being what is much smaller than
        this deck's smallest pip (:data:`NOISE_SHARE`)."""
        return pip_marks(card, self.box, NOISE_SHARE * min(self.areas.values()))

    def read(self, card: np.ndarray) -> PipRead | None:
        """The cards the rectified ``card``'s pips match, or None when they match none, or
        when a mark is no pip (another size: a finger, a shadow, a pip half hidden)."""
        centres, areas = self._marks(card)
        aspect = card.shape[0] / card.shape[1]
        matched: dict[int, float] = {}
        for label, layouts in self.layouts.items():
            if len(layouts[0]) != len(centres):
                continue
            low, high = (share * self.areas[label] for share in AREA_SPREAD)
            if not np.all((areas >= low) & (areas <= high)):
                continue
            offset = min(layout_offset(centres, layout, aspect) for layout in layouts)
            if offset <= self.tolerance:
                matched[label] = offset
        if not matched:
            return None
        return PipRead(frozenset(matched), min(matched.values()))

    def read_in_view(self, card: np.ndarray, in_view: np.ndarray) -> PipsInView | None:
        """The pips of a rectified ``card`` the frame cuts, where ``in_view`` (a mask of the
        rectified card, nonzero where it lies inside the frame) shows them whole, against
        the pips each learnt card would show there: the cards they match, and those they
        surely do not (a pip of theirs plainly in view missing, or one too many). A card
        with a pip too near the edge of the view to say whether it shows is neither.
        None when too little of the card shows (:data:`MIN_IN_VIEW`), or a mark in view is
        no pip."""
        height, width = card.shape[:2]
        view = (in_view > 0).astype(np.uint8)
        if view.mean() < MIN_IN_VIEW:
            return None
        radius = float(np.sqrt(max(self.areas.values()) / np.pi)) * PIP_RADIUS
        reach = self.tolerance * width  # (pixels) how far a pip may lie from its place
        # Distance of each pixel to the nearest pixel out of view: a pip centred where it
        # exceeds its radius shows whole.
        inside = cv2.distanceTransform(
            cv2.copyMakeBorder(view, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0),
            cv2.DIST_L2, 3)[1:-1, 1:-1]
        centres, areas = self._marks(card)
        whole = _lookup(inside, centres, width, height) > radius
        centres, areas = centres[whole], areas[whole]
        aspect = height / width
        matched: dict[int, float] = {}
        unmatched = set()
        for label, layouts in self.layouts.items():
            low, high = (share * self.areas[label] for share in AREA_SPREAD)
            clean = bool(np.all((areas >= low) & (areas <= high)))
            verdicts = [_in_view_offset(centres, placed, _lookup(inside, placed, width, height),
                                        radius, reach, aspect, clean, self.tolerance)
                        for layout in layouts for placed in (layout, 1.0 - layout)]
            offset = min(verdict for verdict in verdicts if verdict is not None) if all(
                verdict is not None for verdict in verdicts) else None
            if offset is not None and offset <= self.tolerance:
                matched[label] = offset
            elif offset is not None:
                unmatched.add(label)
        if not matched:
            return None
        return PipsInView(frozenset(matched), frozenset(unmatched), min(matched.values()))

    def to_dict(self) -> dict[str, object]:
        return {"tolerance": self.tolerance, "box": list(self.box),
                "cards": {str(label): {"area": self.areas[label],
                                       "layouts": [layout.tolist() for layout in layouts]}
                          for label, layouts in self.layouts.items()}}

    @classmethod
    def from_dict(cls, value: object) -> PipReader:
        """A saved pip reader; ValueError or TypeError when it is not one."""
        if not isinstance(value, dict):
            raise TypeError(f"{value!r} is not a pip reader")
        tolerance = float(value["tolerance"])
        box = tuple(float(side) for side in value["box"])
        cards = value["cards"]
        if not isinstance(cards, dict) or not cards or len(box) != 4 or not (
                0 < tolerance <= MAX_TOLERANCE) or not all(0 <= side <= 1 for side in box):
            raise ValueError("a pip reader needs cards, an index box and a tolerance")
        layouts: dict[int, tuple[np.ndarray, ...]] = {}
        areas: dict[int, float] = {}
        for key, entry in cards.items():
            label = int(key)
            count = PIP_COUNTS.get(label % 13 + 1) if 0 <= label < 52 else None
            shapes = tuple(np.asarray(layout, dtype=np.float64) for layout in entry["layouts"])
            if count is None or not shapes or any(
                    shape.shape != (count, 2) or not np.all((shape >= 0) & (shape <= 1))
                    for shape in shapes):
                raise ValueError(f"card {key}: not a number card's pip layouts")
            layouts[label] = shapes
            areas[label] = float(entry["area"])
            if not (np.isfinite(areas[label]) and areas[label] > 0):
                raise ValueError(f"card {key}: bad pip area {entry['area']!r}")
        return cls(layouts, areas, tolerance, (box[0], box[1], box[2], box[3]))


def pip_marks(card: np.ndarray, box: Box, noise: float) -> tuple[np.ndarray, np.ndarray]:
    """The ink marks of a rectified card outside its two index corners and margins: their
    centres (marks, 2: x across, y down) as fractions of the card's width and height, and
    their areas in pixels, the marks under ``noise`` pixels left out."""
    height, width = card.shape[:2]
    grey = cv2.cvtColor(card, cv2.COLOR_BGR2GRAY) if card.ndim == 3 else card
    reach = max(3, int(PAPER_REACH * width) | 1)
    paper = cv2.morphologyEx(grey, cv2.MORPH_CLOSE,
                             cv2.getStructuringElement(cv2.MORPH_RECT, (reach, reach)))
    ink = (paper.astype(np.int16) - grey > INK_SHARE * paper.astype(np.float32)).astype(
        np.uint8)
    margin = round(MARGIN * width)
    ink[:margin] = ink[height - margin:] = 0
    ink[:, :margin] = ink[:, width - margin:] = 0
    x1, y1 = round(box[2] * width), round(box[3] * height)
    ink[:y1, :x1] = 0
    ink[height - y1:, width - x1:] = 0  # the other index, the card turned half round
    count, _, stats, centroids = cv2.connectedComponentsWithStatsWithAlgorithm(
        ink, 8, cv2.CV_32S, cv2.CCL_BBDT)
    areas = stats[1:count, cv2.CC_STAT_AREA].astype(np.float64)
    kept = areas >= noise
    centres = centroids[1:count][kept] / (width, height)
    return centres, areas[kept]


def layout_offset(centres: np.ndarray, layout: np.ndarray, aspect: float) -> float:
    """How far the pips ``centres`` lie from an enrolled ``layout`` of as many (both as
    fractions of the card's width and height, on a card ``aspect`` times as tall as it is
    wide): :func:`paired_offset`, the card as it lies or turned half round, whichever fits
    better. In card widths."""
    return min(paired_offset(centres, layout, aspect),
               paired_offset(centres, 1.0 - layout, aspect))


def paired_offset(centres: np.ndarray, pips: np.ndarray, aspect: float) -> float:
    """The farthest of ``centres`` from its partner among ``pips`` (or of ``pips`` from
    theirs, if fewer), paired so that the distances' sum is least
    (:func:`scipy.optimize.linear_sum_assignment`). In card widths."""
    # Imported here: scipy.optimize takes about half a second to import, and every user of
    # the recogniser would pay it at start, though pips are read only on doubtful frames.
    from scipy.optimize import linear_sum_assignment

    scale = np.array([1.0, aspect])
    distances = np.linalg.norm((centres[:, None, :] - pips[None, :, :]) * scale, axis=2)
    rows, columns = linear_sum_assignment(distances)
    return float(distances[rows, columns].max())


def _in_view_offset(centres: np.ndarray, placed: np.ndarray, room: np.ndarray, radius: float,
                    reach: float, aspect: float, clean: bool, tolerance: float
                    ) -> float | None:
    """How far the marks in view (``centres``) lie from the pips of one placed layout that
    show (``room``: each pip's distance in pixels to the edge of the view; a pip of
    ``radius`` shows whole beyond it), in card widths; infinite when they surely do not
    match (a mark not a pip's size: not ``clean``; fewer marks than pips surely show, or
    more than could; the pips that surely show far from the marks); None when it cannot be
    told (a pip within ``reach`` pixels of showing whole, that may or may not be seen)."""
    sure = placed[room > radius + reach]
    maybe = int(np.count_nonzero(np.abs(room - radius) <= reach))
    if not clean or len(centres) < len(sure) or len(centres) > len(sure) + maybe:
        return np.inf
    if not len(centres):
        return None  # nothing in view, nothing expected: no evidence either way
    if maybe:
        if len(sure) and paired_offset(sure, centres, aspect) > tolerance:
            return np.inf
        return None
    return paired_offset(centres, sure, aspect)


def _lookup(image: np.ndarray, points: np.ndarray, width: int, height: int) -> np.ndarray:
    """``image``'s values at ``points`` (fractions of its width and height), the nearest
    pixel; 0 beyond it."""
    x = np.round(points[:, 0] * width).astype(int)
    y = np.round(points[:, 1] * height).astype(int)
    within = (x >= 0) & (x < width) & (y >= 0) & (y < height)
    values = np.zeros(len(points), np.float32)
    values[within] = image[y[within], x[within]]
    return values


def learn_pips(cards: Sequence[np.ndarray], labels: Sequence[int], box: Box
               ) -> PipReader | None:
    """A deck's pip reader from its rectified whole enrolment cards and their card indices:
    each number card whose photo shows exactly its pips, clean (as many marks, alike in
    size), learns where they lie; a card with fewer than two such photos is not read by
    its pips. None when no card is."""
    clean: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}
    for card, label in zip(cards, labels, strict=True):
        count = PIP_COUNTS.get(label % 13 + 1)
        if count is None:
            continue
        height, width = card.shape[:2]
        centres, areas = pip_marks(card, box, LEARN_NOISE * height * width)
        if len(areas) != count:
            continue
        middle = float(np.median(areas))
        if np.all((areas >= AREA_SPREAD[0] * middle) & (areas <= AREA_SPREAD[1] * middle)):
            clean.setdefault(int(label), []).append((centres, areas))
    clean = {label: seen for label, seen in clean.items() if len(seen) >= 2}
    if not clean:
        return None
    aspect = cards[0].shape[0] / cards[0].shape[1]
    farthest = 0.0
    for seen in clean.values():
        for one, (centres, _) in enumerate(seen):
            farthest = max(farthest, min(layout_offset(centres, other, aspect)
                                         for two, (other, _) in enumerate(seen) if two != one))
    tolerance = min(MAX_TOLERANCE, max(MIN_TOLERANCE, TOLERANCE_SLACK * farthest))
    return PipReader({label: tuple(centres for centres, _ in seen)
                      for label, seen in clean.items()},
                     {label: float(np.median(np.concatenate([areas for _, areas in seen])))
                      for label, seen in clean.items()},
                     tolerance, box)
