"""Labelled folders (``labels.csv``: file,card) for enrolment and measurement.

:func:`measure` gives what ``shoe vision bench`` prints: accuracy (cards read right over all
frames), precision of accepted reads (right over accepted), decline rate and the time per
frame (p50, p95) of the whole pipeline, detection included; per session (:func:`session_of`)
and the most frequent confusions.

:func:`holdout_bench` measures a folder of photographs of one deck on its own: a seeded draw
(:func:`draw_enrolment`) picks N photos per card to enrol from, every other photo is read.
"""

from __future__ import annotations

import csv
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from shoe_controller.cards import Card
from shoe_controller.errors import CardCodeError
from vision.capture import read_image
from vision.detect import detect, survey
from vision.in_part import find_in_part
from vision.index_corner import Partly, learn_corners
from vision.model import DeckModel, VisionModelError, card_index, enroll
from vision.quad import rectify
from vision.recognise import Recogniser
from vision.roi import Roi, crop


def read_labels(folder: Path) -> list[tuple[Path, Card]]:
    """The frames of a labelled folder; errors name the file, line and value."""
    labels = folder / "labels.csv"
    if not labels.is_file():
        raise VisionModelError(f"{folder}: no labels.csv (columns: file,card)")
    items: list[tuple[Path, Card]] = []
    listed: dict[str, int] = {}  # file name -> its line
    for line, row in _label_rows(labels):
        name, code = (row.get("file") or "").strip(), (row.get("card") or "").strip()
        if not code:
            raise VisionModelError(f"{labels}:{line}: no card given for {name!r}")
        try:
            card = Card.from_code(code)
        except CardCodeError as exc:
            raise VisionModelError(f"{labels}:{line}: {exc}") from None
        path = folder / name
        if not name or not path.is_file():
            raise VisionModelError(f"{labels}:{line}: no such frame {name!r}")
        if name in listed:
            raise VisionModelError(f"{labels}:{line}: {name!r} is listed already, on line "
                                   f"{listed[name]} (one card a frame)")
        listed[name] = line
        items.append((path, card))
    if not items:
        raise VisionModelError(f"{labels}: no frames listed")
    return items


def _label_rows(labels: Path) -> list[tuple[int, dict[str, str]]]:
    """The rows of a labels.csv (line number, column -> value), its header's names stripped
    of spaces; a spreadsheet's byte-order mark is no part of the first name. Errors name the
    file: no header naming file and card, not UTF-8 text, not CSV."""
    try:
        with labels.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle)
            header = [name.strip().lower() for name in next(reader, [])]
            if not {"file", "card"} <= set(header):
                raise VisionModelError(f"{labels}: the header must name the columns file,card")
            return [(reader.line_num, dict(zip(header, row, strict=False))) for row in reader
                    if any(value.strip() for value in row)]
    except UnicodeDecodeError as exc:
        raise VisionModelError(f"{labels}: not UTF-8 text (byte {exc.start}): save it as "
                               f"UTF-8 CSV") from None
    except csv.Error as exc:
        raise VisionModelError(f"{labels}: not a CSV file ({exc})") from None


def session_of(path: Path, card: Card, column: str | None = None) -> str:
    """The capture session of a labelled frame: ``column`` (labels.csv's ``session``) when
    given, else what the file name says after the card and is not a frame number
    (``AH_s1_04.jpg`` -> ``s1``, ``AS_b.png`` -> ``b``, ``AS_01.jpg`` -> no session)."""
    if column:
        return column
    parts = path.stem.split("_")
    if parts and parts[0].upper() == card.code:
        parts = parts[1:]
    return "_".join(part for part in parts if part and not part.isdigit())


def read_sessions(folder: Path) -> dict[str, str]:
    """File name -> session, for every frame of a labelled folder (:func:`session_of`)."""
    column = {(row.get("file") or "").strip(): (row.get("session") or "").strip()
              for _, row in _label_rows(folder / "labels.csv")}
    return {path.name: session_of(path, card, column.get(path.name))
            for path, card in read_labels(folder)}


def enroll_items(name: str, items: Sequence[tuple[Path, Card]], roi: Roi | None = None
                 ) -> tuple[DeckModel, list[str], list[str]]:
    """Enrol a deck from labelled frames; returns the model, the frames skipped because no
    card was found in them (named, so the operator can retake them), and the cards left out
    of the whole-card deck because only one of their frames showed the card (a card is read
    against its other frames: :func:`enough_found`). With ``roi`` (a fixed camera) the frames
    are not searched for a card: the region is the index corner."""
    samples, quads, skipped, sizes = enrolment_detections(items, roi)
    kept, kept_quads, left_out = enough_found(samples, quads)
    model = enroll(name, kept, roi=roi, quads=kept_quads)
    if quads is not None:
        learn_partly_found(model, samples, quads, items, skipped)
    record_folder(model, [card for _, card in items], sizes)
    return model, skipped, left_out


