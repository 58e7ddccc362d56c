"""Frame in, card out, or a clear "unknown": the whole pipeline behind one call.

A read is accepted only if the card was found, looks like the enrolled deck (distance within
the deck's ``max_distance``) and its confidence reaches the deck's threshold. Anything else is
declined with the reason: the table then asks the supervisor, which is always better than
taking a wrong card. A card not found, or found but not like the deck, is looked for once more
with a looser mask (:func:`vision.detect.find_card`), which costs time only on such frames. A
frame with no whole card in it may show one the frame's edge cuts: completed from what shows
(:mod:`vision.partial`), it is read by an index corner wholly in view, under the deck's own
corner limits (:mod:`vision.index_corner`), if the deck learnt them (an index read under the
corner threshold, though over its floor, is taken when the same card read whole names the same
card: a second read); so is a whole card the whole-card read declined, and when its index does
not read either, the card is looked for again in part (the whole card as found may have taken
in a hand, or be part of the card). A whole card the whole-card read takes is declined when its
index (where the deck learnt its corners) reads as another card. Where the deck learnt the size
of its cards in the camera's view, a card of quite another size is declined (another camera, or
the camera moved); where all its enrolment frames were of one size, so is a frame of another
size (another camera, or this one at another resolution). A frame where no card is read by
its outline, whole or in part, is searched for an index alone (:mod:`vision.index_first`: a
rank glyph with its suit under it, of the deck's size), read under the corner reader's
limits; never over a decline where the frame disagrees with itself (the card and its index,
or an index beside a hand read from both sides, naming different cards) or a card of another
size, and not taken where the card found by its outline was read, at half its threshold or
more, as another card (:data:`CONTRARY_SURETY`). An index read (at a corner, or found
alone) whose ink is plainly of the other colour than the card it names is declined
(:mod:`vision.ink`). A deck that lacks cards of its enrolment folder declines every card of
their ranks and suits (:attr:`vision.model.DeckModel.missing`), unless the index the card
was read by tells it from them by the glyph they differ in, which the deck knows from its
other cards (:meth:`vision.index_glyphs.GlyphReader.tells_apart`). A fixed camera's region its
look does not read surely is read by counting its pips, where the deck learnt to
(:mod:`vision.region_pips`: a camera that shows whole cards); one its look reads is declined
where its pips clearly name another card.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from shoe_controller.cards import Card
from vision.detect import CardInPart, Detection, WorkFrame, detect, survey, work_frame
from vision.in_part import find_in_part
from vision.index_corner import MIN_CORNER_THRESHOLD, CornerRead, CornerReader, turned
from vision.index_first import SECONDED_SHARE, find_by_index
from vision.index_glyphs import SECOND_READ_FLOOR
from vision.ink import contradicting_ink
from vision.model import DeckModel, Match, card_index, card_of
from vision.partial import PART_SIZE_MARGIN, usable_corners
from vision.pips import PIP_COUNTS, PipReader
from vision.quad import in_view, rectify
from vision.region_pips import PipCount, RegionPips
from vision.roi import crop

CONTRARY_SURETY = 0.5
"""An index found alone is not taken over a card its outline's read named otherwise at half
its threshold or more (:attr:`Recognition.surety`), where the whole-card deck knows the
card the index names. The simulated camera's 52-card deck read a TD its index corner
named TD at 0.295 (threshold 0.3) as TH by its index found alone (0.358); the reads such
an index rightly overturns are near a toss (cardai, draw 2024: 11 such, every one under
0.26 of its threshold), or a whole-card read of a card the whole-card deck lacks (draw
11's 8H, three times read as 6H at over half the threshold)."""


@dataclass(frozen=True)
class Recognition:
    """``card`` is None when declined; ``reason`` says why (empty when accepted)."""

    card: Card | None
    confidence: float
    distance: float
    best_guess: Card | None
    reason: str
    seconds: float
    """The whole read's wall time, stamped by :meth:`Recogniser.recognise` as it returns (0
    in the reads of its searches it is made of)."""
    runner_up: Card | None = None
    """The nearest other card of the read (None if it had none): with ``best_guess``, the
    cards an unsure read hesitated between."""
    conclusive: bool = False
    """A decline no other search may overturn: the frame's evidence disagrees with itself
    (the card and its index name different cards), or the card is not this camera's."""
    surety: float = 0.0
    """The read's confidence as a share of the threshold it had to reach (1 or more when
    taken); 0 when it looked like none of the deck, or made no read. How much an unsure
    read's ``best_guess`` says: against a read of the same frame by another search
    (:data:`CONTRARY_SURETY`)."""

    taken_by: tuple[np.ndarray, tuple[int, ...]] | None = field(default=None, repr=False,
                                                               compare=False)
    """Where a read was taken by a card found by its outline or its index: the rectified
    card and its index corners wholly in view, for the check against the cards the deck
    lacks (:meth:`Recogniser._unless_missing`, through :attr:`index_views`)."""

    @property
    def index_views(self) -> tuple[np.ndarray, ...]:
        """The card the read was taken by turned to each index corner wholly in view (the
        index at the top-left); none when it was not taken by a rectified card. Turned
        only when asked (by a deck that lacks cards), not for every read."""
        if self.taken_by is None:
            return ()
        card, usable = self.taken_by
        return tuple(turned(card, corner) for corner in usable)

    def to_dict(self) -> dict[str, Any]:
        return {"card": None if self.card is None else self.card.code,
                "confidence": round(self.confidence, 4), "distance": round(self.distance, 4),
                "best_guess": None if self.best_guess is None else self.best_guess.code,
                "reason": self.reason}


class Recogniser:
    """Reads cards of one enrolled deck. Thread-safe (no mutable state)."""

    def __init__(self, model: DeckModel, threshold: float | None = None) -> None:
        self.model = model
        self.threshold = model.threshold if threshold is None else threshold
        if model.pips is not None or model.region_pips is not None:
            # Pips are paired by scipy.optimize, which takes about half a second to import
            # (vision.pips imports it only when first needed): paid here, as the table or
            # the command starts, not by the first card whose pips are read.
            import scipy.optimize  # noqa: F401

    def recognise(self, frame: np.ndarray) -> Recognition:
        start = time.perf_counter()
        read = self._recognise(frame)
        if read.card is not None and self.model.missing:
            read = self._unless_missing(read)
        # Timed here, as a whole: a read decided, then borne out by a further check (a whole
        # card's index read, most often), is the whole of the work.
        return replace(read, seconds=time.perf_counter() - start)

    def _unless_missing(self, read: Recognition) -> Recognition:
        """A read declined when the deck lacks a card that shares its rank or its suit
        (:attr:`vision.model.DeckModel.missing`): the card the deck never saw is read as
        the nearest it knows, which is most often a card of the same suit a pip or two
        away or the same rank in another suit (ece395, a deck of the four cards AS, 6S, 9S
        and 8H that detection found twice: 9H and TH were read as 8H). Unless the index the
        read was taken by says, by the glyph the two cards differ in, that it is not the
        card the deck lacks (:meth:`_glyphs_tell_apart`): the deck knows that glyph from its
        other cards (a lacking JS's rank from JH, JD and JC, its suit from the other spades).
        One court card a design's enrolment missed otherwise costs every card of its rank
        and suit, 15 of the other 51 (the simulated overhead Paris deck, draw 2024: 65 of
        its 260 frames declined so, before)."""
        assert read.card is not None
        card = read.card
        alike = [other for other in self.model.missing
                 if other.rank == card.rank or other.suit == card.suit]
        if not alike or self._glyphs_tell_apart(read, alike):
            return read
        alike = [other.code for other in alike]
        shown = ", ".join(alike[:4]) + (f" and {len(alike) - 4} more" if len(alike) > 4
                                        else "")
        return Recognition(None, 0.0, read.distance, card,
                           f"reads as {card.code}, but deck {self.model.name!r} was not "
                           f"enrolled with {shown} (same rank or suit; enrol it again with "
                           f"them)", 0.0)

    def _glyphs_tell_apart(self, read: Recognition, alike: list[Card]) -> bool:
        """Whether the index a read was taken by (:attr:`Recognition.index_views`) tells its
        card from every card the deck lacks that shares its rank or suit, by the glyph
        they differ in, which the deck knows from its other cards
        (:meth:`vision.index_glyphs.GlyphReader.tells_apart`)."""
        corners = self.model.corners
        if corners is None or corners.glyphs is None:
            return False
        views = read.index_views  # (turned on each access: once here)
        assert read.card is not None
        return bool(views) and all(corners.glyphs.tells_apart(views, card_index(read.card),
                                                              card_index(other))
                                   for other in alike)

    def _recognise(self, frame: np.ndarray) -> Recognition:
        if (other := other_camera(frame, self.model)) is not None:
            return _other_camera(other)
        if self.model.roi is not None:  # a fixed camera: the region is the index
            region = crop(frame, self.model.roi)
            read = self._decide(self.model.read_region(region))
            if self.model.region_pips is None:
                return read
            if read.card is None:
                return self._read_region_pips(region, read)
            return self._unless_pips_contradict(region, read, self.model.region_pips)
        read = self._read_outline(frame)
        corners = self.model.corners
        if read.card is None and not read.conclusive and corners is not None:
            # No card read by its outline, whole or in part: its index may still show whole
            # (a hand over the rest of the card, the frame cutting two sides).
            by_index = self._read_index_alone(frame, corners, read.best_guess)
            if by_index is not None and by_index.card is not None:
                if (read.best_guess not in (None, by_index.card)
                        and read.surety >= CONTRARY_SURETY
                        and bool(np.any(self.model.labels == card_index(by_index.card)))):
                    # The card found by its outline was read, not surely but not far from
                    # it, as another card: two reads of one frame disagreeing are a doubt,
                    # not a choice between them. (Unless the whole-card deck lacks the card
                    # its index names: its read of that card is then always another's.)
                    return Recognition(
                        None, 0.0, by_index.distance, by_index.card,
                        f"the card found by its outline reads, unsurely, as "
                        f"{read.best_guess.code}, and its index found alone as "
                        f"{by_index.card.code}", 0.0,
                        read.best_guess)
                return by_index
            if (by_index is not None and read.best_guess is None
                    and by_index.distance <= corners.max_distance):
                # No card found by its outline, but an index of the deck's found alone, read
                # unsurely: declined with what it said (its best guess, the cards it
                # hesitated between and why it was not taken), not as if nothing were in
                # view. The supervisor then sees that a card was seen, and the bench counts
                # its best guess among the confusions.
                return replace(by_index, reason=f"no card outline found; {by_index.reason}")
        return read

    def _read_outline(self, frame: np.ndarray) -> Recognition:
        """The card found by its outline (whole, with a looser mask, or in part) and read."""
        work = work_frame(frame)  # (made once: every search below starts from it)
        quad, hand = survey(frame, work=work)
        found = None if quad is None else Detection(quad, rectify(frame, quad))
        match = None if found is None else self.model.match(found.card)
        if match is None or match.distance > self.model.max_distance:
            # Not the deck as found: a picture in the table's colour may have cut the card
            # short. Found again with a looser mask, it is kept if nearer the deck (and
            # then meets the same limits as any read).
            retry = detect(frame, loose=True, work=work)
            second = None if retry is None else self.model.match(retry.card)
            if second is not None and (match is None or second.distance < match.distance):
                match, found = second, retry  # (its index is the one to check)
        if match is None and self.model.corners is not None:
            return self._read_corner(frame, self.model.corners, hand, work)
        if (found is not None and self.model.corners is not None
                and not self.model.corners.shape.fits_size(found.quad)):
            return _other_size(found.quad, self.model.corners)
        if match is None:
            # Also a card partly out of the frame, or under a hand along a whole side:
            # what shows may be part of a card, never read.
            return Recognition(None, 0.0, float("inf"), None,
                               "no card found in the frame (none, or not all of it in view)",
                               0.0)
        decided = self._decide(match)
        if decided.card is not None and found is not None and self.model.corners is not None:
            usable = _usable(frame, found, self.model.corners)
            return _with_views(self._check_index(found, usable, decided, self.model.corners),
                               found.card, usable)
        if decided.card is None and found is not None and self.model.corners is not None:
            corners = self.model.corners
            # Not taken whole. Its index and pips are read through the quad only if it has
            # the deck's proportions: a quad that has not is part of a card taken for all of
            # it (the simulated camera's QH_s1_17 of seed 7, its paper fading into the dark
            # at the frame's edge: the squat quad's index, a Q drawn wider, read as KH).
            if corners.shape.fits_aspect(found.quad):
                through = self._read_through(frame, found, match, corners)
                if through is not None:
                    return through
            # The card as found may be wrong (a hand taken in with it, or only part of it),
            # and the searches for a card in part may find it as it is.
            in_part = self._read_corner(frame, corners, hand, work)
            if in_part.card is not None:
                return in_part
        return decided

    def _read_through(self, frame: np.ndarray, found: Detection, match: Match,
                      corners: CornerReader) -> Recognition | None:
        """A whole card the whole-card read did not take (unsure, or unlike the deck as a
        whole: a hand's shadow over the pips, a blur), read by its index alone, under the
        index's own limits, at the corners wholly in the frame; failing that, a number
        card's pips may still say which of the cards the two reads named it is. None when
        neither reads it."""
        usable = _usable(frame, found, corners)
        by_index = self._read_index(found.card, usable, corners, whole=match)
        if by_index is not None and by_index.card is not None:
            return _with_views(by_index, found.card, usable)
        named = (match.card, match.runner_up, None if by_index is None else by_index.best_guess)
        by_pips = self._read_pips(found.card, named, match.distance)
        return None if by_pips is None else _with_views(by_pips, found.card, usable)

    def _check_index(self, found: Detection, usable: tuple[int, ...], decided: Recognition,
                     corners: CornerReader) -> Recognition:
        """A whole card read as one card is taken only if its index does not say another.
        The pips of two cards of a suit can differ by little (a 6 and an 8: two pips), and
        the whole-card deck may lack a card of the house's deck (one with too few whole
        enrolment photos, which it then takes for its neighbour); the index tells them
        apart. Any other card is a doubt, even one the index reader is unsure of (cardai,
        draw 11: 8H, missing from the whole-card deck, was read as 6H six times; the
        index's best guess said otherwise each time, though not always surely). An index
        that looks like none of the deck's (beyond the corner reader's limit: blurred,
        shadowed) says nothing either way. ``usable``: the card's index corners wholly in
        the frame."""
        assert decided.card is not None  # (only a read the whole card took is checked)
        read = corners.read(found.card, usable)
        if read is None or read.distance > corners.max_distance:
            return decided
        index = card_of(read.label)
        if index == decided.card:
            return decided
        return Recognition(None, 0.0, decided.distance, decided.card,
                           f"the card reads as {decided.card.code} but its index as "
                           f"{index.code}", 0.0, conclusive=True)

    def _read_corner(self, frame: np.ndarray, corners: CornerReader, hand: CardInPart | None,
                     work: WorkFrame) -> Recognition:
        """A card the frame's edge cuts, or a hand borders, by an index corner wholly in
        view (between two sides on the table); ``work``, the frame's
        :func:`vision.detect.work_frame`."""
        partial = find_in_part(frame, corners.shape, corners.box, hand, work)
        if partial is not None and not corners.shape.fits_size(partial.quad):
            return _other_size(partial.quad, corners)
        if partial is not None and not (
                corners.shape.fits_aspect(partial.quad)
                and corners.shape.fits_size(partial.quad, smaller=PART_SIZE_MARGIN)):
            # Not a card's proportions (as a whole card's, above), or smaller than any card
            # this camera showed: completed from a false corner (PART_SIZE_MARGIN).
            partial = None
        read = None
        if partial is not None:
            card = rectify(frame, partial.quad)
            read = self._read_index(card, partial.usable, corners)
            if (read is not None and read.card is None
                    and read.distance <= corners.max_distance):
                # Its index unsure: the pips in view may say which of its two cards it is.
                by_pips = self._read_pips_in_view(card, in_view(frame, partial.quad), read)
                read = read if by_pips is None else by_pips
        if read is None or partial is None:
            return Recognition(None, 0.0, float("inf"), None,
                               "no card found in the frame (none, or too little of it in "
                               "view to read an index corner)", 0.0)
        if read.card is not None and partial.also is not None:
            # Beside a hand: the same index, read through the card completed from the
            # side opposite the hand, must be the same card (see vision.partial.readable_in_part).
            other = corners.read(rectify(frame, partial.also), partial.usable)
            if other is None or card_of(other.label) != read.card:
                said = "nothing" if other is None else card_of(other.label).code
                return Recognition(None, 0.0, read.distance, read.card,
                                   f"the index beside a hand reads as {read.card.code}, "
                                   f"or as {said} from the side opposite the hand",
                                   0.0, conclusive=True)
        return _with_views(read, card, partial.usable)

    def _read_index_alone(self, frame: np.ndarray, corners: CornerReader,
                          seconded: Card | None) -> Recognition | None:
        """A card placed by an index found without its outline (:mod:`vision.index_first`),
        under the corner reader's limits (a threshold set by hand raises them), or over
        :data:`vision.index_first.SECONDED_SHARE` of its threshold when a second read names
        the same card: the card found by its outline, read unsurely (``seconded``, another
        placement), or the card its index placed, read as a whole card (its pips and
        pictures, not its index again; cardai, draws 2024, 7, 11 and 3: 3, 2, 1 and 2 more
        read, none wrong); or over :data:`vision.index_glyphs.SECOND_READ_FLOOR` when its
        glyphs cut out read the same card surely (:meth:`_glyphs_bear_out`). None when no
        index-like pair of glyphs in the frame looks like the deck's."""
        found = find_by_index(frame, corners)
        if found is None:
            return None
        match = _match_of(found.read)
        threshold, by_hand = self._corner_threshold(corners, match.card)
        if not by_hand and SECONDED_SHARE * threshold <= match.confidence < threshold and (
                match.card == seconded
                or self._whole_card_says(found.card, match.card, None)):
            threshold *= SECONDED_SHARE
        elif not by_hand and self._glyphs_bear_out(corners, match, threshold, [found.card]):
            threshold = SECOND_READ_FLOOR
        return _with_views(_unless_ink_contradicts(
            self._decide(match, corners.max_distance, threshold, "index found alone "),
            found.card, (0,), corners), found.card, (0,))

    def _read_index(self, card: np.ndarray, usable: tuple[int, ...], corners: CornerReader,
                    whole: Match | None = None) -> Recognition | None:
        """A rectified card by its ``usable`` index corners; the corner reader's own
        limits, and a threshold set by hand raises its threshold too. ``whole``: the card's
        whole-card read, when already made (else made here if a second read is needed).
        An unsure read is taken when a second read bears it out: the card read whole, or
        the index's glyphs cut out (over :data:`vision.index_glyphs.SECOND_READ_FLOOR`).
        None when no corner is usable."""
        read = corners.read_aligned(card, usable)
        if read is None:
            return None
        match = _match_of(read)
        threshold, by_hand = self._corner_threshold(corners, match.card)
        if read.glyphless:
            # No rank glyph near the corner, where the deck's corners all but always show
            # one: blank paper, whatever card it is nearest. (The simulated camera's 8H_s2_24,
            # cut by the frame and completed on its side, read KH by a blank corner at 0.303,
            # and its whole card, read through that quad, was nearest KH too at 0.045.)
            match = replace(match, confidence=0.0)
        elif read.disputed or read.lifted:
            # The card's other corner said another card, unsurely: this corner is taken only
            # if sure on its own and the card read whole says the same card. (Under the
            # threshold, the card's corners disagreeing is doubt enough: cardai draw 3's
            # motion-blurred 9H_s1_07, one corner TH at 0.224, the whole card nearest TH.)
            # So too a read a shift made surer: the simulated camera's JH cut by the frame
            # (frames of seed 2024) read as QH at 0.021, shifted at 0.332; on cardai such
            # lifts of right reads from as low (0.021 to 0.314) are as common.
            if not self._whole_card_says(card, match.card, whole):
                match = replace(match, confidence=0.0)
        elif not by_hand and MIN_CORNER_THRESHOLD <= read.confidence < threshold and \
                self._whole_card_says(card, match.card, whole):
            # Unsure by the index alone, yet over the least any corner read needs, and the
            # same card's pips and glyphs, read as a whole card, say the same card: a second
            # read, not the index again. (On cardai, draws 2024, 7, 11 and 3, 62 such reads
            # were all right; the most confident wrong read the two agreed on was 0.152.)
            threshold = MIN_CORNER_THRESHOLD
        if not by_hand and not (read.disputed or read.lifted or read.glyphless) and \
                self._glyphs_bear_out(corners, match, threshold,
                                      (turned(card, corner) for corner in usable)):
            # Unsure, yet its glyphs cut out and read alone say the same card surely: a
            # second read of the same glyphs by unlike features (:mod:`vision.index_glyphs`).
            threshold = SECOND_READ_FLOOR
        return _unless_ink_contradicts(
            self._decide(match, corners.max_distance, threshold, "index corner "),
            card, usable, corners)

    @property
    def _threshold_by_hand(self) -> bool:
        """A threshold set by hand: a stricter deck, read by its appearance alone (pips
        have no threshold to raise)."""
        return self.threshold != self.model.threshold

    def _pip_reader(self) -> PipReader | None:
        """The deck's pips (:mod:`vision.pips`), unless it learnt none or a threshold was
        set by hand."""
        return None if self._threshold_by_hand else self.model.pips

    def _read_pips(self, card: np.ndarray, named: tuple[Card | None, ...], distance: float
                   ) -> Recognition | None:
        """The rectified whole ``card`` by its pips (:mod:`vision.pips`), where the reads by
        its appearance (the whole card's best and runner-up, its index's best) unsurely
        ``named`` exactly one card of the pips' rank, and it is one whose pips they match.
        The pips tell the rank and the appearance the suit; two cards of that rank named,
        or one the pips do not match (its pips never learnt), is no read. None also when a
        threshold was set by hand (a stricter deck: the appearance reads alone) or the deck
        learnt no pips. The read's confidence is how near its pips lie to their places (1
        right there, 0 at the tolerance); its ``distance`` the whole card's from the deck."""
        pips = self._pip_reader()
        if pips is None:
            return None
        read = pips.read(card)
        if read is None:
            return None
        ranks = {card_of(label).rank for label in read.labels}
        of_rank = {one for one in named if one is not None and one.rank in ranks}
        if len(of_rank) != 1:
            return None
        (taken,) = of_rank
        if card_index(taken) not in read.labels:
            return None
        return Recognition(taken, 1.0 - read.offset / pips.tolerance, distance, taken, "",
                           0.0)

    def _read_pips_in_view(self, card: np.ndarray, view: np.ndarray, unsure: Recognition
                           ) -> Recognition | None:
        """A rectified ``card`` the frame cuts (``view``: :func:`vision.quad.in_view`),
        whose index read ``unsure`` hesitated between two number cards, by its pips in view
        (:meth:`vision.pips.PipReader.read_in_view`): taken when they match one of the two,
        surely not the other, and no card of another rank. A court card named, or a deck
        that learnt no pips or has a threshold set by hand: None; so too when the two are
        of one rank (a 2 of spades or of clubs): pips tell a rank, not a suit, and which
        of the two a card's pips "match" then turns on their learnt sizes and places, not
        on the suit (the simulated camera's 52-card deck read a 2S whose index hesitated
        between 2S and 2C as 2C). Confidence and distance as :meth:`_read_pips` gives them
        (the distance the index read's)."""
        pips = self._pip_reader()
        named = {one for one in (unsure.best_guess, unsure.runner_up) if one is not None}
        if (pips is None or not named or any(one.rank not in PIP_COUNTS for one in named)
                or len({one.rank for one in named}) < len(named)):
            return None
        seen = pips.read_in_view(card, view)
        if seen is None or len({card_of(label).rank for label in seen.matched}) != 1:
            return None
        taken = {one for one in named if card_index(one) in seen.matched}
        if len(taken) != 1 or any(card_index(one) not in seen.unmatched
                                  for one in named - taken):
            return None
        (card_read,) = taken
        return Recognition(card_read, 1.0 - seen.offset / pips.tolerance, unsure.distance,
                           card_read, "", 0.0)

    def _corner_threshold(self, corners: CornerReader, card: Card) -> tuple[float, bool]:
        """The threshold an index read alone as ``card`` must reach: the corner reader's
        for that card, raised by a threshold set by hand (and whether one was)."""
        by_hand = self.threshold != self.model.threshold
        own = corners.threshold_for(card_index(card))
        return max(own, self.threshold) if by_hand else own, by_hand

    @staticmethod
    def _glyphs_bear_out(corners: CornerReader, match: Match, threshold: float,
                         views: Iterable[np.ndarray]) -> bool:
        """Whether an unsure index read (``match``: under ``threshold``, though over
        :data:`vision.index_glyphs.SECOND_READ_FLOOR`) is borne out by the deck's glyph
        reader (:mod:`vision.index_glyphs`) reading ``views`` (rectified cards, the index at
        the top-left; made only when the read is in that band) surely as the same card."""
        return (SECOND_READ_FLOOR <= match.confidence < threshold
                and corners.glyphs is not None
                and corners.glyphs.names(views, card_index(match.card)))

    def _whole_card_says(self, card: np.ndarray, index: Card, whole: Match | None) -> bool:
        """Whether the rectified ``card``, read as a whole card (``whole``, if that read was
        made already), looks like the deck and its nearest card is ``index`` (however
        sure)."""
        if whole is None:
            whole = self.model.match(card)
        return whole.card == index and whole.distance <= self.model.max_distance

    def _read_region_pips(self, region: np.ndarray, read: Recognition) -> Recognition:
        """A fixed camera's region its look did not read surely (``read``), read by its
        pips (:mod:`vision.region_pips`) where they clearly name one number card; ``read``
        as it was otherwise. Never a region unlike the deck (another camera, no card in the
        slot), never with a threshold set by hand (the pips have none to set), and never
        over its look read, at half its threshold or more, as another card
        (:data:`CONTRARY_SURETY`): two reads of one region disagreeing are a doubt."""
        pips = self.model.region_pips
        if pips is None or read.distance > self.model.max_distance or self._threshold_by_hand:
            return read
        count = pips.read(region)
        if count is None:
            return read
        card = card_of(count.label)
        if (read.best_guess not in (None, card) and read.surety >= CONTRARY_SURETY
                and bool(np.any(self.model.labels == count.label))):
            return replace(read, reason=f"{read.reason}; {_pips_said(count)} read as "
                                        f"{card.code}")
        return Recognition(card, pips.confidence(count), read.distance, card,
                           "", 0.0, read.best_guess if read.best_guess != card else
                           read.runner_up, surety=1.0)

    @staticmethod
    def _unless_pips_contradict(region: np.ndarray, read: Recognition, pips: RegionPips
                                ) -> Recognition:
        """A fixed camera's region its look read (``read``, taken), declined where its pips
        (:mod:`vision.region_pips`) clearly name another card: two reads of one region
        disagreeing are a doubt, whichever is right. A look read of a deck whose enrolment
        photos were each of one light is often just over its threshold, and a 9 and a 10
        of one suit look alike: on the simulated slot camera over 14 deck designs (draws
        2024 and 7), three such look reads were wrong (a Lattmann 9C as TC, a Guyenne TC as
        9C, an Orell TH as 9H) and their pips read them rightly; the one look read of
        those runs the pips read otherwise and wrongly (an Anglo KC whose two court pips
        read as a 2C) was right. The cost, a pip read (2 to 10 ms), falls on the regions
        the look takes: 0 to 3 a run there, one in ece395's three draws."""
        assert read.card is not None
        count = pips.read(region)
        if count is None or card_of(count.label) == read.card:
            return read
        card = card_of(count.label)
        return replace(read, card=None, reason=(
            f"its look reads {read.card.code} (confidence {read.confidence:.3f}), but "
            f"{_pips_said(count)} read as {card.code}"), conclusive=True)

    def _decide(self, match: Match, max_distance: float | None = None,
                threshold: float | None = None, what: str = "") -> Recognition:
        max_distance = self.model.max_distance if max_distance is None else max_distance
        threshold = self.threshold if threshold is None else threshold
        reason = ""
        unlike = match.distance > max_distance
        if unlike:
            reason = (f"{what}does not look like deck {self.model.name!r} (distance "
                      f"{match.distance:.3f} > {max_distance:.3f})")
        elif match.confidence < threshold:
            reason = (f"{what}unsure: {match.card.code} or "
                      f"{match.runner_up.code if match.runner_up else '?'}"
                      f" (confidence {match.confidence:.3f} < {threshold:.3f})")
        confidence = 0.0 if unlike else match.confidence
        return Recognition(None if reason else match.card, confidence, match.distance,
                           match.card, reason, 0.0, match.runner_up,
                           surety=confidence / threshold if threshold > 0 else 0.0)


def _pips_said(count: PipCount) -> str:
    """What a region's pip read (:mod:`vision.region_pips`) went by, for a decline's reason:
    a number card's pips, or a court card's index letter and the pips beside it."""
    return (f"its {count.pips} pips" if count.letter is None
            else f"its index letter and {count.pips} pips")


def _unless_ink_contradicts(read: Recognition, card: np.ndarray, usable: tuple[int, ...],
                            corners: CornerReader) -> Recognition:
    """An index read taken, declined when the colour of its ink plainly contradicts the
    card it names (:mod:`vision.ink`: a black TS read as TD by its shape), as far as the
    deck's camera shows colour (``corners.red_ink``); ``card``: the rectified card, read at
    its ``usable`` index corners. (Looked at only for a read taken: most index reads are
    declines, and the corners are not turned for them.)"""
    if read.card is None:
        return read
    ink = contradicting_ink(read.card, [turned(card, corner) for corner in usable],
                            corners.box, corners.red_ink)
    if ink is None:
        return read
    return Recognition(None, 0.0, read.distance, read.card,
                       f"the index reads as {read.card.code}, but its ink is {ink}",
                       0.0, read.runner_up)


def _with_views(read: Recognition, card: np.ndarray, usable: tuple[int, ...]
                ) -> Recognition:
    """A read taken of the rectified ``card`` by its ``usable`` index corners
    (:attr:`Recognition.taken_by`); a decline as it is."""
    if read.card is None:
        return read
    return replace(read, taken_by=(card, usable))


def _match_of(read: CornerRead) -> Match:
    """A corner read as a card match."""
    return Match(card_of(read.label), read.confidence, read.distance,
                 None if read.runner_up is None else card_of(read.runner_up))


def _usable(frame: np.ndarray, found: Detection, corners: CornerReader) -> tuple[int, ...]:
    """The found whole card's index corners wholly inside the frame."""
    height, width = frame.shape[:2]
    return usable_corners(found.quad, width, height, corners.box)


def other_camera(frame: np.ndarray, model: DeckModel) -> str | None:
    """Why ``frame`` cannot be from the camera ``model`` was enrolled with (a frame of
    another size than every enrolment frame: :attr:`vision.model.DeckModel.frame_size`),
    or None. ``shoe run --camera`` asks it of the camera's first frame, before the table
    starts: a camera set to another resolution would have every card declined."""
    size = model.frame_size
    if size is None or frame.ndim != 3 or (min(frame.shape[:2]), max(frame.shape[:2])) == size:
        return None  # (not a frame at all: the searches say so)
    height, width = frame.shape[:2]
    return (f"a frame of {width} x {height} pixels, where this deck's camera gave "
            f"{size[1]} x {size[0]} at enrolment: another camera, or its resolution changed "
            f"(enrol the deck again)")


def _other_camera(reason: str) -> Recognition:
    """A frame not from the deck's camera (:func:`other_camera`): from another camera, or
    this one set to another resolution, where the deck's limits (the card's size, its
    look) were never measured. (A cardai deck, whose camera gives 960 x 540 frames, read
    ece395's 172 x 147 9H_c as 9H: the card was 114 pixels across, just within the sizes it
    allows.)"""
    return Recognition(None, 0.0, float("inf"), None, reason, 0.0,
                       conclusive=True)


def _other_size(quad: np.ndarray, corners: CornerReader) -> Recognition:
    """A card not of the size this deck's camera showed its cards at enrolment
    (:meth:`vision.partial.CardShape.fits_size`): under another camera, or the camera has
    moved, and another camera's card of the same rank and suit is not this deck's card
    (ece395's 7H_c and 9H_c were read by a cardai deck of AH, 7H, 9H and KH, by the index
    and by the whole card)."""
    low, high = corners.shape.sizes or (0.0, 0.0)
    return Recognition(None, 0.0, float("inf"), None,
                       f"a card {corners.shape.size(quad):.0f} pixels wide, where this deck's "
                       f"were {low:.0f} to {high:.0f} at enrolment: another camera, or the "
                       "camera moved (enrol it again)", 0.0,
                       conclusive=True)
