"""A court card's rank by the letter of its index, where a fixed camera shows the whole card
(issue 16).

A fixed camera's region is read by its look (:mod:`vision.roi`), and a number card also by
its pips (:mod:`vision.region_pips`). A court card has no pips to count, and its picture's
look does not carry over from the lights it was enrolled in to another (ece395: the look
alone read none of its court cards in a third light). Its index does: a "J", a "Q" or a "K"
printed in ink on paper, a shape whatever the light (ece395: about 10 pixels high, legible).

What is learnt, from the deck's own enrolment photos: every glyph-sized mark of every photo
(:data:`GLYPH_SIZE`: index ranks and suits, fragments of pictures, dust), its shape, and the
rank of the card it came from. A mark of a court card is its rank's *letter* where it recurs:
a mark of another photo of the same rank (another suit, another light) is like it
(:data:`LETTER_LIKENESS`) and clearly more like it than any mark of another rank
(:data:`LETTER_MARGIN`). An index's suit glyph (every rank has one) and a picture's
fragments (each card's own) do not recur so, and are no letters. A region's rank is read
from a mark only where its nearest learnt mark is a letter, like it and clearly more like it
than any mark of another rank, number cards' index digits included; every letter read in the
region must name the same rank. The suit is not read from the index (its suit glyph, seven
pixels across on ece395, tells hearts from diamonds no better than chance): the court
card's large pips beside its index letters are (:meth:`vision.region_pips.RegionPips.read`).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

GLYPH_SIZE = (0.06, 0.5)
"""A glyph's area against a pip's: an index's rank and suit (ece395: letters 0.12 to 0.32 of
a pip), not noise and not a pip."""
GLYPH_PATCH = 12
"""A glyph's shape: its ink over the paper in its bounding square (a pixel's margin), the
mark's own pixels only, resized to this many pixels a side."""
LETTER_LIKENESS = 0.7
"""The least likeness (cosine of the shapes) of a mark to its nearest learnt letter, and of
a learnt letter to another photo's mark of its rank."""
LETTER_MARGIN = 0.1
"""How much more like its nearest learnt letter a mark must be than like any learnt mark of
another rank. ece395, draws 2024, 7 and 11, the test photos: with 0.7 and 0.1, 8, 9 and 8 of
12 court cards had their letters read, no number card's mark was read as a letter and none
wrong; with 0.6 and 0.05, 10, 11 and 12, one wrong (draw 2024)."""
COURT_RANKS = (11, 12, 13)


@dataclass(frozen=True)
class IndexLetters:
    """A deck's learnt glyph-sized marks (:func:`learn_index_letters`), some of them its
    court ranks' letters."""

    looks: np.ndarray
    """(marks, GLYPH_PATCH ** 2) each enrolment mark's shape, a unit vector."""
    ranks: np.ndarray
    """(marks,) the rank (1-13) of the card each mark was seen on."""
    letters: np.ndarray
    """(marks,) whether the mark is its rank's letter (a court rank's, recurring)."""

    def read(self, dark: np.ndarray, darkness: np.ndarray, pip_area: float
             ) -> tuple[int, np.ndarray, float] | None:
        """The court rank (11-13) a region's index letters name, their centres (pixels) and
        the least likeness of one to its nearest learnt letter; None unless at least one
        mark is read as a letter and all that are name one rank. ``dark``: the region's ink
        (nonzero), ``darkness``: how much darker than its paper each pixel is (a share),
        ``pip_area``: a pip's area, a share of the region's."""
        looks, centres = glyph_marks(dark, darkness, pip_area)
        if not len(looks):
            return None
        likeness = looks @ self.looks.T
        ranks, where, least = set(), [], 1.0
        for mark, nearest in enumerate(np.argmax(likeness, axis=1)):
            best = float(likeness[mark, nearest])
            if not self.letters[nearest] or best < LETTER_LIKENESS:
                continue
            others = likeness[mark, self.ranks != self.ranks[nearest]]
            if best - float(others.max(initial=-1.0)) < LETTER_MARGIN:
                continue
            ranks.add(int(self.ranks[nearest]))
            where.append(centres[mark])
            least = min(least, best)
        if len(ranks) != 1:
            return None
        return ranks.pop(), np.array(where), least

    @classmethod
    def from_arrays(cls, looks: np.ndarray, ranks: np.ndarray, letters: np.ndarray
                    ) -> IndexLetters:
        """Saved letters; ValueError when the arrays do not match."""
        if not (looks.ndim == 2 and looks.shape[1] == GLYPH_PATCH * GLYPH_PATCH
                and ranks.shape == (len(looks),) and letters.shape == (len(looks),)
                and np.all((ranks >= 1) & (ranks <= 13))
                and np.all(np.isin(ranks[letters.astype(bool)], COURT_RANKS))):
            raise ValueError("the index letters' looks, ranks and letters do not match")
        return cls(looks.astype(np.float32), ranks.astype(np.int64), letters.astype(bool))


