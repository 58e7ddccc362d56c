"""A deck's enrolment: which corner layout it uses, its enrolled index features, and the
thresholds under which the recogniser declines.

Enrolment (:func:`enroll`) takes a handful of labelled, rectified frames per card. For each
candidate layout (:data:`vision.corner.LAYOUTS`) and split (none, the boxes located on the
deck by :func:`vision.glyphs.locate_index`, or :data:`vision.corner.INDEX_SPLITS`) it reads
every enrolment frame against the *others* (leave one frame out) with a nearest-neighbour
classifier, and keeps the one under which most of them would be accepted and right (on a tie:
a split, located boxes first; then a layout with an index box over the whole card alone; then
the widest margin). The same held-out reads set the deck's two limits
(:mod:`vision.calibration`):

- ``max_distance``: how far from every enrolled card a frame may be and still be this deck
  (a different deck design, a card back, a hand over the card are further away);
- ``threshold``: the least confidence accepted, above that of every held-out read that was
  wrong, so that a doubtful read is declined rather than guessed.

Confidence is the relative margin between the nearest card and the nearest *other* card:
``(d_other - d_best) / d_other`` in [0, 1]. When the deck's index has its rank above its suit,
enrolment may also pick a *split* (a rank box and a suit box): each card's distance is
then the sum of its whole-index distance, its rank glyph's distance to the nearest frame of
that rank (any suit) and its suit glyph's distance to the nearest frame of that suit (any
rank), so a rank is learnt from four times the frames and a suit from thirteen times.

A deck enrolled with a region of interest (``roi``, :mod:`vision.roi`: a fixed camera) has
layout ``roi``: its frames are not searched for a card, the region is read as the index, as it
lies, and its rows are each enrolment region plus jittered copies. Its distance is relative:
how far a frame is from the enrolment photos in index shape and in the camera's view
(:func:`vision.roi.scene_features`), each as a share of its own limit, the larger of the two;
``max_distance`` is 1.

Models are saved one file per deck (``NAME.npz``) in :func:`models_dir`.
"""

from __future__ import annotations

import json
import os
import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import numpy as np

from shoe_controller.cards import Card, Suit
from shoe_controller.errors import ShoeError
from vision.calibration import (
    ROI_MIN_THRESHOLD,
    calibrated_threshold,
    deck_limit,
    held_out_limits,
)
from vision.corner import (
    INDEX_SPLITS,
    LAYOUTS,
    WHOLE_CARD,
    Split,
    features,
    features_by_layout,
    index_features,
    orientations,
)
from vision.glyphs import locate_index
from vision.orientation import upright
from vision.pips import PipReader, learn_pips
from vision.region_pips import RegionPips, learn_region_pips
from vision.roi import (
    FOLDS,
    ROI_LAYOUT,
    Ridge,
    Roi,
    RoiError,
    check_roi,
    jittered,
    roi_features,
    scene_features,
    with_bias,
)

if TYPE_CHECKING:
    from vision.index_corner import CornerReader
    from vision.index_glyphs import GlyphReader

FORMAT_VERSION = 17
"""17: a region deck's court cards by their index letters (``region_pips.letters``: true
when learnt; the arrays ``region_letter_looks``, ``region_letter_ranks`` and
``region_letter_kept``: every glyph-sized mark of the enrolment, its card's rank and whether
it is a court rank's letter, :mod:`vision.index_letters`; absent or false: court cards are
left to the appearance read) and its aces whose pip is larger than a number card's
(``region_pips.large_aces``: each one's centre and area, shares of the region, and suit;
absent or empty: none);
16: where a region deck's enrolment aces showed their one pip (``region_pips.aces``:
centres as shares of the region; absent or empty: its aces are not read by their pip);
15: a region deck's number cards by their pips (``region_pips``: the ink level, the pips'
size, where they lie in the view and each rank's layouts, null if none was learnt; the
arrays ``region_pip_looks``, ``region_pip_colours`` and ``region_pip_suits``: each
enrolment pip's look, colour and suit);
14: whether the camera shows red ink red (``corners.red_ink``; absent: true), false for a
camera without colour, whose red cards' ink then contradicts no read (:mod:`vision.ink`);
13: the cards whose index reads need less than the corner reader's threshold, and what
they need (``corners.card_thresholds``: card code to threshold; absent or null: every card
needs ``corners.threshold``), and so for the glyph reader (``corners.glyphs.card_thresholds``);
12: the corner reader's index glyphs cut out (``corners.glyphs``: their limits, and the
rows ``glyph_vectors`` and ``glyph_labels``; null if not learnt), a second read of an unsure
index (:mod:`vision.index_glyphs`);
11: the number cards' pips (``pips``: where each card's pips lay in the enrolment photos,
their size and how far they may lie from it; null if none was learnt);
10: the size of the camera's frames (``frame_size``: short and long side in pixels; null
when the enrolment frames were not all of one size);
9: how the corner reader's index lies on the card (``corners.geometry``: the rank glyph's
centre, the step to its suit and the rank's height; null if not learnt), to find an index
without its card's outline;
8: where the corner reader's rank glyph sits (``corners.anchor``, null if not learnt) and
the cards of the enrolment folder the deck knows nothing of (``missing``, card codes);
7: the corner reader's rows projected onto principal directions (``corner_centre``,
``corner_projection``) and the card sizes its camera showed (``corners.sizes``);
6: a region deck's camera view (``scene_vectors``) and its two limits (``deck_limits``);
5: the region of interest (``roi``, null unless the deck is read in a fixed region).
Format 4 and 5 models without a region still load; a format 5 region deck must be enrolled
again (it has no camera view to check a frame against)."""
READABLE_FORMATS = (4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17)
MIN_THRESHOLD = 0.12
MIN_SPLIT_THRESHOLD = 0.16
"""With a split the rank's distance is shared by every card of that rank, so a suit mix-up
(2C or 2S) has a smaller relative margin than without: its floor is higher (a 2C read as 2S
at 0.15 was seen on a small, blurred bellot card whose held-out reads were all right)."""
LOCATED = "located"
"""The split name of rank and suit boxes located on the deck itself (vision.glyphs)."""
DECK_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class VisionModelError(ShoeError, ValueError):
    """A deck model is missing, unreadable, or cannot be enrolled from what was given."""