def enough_found(samples: Sequence[tuple[np.ndarray, Card]], quads: Sequence[np.ndarray] | None
                 ) -> tuple[list[tuple[np.ndarray, Card]], list[np.ndarray] | None, list[str]]:
    """The enrolment samples (and their quads) of the cards found in at least 2 frames, and
    the codes of the cards found in only one, left out: a card's enrolment frames are read
    against each other to set the deck's limits, and one frame has nothing to be read
    against. Left out, such a card is still read by its index corners where a frame showed
    one (:func:`learn_partly_found`), or else declined with every card that shares its rank
    or suit (:func:`record_folder`), as a card no frame showed is; the operator is told."""
    counts = Counter(card for _, card in samples)
    keep = [counts[card] >= 2 for _, card in samples]
    kept = [sample for sample, keeping in zip(samples, keep, strict=True) if keeping]
    kept_quads = None if quads is None else [
        quad for quad, keeping in zip(quads, keep, strict=True) if keeping]
    left_out = [card.code for card in sorted(counts, key=card_index) if counts[card] < 2]
    return kept, kept_quads, left_out


def record_folder(model: DeckModel, cards: Iterable[Card], sizes: Iterable[tuple[int, int]]
                  ) -> None:
    """Record on the deck what its enrolment folder says beyond what it learnt to read: the
    ``cards`` of the folder it learnt nothing of (:func:`cards_unknown_to`; its reads of a
    card sharing their rank or suit are then declined, :attr:`vision.model.DeckModel.missing`)
    and the size of the folder's frames, when one (:func:`one_frame_size`; a frame of another
    size is then declined, :attr:`vision.model.DeckModel.frame_size`)."""
    model.missing = tuple(Card.from_code(code) for code in cards_unknown_to(model, cards))
    model.frame_size = one_frame_size(sizes)


def one_frame_size(sizes: Iterable[tuple[int, int]]) -> tuple[int, int] | None:
    """The short and the long side of frames (height, width) that are all of one size,
    either way round (a camera turned a quarter gives its frames turned); None when they are
    of several sizes, or there are none (:attr:`vision.model.DeckModel.frame_size`)."""
    seen = {(min(size), max(size)) for size in sizes}
    return seen.pop() if len(seen) == 1 else None


def learn_partly_found(model: DeckModel, samples: Sequence[tuple[np.ndarray, Card]],
                       quads: Sequence[np.ndarray], items: Sequence[tuple[Path, Card]],
                       skipped: Sequence[str]) -> list[str]:
    """The deck's corner reader learnt again from every whole card (``samples`` and their
    ``quads``, with cards the deck itself left out) and the enrolment photos where no whole
    card was found (those of ``items`` named in ``skipped``) but part of one is
    (:func:`vision.in_part.find_in_part`,
    with the card shape the whole cards taught). A card the first reader knows is added
    only if that reader reads it right and accepts it: a card completed wrongly (cardai
    seed 2024: an 8H and a 9H of session s1, nearest to each other) would raise the
    threshold for every read. Returns the names of the photos added."""
    corners = model.corners
    if corners is None:
        return []
    known = set(corners.labels.tolist())
    partly: list[Partly] = []
    names: list[str] = []
    no_whole_card = set(skipped)
    for path, card in items:
        if path.name not in no_whole_card:
            continue
        frame = read_image(path)
        found = find_in_part(frame, corners.shape, corners.box, survey(frame)[1])
        if found is None:
            continue
        label = card_index(card)
        card_image = rectify(frame, found.quad)
        read = corners.read(card_image, found.usable)
        if label in known and not (
                read is not None and read.label == label and not read.disputed
                and read.confidence >= corners.threshold_for(read.label)
                and read.distance <= corners.max_distance):
            continue
        partly.append((card_image, found.usable, label))
        names.append(path.name)
    relearnt = learn_corners(
        [image for image, _ in samples], np.array([card_index(card) for _, card in samples]),
        quads, model.split, model.layout, partly)
    if relearnt is not None:
        model.corners = relearnt
    return names


def enrolment_samples(items: Sequence[tuple[Path, Card]], roi: Roi | None = None
                      ) -> tuple[list[tuple[np.ndarray, Card]], list[str]]:
    """The images :func:`vision.model.enroll` learns from: each frame's rectified card (or
    its region, ``roi``), and the names of frames where no card was found."""
    found = enrolment_detections(items, roi)
    return found.samples, found.skipped


