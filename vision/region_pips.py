"""Reading a number card by counting its pips, where a fixed camera shows the whole card
(issue 16).

A fixed camera's region is read by its appearance (:mod:`vision.roi`): a classifier learnt
from a few enrolment photos of each card. Where each card was photographed in one light
only (ece395: one photo per card in each of three lights, two enrolled), that read does not
carry over to another light, and is declined. A number card can be read another way, one
that does not depend on how the light fell when it was enrolled: its rank is how many pips
it has, laid out as that rank's pips lie, and its suit is the shape and colour of each pip,
learnt from every pip of every number card of the enrolment (a hundred or more pips of each
suit, not one photo of each card).

What is learnt from the deck's own enrolment photos, never set for one deck:

- the ink level (:data:`INK_LEVELS`): the one at which most of the number cards' enrolment
  photos show exactly as many pips as their rank (a shadow or a colour cast over part of a
  card is as dark as a red pip under one light and not under another);
- the pips' size, as a share of the region (a camera that gives larger frames shows larger
  pips; the share stays);
- each rank's layout, the pips' centres about their centroid in units of a pip's size (so
  a card a little off its usual place reads as well), and how far a layout may lie from
  the nearest learnt one of its rank (the leave-one-out offsets of the enrolment photos);
- each pip's appearance and colour (against the paper around it), with its suit.

A region is read by its pips only when every mark in it is either a pip (the learnt size)
or plainly no pip (much smaller: an index glyph, dust; much larger: the slot, a picture),
never a size between (half a pip cut off, two pips run together); when their count is a
rank 2 to 10 whose learnt layout they match; when they could not be part of a higher rank's
pips, the others in the dark or faint (ink at the loosest level, :data:`LOOSEST_LEVEL`: a
shadow over a 6's middle pair leaves a 4's corners, a glare over a 3's middle pip a 2's
two); and when they name one suit (:data:`SUIT_MARGIN`). Pips a shadow runs together at
the deck's ink level are looked for again at stricter levels (:data:`STRICTER_LEVELS`),
and pips a glare makes faint at looser ones (:data:`LOOSER_LEVELS`), none lost.

An ace has one pip, whose layout any single mark matches: it is read only where its one pip
lies as the enrolment aces' pips did (within the tolerance of one of them, in the region),
with blank paper round it (:data:`ACE_FIELD`: a court card's picture is ink there), no mark
at the loosest ink level near any other pip of a 3, a 5 or a 9 placed on it (pips faint
under a glare, :meth:`RegionPips._faint_higher`) and no higher card's pips in the dark.
An ace whose pip is larger than a number card's (a Bicycle ace of spades' ornate spade,
:class:`LargeAce`) is read where such an enrolment ace lay, its mark the only one larger
than an index glyph and of that ace's size, with paper round it blank but for the pip's own
decoration (:data:`LARGE_ACE_FIELD`).

A court card is read by the letter of its index (its rank, :mod:`vision.index_letters`) and
the large pips printed beside its index (its suit, at the deck's ink level or the first
level retried that shows one, :data:`COURT_PIP_REACH`, each pip named surely by its nearest
enrolment pips, :meth:`RegionPips._surely_named`, of a suit whose enrolment court cards
were read rightly, :attr:`RegionPips.court_suits`), never with more pips than a court card
prints (:data:`COURT_MOST_PIPS`); a court card without a letter read, or with no such pip,
is left to the appearance read.

A deck whose number cards show clean pips in fewer than :data:`MIN_CLEAN_SHARE` of their
enrolment photos (a camera that sees only the index corner, pp2021) learns no pip counter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import cv2
import numpy as np

from shoe_controller.cards import Suit
from vision.index_letters import (
    GLYPH_SIZE,
    LETTER_LIKENESS,
    IndexLetters,
    learn_index_letters,
)
from vision.pips import paired_offset

INK_LEVELS = (0.3, 0.4, 0.5, 0.6)
"""A pixel is ink where it is this share darker than the paper around it (the lightest
over a quarter of the region's width, then the darkest: a closing). The deck's level is
the one at which most of its number cards' enrolment photos show clean pips. ece395,
draws 2024, 7 and 11: 0.5 on each (55, 58 and 59 clean of the 72 enrolled number cards;
0.3 gave 38, 42 and 43: a shadow or a magenta cast over one side of a card is darker than
0.7 of the lit paper, and runs the pips there into it)."""
STRICTER_LEVELS = (0.6, 0.7, 0.8)
"""When a region's pips are not clear at the deck's ink level, they are looked for again at
each of these stricter levels above it (ink that much darker than its paper): where a
shadow or a colour cast dims part of the card, the dim paper is ink at the deck's level and
runs the pips there into it, and not at a stricter one. Every check holds at each level.
ece395, draws 2024, 7 and 11: 29, 23 and 23 of 52 read by their pips with them, 29, 19
and 20 without (measured by the counter alone), none wrong either way."""
LOOSER_LEVELS = (0.4, 0.3)
"""When a region's pips are clear neither at the deck's ink level nor at a stricter one,
they are looked for again at each of these looser levels below it (ink that much darker
than its paper, less than the deck's): the lamp's glare off a glossy card lifts the ink
under it towards its paper (ece395 session a: black pips at 0.28 to 0.56 of their paper
under it, 0.03 to 0.1 elsewhere), too light for the deck's level, not for a looser one. Every
pip the deck's level showed must still show, and every check holds. ece395, draws 2024, 7
and 11: 34, 29 and 31 of 52 read by their pips with them, 29, 23 and 23 without (the
counter alone), none wrong either way."""
LOOSEST_LEVEL = min(LOOSER_LEVELS + INK_LEVELS)
"""Where a higher card's other pips are looked for (:meth:`RegionPips._part_of_higher`): ink
at this level is ink at every level, so a pip lost in a shadow (dark at the deck's level)
shows there, and so does one a glare makes too faint for the level the pips were counted
at (a 3 whose middle pip lies under the glare shows a 2's two pips, laid out as a 2's are:
the simulated slot camera's 3D_c of seed 1 was read as 2D on draws 7 and 11 when only the
deck's level was looked at)."""
SUIT_MARGIN = 4
"""A card's suit is the one every pip names, or the one at least this many more of its pips
name than name any other, every pip naming a suit of its colour (red or black). A pip's
suit is read well on the enrolment photos (each enrolment pip named by the other photos'
pips: 97 to 99 % right on ece395's three draws) but less so in a light never enrolled, and
wrongly alike over one card (ece395 session c, draw 7: 8S_c's pips named spades 5 times and clubs 3
times, 6C_c's clubs 5 times and spades once). ece395, draws 2024, 7 and 11: 37, 36 and 32
of 52 read with it, 36, 31 and 32 with every pip naming the suit (the bench), none wrong;
simulated slot frames (seeds 2024, 1, 7, the same draws): none wrong either way."""
COURT_PIP_REACH = 2.0
"""A court card's suit is read from the pip-sized marks within this distance of its index
letters (units of the square root of a pip's area): its large pips beside the index, not
the picture's marks further in (ece395, the court cards read on draws 2024, 7 and 11: their
pips 1.09 to 1.36 from the nearest letter's centre, the next pip-sized mark 2.31 or more).
Another deck prints them elsewhere: at 1.7, the simulated slot camera's deck (``anglo``)
lost a court card in each of two runs of four. ece395, draws 2024, 7 and 11: 6, 7 and 7
court cards read so, none wrong (3, 4 and 5 at the deck's ink level alone: a court pip
there runs into the picture's frame)."""
COURT_MOST_PIPS = 2
"""A court card prints at most two pips of a number card's size (its large pips beside its
index letters; its picture's marks are larger or smaller): a region with more at the deck's
ink level is a number card whose count was not clear, never a court card (a simulated
Dondorf deck's 9D, its index "9" read as a "K", showed five). ece395's court cards show 0 to 2."""
SURE_NEIGHBOURS = 7
"""How many nearest enrolment pips name a court card's pip's suit, and tell its colour by
colour alone (:meth:`RegionPips._surely_named`). ece395's court cards read: every pip's 7
nearest named its suit (one pip's 6 of 7), and 6 or 7 of the 7 nearest by colour were of
its colour; simulated decks in magenta light: a Paris KD read as KH by its one pip's
nearest had 3 of 7 diamonds, an Anglo Modern QH named spades by 7 of 7 had 4 of 7 red by
colour."""
LARGE_ACE_FIELD = 0.2
"""The most of an ace's field (:data:`ACE_FIELD`) ink may cover round a pip larger than a
number card's: an ornate pip carries thin decoration round it (ece395's ace of spades: 0.08
to 0.15 of its field in its three photos), a court card's picture much more (0.34 or more
round every pip-sized mark of ece395's court cards)."""
PAPER_REACH = 0.25
MARGIN = 0.02
"""Each side of the region left out (of its width): a mark the region's edge cuts is no
pip to count."""
NOISE = 0.002
"""Marks under this share of the region's area are no pip and no evidence (dust, the
index's small glyphs, noise); ece395's pips are 0.017 to 0.019 of the region."""
PIP_SHAPE = (0.5, 2.0, 0.35)
"""A pip's bounding box is no more than twice as wide as high or high as wide, and the
pip fills at least this share of it (a line of the slot's edge is no pip)."""
PIP_EDGE = 0.4
"""Ink has a printed edge: a mark is ink only where it is at least this much darker (a
share of its own darkness) than the paper just round it (two pixels out). A dip in
uneven light, as dark as a faint pip at the loosest ink levels, fades into the paper
round it instead (the simulated slot camera's blotches: 0.20 to 0.24, one counted as the
third pip of a 2S; ece395's pips 0.49 or more, the simulated decks' 0.64 or more at the
1st percentile)."""
PIP_SPREAD = (0.6, 1.6)
"""A pip's area within these shares of the deck's learnt pip area."""
UNCLEAR = ((0.35, 0.6), (1.6, 2.6))
"""A mark in either range is perhaps part of a pip, or two pips run together: the count is
not clear, and the region is not read by its pips."""
RANKS = range(2, 11)
"""The ranks read by their pips (an ace's single pip matches any single mark's layout)."""
MIN_CLEAN_SHARE = 0.5
"""The least share of the number cards' enrolment photos (ranks 2 to 10) with clean pips
for a deck to learn a pip counter."""
LAYOUT_SLACK = 2.0
LAYOUT_TOLERANCE = (0.3, 0.8)
"""How far (in units of the square root of a pip's area) a card's pips may lie from the
nearest learnt layout of their count: the leave-one-out offsets' 90th percentile of the
enrolment photos times :data:`LAYOUT_SLACK`, within these bounds. ece395, draws 2024, 7,
11: the percentile 0.34 to 0.39 (tolerances 0.66 to 0.73). The wrong reads its test photos
gave at wider fixed tolerances lay beyond 1.0: a 6H with a pip lost read as 5H at 1.0 to
1.3, court cards whose pictures give two pip-sized marks read as 2s at 1.3 to 1.7."""
PATCH = 16
"""A pip's appearance: its ink over the paper, in its bounding square (a pixel's margin),
resized to this many pixels a side."""
COLOUR_WEIGHT = 0.5
"""A pip's colour (the log ratios of red and of blue to green of its ink against the paper
around it) counts this much beside its appearance (a unit vector) in the nearest pip."""
ACE_FIELD = (2.0, 0.2, 0.1)
"""An ace's blank field: within this radius of its pip (units of the square root of a pip's
area), pixels this share darker than their paper (fainter than any ink level) cover no more
than this share of it, the pip's own mark aside. ece395 at radius 2: its aces' fields 0.0 to
0.042 (the magenta cast of session c the most), every pip-sized mark of its court cards 0.34
or more (the picture round it)."""


class LargeAce(NamedTuple):
    """An enrolment ace whose one pip is larger than a number card's (a Bicycle ace of
    spades' ornate spade): where its centre lay and its area (shares of the region), and
    its suit (0-3, as card indices count them)."""

    centre: tuple[float, float]
    area: float
    suit: int


class Surface(NamedTuple):
    """A region as its pips are looked for in it, worked out once whatever the ink level:
    the region (BGR), its grey image, the paper's level round each pixel (the lightest
    over :data:`PAPER_REACH` of its width, then the darkest: a closing) and how much
    darker than its paper each pixel is (a share), all float32."""

    region: np.ndarray
    grey: np.ndarray
    paper: np.ndarray
    darkness: np.ndarray


def surface(region: np.ndarray) -> Surface:
    """The region's :class:`Surface`."""
    grey = cv2.cvtColor(region, cv2.COLOR_BGR2GRAY)
    reach = max(3, int(PAPER_REACH * grey.shape[1]) | 1)
    paper = cv2.morphologyEx(grey, cv2.MORPH_CLOSE,
                             cv2.getStructuringElement(cv2.MORPH_RECT, (reach, reach)))
    grey, paper = grey.astype(np.float32), paper.astype(np.float32)
    return Surface(region, grey, paper, 1.0 - grey / np.maximum(paper, 1.0))


@dataclass(frozen=True)
class PipCount:
    """A region read by its pips: the card index (0-51), how far its pips lay from the
    nearest learnt layout of its rank (units of a pip's size; 0 for a court card) and how
    many pips it has (each naming its suit; a court card's, those beside its letters)."""

    label: int
    offset: float
    pips: int
    letter: float | None = None
    """A court card's: the least likeness of its index letters to the nearest learnt one
    (:mod:`vision.index_letters`); None for a number card or an ace."""


@dataclass(frozen=True)
class RegionPips:
    """A deck's number cards by the count, layout and look of their pips in a fixed
    camera's region, learnt from its enrolment photos (:func:`learn_region_pips`)."""

    ink: float
    pip_area: float
    """A pip's area as a share of the region's."""
    layouts: dict[int, tuple[np.ndarray, ...]]
    """Rank (2-10) -> the enrolment photos' pips about their centroid (pips, 2), in units
    of the square root of a pip's area."""
    tolerance: float
    extent: tuple[float, float, float, float]
    """Where the enrolment photos showed pips (x0, y0, x1, y1, shares of the region's width
    and height): their centres' extent, and half a pip's size round it. A camera fixed over
    a slot sees its cards' pips there; beyond it lies the slot or the card's margin."""
    looks: np.ndarray
    """(pips, PATCH * PATCH) each enrolment pip's appearance, a unit vector."""
    colours: np.ndarray
    """(pips, 2) each enrolment pip's colour against its paper."""
    suits: np.ndarray
    """(pips,) each enrolment pip's suit (0-3, as card indices count them: label // 13)."""
    aces: tuple[tuple[float, float], ...] = ()
    """Where the enrolment photos' aces showed their one pip (its centre, shares of the
    region's width and height); empty when none showed one clean pip of a number card's
    size (an ace is then left to the appearance read)."""
    large_aces: tuple[LargeAce, ...] = ()
    """The enrolment aces whose one pip is larger than a number card's; empty when none."""
    letters: IndexLetters | None = None
    """The court ranks' index letters (:mod:`vision.index_letters`); None when none was
    learnt (court cards are then left to the appearance read)."""
    court_suits: tuple[int, ...] = ()
    """The suits whose court cards are read by their letters and pips: those whose
    enrolment court cards' pips the number cards' pips named rightly, and no other suit's
    as them (:func:`_court_suits_named_rightly`); empty: none."""
    _typical: dict[int, np.ndarray] = field(init=False, repr=False, compare=False)
    _round_middle: tuple[np.ndarray, ...] = field(init=False, repr=False, compare=False)
    """Of each rank with a pip at its typical layout's middle (a 3, a 5, a 9), its other
    pips about that one (:meth:`_faint_higher`)."""
    _retried: tuple[float, ...] = field(init=False, repr=False, compare=False)
    """The ink levels a region's pips are looked for again at, in turn: the stricter ones
    above the deck's, then the looser ones below it."""

    def read(self, region: np.ndarray) -> PipCount | None:
        """The number card in ``region`` (BGR) by its pips, or None when they do not say
        clearly which it is (see the module's docstring)."""
        seen_as = surface(region)  # (the same at every ink level)
        marks = _marks(seen_as, self.ink)
        labels, _, _, shares, ids = marks
        # Where a higher card's other pips are looked for, whatever level the pips were
        # counted at (:meth:`_part_of_higher`).
        loosest = marks if self.ink == LOOSEST_LEVEL else _marks(seen_as, LOOSEST_LEVEL)
        counted = found = _pips(seen_as, self.ink, self.pip_area, marks)
        read = None if found is None else self._read_found(region, found, loosest[0])
        if read is not None:
            return read
        size = shares / self.pip_area
        pip_sized = ids[(size >= PIP_SPREAD[0]) & (size <= PIP_SPREAD[1])]
        for ink in self._retried:
            found = _pips(seen_as, ink, self.pip_area)
            if found is None:
                continue
            # Every pip the deck's level showed must still show: a pip lighter than a
            # stricter level (red ink is lighter than black) vanishes from it, and the
            # pips left may lie as a lower rank's do (a 6 without its middle pair, a 4);
            # at a looser level, a pip may run into a shadow beside it.
            seen = labels[np.round(found[0][:, 1]).astype(int).clip(0, labels.shape[0] - 1),
                          np.round(found[0][:, 0]).astype(int).clip(0, labels.shape[1] - 1)]
            if not np.isin(pip_sized, seen).all():
                continue
            read = self._read_found(region, found, loosest[0])
            if read is not None:
                return read
        read = self._read_ace(seen_as, marks, counted, loosest)
        if read is None:
            read = self._read_large_ace(seen_as, marks)
        return read if read is not None else self._read_court(seen_as, marks)

    def confidence(self, count: PipCount) -> float:
        """How surely ``count`` (a :meth:`read`) names its card, 0 to 1: a number card's
        or an ace's pips by how near their learnt layout they lie, a court card's by how
        like its nearest learnt letter its least like letter is."""
        if count.letter is not None:
            return (count.letter - LETTER_LIKENESS) / (1.0 - LETTER_LIKENESS)
        return 1.0 - count.offset / self.tolerance

    def _read_large_ace(self, seen_as: Surface, marks: Marks) -> PipCount | None:
        """The ace whose one pip is larger than a number card's (:class:`LargeAce`) in a
        region whose ``marks`` at the deck's ink level show it: one mark larger than an
        index glyph (:data:`vision.index_letters.GLYPH_SIZE`), larger than a pip, within
        :data:`PIP_SPREAD` of an enrolment large ace's area and within the layout tolerance
        of where it lay, the paper round it blank but for the pip's own decoration
        (:data:`LARGE_ACE_FIELD`), and every large ace it so matches of one suit; None
        otherwise."""
        if not self.large_aces:
            return None
        found = _single_large_mark(marks, self.pip_area)
        if found is None:
            return None
        centre, area, own = found
        height, width = seen_as.grey.shape
        unit = float(np.sqrt(self.pip_area * height * width))
        near: dict[int, float] = {}  # suit -> the least offset of its large aces matched
        for ace in self.large_aces:
            offset = float(np.linalg.norm(np.array(ace.centre) * [width, height] - centre)) / unit
            if PIP_SPREAD[0] <= area / ace.area <= PIP_SPREAD[1] and offset <= self.tolerance:
                near[ace.suit] = min(offset, near.get(ace.suit, offset))
        if len(near) != 1 or not blank_round(seen_as, own, centre, unit, LARGE_ACE_FIELD):
            return None
        ((suit, offset),) = near.items()
        return PipCount(suit * 13, offset, 1)

    def _read_court(self, seen_as: Surface, marks: Marks) -> PipCount | None:
        """The court card in the region by its index letters (its rank,
        :mod:`vision.index_letters`) and the pips beside them (its suit): at the deck's
        ink level, else at the first level retried (:data:`STRICTER_LEVELS`,
        :data:`LOOSER_LEVELS`: a court pip a shadow runs into the picture's frame, or a
        glare makes faint), the pip-sized marks within :data:`COURT_PIP_REACH` of a letter
        must each name one suit surely (:meth:`_surely_named`); never a region whose
        ``marks`` at the deck's level show more pips than a court card prints
        (:data:`COURT_MOST_PIPS`). None otherwise."""
        if self.letters is None:
            return None
        size = marks[3] / self.pip_area
        if int(((size >= PIP_SPREAD[0]) & (size <= PIP_SPREAD[1])).sum()) > COURT_MOST_PIPS:
            return None
        letters = self.letters.read(*_letter_view(seen_as, self.ink), self.pip_area)
        if letters is None:
            return None
        rank, where, likeness = letters
        reach = COURT_PIP_REACH * float(np.sqrt(self.pip_area * _area(seen_as.region)))
        for ink in (self.ink, *self._retried):
            labels, stats, centres, shares, ids = (marks if ink == self.ink
                                                   else _marks(seen_as, ink))
            size = shares / self.pip_area
            apart = np.linalg.norm(centres[:, None, :] - where[None, :, :], axis=2)
            pips = np.flatnonzero((size >= PIP_SPREAD[0]) & (size <= PIP_SPREAD[1])
                                  & (apart.min(axis=1, initial=np.inf) <= reach))
            if not len(pips):
                continue
            suit = self._surely_named(*_looks(seen_as, labels, stats[pips], ids[pips]))
            if suit is None or suit not in self.court_suits:
                return None
            return PipCount(suit * 13 + rank - 1, 0.0, len(pips), likeness)
        return None

    def _surely_named(self, looks: np.ndarray, colours: np.ndarray) -> int | None:
        """The suit one or two pips name surely: each pip's :data:`SURE_NEIGHBOURS` nearest
        enrolment pips (by look and colour, as :meth:`_suits_named`) name it, all but one at
        most, its nearest as many by colour alone are of that suit's colour (red or black),
        all but one at most, and every pip names the same suit; None otherwise. A number
        card's suit is named by all its pips (:data:`SUIT_MARGIN`); a court card's by one or
        two, whose nearest enrolment pip alone can be of another suit in a light never
        enrolled."""
        distances, apart_in_colour = self._pip_distances(looks, colours)
        red = np.isin(self.suits, RED_SUITS)
        named = set()
        for row, in_colour in zip(distances, apart_in_colour, strict=True):
            near = self.suits[np.argsort(row, kind="stable")[:SURE_NEIGHBOURS]]
            counts = np.bincount(near, minlength=4)
            if counts.max() < SURE_NEIGHBOURS - 1:  # (a deck of fewer pips names none)
                return None
            suit = int(np.argmax(counts))
            alike = red[np.argsort(in_colour, kind="stable")[:SURE_NEIGHBOURS]] == (
                suit in RED_SUITS)
            if int(alike.sum()) < SURE_NEIGHBOURS - 1:
                return None
            named.add(suit)
        return named.pop() if len(named) == 1 else None

    def _read_ace(self, seen_as: Surface, marks: Marks,
                  found: tuple[np.ndarray, np.ndarray, np.ndarray] | None, loosest: Marks
                  ) -> PipCount | None:
        """The ace in the region whose ``marks`` at the deck's ink level show one pip
        (``found``: its :func:`_pips` there), as the module's docstring says (``loosest``:
        its marks at :data:`LOOSEST_LEVEL`); None otherwise."""
        if not self.aces or found is None or len(found[0]) != 1:
            return None
        region = seen_as.region
        height, width = seen_as.grey.shape
        unit = float(np.sqrt(self.pip_area * _area(region)))
        centre = found[0][0]
        offset = float(np.min(np.linalg.norm(
            np.array(self.aces) * [width, height] - centre, axis=1))) / unit
        if offset > self.tolerance:
            return None
        labels, _, mark_centres, _, ids = marks
        own = labels == ids[int(np.argmin(np.linalg.norm(mark_centres - centre, axis=1)))]
        if (self._part_of_higher(region, found[0], loosest[0])
                or self._faint_higher(loosest[2], centre, unit)):
            return None
        if not blank_round(seen_as, own, centre, unit):
            return None
        return PipCount(int(self._suits_named(found[1], found[2])[0]) * 13, offset, 1)

    def _read_found(self, region: np.ndarray,
                    found: tuple[np.ndarray, np.ndarray, np.ndarray], dark: np.ndarray
                    ) -> PipCount | None:
        """The card the pips ``found`` (:func:`_pips`) name, if they clearly name one and
        could not be part of a higher card's, the rest of whose pips lie in the dark
        (``dark``: nonzero where the loosest ink level sees ink, :data:`LOOSEST_LEVEL`)."""
        centres, looks, colours = found
        rank = len(centres)
        if rank not in self.layouts:
            return None
        layout = _normalised(centres, self.pip_area * _area(region))
        offset = min(_layout_offset(layout, learnt) for learnt in self.layouts[rank])
        if offset > self.tolerance:
            return None
        suit = _suit_named(self._suits_named(looks, colours))
        if suit is None or self._part_of_higher(region, centres, dark):
            return None
        return PipCount(suit * 13 + rank - 1, offset, rank)

    def _part_of_higher(self, region: np.ndarray, centres: np.ndarray, dark: np.ndarray
                        ) -> bool:
        """Whether the pips at ``centres`` (pixels) lie as some of a higher rank's layout
        (:attr:`_typical`) does, placed so, with each of that rank's other pips in the
        dark (nonzero in ``dark``: ink at the loosest level, :data:`LOOSEST_LEVEL`, where a
        shadow and a pip a glare makes faint both show) and where the camera's pips lie
        (:attr:`extent`). Pips lost in a shadow leave a lower rank's count, and often its
        layout: a 6 whose left column lies in a shadow shows a column of three, as a 3
        does; a 6 without its middle pair lies as a 4. A card that is what its pips say
        shows paper where a higher card's other pips would be."""
        unit = float(np.sqrt(self.pip_area * _area(region)))
        origin = centres.mean(axis=0)
        seen = (centres - origin) / unit
        count = len(seen)
        height, width = dark.shape
        low = np.array([self.extent[0] * width, self.extent[1] * height])
        high = np.array([self.extent[2] * width, self.extent[3] * height])
        for rank, typical in self._typical.items():
            if rank <= count:
                continue
            for placed in (typical, -typical):
                # Every placement that puts the first pip seen on one of the layout's pips:
                # (placements, layout pips, 2), and each pip seen's distance to each.
                moved = placed[None, :, :] + (seen[0] - placed)[:, None, :]
                apart = np.linalg.norm(seen[None, :, None, :] - moved[:, None, :, :], axis=3)
                nearest = apart.argmin(axis=2)  # (placements, pips seen)
                close = np.take_along_axis(apart, nearest[:, :, None], axis=2)[:, :, 0]
                for placement in np.flatnonzero(close.max(axis=1) <= self.tolerance):
                    used = nearest[placement]
                    if len(set(used.tolist())) < count:
                        continue  # (two pips seen taken for one of the layout's)
                    others = np.delete(moved[placement], used, axis=0) * unit + origin
                    # Where no pip of the camera's cards ever lay, none is hidden.
                    if not np.all((others >= low) & (others <= high)):
                        continue
                    x, y = np.round(others).astype(int).T
                    if np.all(dark[y.clip(0, height - 1), x.clip(0, width - 1)] > 0):
                        return True
        return False

    def _suits_named(self, looks: np.ndarray, colours: np.ndarray) -> np.ndarray:
        """Each pip's suit: that of the nearest enrolment pip by look and colour."""
        named: np.ndarray = self.suits[np.argmin(self._pip_distances(looks, colours)[0],
                                                 axis=1)]
        return named

    def _pip_distances(self, looks: np.ndarray, colours: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
        """How far each of the pips (``looks``, ``colours``) lies from each enrolment pip
        by look and colour (:data:`COLOUR_WEIGHT`), and by colour alone: (pips, enrolment
        pips) each."""
        in_colour = np.linalg.norm(self.colours[None, :, :] - colours[:, None, :], axis=2)
        return (np.linalg.norm(self.looks[None, :, :] - looks[:, None, :], axis=2)
                + COLOUR_WEIGHT * in_colour), in_colour

    def _faint_higher(self, faint: np.ndarray, centre: np.ndarray, unit: float) -> bool:
        """Whether a higher card with a pip at its layout's middle (a 3, a 5, a 9), placed
        with that pip on the one pip at ``centre`` (pixels), has a mark at the loosest ink
        level (``faint``: their centres) near any one of its other pips (within the widest
        layout tolerance, :data:`LAYOUT_TOLERANCE`: placed by one pip, not by all of them).
        Stricter than
        :meth:`_part_of_higher` (every other pip in the dark at its very place), as one
        pip, whose layout any single mark matches, needs: a 5 whose outer pips a glare
        makes faint and a finger half hides one of lies as an ace."""
        if not len(faint):
            return False
        for offsets in self._round_middle:
            for placed in (offsets, -offsets):
                others = centre + placed * unit
                apart = np.linalg.norm(faint[None, :, :] - others[:, None, :], axis=2)
                if np.any(apart <= LAYOUT_TOLERANCE[1] * unit):
                    return True
        return False

    def __post_init__(self) -> None:
        # Each rank's most typical learnt layout (the one nearest the others at its
        # farthest): one placement of each rank to try in :meth:`_part_of_higher`, not one
        # per enrolment photo; worked out once, not in a read.
        typical = {}
        for rank, layouts in self.layouts.items():
            farthest = [max((_layout_offset(one, other) for other in layouts if other is not one),
                            default=0.0) for one in layouts]
            typical[rank] = layouts[int(np.argmin(farthest))]
        object.__setattr__(self, "_typical", typical)
        round_middle = []
        for layout in typical.values():
            middle = int(np.argmin(np.linalg.norm(layout, axis=1)))
            if np.linalg.norm(layout[middle]) <= self.tolerance:
                round_middle.append(np.delete(layout - layout[middle], middle, axis=0))
        object.__setattr__(self, "_round_middle", tuple(round_middle))
        object.__setattr__(self, "_retried", (
            *(level for level in STRICTER_LEVELS if level > self.ink),
            *(level for level in LOOSER_LEVELS if level < self.ink)))

    def to_dict(self) -> dict[str, object]:
        """The parts saved in a model's description (the pips' looks are arrays of their
        own: :meth:`vision.model.DeckModel.save`)."""
        return {"ink": self.ink, "pip_area": self.pip_area, "tolerance": self.tolerance,
                "extent": list(self.extent), "aces": [list(centre) for centre in self.aces],
                "large_aces": [[*ace.centre, ace.area, ace.suit] for ace in self.large_aces],
                "letters": self.letters is not None,
                "court_suits": list(self.court_suits),
                "layouts": {str(rank): [layout.tolist() for layout in layouts]
                            for rank, layouts in self.layouts.items()}}

    @classmethod
    def from_parts(cls, value: object, looks: np.ndarray, colours: np.ndarray,
                   suits: np.ndarray,
                   letters: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
                   ) -> RegionPips:
        """A saved pip counter (``letters``: its index letters' looks, ranks and which are
        letters, :meth:`vision.index_letters.IndexLetters.from_arrays`); ValueError or
        TypeError when it is not one."""
        if not isinstance(value, dict):
            raise TypeError(f"{value!r} is not a pip counter")
        ink, pip_area = float(value["ink"]), float(value["pip_area"])
        tolerance = float(value["tolerance"])
        if not (0 < ink < 1 and 0 < pip_area < 1 and 0 < tolerance <= LAYOUT_TOLERANCE[1]):
            raise ValueError("a pip counter needs an ink level, a pip size and a tolerance")
        extent = tuple(float(share) for share in value["extent"])
        if len(extent) != 4 or not (0 <= extent[0] < extent[2] <= 1
                                    and 0 <= extent[1] < extent[3] <= 1):
            raise ValueError(f"a pip counter's extent {extent} is not inside the region")
        layouts: dict[int, tuple[np.ndarray, ...]] = {}
        raw = value["layouts"]
        if not isinstance(raw, dict) or not raw:
            raise ValueError("a pip counter needs its ranks' layouts")
        for key, entries in raw.items():
            rank = int(key)
            shapes = tuple(np.asarray(entry, dtype=np.float64) for entry in entries)
            if rank not in RANKS or not shapes or any(
                    shape.shape != (rank, 2) or not np.all(np.isfinite(shape))
                    for shape in shapes):
                raise ValueError(f"rank {key}: not a number card's pip layouts")
            layouts[rank] = shapes
        if not (looks.ndim == 2 and looks.shape[1] == PATCH * PATCH and len(looks) > 0
                and colours.shape == (len(looks), 2) and suits.shape == (len(looks),)
                and np.all((suits >= 0) & (suits < 4))):
            raise ValueError("the pips' looks, colours and suits do not match")
        aces = tuple((float(x), float(y)) for x, y in value.get("aces", []))
        if not all(0 <= x <= 1 and 0 <= y <= 1 for x, y in aces):
            raise ValueError(f"a pip counter's aces {aces} are not inside the region")
        large_aces = tuple(LargeAce((float(x), float(y)), float(area), int(suit))
                           for x, y, area, suit in value.get("large_aces", []))
        if not all(0 <= x <= 1 and 0 <= y <= 1 and 0 < area < 1 and suit in range(4)
                   for (x, y), area, suit in large_aces):
            raise ValueError(f"a pip counter's large aces {large_aces} are not inside the "
                             f"region")
        if value.get("letters", False) and letters is None:
            raise ValueError("a pip counter without its index letters")
        court_suits = tuple(int(suit) for suit in value.get("court_suits", []))
        if not all(suit in range(4) for suit in court_suits):
            raise ValueError(f"a pip counter's court suits {court_suits} are no suits")
        return cls(ink, pip_area, layouts, tolerance,
                   (extent[0], extent[1], extent[2], extent[3]), looks.astype(np.float32),
                   colours.astype(np.float32), suits.astype(np.int64), aces, large_aces,
                   IndexLetters.from_arrays(*letters)
                   if value.get("letters", False) and letters is not None else None,
                   court_suits)


def learn_region_pips(regions: Sequence[np.ndarray], labels: Sequence[int]
                      ) -> RegionPips | None:
    """A deck's pip counter from its enrolment regions (BGR) and their card indices, at the
    ink level (:data:`INK_LEVELS`) where most of its number cards show clean pips; None
    when fewer than :data:`MIN_CLEAN_SHARE` of them do at any level."""
    every = [surface(region) for region in regions]  # (each worked out once)
    surfaces = [(seen_as, label) for seen_as, label in zip(every, labels, strict=True)
                if label % 13 + 1 in RANKS]
    if not surfaces:
        return None
    # (label, region, its pips' centres, their area, looks, colours) of each clean photo
    best: tuple[float, list[tuple[int, np.ndarray, np.ndarray, float, np.ndarray,
                                  np.ndarray]]] | None = None
    for ink in INK_LEVELS:
        clean = []
        for seen_as, label in surfaces:
            found = _learning_pips(seen_as, ink, label % 13 + 1)
            if found is not None:
                clean.append((label, seen_as.region, *found))
        if best is None or len(clean) > len(best[1]):
            best = (ink, clean)
    assert best is not None
    ink, clean = best
    if len(clean) < MIN_CLEAN_SHARE * len(surfaces):
        return None
    pip_area = float(np.median([share for _, _, _, share, _, _ in clean]))
    layouts: dict[int, list[np.ndarray]] = {}
    for label, region, centres, share, _, _ in clean:
        layouts.setdefault(label % 13 + 1, []).append(
            _normalised(centres, share * _area(region)))
    offsets = [min(_layout_offset(one, other) for two, other in enumerate(seen) if two != index)
               for seen in layouts.values() if len(seen) > 1
               for index, one in enumerate(seen)]
    spread = float(np.percentile(offsets, 90)) if offsets else LAYOUT_TOLERANCE[1]
    tolerance = min(LAYOUT_TOLERANCE[1], max(LAYOUT_TOLERANCE[0], LAYOUT_SLACK * spread))
    # Where the pips lay: their centres as shares of each region, and half a pip round them.
    shares = np.concatenate([centres / [region.shape[1], region.shape[0]]
                             for _, region, centres, _, _, _ in clean])
    reach = np.sqrt(pip_area) / 2
    low, high = np.clip(shares.min(axis=0) - reach, 0, 1), np.clip(shares.max(axis=0) + reach, 0, 1)
    extent = (float(low[0]), float(low[1]), float(high[0]), float(high[1]))
    looks = np.concatenate([pips for _, _, _, _, pips, _ in clean])
    colours = np.concatenate([colour for _, _, _, _, _, colour in clean])
    suits = np.concatenate([np.full(len(pips), label // 13)
                            for label, _, _, _, pips, _ in clean])
    counter = RegionPips(
        ink, pip_area, {rank: tuple(seen) for rank, seen in layouts.items()}, tolerance, extent,
        looks.astype(np.float32), colours.astype(np.float32), suits.astype(np.int64),
        *_learnt_aces(every, labels, ink, pip_area),
        learn_index_letters([_letter_view(seen_as, ink) for seen_as in every],
                            [label % 13 + 1 for label in labels], pip_area),
        court_suits=tuple(range(4)))  # (every suit, to read the enrolment's court cards)
    return replace(counter, court_suits=() if counter.letters is None
                   else _court_suits_named_rightly(counter, every, labels))


def _court_suits_named_rightly(counter: RegionPips, surfaces: Sequence[Surface],
                               labels: Sequence[int]) -> tuple[int, ...]:
    """The suits whose enrolment court cards, read as court cards by ``counter`` (every suit
    allowed), had their suit named rightly whenever read, and no other suit's court card
    read as them. A deck may print its court cards' pips unlike its number cards' (a
    simulated Orell deck's clubs court pips, larger and ornate, were named spades by the
    number cards' pips, surely): its enrolment shows it, and those suits' court cards are
    left to the look."""
    wrong: set[int] = set()
    for seen_as, label in zip(surfaces, labels, strict=True):
        if label % 13 < 10:
            continue
        read = counter._read_court(seen_as, _marks(seen_as, counter.ink))
        if read is not None and read.label // 13 != label // 13:
            wrong |= {read.label // 13, label // 13}
    return tuple(suit for suit in range(4) if suit not in wrong)


def _letter_view(seen_as: Surface, ink: float) -> tuple[np.ndarray, np.ndarray]:
    """A region as its index letters are looked for in it
    (:meth:`vision.index_letters.IndexLetters.read`): its ink at the level ``ink``, and how
    much darker than its paper each pixel is."""
    return _ink(seen_as, ink), seen_as.darkness


def _single_large_mark(marks: Marks, pip_area: float
                       ) -> tuple[np.ndarray, float, np.ndarray] | None:
    """A region's one mark larger than an index glyph, when it is larger than a pip too:
    its centre (pixels), area (a share of the region) and pixels; None otherwise."""
    labels, _, centres, shares, ids = marks
    large = np.flatnonzero(shares / pip_area > GLYPH_SIZE[1])
    if len(large) != 1 or shares[large[0]] / pip_area <= PIP_SPREAD[1]:
        return None
    mark = int(large[0])
    return centres[mark], float(shares[mark]), labels == ids[mark]


def _learnt_aces(surfaces: Sequence[Surface], labels: Sequence[int], ink: float,
                 pip_area: float) -> tuple[tuple[tuple[float, float], ...], tuple[LargeAce, ...]]:
    """Of the enrolment aces at the deck's ``ink`` level: where those that show one clean
    pip of a number card's size (within :data:`PIP_SPREAD` of ``pip_area``) show it
    (centres as shares of each region), and those whose one mark, index glyphs aside, is
    larger than a pip (:func:`_single_large_mark`)."""
    aces, large = [], []
    for seen_as, label in zip(surfaces, labels, strict=True):
        if label % 13 != 0:
            continue
        height, width = seen_as.grey.shape
        found = _learning_pips(seen_as, ink, 1)
        if found is not None and PIP_SPREAD[0] <= found[1] / pip_area <= PIP_SPREAD[1]:
            x, y = found[0][0] / [width, height]
            aces.append((float(x), float(y)))
            continue
        bigger = _single_large_mark(_marks(seen_as, ink), pip_area)
        if bigger is not None:
            x, y = bigger[0] / [width, height]
            large.append(LargeAce((float(x), float(y)), bigger[1], label // 13))
    return tuple(aces), tuple(large)


def blank_round(seen_as: Surface, own: np.ndarray, centre: np.ndarray, unit: float,
                most: float = ACE_FIELD[2]) -> bool:
    """Whether the paper round a pip at ``centre`` (pixels; ``own``: its mark's pixels) is
    blank as round an ace's (:data:`ACE_FIELD`, but for ``most``; ``unit``: the square root
    of a pip's area in pixels): a court card's picture is ink there."""
    radius, level, _ = ACE_FIELD
    height, width = seen_as.grey.shape
    rows, columns = np.ogrid[:height, :width]
    field = (columns - centre[0]) ** 2 + (rows - centre[1]) ** 2 <= (radius * unit) ** 2
    field &= ~cv2.dilate(own.astype(np.uint8), _RING).astype(bool)
    return bool(field.any()) and float((seen_as.darkness[field] > level).mean()) <= most


RED_SUITS = (int(Suit.HEARTS), int(Suit.DIAMONDS))  # (as card indices count suits: label // 13)


def _suit_named(named: np.ndarray) -> int | None:
    """The suit the pips name (each pip's, ``named``), as :data:`SUIT_MARGIN` says; None
    when they do not name one clearly."""
    red = np.isin(named, RED_SUITS)
    if red.any() and not red.all():
        return None  # (a pip of each colour: not one card's pips, or not read well)
    counts = np.bincount(named, minlength=4)
    suit = int(np.argmax(counts))
    others = np.delete(counts, suit)
    if others.max() > 0 and counts[suit] - others.max() < SUIT_MARGIN:
        return None
    return suit


def _area(region: np.ndarray) -> float:
    return float(region.shape[0] * region.shape[1])


def _normalised(centres: np.ndarray, pip_pixels: float) -> np.ndarray:
    """Pip centres (pixels) about their centroid, in units of the square root of a pip's
    area (``pip_pixels``)."""
    return (centres - centres.mean(axis=0)) / np.sqrt(pip_pixels)


def _layout_offset(layout: np.ndarray, learnt: np.ndarray) -> float:
    """How far a layout lies from a learnt one of as many pips, as it lies or turned half
    round (a fixed camera sees a card either way up), the pips paired so that their
    distances' sum is least: the farthest pair."""
    return min(paired_offset(layout, learnt, 1.0), paired_offset(layout, -learnt, 1.0))


Marks = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""A region's marks at one ink level (:func:`_marks`): the labels image, and of the marks
kept their statistics, centres, areas (shares of the region) and labels."""


def _marks(seen_as: Surface, ink: float) -> Marks:
    """The region's marks of ink ``ink`` darker than its paper that may be pips or tell
    that the count is unclear: the labels image (every mark's label), and of those kept
    their statistics (x, y, w, h, area), centres, areas as shares of the region and
    labels."""
    region = seen_as.region
    count, labels, stats, centres = cv2.connectedComponentsWithStats(
        _ink(seen_as, ink), 8, cv2.CV_32S)
    stats, centres = stats[1:count], centres[1:count]
    aspect = stats[:, 2] / np.maximum(stats[:, 3], 1)
    shaped = ((aspect >= PIP_SHAPE[0]) & (aspect <= PIP_SHAPE[1])
              & (stats[:, 4] >= PIP_SHAPE[2] * stats[:, 2] * stats[:, 3]))
    shares = stats[:, 4] / _area(region)
    kept = shaped & (shares >= NOISE)
    for index in np.flatnonzero(kept):
        kept[index] = _edge_contrast(labels, seen_as.darkness, stats[index],
                                     index + 1) >= PIP_EDGE
    return labels, stats[kept], centres[kept], shares[kept], np.flatnonzero(kept) + 1


def _edge_contrast(labels: np.ndarray, darkness: np.ndarray, box: np.ndarray, label: int
                   ) -> float:
    """How much darker a mark is than the paper just round it (two pixels out), as a share
    of its own darkness (:data:`PIP_EDGE`): near 1 for ink, low for a dip in the light."""
    window, mark, ring = _mark_and_ring(labels, box, label, 2)
    seen = darkness[window]
    inside = float(seen[mark].mean())
    if inside <= 0 or not ring.any():
        return 1.0
    return (inside - float(seen[ring].mean())) / inside


_RING = np.ones((5, 5), np.uint8)
"""What a mark is grown by to find the paper just round it (two pixels each way)."""


def _mark_and_ring(labels: np.ndarray, box: Sequence[int], label: int, margin: int
                   ) -> tuple[tuple[slice, slice], np.ndarray, np.ndarray]:
    """A mark's window (its bounding ``box``, x, y, width, height, and ``margin`` pixels
    round it, within the region), the mark's pixels in it and the pixels just round the
    mark (grown by :data:`_RING`)."""
    x, y, width, height = (int(value) for value in box[:4])
    window = (slice(max(y - margin, 0), y + height + margin),
              slice(max(x - margin, 0), x + width + margin))
    mark = labels[window] == label
    ring = cv2.dilate(mark.astype(np.uint8), _RING).astype(bool) & ~mark
    return window, mark, ring


def _ink(seen_as: Surface, ink: float) -> np.ndarray:
    """The region's pixels ``ink`` darker than their paper (1, else 0), but for a
    :data:`MARGIN` round the region."""
    grey, paper = seen_as.grey, seen_as.paper
    height, width = grey.shape
    dark = (paper - grey > ink * paper).astype(np.uint8)
    margin = round(MARGIN * width)
    dark[:margin] = dark[height - margin:] = 0
    dark[:, :margin] = dark[:, width - margin:] = 0
    return dark


def _pips(seen_as: Surface, ink: float, pip_area: float,
          marks: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The pips of a region (centres in pixels, looks, colours), None if a mark's size says
    the count is unclear (:data:`UNCLEAR`); ``marks``: the region's :func:`_marks` at
    ``ink``, when the caller has them."""
    labels, stats, centres, shares, ids = _marks(seen_as, ink) if marks is None else marks
    size = shares / pip_area
    if any(np.any((size >= low) & (size < high)) for low, high in UNCLEAR):
        return None
    pips = np.flatnonzero((size >= PIP_SPREAD[0]) & (size <= PIP_SPREAD[1]))
    if not len(pips):
        return None
    looks, colours = _looks(seen_as, labels, stats[pips], ids[pips])
    return centres[pips], looks, colours


def _learning_pips(seen_as: Surface, ink: float, rank: int
                   ) -> tuple[np.ndarray, float, np.ndarray, np.ndarray] | None:
    """An enrolment region's ``rank`` pips, when it shows them clean: ``rank`` marks of
    about one size (within :data:`PIP_SPREAD` of their median), every other mark plainly
    smaller or larger. Their centres (pixels), their area (share of the region), looks
    and colours; None otherwise."""
    labels, stats, centres, shares, ids = _marks(seen_as, ink)
    if len(shares) < rank:
        return None
    order = np.argsort(-shares)
    ranked = shares[order]
    # The run of ``rank`` marks nearest in size to each other (sorted largest first).
    spreads = ranked[:len(ranked) - rank + 1] / ranked[rank - 1:]
    start = int(np.argmin(spreads))
    run = order[start:start + rank]
    middle = float(np.median(shares[run]))
    size = shares / middle
    inside = (size >= PIP_SPREAD[0]) & (size <= PIP_SPREAD[1])
    if inside.sum() != rank or not inside[run].all():
        return None
    if any(np.any((size >= low) & (size < high)) for low, high in UNCLEAR):
        return None
    looks, colours = _looks(seen_as, labels, stats[run], ids[run])
    return centres[run], middle, looks, colours


def _looks(seen_as: Surface, labels: np.ndarray, stats: np.ndarray, ids: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    """Each pip's appearance (its darkness over the paper in its bounding square, a unit
    vector) and colour (the log ratios of red and blue to green of its ink, each against
    the paper just around it)."""
    region, grey, darkness = seen_as.region, seen_as.grey, seen_as.darkness
    height, width = grey.shape
    looks, colours = [], []
    for (x, y, w, h, _), label in zip(stats, ids, strict=True):
        side = max(w, h) + 2
        x0, y0 = int(x + w / 2 - side / 2), int(y + h / 2 - side / 2)
        square = np.zeros((side, side), np.float32)
        xa, ya = max(x0, 0), max(y0, 0)
        xb, yb = min(x0 + side, width), min(y0 + side, height)
        square[ya - y0:yb - y0, xa - x0:xb - x0] = darkness[ya:yb, xa:xb]
        look = cv2.resize(square, (PATCH, PATCH), interpolation=cv2.INTER_AREA).ravel()
        look = look - look.mean()
        looks.append(look / max(float(np.linalg.norm(look)), 1e-9))
        # The pip's ink and the paper just round it (no other mark), in a window round
        # its box.
        window, mask, ring = _mark_and_ring(labels, (x, y, w, h), label, 3)
        pixels = region[window]
        ring &= labels[window] == 0
        ink = pixels[mask].astype(np.float64).mean(axis=0) + 1.0
        around = pixels[ring].astype(np.float64).mean(axis=0) + 1.0 if ring.any() else ink
        darker = np.log(ink / around)  # (blue, green, red)
        colours.append([darker[2] - darker[1], darker[0] - darker[1]])
    return np.array(looks, np.float32), np.array(colours, np.float32)
