"""A deck's enrolment: which corner layout it uses, its enrolled index features, and the
thresholds under which the recogniser declines.

Enrolment (:func:`enroll`) takes a handful of labelled, rectified frames per card. For each
candidate layout (:data:`vision.corner.LAYOUTS`) it reads every enrolment frame against the
*others* (leave one frame out) with a nearest-neighbour classifier, and keeps the layout that
reads most of them right with the widest margins. The same held-out reads set the deck's two
limits:

- ``max_distance``: how far from every enrolled card a frame may be and still be this deck
  (a different deck design, a card back, a hand over the card are further away);
- ``threshold``: the least confidence accepted, above that of every held-out read that was
  wrong, so that a doubtful read is declined rather than guessed.

Confidence is the relative margin between the nearest card and the nearest *other* card:
``(d_other - d_best) / d_other`` in [0, 1].

Models are saved one file per deck (``NAME.npz``) in :func:`models_dir`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from shoe_controller.cards import Card, Suit
from shoe_controller.errors import ShoeError
from vision.corner import LAYOUTS, features, orientations

FORMAT_VERSION = 1
MIN_THRESHOLD = 0.12
DISTANCE_SLACK = 1.3
THRESHOLD_SLACK = 0.05
THRESHOLD_FACTOR = 1.3  # held-out reads use one frame fewer per card: stay well above
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
    vectors: np.ndarray  # (N, D) unit vectors, both orientations of each enrolment frame
    labels: np.ndarray  # (N,) card index 0..51
    max_distance: float
    threshold: float
    enrolment: dict[str, float]  # held-out figures, for the record

    def match(self, card_image: np.ndarray) -> Match:
        """The nearest enrolled card to a rectified card image, with its confidence."""
        return self._match_vector(features(card_image, self.layout))

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
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self.name}.npz"
        meta = {"format": FORMAT_VERSION, "name": self.name, "layout": self.layout,
                "max_distance": self.max_distance, "threshold": self.threshold,
                "enrolment": self.enrolment}
        scratch = folder / f".{self.name}.{os.getpid()}.npz"
        with scratch.open("wb") as handle:
            np.savez_compressed(handle, vectors=self.vectors, labels=self.labels,
                                meta=np.array(json.dumps(meta)))
        scratch.replace(path)
        return path

    @classmethod
    def load(cls, name: str, folder: Path) -> DeckModel:
        check_deck_name(name)
        path = folder / f"{name}.npz"
        if not path.exists():
            raise VisionModelError(
                f"deck {name!r} is not enrolled in {folder} (run: shoe vision enroll --deck "
                f"{name} DIR)")
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
                vectors = data["vectors"].astype(np.float32)
                labels = data["labels"].astype(np.int64)
        except (OSError, ValueError, KeyError) as exc:
            raise VisionModelError(f"{path}: not a deck model ({exc})") from None
        if meta.get("format") != FORMAT_VERSION or meta.get("layout") not in LAYOUTS:
            raise VisionModelError(f"{path}: unsupported model format {meta.get('format')!r}")
        return cls(meta["name"], meta["layout"], vectors, labels, float(meta["max_distance"]),
                   float(meta["threshold"]), dict(meta.get("enrolment", {})))


def check_deck_name(name: str) -> str:
    if not DECK_NAME.match(name):
        raise VisionModelError(
            f"bad deck name {name!r}: letters, digits, '.', '_' or '-' (up to 64)")
    return name


def enroll(name: str, samples: Sequence[tuple[np.ndarray, Card]]) -> DeckModel:
    """Learn a deck from rectified card images with their cards (2+ frames per card)."""
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
    labels = np.array([card_index(card) for _, card in samples for _ in range(2)])
    frames = np.repeat(np.arange(len(samples)), 2)
    best: tuple[tuple[float, float], DeckModel] | None = None
    for layout in LAYOUTS:
        vectors = np.stack([features(view, layout)
                            for image, _ in samples for view in orientations(image)])
        model = _fit(name, layout, vectors, labels, frames)
        score = (model.enrolment["held_out_accuracy"], model.enrolment["median_confidence"])
        if best is None or score > best[0]:
            best = (score, model)
    assert best is not None
    return best[1]


def _fit(name: str, layout: str, vectors: np.ndarray, labels: np.ndarray, frames: np.ndarray
         ) -> DeckModel:
    """Thresholds from leave-one-frame-out reads of the enrolment frames."""
    similarity = vectors @ vectors.T
    distances = np.sqrt(np.maximum(2.0 - 2.0 * similarity, 0.0))
    distances[frames[:, None] == frames[None, :]] = np.inf  # a frame never votes for itself
    rows = np.arange(0, len(vectors), 2)  # each frame once, as it was captured
    nearest = np.argmin(distances[rows], axis=1)
    d_best = distances[rows, nearest]
    predicted = labels[nearest]
    other = np.where(labels[None, :] != predicted[:, None], distances[rows], np.inf).min(axis=1)
    confidence = np.where(other > 0, (other - d_best) / other, 0.0)
    right = predicted == labels[rows]
    # A frame whose card was badly found is far from everything: the 99th percentile keeps
    # it from widening the deck, and wrong reads it would decline anyway set no threshold.
    max_distance = (DISTANCE_SLACK * float(np.percentile(d_best[right], 99))
                    if right.any() else 0.0)
    considered = ~right & (d_best <= max_distance)
    wrong_conf = float(confidence[considered].max()) if considered.any() else 0.0
    threshold = max(MIN_THRESHOLD, THRESHOLD_FACTOR * wrong_conf + THRESHOLD_SLACK)
    accepted = (confidence >= threshold) & (d_best <= max_distance)
    enrolment = {
        "frames": float(len(rows)),
        "cards": float(len(set(labels.tolist()))),
        "held_out_accuracy": float(right.mean()),
        "held_out_accepted_right": float((accepted & right).mean()),
        "held_out_accepted_wrong": float((accepted & ~right).sum()),
        "median_confidence": float(np.median(confidence[right])) if right.any() else 0.0,
    }
    return DeckModel(name, layout, vectors.astype(np.float32), labels, max_distance,
                     threshold, enrolment)