class EnrolmentDetections(NamedTuple):
    samples: list[tuple[np.ndarray, Card]]
    quads: list[np.ndarray] | None  # each sample's card in its frame; None with a region
    skipped: list[str]  # the frames where no card was found
    frame_sizes: list[tuple[int, int]]  # (height, width) of every frame, skipped or not


def enrolment_detections(items: Sequence[tuple[Path, Card]], roi: Roi | None = None
                         ) -> EnrolmentDetections:
    """:func:`enrolment_samples` and each sample's card in its frame (its quad, which
    teaches the deck the camera's card shape; None with ``roi``), and the frames' sizes."""
    samples: list[tuple[np.ndarray, Card]] = []
    quads: list[np.ndarray] = []
    skipped: list[str] = []
    sizes: list[tuple[int, int]] = []
    for path, card in items:
        frame = read_image(path)
        sizes.append((frame.shape[0], frame.shape[1]))
        if roi is not None:
            samples.append((crop(frame, roi), card))
            continue
        found = detect(frame)
        if found is None:
            skipped.append(path.name)
        else:
            samples.append((found.card, card))
            quads.append(found.quad)
    return EnrolmentDetections(samples, None if roi is not None else quads, skipped, sizes)


def cards_unknown_to(model: DeckModel, cards: Iterable[Card]) -> list[str]:
    """The codes of ``cards`` the deck learnt nothing of (no enrolment frame where the card
    was found, nor its index corner), in deck order: the deck cannot read them, and its
    limits, set on the cards it knows, do not promise to decline them."""
    known = set(model.labels.tolist())
    if model.corners is not None:
        known |= set(model.corners.labels.tolist())
    return [card.code for card in sorted(set(cards), key=card_index)
            if card_index(card) not in known]


def draw_enrolment(items: Sequence[tuple[Path, Card]], per_card: int, seed: int
                   ) -> tuple[list[tuple[Path, Card]], list[tuple[Path, Card]]]:
    """A seeded draw of ``per_card`` frames of each card to enrol from; the rest to test.
    Frames are drawn from each card's frames in file-name order (the same draw for the same
    folder and seed, whatever the order of labels.csv); a card with no more than
    ``per_card`` frames is enrolled from all of them and has none to test."""
    rng = np.random.default_rng(seed)
    by_card: dict[Card, list[Path]] = {}
    for path, card in items:
        by_card.setdefault(card, []).append(path)
    enrol: list[tuple[Path, Card]] = []
    test: list[tuple[Path, Card]] = []
    for card in sorted(by_card, key=lambda card: (int(card.suit), card.rank)):
        paths = sorted(by_card[card], key=lambda path: path.name)
        chosen = set(rng.choice(len(paths), size=min(per_card, len(paths)),
                                replace=False).tolist())
        for index, path in enumerate(paths):
            (enrol if index in chosen else test).append((path, card))
    return enrol, test


@dataclass
class BenchResult:
    frames: int = 0
    right: int = 0
    wrong: int = 0
    declined: int = 0
    seconds: list[float] = field(default_factory=list)
    mistakes: list[str] = field(default_factory=list)
    confusions: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(true card, card taken) of every wrong accepted read."""
    declined_as: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(true card, best guess) of every declined read whose best guess was another card."""
    sessions: dict[str, BenchResult] = field(default_factory=dict)
    cpu_seconds: list[float] = field(default_factory=list)
    """CPU time of each read (this thread's): what one core spends, whatever else runs."""

    def add(self, truth: Card, read: Any, name: str, cpu: float | None = None) -> None:
        """Count one read (a :class:`vision.recognise.Recognition`) of a ``truth`` frame;
        ``cpu``: the CPU time it took, when measured."""
        self.frames += 1
        self.seconds.append(read.seconds)
        if cpu is not None:
            self.cpu_seconds.append(cpu)
        if read.card is None:
            self.declined += 1
            if read.best_guess is not None and read.best_guess != truth:
                self.declined_as[(truth.code, read.best_guess.code)] += 1
        elif read.card == truth:
            self.right += 1
        else:
            self.wrong += 1
            self.confusions[(truth.code, read.card.code)] += 1
            self.mistakes.append(f"{name}: {truth.code} read as {read.card.code}")

    @property
    def accuracy(self) -> float:
        return self.right / self.frames if self.frames else 0.0

    @property
    def precision(self) -> float:
        accepted = self.right + self.wrong
        return self.right / accepted if accepted else 1.0

    @property
    def decline_rate(self) -> float:
        return self.declined / self.frames if self.frames else 0.0

    def percentile_ms(self, q: float) -> float:
        return float(np.percentile(self.seconds, q) * 1000) if self.seconds else 0.0

    def cpu_percentile_ms(self, q: float) -> float:
        return float(np.percentile(self.cpu_seconds, q) * 1000) if self.cpu_seconds else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"frames": self.frames, "accuracy": self.accuracy, "precision": self.precision,
                "decline_rate": self.decline_rate, "p50_ms": self.percentile_ms(50),
                "p95_ms": self.percentile_ms(95), "cpu_p50_ms": self.cpu_percentile_ms(50),
                "cpu_p95_ms": self.cpu_percentile_ms(95), "right": self.right, "wrong": self.wrong,
                "declined": self.declined, "mistakes": self.mistakes,
                "confusions": [{"card": truth, "read_as": read, "count": count}
                               for (truth, read), count in self.confusions.most_common()],
                "declined_best_guesses": [
                    {"card": truth, "best_guess": guess, "count": count}
                    for (truth, guess), count in self.declined_as.most_common(10)],
                "sessions": {name: {key: value for key, value in result.to_dict().items()
                                    if key not in ("mistakes", "confusions", "sessions",
                                                   "declined_best_guesses")}
                             for name, result in sorted(self.sessions.items())}}