def glyph_marks(dark: np.ndarray, darkness: np.ndarray, pip_area: float
                ) -> tuple[np.ndarray, np.ndarray]:
    """A region's glyph-sized marks (:data:`GLYPH_SIZE`): their shapes (unit vectors,
    :data:`GLYPH_PATCH`) and centres (pixels)."""
    height, width = dark.shape
    count, labels, stats, centres = cv2.connectedComponentsWithStats(dark, 8, cv2.CV_32S)
    size = stats[1:count, 4] / (pip_area * height * width)
    marks = np.flatnonzero((size >= GLYPH_SIZE[0]) & (size <= GLYPH_SIZE[1])) + 1
    looks = np.zeros((len(marks), GLYPH_PATCH * GLYPH_PATCH), np.float32)
    for row, mark in enumerate(marks):
        x, y, w, h, _ = stats[mark]
        side = max(w, h) + 2
        x0, y0 = int(x + w / 2 - side / 2), int(y + h / 2 - side / 2)
        xa, ya, xb, yb = max(x0, 0), max(y0, 0), min(x0 + side, width), min(y0 + side, height)
        square = np.zeros((side, side), np.float32)
        square[ya - y0:yb - y0, xa - x0:xb - x0] = np.where(
            labels[ya:yb, xa:xb] == mark, darkness[ya:yb, xa:xb], 0.0)
        look = cv2.resize(square, (GLYPH_PATCH, GLYPH_PATCH), interpolation=cv2.INTER_AREA)
        look = look.ravel() - look.mean()
        looks[row] = look / max(float(np.linalg.norm(look)), 1e-9)
    return looks, centres[marks].astype(np.float64)


def learn_index_letters(photos: list[tuple[np.ndarray, np.ndarray]], ranks: list[int],
                        pip_area: float) -> IndexLetters | None:
    """The glyph-sized marks of a deck's enrolment ``photos`` (each its ink mask and
    darkness, as :meth:`IndexLetters.read` takes them) with their cards' ``ranks`` (1-13),
    and which are court ranks' letters (see the module's docstring); None when no mark is
    one."""
    looks, mark_ranks, photo_of = [], [], []
    for photo, ((dark, darkness), rank) in enumerate(zip(photos, ranks, strict=True)):
        found, _ = glyph_marks(dark, darkness, pip_area)
        looks.append(found)
        mark_ranks += [rank] * len(found)
        photo_of += [photo] * len(found)
    if not mark_ranks:
        return None
    every = np.concatenate(looks)
    rank_of, seen_on = np.array(mark_ranks), np.array(photo_of)
    likeness = every @ every.T
    letters = np.zeros(len(every), bool)
    for mark in np.flatnonzero(np.isin(rank_of, COURT_RANKS)):
        elsewhere = seen_on != seen_on[mark]
        same = elsewhere & (rank_of == rank_of[mark])
        if not same.any():
            continue
        best = float(likeness[mark, same].max())
        other = float(likeness[mark, elsewhere & (rank_of != rank_of[mark])].max(initial=-1.0))
        letters[mark] = best >= LETTER_LIKENESS and best - other >= LETTER_MARGIN
    if not letters.any():
        return None
    return IndexLetters(every.astype(np.float32), rank_of.astype(np.int64), letters)
