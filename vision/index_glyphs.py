"""A second read of an index corner: its glyphs cut out and brought to one size (issue 16).

The corner reader (:mod:`vision.index_corner`) reads an index in fixed boxes of the
rectified card, on a fine grid of cells: a card placed a few per cent off, or at another
scale (found in part, or by its index alone), moves its glyphs across the cells, and a plain
J or 8 is then read unsurely (cardai's JH_s2_08: "J" in full view, 0.05 against a threshold
of 0.3). A reader of printed characters cuts each glyph out first. This one does: the rank
glyph (with its second glyph, a "10") and the suit under it, found as ink near the corner
(:func:`vision.index_corner.corner_glyphs`), each cropped to its own box and resampled to
one size, so where the glyph lies and how large it is no longer count, only its shape; the
rank's width over its height and the suit's redness are kept beside them.

Only an index whose rank has its suit under it is read: a blurred rank lost, and a pip's
edge or the suit taken for it, looks like any card once cut out (cardai draws 11 and 3,
before this rule: TH_s1_04 read as 9H, the blurred 9H_s1_07 as TH, the corner reader
agreeing at 0.179 and 0.246).

It is read by nearest neighbour against the enrolment corners and a few of their jittered
copies, its distance limit set from held-out reads as the corner reader's is
(:func:`vision.calibration.held_out_limits`). It decides nothing alone: a corner read under the
corner threshold (though over :data:`SECOND_READ_FLOOR`) is taken when this read names the
same card surely (:meth:`vision.recognise.Recogniser._read_index`), two reads of the same
glyphs by unlike features; its threshold is set for that use (:func:`learn_glyph_reader`).
cardai, 5 photos per card, right of 771 on draws 2024, 7, 11 and 3: 719, 721, 711 and 721
with it, 702, 713, 701 and 709 without, none wrong either way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

import cv2
import numpy as np

from vision.calibration import held_out_limits
from vision.corner import Box, white_balanced
from vision.index_corner import (
    card_thresholds,
    corner_glyphs,
    nearest_with_margin,
    pair_distances,
    split_thresholds,
    threshold_of,
)
from vision.model import card_of
from vision.roi import first_glyph, suit_under

RANK_PATCH = (20, 30)  # width, height a rank glyph is resampled to
SUIT_PATCH = (16, 16)
SUIT_WEIGHT = 0.5
"""The suit's shape against the rank's (a suit is a simpler, smaller shape)."""
ASPECT_WEIGHT = 0.5
"""The rank's width over its height, which the resampling to one size takes away (a 1 and a
7 resampled alike differ in it)."""
GLYPH_MIN_THRESHOLD = 0.3
"""The least confidence a glyph read needs to bear out a corner read, whatever the held-out
reads allow (the corner reader's own floor, :data:`vision.index_corner.MIN_CORNER_THRESHOLD`)."""
SECOND_READ_FLOOR = 0.15
"""The least confidence of a corner read a sure glyph read may bear out: half the corner
reader's own floor (:data:`vision.index_corner.MIN_CORNER_THRESHOLD`). Under it, a corner
read is near a toss between two cards, and two reads of the same glyphs can be wrong
together."""

Glyph = tuple[int, int, int, int]  # x, y, width, height


def glyph_vector(view: np.ndarray, box: Box) -> np.ndarray | None:
    """The vector of a rectified card's top-left index (``box``: where the corner reader
    reads it), its glyphs each cut out and resampled to one size; None unless a rank with
    its suit under it (:func:`vision.roi.suit_under`) lies near the corner."""
    card = white_balanced(view)
    boxes = corner_glyphs(card, box)
    if not boxes:
        return None
    first = first_glyph(boxes)
    suit = suit_under(first, boxes)
    if suit is None:
        # No rank with its suit under it: what was found is not an index (a pip's edge, a
        # blurred rank lost and its suit taken for it), and cut out it may look like any.
        return None
    rank = _rank_with_second_glyph(first, boxes)
    dark = card.min(axis=2)  # red ink as dark as black
    return np.concatenate([
        _shape(dark, rank, RANK_PATCH), np.array([ASPECT_WEIGHT * rank[2] / rank[3]]),
        SUIT_WEIGHT * _shape(dark, suit, SUIT_PATCH), np.array([_redness(card, suit)]),
    ]).astype(np.float32)


def glyph_length() -> int:
    """The length of a :func:`glyph_vector`."""
    return RANK_PATCH[0] * RANK_PATCH[1] + 1 + SUIT_PATCH[0] * SUIT_PATCH[1] + 1


def _rank_with_second_glyph(rank: Glyph, boxes: Sequence[Glyph]) -> Glyph:
    """The rank glyph's box, widened to take in a glyph beside it on its row, of about its
    height (the "0" of a "10" printed as two glyphs)."""
    x, y, width, height = rank
    beside = [other for other in boxes
              if other != rank and abs((other[1] + other[3] / 2) - (y + height / 2))
              <= 0.3 * height and 0.7 * height <= other[3] <= 1.3 * height
              and x < other[0] <= x + width + 0.5 * height]
    members = [rank, *beside]
    left, top = min(one[0] for one in members), min(one[1] for one in members)
    right = max(one[0] + one[2] for one in members)
    bottom = max(one[1] + one[3] for one in members)
    return left, top, right - left, bottom - top


def _shape(dark: np.ndarray, glyph: Glyph, size: tuple[int, int]) -> np.ndarray:
    """A glyph's box (a pixel of paper round it) resampled to ``size``, its mean taken away
    and scaled to unit length: its shape, whatever its ink's contrast."""
    x, y, width, height = glyph
    patch = dark[max(y - 1, 0):y + height + 1, max(x - 1, 0):x + width + 1].astype(np.float32)
    patch = cv2.resize(patch, size, interpolation=cv2.INTER_AREA)
    patch -= patch.mean()
    length = float(np.linalg.norm(patch))
    return (patch / length if length > 0 else patch).ravel()


def _redness(card: np.ndarray, glyph: Glyph) -> float:
    """How much redder than grey a glyph's box is on average (0..1)."""
    x, y, width, height = glyph
    patch = card[y:y + height, x:x + width].astype(np.float32)
    return float(np.clip((patch[..., 2] - patch[..., :2].mean(axis=-1)).mean() / 255, 0, 1))


@dataclass(frozen=True)
class GlyphRead:
    """The nearest enrolled index by its glyphs: card index (0..51), the relative margin
    over the nearest other card, the distance."""

    label: int
    confidence: float
    distance: float


@dataclass(frozen=True)
class GlyphReader:
    """A deck's index glyphs, learnt at enrolment (:func:`learn_glyph_reader`)."""

    vectors: np.ndarray  # (rows, D) float32
    labels: np.ndarray  # (rows,) card index 0..51
    box: Box
    max_distance: float
    threshold: float
    card_thresholds: dict[int, float] | None = None
    """The cards whose glyph reads need less than :attr:`threshold`, and what they need
    (:func:`vision.index_corner.card_thresholds`); None: every card needs the threshold."""

    def threshold_for(self, label: int) -> float:
        """The confidence a glyph read naming card ``label`` must reach."""
        return threshold_of(label, self.threshold, self.card_thresholds)

    def read(self, view: np.ndarray) -> GlyphRead | None:
        """The index at the top-left of a rectified card, by its glyphs; None when none is
        found, or only one card was enrolled."""
        vector = glyph_vector(view, self.box)
        if vector is None:
            return None
        return _nearest(np.linalg.norm(self.vectors - vector[None, :], axis=1), self.labels)

    def names(self, views: Iterable[np.ndarray], label: int) -> bool:
        """Whether the surest glyph read of ``views`` (rectified cards, the index to read at
        the top-left) that looks like the deck names card ``label`` over the threshold."""
        reads = [read for read in map(self.read, views)
                 if read is not None and read.distance <= self.max_distance]
        if not reads:
            return False
        surest = max(reads, key=lambda read: read.confidence)
        return surest.label == label and surest.confidence >= self.threshold_for(label)

    def tells_apart(self, views: Iterable[np.ndarray], card: int, other: int) -> bool:
        """Whether the glyphs of ``views`` (rectified cards, the index at the top-left) say
        card ``card`` and not ``other``, a card of the same suit or the same rank that the
        deck never saw (:attr:`vision.model.DeckModel.missing`), by the glyph the two
        differ in alone: the rank of two cards of one suit, the suit of two of one rank.
        The deck knows that glyph from its other cards (a missing JS's rank from JH, JD
        and JC, its suit from the other spades), so the surest read of it must name
        ``card``'s over every other the deck knows, by this reader's threshold, and
        ``other``'s must be among them; an index unlike the deck's says nothing, and a
        second corner whose glyph surely names ``other``'s says no (the two corners of one
        card disagreeing)."""
        mine, theirs = card_of(card), card_of(other)
        by_rank = mine.suit == theirs.suit
        if by_rank == (mine.rank == theirs.rank):
            raise ValueError(f"{mine.code} and {theirs.code} share neither only their suit "
                             f"nor only their rank")
        values, want, apart = ((self._ranks, mine.rank, theirs.rank) if by_rank
                               else (self._suits, int(mine.suit), int(theirs.suit)))
        if not np.any(values == apart):
            return False  # (the deck never saw that rank or suit: nothing to tell it by)
        part = slice(0, _RANK_PART) if by_rank else slice(_RANK_PART, None)
        surest: GlyphRead | None = None
        for view in views:
            vector = glyph_vector(view, self.box)
            if vector is None or float(np.min(np.linalg.norm(
                    self.vectors - vector[None, :], axis=1))) > self.max_distance:
                continue
            read = _nearest(np.linalg.norm(self.vectors[:, part] - vector[None, part],
                                           axis=1), values)
            if read is None:
                continue
            if read.label == apart and read.confidence >= self.threshold:
                return False
            if surest is None or read.confidence > surest.confidence:
                surest = read
        return surest is not None and surest.label == want and (
            surest.confidence >= self.threshold)

    @cached_property
    def _ranks(self) -> np.ndarray:
        """Each row's card's rank (1..13)."""
        return self.labels % 13 + 1

    @cached_property
    def _suits(self) -> np.ndarray:
        """Each row's card's suit (as :class:`shoe_controller.cards.Suit`'s value)."""
        return self.labels // 13


_RANK_PART = RANK_PATCH[0] * RANK_PATCH[1] + 1
"""A :func:`glyph_vector`'s rank glyph and its width over its height; the suit's follow."""


def _nearest(distances: np.ndarray, labels: np.ndarray) -> GlyphRead | None:
    """The read from ``distances`` to rows of ``labels``; None with no other card within
    reach (no margin to tell)."""
    label, confidence, distance, runner_up = nearest_with_margin(distances, labels)
    return None if runner_up is None else GlyphRead(label, confidence, distance)


def learn_glyph_reader(views: Sequence[tuple[np.ndarray, int, int]], box: Box,
                       corner_reads: Sequence[tuple[int, float]]) -> GlyphReader | None:
    """A deck's glyph reader from rectified enrolment corners (each turned to the top-left)
    as ``(view, photo, card index)``: the photos' own corners and their copies, with each
    one's held-out corner read (``corner_reads``: the card and the confidence the corner
    reader gave it, read without its photo). None when fewer than two cards show glyphs, or
    no held-out glyph read is right.

    Its distance limit is set as the corner reader's is (:func:`vision.calibration.held_out_limits`:
    each row read against the other photos' rows, never its own photo's). Its threshold is
    set for what it is used for, bearing out a corner read (:data:`SECOND_READ_FLOOR` or
    surer): it stands above every held-out glyph read that named the same wrong card as the
    corner read of that view (x 1.3 + 0.05, as every held-out threshold), never under
    :data:`GLYPH_MIN_THRESHOLD`; per card, as the corner reader's
    (:func:`vision.index_corner.card_thresholds`): above those of the two cards a read could
    be. A glyph read alone is often wrong where its glyphs were cut
    out wrong (a court card's frame taken for its rank), and then as sure as a right read:
    its own held-out limit stood over nearly every read (cardai, draw 2024, before only an
    index with its suit under the rank was read: 0.78)."""

    found = [(vector, photo, label, corner) for vector, (_, photo, label), corner
             in zip((glyph_vector(view, box) for view, _, _ in views), views, corner_reads,
                    strict=True)
             if vector is not None]
    if len({label for _, _, label, _ in found}) < 2:
        return None
    vectors = np.stack([vector for vector, _, _, _ in found]).astype(np.float32)
    photos = np.array([photo for _, photo, _, _ in found])
    labels = np.array([label for _, _, label, _ in found])
    distances = pair_distances(vectors, vectors)
    distances[photos[:, None] == photos[None, :]] = np.inf
    reads = [_nearest(row, labels) if np.isfinite(row).any() else None for row in distances]
    known = np.array([read is not None for read in reads])
    if not known.any():
        return None
    kept = [read for read in reads if read is not None]
    max_distance, _, _ = held_out_limits(
        labels[known], np.array([read.distance for read in kept]),
        np.array([read.label for read in kept]), np.array([read.confidence for read in kept]),
        GLYPH_MIN_THRESHOLD)
    if max_distance <= 0:  # no held-out read right: a reader that could never bear one out
        return None
    wrong_together = [(label, read.label, read.confidence)
                      for read, (_, _, label, (corner_label, corner_conf))
                      in zip(reads, found, strict=True)
                      if read is not None and read.label != label
                      and read.label == corner_label and corner_conf >= SECOND_READ_FLOOR
                      and read.distance <= max_distance]
    truths, named, sureness = (np.array(column) for column in zip(
        *wrong_together, strict=True)) if wrong_together else (np.zeros(0, int),) * 3
    # Per card, as the corner reader's: a read is guarded against the wrong reads of the
    # two cards it could be (the strictest card's threshold is the reader's).
    threshold, relaxed = split_thresholds(
        card_thresholds(truths, named, sureness, GLYPH_MIN_THRESHOLD), labels)
    return GlyphReader(vectors, labels, box, max_distance, threshold, relaxed)