def models_dir(override: str | Path | None = None) -> Path:
    """Where enrolled decks live: ``override``, else ``$SHOE_VISION_MODELS``, else
    ``$XDG_DATA_HOME/shoe-controller/vision`` (``~/.local/share/shoe-controller/vision``)."""
    if override:
        return Path(override)
    configured = os.environ.get("SHOE_VISION_MODELS")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "shoe-controller" / "vision"


def card_index(card: Card) -> int:
    return int(card.suit) * 13 + card.rank - 1


def card_of(index: int) -> Card:
    index = int(index)
    return Card(index % 13 + 1, Suit(index // 13))


@dataclass(frozen=True)
class Match:
    card: Card
    confidence: float
    distance: float
    runner_up: Card | None


@dataclass
class DeckModel:
    name: str
    layout: str
    vectors: np.ndarray  # (N, D) unit vectors, each enrolment frame the deck's way up
    labels: np.ndarray  # (N,) card index 0..51
    max_distance: float
    threshold: float
    enrolment: dict[str, float]  # held-out figures, for the record
    split: Split | None = None  # rank box and suit box when rank and suit are read apart
    split_name: str | None = None  # LOCATED (vision.glyphs) or a vision.corner.INDEX_SPLITS
    rank_vectors: np.ndarray | None = None  # (N, R), same rows as ``vectors``
    suit_vectors: np.ndarray | None = None  # (N, S)
    both_ways: bool = False  # rows hold each frame both ways up (a point-symmetric deck)
    roi: Roi | None = None  # a fixed camera's region: frames are read there, no card found
    weights: np.ndarray | None = None  # (D + 1, 52) linear classifier of a ``roi`` deck
    scene_vectors: np.ndarray | None = None  # (N, S) a ``roi`` deck's camera view per row
    deck_limits: tuple[float, float] | None = None  # ``roi``: index shape, camera view
    corners: CornerReader | None = None  # a card partly out of the frame, read by an index
    missing: tuple[Card, ...] = ()
    """Cards of the enrolment folder the deck learnt nothing of (no photo of them showed
    the card, whole or by an index corner): the deck may take one for a card it knows, so
    the recogniser declines any card that shares a rank or a suit with one of them, unless
    the index it was read by tells the two apart by the glyph they differ in
    (:meth:`vision.recognise.Recogniser.recognise`). Set by
    :func:`vision.bench.enroll_items` and :func:`vision.bench.holdout_bench`."""
    frame_size: tuple[int, int] | None = None
    """The short and the long side (pixels) of every enrolment frame, when they were all of
    one size (:func:`vision.bench.one_frame_size`): one camera at one setting, whose frames
    are all that size, either way round. A frame of another size is from another camera
    (or this one set to another resolution), and the recogniser declines it
    (:meth:`vision.recognise.Recogniser.recognise`); None when the enrolment frames came at
    several sizes (photographs from several cameras: no camera to check against), or for a
    deck enrolled before it was learnt. Set by :func:`vision.bench.enroll_items` and
    :func:`vision.bench.holdout_bench`."""

    pips: PipReader | None = None
    """The number cards by their pips (:mod:`vision.pips`), learnt from the whole cards of
    the enrolment photos; None for a region deck, a deck whose number cards showed no
    clean pips, or one enrolled before it was learnt."""

    region_pips: RegionPips | None = None
    """A region deck's number cards by the count, layout and look of their pips
    (:mod:`vision.region_pips`), where its camera shows whole cards; None for a deck read by
    the card's outline, a camera that shows only the index (pp2021), or a deck enrolled
    before it was learnt."""

    def read(self, frame: np.ndarray) -> Match:
        """The card in a fixed camera's frame (``roi`` models only)."""
        assert self.roi is not None
        from vision.roi import crop

        return self.read_region(crop(frame, self.roi))

    def read_region(self, region: np.ndarray) -> Match:
        """A region's card by the linear classifier; its distance (is it the deck?) relative:
        the nearest enrolment photo's in index shape and the nearest one's in camera view,
        each over its limit, the larger of the two (1 is the edge of the deck)."""
        assert self.weights is not None
        assert self.scene_vectors is not None and self.deck_limits is not None
        vector = roi_features(region)
        shape = float(np.sqrt(max(2.0 - 2.0 * float((self.vectors @ vector).max()), 0.0)))
        view = float(np.sqrt(((self.scene_vectors - scene_features(region)) ** 2)
                             .sum(axis=1).min()))
        distance = max(shape / self.deck_limits[0], view / self.deck_limits[1])
        scores = with_bias(vector[None, :]) @ self.weights
        enrolled = np.isin(np.arange(52), self.labels)
        predicted, confidence = _linear_read(scores, enrolled)
        masked = np.where(enrolled, scores[0], -np.inf)
        runner_up = int(np.argsort(-masked)[1])
        return Match(card_of(int(predicted[0])), float(confidence[0]), distance,
                     card_of(runner_up))

    def match(self, card_image: np.ndarray) -> Match:
        """The nearest enrolled card to a rectified card image, with its confidence.

        The card is read both ways up (:mod:`vision.orientation`) and the way nearer to the
        enrolled deck (whole index) is kept. With a split, each card is then scored by the
        sum of three distances: to its nearest enrolled frame (whole index), to the nearest
        frame of its rank (rank glyph, any suit) and to the nearest frame of its suit (suit
        glyph, any rank); confidence is the relative margin of the best card's score over
        the next card's. The distance (is this the deck at all?) stays that of the whole
        index."""
        if self.roi is not None:  # the region itself, as it lies
            return self.read_region(card_image)
        # A deck enrolled both ways up matches a card either way up as it lies.
        views = (card_image,) if self.both_ways else orientations(card_image)
        vectors = [features(view, self.layout) for view in views]
        reads = [self._match_vector(vector) for vector in vectors]
        way = min(range(len(reads)), key=lambda index: reads[index].distance)
        whole, vector = reads[way], vectors[way]
        if self.split is None or self.rank_vectors is None or self.suit_vectors is None:
            return whole
        rank_vector, suit_vector = index_features(views[way], self.split)
        scores = _card_scores(
            self.labels,
            (self.vectors @ vector)[None, :], (self.rank_vectors @ rank_vector)[None, :],
            (self.suit_vectors @ suit_vector)[None, :])[0]
        order = np.argsort(scores)
        best, second = float(scores[order[0]]), float(scores[order[1]])
        confidence = (second - best) / second if np.isfinite(second) and second > 0 else 0.0
        runner_up = card_of(int(order[1])) if np.isfinite(second) else None
        return Match(card_of(int(order[0])), confidence, whole.distance, runner_up)

    def _match_vector(self, vector: np.ndarray) -> Match:
        distances = np.sqrt(np.maximum(2.0 - 2.0 * (self.vectors @ vector), 0.0))
        best = int(np.argmin(distances))
        label = int(self.labels[best])
        others = distances[self.labels != label]
        d_best = float(distances[best])
        if others.size == 0:
            return Match(card_of(label), 0.0, d_best, None)
        second = int(np.argmin(np.where(self.labels != label, distances, np.inf)))
        d_other = float(distances[second])
        confidence = (d_other - d_best) / d_other if d_other > 0 else 0.0
        return Match(card_of(label), confidence, d_best, card_of(int(self.labels[second])))

    # -------------------------------------------------------------- storage
    def save(self, folder: Path) -> Path:
        """Write the deck to ``folder`` as ``NAME.npz``: written aside, then put in place
        at once, so a deck in use is never seen half written."""
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise VisionModelError(f"{folder}: cannot be the models folder: a file stands "
                                   f"where it or a folder above it should be (give another "
                                   f"with --models)") from None
        except OSError as exc:
            raise VisionModelError(f"{folder}: cannot make the models folder "
                                   f"({exc.strerror or exc})") from None
        path = folder / f"{self.name}.npz"
        meta = {"format": FORMAT_VERSION, "name": self.name, "layout": self.layout,
                "split": None if self.split is None else [list(box) for box in self.split],
                "split_name": self.split_name, "max_distance": self.max_distance,
                "threshold": self.threshold, "enrolment": self.enrolment,
                "both_ways": self.both_ways,
                "roi": None if self.roi is None else list(self.roi),
                "deck_limits": None if self.deck_limits is None else list(self.deck_limits),
                "missing": [card.code for card in self.missing],
                "frame_size": None if self.frame_size is None else list(self.frame_size),
                "pips": None if self.pips is None else self.pips.to_dict(),
                "region_pips": (None if self.region_pips is None
                                else self.region_pips.to_dict()),
                "corners": None if self.corners is None else {
                    "split": (None if self.corners.split is None
                              else [list(box) for box in self.corners.split]),
                    "box": list(self.corners.box),
                    "shape": [self.corners.shape.stretch, self.corners.shape.aspect],
                    "sizes": (None if self.corners.shape.sizes is None
                              else list(self.corners.shape.sizes)),
                    "max_distance": self.corners.max_distance,
                    "threshold": self.corners.threshold,
                    "anchor": (None if self.corners.anchor is None
                               else list(self.corners.anchor)),
                    "geometry": (None if self.corners.geometry is None
                                 else self.corners.geometry.to_list()),
                    "card_thresholds": _card_thresholds_to(self.corners.card_thresholds),
                    "red_ink": self.corners.red_ink,
                    "glyphs": (None if self.corners.glyphs is None else {
                        "max_distance": self.corners.glyphs.max_distance,
                        "threshold": self.corners.glyphs.threshold,
                        "card_thresholds": _card_thresholds_to(
                            self.corners.glyphs.card_thresholds)})}}
        scratch = folder / f".{self.name}.{os.getpid()}.npz"
        try:
            with scratch.open("wb") as handle:
                self._write(handle, meta)
                handle.flush()
                os.fsync(handle.fileno())  # on the disk before it takes the deck's place
            scratch.replace(path)
        except OSError as exc:  # a full disk, a folder it may not write in
            scratch.unlink(missing_ok=True)
            raise VisionModelError(f"{path}: cannot save the deck ({exc.strerror or exc}); "
                                   f"a deck saved there before is as it was") from None
        except BaseException:
            scratch.unlink(missing_ok=True)
            raise
        return path

    def _write(self, handle: BinaryIO, meta: dict[str, object]) -> None:
        """The deck's arrays and ``meta`` (its description) into an open file."""
        glyphs = None if self.corners is None else self.corners.glyphs
        letters = None if self.region_pips is None else self.region_pips.letters
        empty = np.zeros((0, 0), np.float32)
        np.savez_compressed(
            handle, vectors=self.vectors, labels=self.labels,
            rank_vectors=empty if self.rank_vectors is None else self.rank_vectors,
            suit_vectors=empty if self.suit_vectors is None else self.suit_vectors,
            weights=empty if self.weights is None else self.weights,
            scene_vectors=empty if self.scene_vectors is None else self.scene_vectors,
            corner_vectors=empty if self.corners is None else self.corners.vectors,
            corner_labels=(np.zeros(0, np.int64) if self.corners is None
                           else self.corners.labels),
            corner_centre=(empty if self.corners is None or self.corners.centre is None
                           else self.corners.centre),
            corner_projection=(empty if self.corners is None
                               or self.corners.projection is None
                               else self.corners.projection),
            region_pip_looks=(empty if self.region_pips is None
                              else self.region_pips.looks),
            region_pip_colours=empty if self.region_pips is None else self.region_pips.colours,
            region_pip_suits=(np.zeros(0, np.int64) if self.region_pips is None
                              else self.region_pips.suits),
            region_letter_looks=empty if letters is None else letters.looks,
            region_letter_ranks=np.zeros(0, np.int64) if letters is None else letters.ranks,
            region_letter_kept=np.zeros(0, bool) if letters is None else letters.letters,
            glyph_vectors=empty if glyphs is None else glyphs.vectors,
            glyph_labels=np.zeros(0, np.int64) if glyphs is None else glyphs.labels,
            meta=np.array(json.dumps(meta)))

    @classmethod
    def load(cls, name: str, folder: Path) -> DeckModel:
        check_deck_name(name)
        path = folder / f"{name}.npz"
        if not path.exists():
            raise VisionModelError(
                f"deck {name!r} is not enrolled in {folder} (run: shoe vision enroll --deck "
                f"{name} DIR)")
        if not zipfile.is_zipfile(path):  # (else numpy takes it for a pickle, and says so)
            raise VisionModelError(f"{path}: not a deck model, or one cut short (not a .npz "
                                   f"archive; enrol the deck again)")
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
                vectors = data["vectors"].astype(np.float32)
                labels = data["labels"].astype(np.int64)
                rank_vectors = data["rank_vectors"].astype(np.float32)
                suit_vectors = data["suit_vectors"].astype(np.float32)
                weights = (data["weights"].astype(np.float32) if "weights" in data.files
                           else None)
                scene_vectors = (data["scene_vectors"].astype(np.float32)
                                 if "scene_vectors" in data.files else None)
                corner_rows = ((data["corner_vectors"].astype(np.float32),
                                data["corner_labels"].astype(np.int64))
                               if "corner_vectors" in data.files else None)
                corner_projection = (
                    (data["corner_centre"].astype(np.float32),
                     data["corner_projection"].astype(np.float32))
                    if "corner_projection" in data.files and data["corner_projection"].size
                    else None)
                glyph_rows = ((data["glyph_vectors"].astype(np.float32),
                               data["glyph_labels"].astype(np.int64))
                              if "glyph_vectors" in data.files else None)
                region_pip_rows = ((data["region_pip_looks"], data["region_pip_colours"],
                                    data["region_pip_suits"])
                                   if "region_pip_looks" in data.files else None)
                region_letters = ((data["region_letter_looks"], data["region_letter_ranks"],
                                   data["region_letter_kept"])
                                  if "region_letter_looks" in data.files else None)
        except Exception as exc:  # noqa: BLE001 - whatever the damage, the file is refused
            # The block only reads the archive, and a damaged one fails in many ways: cut
            # short (BadZipFile, EOFError), its data changed (zlib.error, a bad CRC), an
            # array's header changed (numpy parses it as a literal: SyntaxError,
            # tokenize.TokenError, ValueError), an array missing (KeyError).
            raise VisionModelError(f"{path}: not a deck model, or a damaged one ({exc}; enrol "
                                   f"the deck again)") from None
        if not isinstance(meta, dict):
            raise VisionModelError(f"{path}: not a deck model (its description is not an "
                                   f"object; enrol the deck again)")
        if (meta.get("format") not in READABLE_FORMATS
                or meta.get("layout") not in (*LAYOUTS, ROI_LAYOUT)):
            raise VisionModelError(f"{path}: unsupported model format {meta.get('format')!r}"
                                   f" (enrol the deck again)")
        try:
            split = _split_from(meta.get("split"))
        except (TypeError, ValueError) as exc:
            raise VisionModelError(f"{path}: bad rank and suit boxes ({exc})") from None
        roi = meta.get("roi")
        try:
            roi = None if roi is None else check_roi(roi)
        except (TypeError, ValueError, RoiError) as exc:
            raise VisionModelError(f"{path}: bad region of interest ({exc})") from None
        if (roi is None) != (meta["layout"] != ROI_LAYOUT) or (
                roi is not None and (weights is None or weights.shape != (
                    vectors.shape[1] + 1, 52))):
            raise VisionModelError(f"{path}: layout {meta['layout']!r}, region {roi} and "
                                   f"classifier disagree (enrol the deck again)")
        deck_limits = None
        if roi is not None:
            try:
                deck_limits = _deck_limits_from(meta.get("deck_limits"))
            except (TypeError, ValueError) as exc:
                raise VisionModelError(f"{path}: a region deck without its camera view "
                                       f"({exc}; enrol the deck again)") from None
            if scene_vectors is None or len(scene_vectors) != len(vectors):
                raise VisionModelError(f"{path}: a region deck without its camera view "
                                       f"(enrol the deck again)")
        if split is not None and not (len(rank_vectors) == len(suit_vectors) == len(labels)):
            raise VisionModelError(f"{path}: rank and suit vectors do not match the labels")
        try:
            missing = tuple(Card.from_code(str(code)) for code in meta.get("missing", []))
        except (TypeError, ValueError) as exc:
            raise VisionModelError(f"{path}: bad list of cards not enrolled ({exc}; enrol the "
                                   f"deck again)") from None
        try:
            frame_size = _frame_size_from(meta.get("frame_size"))
        except (TypeError, ValueError) as exc:
            raise VisionModelError(f"{path}: bad camera frame size ({exc}; enrol the deck "
                                   f"again)") from None
        try:
            corners = _corners_from(meta.get("corners"), corner_rows, corner_projection,
                                     glyph_rows)
        except (TypeError, ValueError, KeyError) as exc:
            raise VisionModelError(f"{path}: bad index corners ({exc}; enrol the deck "
                                   f"again)") from None
        try:
            pips = None if meta.get("pips") is None else PipReader.from_dict(meta["pips"])
        except (TypeError, ValueError, KeyError) as exc:
            raise VisionModelError(f"{path}: bad pip layouts ({exc}; enrol the deck "
                                   f"again)") from None
        if meta.get("region_pips") is not None and region_pip_rows is None:
            raise VisionModelError(f"{path}: a pip counter without its pips (enrol the deck "
                                   f"again)")
        try:
            region_pips = (None if meta.get("region_pips") is None
                           else RegionPips.from_parts(meta["region_pips"], *region_pip_rows,
                                                      region_letters))
        except (TypeError, ValueError, KeyError) as exc:
            raise VisionModelError(f"{path}: bad pip counter ({exc}; enrol the deck "
                                   f"again)") from None
        try:
            max_distance, threshold = float(meta["max_distance"]), float(meta["threshold"])
            enrolment = dict(meta.get("enrolment", {}))
            name = str(meta["name"])
        except (TypeError, ValueError, KeyError) as exc:
            raise VisionModelError(f"{path}: bad limits or name ({exc}; enrol the deck "
                                   f"again)") from None
        return cls(name, meta["layout"], vectors, labels, max_distance,
                   threshold, enrolment, split,
                   meta.get("split_name") if split else None,
                   rank_vectors if split else None, suit_vectors if split else None,
                   bool(meta.get("both_ways", False)), roi,
                   weights if roi is not None else None,
                   scene_vectors if roi is not None else None, deck_limits, corners, missing,
                   frame_size, pips, region_pips if roi is not None else None)


def _frame_size_from(value: object) -> tuple[int, int] | None:
    """A saved camera frame size: null, or [short, long], whole pixels, short <= long."""
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 2 or not all(
            isinstance(side, int) and not isinstance(side, bool) and side > 0
            for side in value) or value[0] > value[1]:
        raise ValueError(f"{value!r} is not [short side, long side] in pixels")
    return value[0], value[1]


def _corners_from(value: object, rows: tuple[np.ndarray, np.ndarray] | None,
                  projected: tuple[np.ndarray, np.ndarray] | None = None,
                  glyph_rows: tuple[np.ndarray, np.ndarray] | None = None
                  ) -> CornerReader | None:
    """A saved corner reader (:mod:`vision.index_corner`), or None (a deck enrolled
    before issue 16's partly visible cards, or whose whole cards told no card shape)."""
    from vision.index_corner import CornerReader, IndexGeometry
    from vision.partial import CardShape

    if value is None:
        return None
    if not isinstance(value, dict) or rows is None:
        raise TypeError("no corner rows")
    vectors, labels = rows
    if vectors.ndim != 2 or len(vectors) != len(labels) or len(labels) == 0:
        raise ValueError("corner rows do not match their labels")
    stretch, aspect = (float(number) for number in value["shape"])
    box = tuple(float(number) for number in value["box"])
    if len(box) != 4 or not (0 <= box[0] < box[2] <= 1 and 0 <= box[1] < box[3] <= 1):
        raise ValueError(f"index box {box} is not inside the card")
    limits = float(value["max_distance"]), float(value["threshold"])
    if not all(np.isfinite(number) and number > 0 for number in (stretch, aspect, *limits)):
        raise ValueError("card shape and limits must be positive numbers")
    sizes = None
    if value.get("sizes") is not None:  # absent from decks enrolled before it was learnt
        low, high = (float(number) for number in value["sizes"])
        if not (np.isfinite(high) and 0 < low <= high):
            raise ValueError(f"card sizes {value['sizes']!r} must be 0 < least <= greatest")
        sizes = (low, high)
    centre = projection = None
    if projected is not None:  # format 7: the rows are projections
        centre, projection = projected
        if (projection.ndim != 2 or centre.shape != (projection.shape[0],)
                or projection.shape[1] != vectors.shape[1]):
            raise ValueError(f"corner projection {projection.shape} does not fit its mean "
                             f"{centre.shape} and rows {vectors.shape}")
    anchor = None
    if value.get("anchor") is not None:  # format 8: where the rank glyph sits
        x, y = (float(number) for number in value["anchor"])
        if not (0 <= x < 1 and 0 <= y < 1):
            raise ValueError(f"index anchor {value['anchor']!r} is not inside the card")
        anchor = (x, y)
    geometry = None
    if value.get("geometry") is not None:  # format 9: how the index lies on the card
        geometry = IndexGeometry.from_list(value["geometry"])
    glyphs = None
    if value.get("glyphs") is not None:  # format 12: the index's glyphs cut out
        glyphs = _glyphs_from(value["glyphs"], glyph_rows, box)
    card_thresholds = None
    if value.get("card_thresholds") is not None:  # format 13: cards that need less
        card_thresholds = _card_thresholds_from(value["card_thresholds"], limits[1])
    red_ink = value.get("red_ink", True)  # format 14: whether the camera shows red ink
    if not isinstance(red_ink, bool):
        raise TypeError(f"red_ink {red_ink!r} must be true or false")
    return CornerReader(vectors, labels, _split_from(value["split"]), box,
                        CardShape(stretch, aspect, sizes), *limits, centre, projection,
                        anchor, geometry, glyphs, card_thresholds, red_ink)


def _card_thresholds_to(thresholds: dict[int, float] | None) -> dict[str, float] | None:
    """Per-card thresholds as saved: card codes to thresholds (null: none)."""
    if thresholds is None:
        return None
    return {card_of(label).code: value for label, value in sorted(thresholds.items())}


def _card_thresholds_from(value: object, deck_threshold: float) -> dict[int, float]:
    """Saved per-card thresholds (of the corner or the glyph reader): card codes to numbers
    over 0, none over the reader's threshold (the strictest card's)."""
    if not isinstance(value, dict):
        raise TypeError(f"card thresholds {value!r} are not a mapping of card to threshold")
    thresholds = {}
    for code, number in value.items():
        threshold = float(number)
        if not 0 < threshold <= deck_threshold:
            raise ValueError(f"card {code}'s threshold {number!r} is not over 0 and at most "
                             f"the deck's {deck_threshold}")
        thresholds[card_index(Card.from_code(str(code)))] = threshold
    return thresholds


def _glyphs_from(value: object, rows: tuple[np.ndarray, np.ndarray] | None,
                 box: tuple[float, ...]) -> GlyphReader:
    """A saved glyph reader (:mod:`vision.index_glyphs`)."""
    from vision.index_glyphs import GlyphReader, glyph_length

    if not isinstance(value, dict) or rows is None:
        raise TypeError("no glyph rows")
    vectors, labels = rows
    if vectors.ndim != 2 or vectors.shape[1] != glyph_length() or len(vectors) != len(labels) \
            or len(set(labels.tolist())) < 2 or labels.min() < 0 or labels.max() > 51:
        raise ValueError(f"glyph rows {vectors.shape} do not match their labels or this "
                         f"version's glyphs")
    limits = float(value["max_distance"]), float(value["threshold"])
    if not all(np.isfinite(number) and number > 0 for number in limits):
        raise ValueError("glyph limits must be positive numbers")
    card_thresholds = None
    if value.get("card_thresholds") is not None:  # format 13: cards that need less
        card_thresholds = _card_thresholds_from(value["card_thresholds"], limits[1])
    return GlyphReader(vectors, labels, (box[0], box[1], box[2], box[3]), *limits,
                       card_thresholds)


def _deck_limits_from(value: object) -> tuple[float, float]:
    """Two positive finite numbers: the index-shape and camera-view limits."""
    if not isinstance(value, (list, tuple)):
        raise TypeError("no deck limits")
    limits = tuple(float(number) for number in value)
    if len(limits) != 2 or not all(np.isfinite(limit) and limit > 0 for limit in limits):
        raise ValueError(f"bad deck limits {value!r}")
    return limits[0], limits[1]


def _split_from(value: object) -> Split | None:
    """Two boxes of four fractions each, inside the card, or None."""
    if value is None:
        return None
    boxes = [tuple(float(number) for number in box) for box in value]  # type: ignore[union-attr]
    if len(boxes) != 2 or any(len(box) != 4 for box in boxes):
        raise ValueError("expected two boxes of four numbers")
    for x0, y0, x1, y1 in boxes:
        if not (0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1):
            raise ValueError(f"box {x0, y0, x1, y1} is not inside the card")
    return boxes[0], boxes[1]  # type: ignore[return-value]


def check_deck_name(name: str) -> str:
    if not DECK_NAME.match(name):
        raise VisionModelError(
            f"bad deck name {name!r}: letters, digits, '.', '_' or '-' (up to 64)")
    return name


def enroll(name: str, samples: Sequence[tuple[np.ndarray, Card]], roi: Roi | None = None,
           quads: Sequence[np.ndarray] | None = None) -> DeckModel:
    """Learn a deck from rectified card images with their cards (2+ frames per card); with
    ``roi``, from the regions of a fixed camera's frames (:mod:`vision.roi`). ``quads``
    (each sample's card in its frame, :func:`vision.detect.find_card`) also teach it to
    read a card partly out of the frame by an index corner (:mod:`vision.index_corner`)."""
    check_deck_name(name)
    counts: dict[Card, int] = {}
    for _, card in samples:
        counts[card] = counts.get(card, 0) + 1
    thin = sorted(card.code for card, count in counts.items() if count < 2)
    if thin:
        raise VisionModelError(f"enrolment needs at least 2 frames per card; too few for "
                               f"{', '.join(thin)}")
    if len(counts) < 2:
        raise VisionModelError("enrolment needs frames of at least 2 different cards")
    if roi is not None:
        return _enroll_roi(name, samples, roi)
    cards = [card for _, card in samples]
    labels = np.array([card_index(card) for card in cards])
    # Every frame the same way up, and turned: (2, frames) views. Which of the two ups has
    # the index on top is tried both ways below (held-out reads decide, not a guess).
    turned = upright([image for image, _ in samples], cards)
    pairs = [orientations(image)[::-1] if turn else orientations(image)
             for (image, _), turn in zip(samples, turned)]
    views = [[pair[way] for pair in pairs] for way in (0, 1)]

    def glyph_vectors(split: Split) -> tuple[np.ndarray, np.ndarray]:
        """The rank and the suit vectors of every view in ``split``'s boxes, (2, frames, D)."""
        read = [[index_features(view, split) for view in views[way]] for way in (0, 1)]
        return (np.stack([np.stack([rank for rank, _ in row]) for row in read]),
                np.stack([np.stack([suit for _, suit in row]) for row in read]))

    fixed = {key: glyph_vectors(split) for key, split in INDEX_SPLITS.items()}
    by_layout = [[features_by_layout(view) for view in views[way]] for way in (0, 1)]
    layouts = {layout: np.stack([np.stack([vectors[layout] for vectors in row])
                                 for row in by_layout])
               for layout in LAYOUTS}
    best: tuple[tuple[float, int, int, int, float], DeckModel] | None = None
    # Each up read both ways against one way enrolled, and (a deck printed both ways up, as
    # most are) every frame enrolled both ways up, each turned view one more example.
    for up, both_ways in ((0, False), (1, False), (0, True)):
        order = [up, 1 - up]  # row 0 the enrolled way up, row 1 the card turned half round
        splits: dict[str, Split] = {}
        glyphs: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        seen = views[0] + views[1] if both_ways else views[up]
        located = locate_index(list(zip(seen, cards + cards if both_ways else cards)))
        if located is not None:
            splits[LOCATED] = located
            ranks, suits = glyph_vectors(located)
            glyphs[LOCATED] = (ranks[order], suits[order])
        splits.update(INDEX_SPLITS)
        glyphs.update({key: (ranks[order], suits[order])
                       for key, (ranks, suits) in fixed.items()})
        for layout, vectors in layouts.items():
            for split_name in (None, *splits):
                rank_vectors = suit_vectors = None
                if split_name is not None:
                    rank_vectors, suit_vectors = glyphs[split_name]
                model = _fit(name, layout, vectors[order], labels,
                             None if split_name is None else splits[split_name], split_name,
                             rank_vectors, suit_vectors, both_ways=both_ways)
                # What counts is how many held-out reads would be taken, and taken right.
                # On a tie, rank and suit read apart generalise better (each learnt from four
                # or thirteen times the frames: a 2C a little blurrier than any enrolled is
                # still a 2 and still a club), best in the deck's own located boxes; then
                # an index box over the whole card alone (the index is what a dealer
                # reads); then twice the examples enrolled; then the margin.
                preference = 0 if split_name is None else 2 if split_name == LOCATED else 1
                score = (model.enrolment["held_out_accepted_right"], preference,
                         int(layout != WHOLE_CARD), int(both_ways),
                         model.enrolment["low_confidence_margin"])
                if best is None or score > best[0]:
                    best = (score, model)
    assert best is not None
    model = best[1]
    if quads is not None and len(quads) == len(samples):
        from vision.index_corner import learn_corners

        model.corners = learn_corners([image for image, _ in samples], labels, quads,
                                      model.split, model.layout)
    from vision.index_corner import index_box

    model.pips = learn_pips([image for image, _ in samples], labels,
                            index_box(model.split, model.layout) if model.corners is None
                            else model.corners.box)
    return model


def _card_scores(labels: np.ndarray, card_sim: np.ndarray, rank_sim: np.ndarray,
                 suit_sim: np.ndarray) -> np.ndarray:
    """(rows, 52) scores from similarities to the enrolled rows (``-inf`` where a row must
    not vote): per card, nearest frame of the card + of its rank + of its suit (distances).
    Cards, ranks or suits never enrolled score ``inf``."""
    def per_label(similarity: np.ndarray, of: np.ndarray, count: int) -> np.ndarray:
        distances = np.sqrt(np.maximum(2.0 - 2.0 * similarity, 0.0))
        distances[np.isneginf(similarity)] = np.inf
        table = np.full((len(similarity), count), np.inf)
        for label in np.unique(of):
            table[:, label] = distances[:, of == label].min(axis=1)
        return table

    cards = np.arange(52)
    return (per_label(card_sim, labels, 52) + per_label(rank_sim, labels % 13, 13)[:, cards % 13]
            + per_label(suit_sim, labels // 13, 4)[:, cards // 13])


def _enrolled_rows(vectors: np.ndarray, both_ways: bool) -> tuple[np.ndarray, np.ndarray]:
    """The rows a model keeps from (2, frames, D) views, and the frame of each row: one way
    up, or (a deck printed both ways up) both, each turned view one more example."""
    frames = np.arange(vectors.shape[1])
    if both_ways:
        return np.concatenate([vectors[0], vectors[1]]), np.concatenate([frames, frames])
    return vectors[0], frames


def _held_out(vectors: np.ndarray, labels: np.ndarray, both_ways: bool
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each enrolment frame read against all the *other* frames as the recogniser reads a
    card (``vectors``: (2, frames, D), the enrolled way up first): one way up against both
    ways enrolled, or both ways up against one. Returns the way up kept, the nearest
    distance, the label read and the confidence of that read."""
    frames = np.arange(len(labels))
    enrolled, of_frame = _enrolled_rows(vectors, both_ways)
    row_labels = labels[of_frame]
    queries = vectors[:1] if both_ways else vectors
    distances = np.sqrt(np.maximum(2.0 - 2.0 * (queries @ enrolled.T), 0.0))
    distances[:, frames[:, None] == of_frame[None, :]] = np.inf  # never votes for itself
    way = np.argmin(distances.min(axis=2), axis=0)
    chosen = distances[way, frames]
    nearest = np.argmin(chosen, axis=1)
    d_best = chosen[frames, nearest]
    predicted = row_labels[nearest]
    other = np.where(row_labels[None, :] != predicted[:, None], chosen, np.inf).min(axis=1)
    confidence = np.where(np.isfinite(other) & (other > 0), (other - d_best) / other, 0.0)
    return way, d_best, predicted, confidence


def _fit(name: str, layout: str, vectors: np.ndarray, labels: np.ndarray,
         split: Split | None = None, split_name: str | None = None,
         rank_vectors: np.ndarray | None = None,
         suit_vectors: np.ndarray | None = None, *, both_ways: bool = False) -> DeckModel:
    """Thresholds from leave-one-frame-out reads of the enrolment frames. ``vectors`` and
    the rank and suit vectors are (2, frames, D): the enrolled way up, then turned."""
    frames = np.arange(len(labels))
    way, d_best, predicted, confidence = _held_out(vectors, labels, both_ways)
    _, of_frame = _enrolled_rows(vectors, both_ways)
    if split is not None and rank_vectors is not None and suit_vectors is not None:
        itself = frames[:, None] == of_frame[None, :]  # a frame never votes for itself

        def similarity(rows: np.ndarray) -> np.ndarray:
            enrolled, _ = _enrolled_rows(rows, both_ways)
            return np.where(itself, -np.inf, rows[way, frames] @ enrolled.T)

        scores = _card_scores(labels[of_frame], similarity(vectors), similarity(rank_vectors),
                              similarity(suit_vectors))
        order = np.argsort(scores, axis=1)
        best = scores[frames, order[:, 0]]
        second = scores[frames, order[:, 1]]
        predicted = order[:, 0]
        confidence = np.where(np.isfinite(second) & (second > 0),
                              (second - best) / np.where(second > 0, second, 1.0), 0.0)
    max_distance, threshold, enrolment = held_out_limits(
        labels, d_best, predicted, confidence,
        MIN_THRESHOLD if split is None else MIN_SPLIT_THRESHOLD)

    def kept(rows: np.ndarray | None) -> np.ndarray | None:
        return None if rows is None else _enrolled_rows(rows, both_ways)[0].astype(np.float32)

    return DeckModel(name, layout, kept(vectors), labels[of_frame], max_distance, threshold,
                     enrolment, split, split_name, kept(rank_vectors), kept(suit_vectors),
                     both_ways)


ROI_SEED = 16
"""Seeds the jittered copies of enrolment regions: the same frames enrol the same model."""
LINEAR_TARGET = 3.0
"""The score a region deck's classifier is taught for a photo's card: 1 for the card, 1 for
its rank, 1 for its suit."""


def _enroll_roi(name: str, samples: Sequence[tuple[np.ndarray, Card]], roi: Roi
                ) -> DeckModel:
    """A fixed camera's deck: each region and its jittered copies are rows of a linear
    classifier (:mod:`vision.roi`). The limits come from held-out reads: each frame read by
    a classifier learnt without it (and its copies), in :data:`vision.roi.FOLDS` folds that
    each leave out about one frame per card."""
    rng = np.random.default_rng(ROI_SEED)
    rows: list[np.ndarray] = []
    of_frame: list[int] = []
    firsts: list[int] = []
    for frame, (region, _) in enumerate(samples):
        firsts.append(len(rows))
        for image in (region, *jittered(region, rng)):
            rows.append(roi_features(image))
            of_frame.append(frame)
    vectors = np.stack(rows).astype(np.float32)
    labels = np.array([card_index(card) for _, card in samples])
    row_frame = np.array(of_frame)
    row_labels = labels[row_frame]
    design = with_bias(vectors).astype(np.float64)
    # A card's score is its own + its rank's + its suit's (ridge regression is linear in
    # its targets): a rank is learnt from every suit's frames, a suit from every rank's.
    cards = np.arange(52)
    targets = ((row_labels[:, None] == cards[None, :]).astype(np.float64)
               + (row_labels[:, None] % 13 == cards[None, :] % 13)
               + (row_labels[:, None] // 13 == cards[None, :] // 13))
    ridge = Ridge(design, targets)
    # Fold of each frame: its place among its card's frames, so a fold leaves out about one
    # frame of each card.
    seen: dict[int, int] = {}
    fold = np.empty(len(samples), int)
    for frame, label in enumerate(labels):
        fold[frame] = seen.get(int(label), 0) % FOLDS
        seen[int(label)] = seen.get(int(label), 0) + 1
    frames = np.arange(len(samples))
    # Every row held out: the photo and its jittered copies, read by a classifier learnt
    # without any of them.
    row_scores = np.zeros((len(rows), 52))
    for index in range(FOLDS):
        out = fold[row_frame] == index
        if out.any():
            row_scores[out] = design[out] @ ridge.weights(~out)
    enrolled = np.isin(np.arange(52), labels)
    predicted, confidence = _linear_read(row_scores[firsts], enrolled)
    row_predicted, row_confidence = _linear_read(row_scores, enrolled)
    # Is it the deck at all: the distance to the nearest enrolment region (the regions
    # themselves, not their copies: a seventeenth of the time per read), in index shape and
    # in camera view, each held out (a photo never its own neighbour).
    originals = vectors[firsts]
    shapes = np.sqrt(np.maximum(2.0 - 2.0 * (originals @ originals.T), 0.0))
    scenes = np.stack([scene_features(region) for region, _ in samples])
    views = np.sqrt(((scenes[:, None, :] - scenes[None, :, :]) ** 2).sum(axis=2))
    for distances in (shapes, views):
        distances[frames, frames] = np.inf
    shape, view = shapes.min(axis=1), views.min(axis=1)
    deck_limits = deck_limit(shape), deck_limit(view)
    d_best = np.maximum(shape / deck_limits[0], view / deck_limits[1])
    max_distance = 1.0
    _, _, enrolment = held_out_limits(labels, d_best, predicted, confidence, ROI_MIN_THRESHOLD)
    threshold = calibrated_threshold(row_labels, row_predicted, row_confidence,
                                     np.isin(np.arange(len(rows)), firsts))
    accepted = (confidence >= threshold) & (d_best <= max_distance)
    right = predicted == labels
    enrolment.update({
        "held_out_accepted_right": float((accepted & right).mean()),
        "held_out_accepted_wrong": float((accepted & ~right).sum()),
        "held_out_beyond_deck": float((d_best > max_distance).sum()),
        "held_out_copies_accuracy": float((row_predicted == row_labels).mean()),
        "low_confidence_margin": (float(np.percentile(confidence[right], 2)) / threshold
                                  if right.any() else 0.0)})
    return DeckModel(name, ROI_LAYOUT, originals, labels, max_distance, threshold,
                     enrolment, both_ways=True, roi=roi, weights=ridge.weights(),
                     scene_vectors=scenes, deck_limits=deck_limits,
                     region_pips=learn_region_pips([region for region, _ in samples],
                                                   [int(label) for label in labels]))


def _linear_read(scores: np.ndarray, enrolled: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The card and the confidence of rows of linear scores (cards never enrolled score
    nothing): the margin of the best score over the next, as a share of a perfect score
    (:data:`LINEAR_TARGET`: card, rank and suit each 1). Not as a share of the best score:
    a photo unlike any enrolled (another session's light, a card stopped elsewhere) scores
    low on every card, and its margin over a low score looked sure; several such held-out
    reads were wrong and set the threshold high above the rest."""
    scores = np.where(enrolled[None, :], scores, -np.inf)
    order = np.argsort(-scores, axis=1)
    rows = np.arange(len(scores))
    best, second = scores[rows, order[:, 0]], scores[rows, order[:, 1]]
    confidence = np.clip((best - second) / LINEAR_TARGET, 0.0, 1.0)
    return order[:, 0], np.where(np.isfinite(second), confidence, 0.0)


