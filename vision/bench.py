"""Labelled folders (``labels.csv``: file,card) for enrolment and measurement.

:func:`measure` gives what ``shoe vision bench`` prints: accuracy (cards read right over all
frames), precision of accepted reads (right over accepted), decline rate and the time per
frame (p50, p95) of the whole pipeline, detection included.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from shoe_controller.cards import Card
from shoe_controller.errors import CardCodeError
from vision.capture import read_image
from vision.detect import detect
from vision.model import DeckModel, VisionModelError, enroll
from vision.recognise import Recogniser


def read_labels(folder: Path) -> list[tuple[Path, Card]]:
    """The frames of a labelled folder; errors name the file, line and value."""
    labels = folder / "labels.csv"
    if not labels.is_file():
        raise VisionModelError(f"{folder}: no labels.csv (columns: file,card)")
    items: list[tuple[Path, Card]] = []
    with labels.open(newline="") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None or not {"file", "card"} <= set(reader.fieldnames):
            raise VisionModelError(f"{labels}: the header must name the columns file,card")
        for line, row in enumerate(reader, start=2):
            name, code = (row.get("file") or "").strip(), (row.get("card") or "").strip()
            try:
                card = Card.from_code(code)
            except CardCodeError as exc:
                raise VisionModelError(f"{labels}:{line}: {exc}") from None
            path = folder / name
            if not name or not path.is_file():
                raise VisionModelError(f"{labels}:{line}: no such frame {name!r}")
            items.append((path, card))
    if not items:
        raise VisionModelError(f"{labels}: no frames listed")
    return items


def enroll_folder(name: str, folder: Path) -> tuple[DeckModel, list[str]]:
    """Enrol a deck from a labelled folder; returns the model and the frames skipped because
    no card was found in them (named, so the operator can retake them)."""
    samples: list[tuple[np.ndarray, Card]] = []
    skipped: list[str] = []
    for path, card in read_labels(folder):
        found = detect(read_image(path))
        if found is None:
            skipped.append(path.name)
        else:
            samples.append((found.card, card))
    return enroll(name, samples), skipped


@dataclass
class BenchResult:
    frames: int = 0
    right: int = 0
    wrong: int = 0
    declined: int = 0
    seconds: list[float] = field(default_factory=list)
    mistakes: list[str] = field(default_factory=list)

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

    def to_dict(self) -> dict[str, Any]:
        return {"frames": self.frames, "accuracy": self.accuracy, "precision": self.precision,
                "decline_rate": self.decline_rate, "p50_ms": self.percentile_ms(50),
                "p95_ms": self.percentile_ms(95), "wrong": self.wrong,
                "mistakes": self.mistakes}


def measure(recogniser: Recogniser, items: Iterable[tuple[np.ndarray | Path, Card]]
            ) -> BenchResult:
    result = BenchResult()
    for frame, card in items:
        image = read_image(frame) if isinstance(frame, Path) else frame
        read = recogniser.recognise(image)
        result.frames += 1
        result.seconds.append(read.seconds)
        if read.card is None:
            result.declined += 1
        elif read.card == card:
            result.right += 1
        else:
            result.wrong += 1
            name = frame.name if isinstance(frame, Path) else f"frame {result.frames}"
            result.mistakes.append(f"{name}: {card.code} read as {read.card.code}")
    return result