def measure(recogniser: Recogniser, items: Iterable[tuple[np.ndarray | Path, Card]],
            sessions: dict[str, str] | None = None) -> BenchResult:
    """Read every frame; ``sessions`` (file name -> session) also counts each session apart
    (frames given as arrays, or not named there, count in the total only)."""
    result = BenchResult()
    for frame, card in items:
        image = read_image(frame) if isinstance(frame, Path) else frame
        cpu = time.thread_time()
        read = recogniser.recognise(image)
        cpu = time.thread_time() - cpu
        name = frame.name if isinstance(frame, Path) else f"frame {result.frames + 1}"
        result.add(card, read, name, cpu)
        session = (sessions or {}).get(name, "")
        if session:
            result.sessions.setdefault(session, BenchResult()).add(card, read, name, cpu)
    return result


@dataclass
class HoldoutResult:
    """What :func:`holdout_bench` measured, and on which frames."""

    result: BenchResult
    model: DeckModel | None
    enrolled: list[str]
    skipped: list[str]
    not_enrolled: list[str]  # cards left out: fewer than 2 enrolment frames had a card found
    enrol_seconds: float
    per_card: int
    seed: int
    partly: list[str] = field(default_factory=list)
    """Enrolment photos with no whole card whose index corners were enrolled (the card
    found partly: :func:`learn_partly_found`)."""

    def to_dict(self) -> dict[str, Any]:
        return {"per_card": self.per_card, "seed": self.seed,
                "enrol_seconds": round(self.enrol_seconds, 2),
                "enrolled_frames": self.enrolled, "skipped": self.skipped,
                "enrolled_by_corner": self.partly,
                "cards_not_enrolled": self.not_enrolled, **self.result.to_dict()}


def holdout_bench(folder: Path, per_card: int, seed: int, roi: Roi | None = None,
                  name: str = "holdout", sessions: dict[str, str] | None = None
                  ) -> HoldoutResult:
    """Enrol from ``per_card`` photos of each card (seeded draw) and read every other photo
    of the folder. Cards with fewer than 2 enrolment frames where a card was found are left
    out of the enrolment (and named); their other photos are still read, and count.
    ``sessions`` (file name -> session) overrides what :func:`read_sessions` finds."""
    items = read_labels(folder)
    enrol_items, test_items = draw_enrolment(items, per_card, seed)
    if not test_items:
        raise VisionModelError(
            f"{folder}: no card has more than {per_card} photos, so every photo is enrolled "
            f"and none is left to read (give a smaller --enrol-per-card, or more photos)")
    start = time.process_time()
    samples, quads, skipped, sizes = enrolment_detections(enrol_items, roi)
    counts = Counter(card for _, card in samples)
    left_out = sorted({card.code for _, card in enrol_items if counts[card] < 2})
    kept, kept_quads, _ = enough_found(samples, quads)
    model = (enroll(name, kept, roi=roi, quads=kept_quads)
             if len({card for _, card in kept}) >= 2 else None)
    partly = [] if model is None or quads is None else learn_partly_found(
        model, samples, quads, enrol_items, skipped)
    if model is not None:
        record_folder(model, [card for _, card in enrol_items], sizes)
    enrol_seconds = time.process_time() - start
    if model is None:
        result = BenchResult(frames=len(test_items), declined=len(test_items))
    else:
        result = measure(Recogniser(model), test_items,
                         read_sessions(folder) if sessions is None else sessions)
    return HoldoutResult(result, model, [path.name for path, _ in enrol_items], skipped,
                         left_out, enrol_seconds, per_card, seed, partly)
