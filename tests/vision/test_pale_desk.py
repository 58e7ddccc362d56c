"""A deck enrolled and read on a pale desk under a lamp, as a house would do it (issue 16):
`shoe vision bench`'s holdout (:func:`vision.bench.holdout_bench`) on a folder of rendered
cards laid on a pale grey desk lit from one side, with blur and sensor noise.

None of the real sets has a light table; the issue's first report was of one (a white card
on a light desk: no card found in many enrolment photos, almost nothing read). The frames
are drawn here, from the card's face and a placement, not by the detector's code.
"""

from __future__ import annotations

import csv
from pathlib import Path

import cv2
import numpy as np
import pytest

from simulators.camera import render_deck
from vision.bench import holdout_bench

from .conftest import CARDS

pytestmark = pytest.mark.slow

DESK = (190.0, 196.0, 200.0)  # BGR: a pale grey desk; the rendered paper is about 238
SIZE = (640, 480)  # width, height


def _on_a_pale_desk(face: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The BGRA ``face`` anywhere on the desk at any turn, its long side 0.45 to 0.6 of
    the frame's height, a lamp off to one side (the light falls to 60 %), then blur and
    noise."""
    width, height = SIZE
    frame = np.empty((height, width, 3), np.float32)
    frame[:] = DESK
    frame += cv2.GaussianBlur(rng.normal(0, 4, (height, width)).astype(np.float32),
                              (0, 0), 1.5)[:, :, None]  # the desk's own texture
    face_h, face_w = face.shape[:2]
    scale = rng.uniform(0.45, 0.6) * height / face_h
    turn = rng.uniform(-np.pi, np.pi)
    corners = np.float32([[0, 0], [face_w, 0], [face_w, face_h], [0, face_h]])
    rotation = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
    placed = ((corners - [face_w / 2, face_h / 2]) * scale) @ rotation.T
    half = (placed.max(axis=0) - placed.min(axis=0)) / 2
    centre = [rng.uniform(half[0] + 5, width - half[0] - 5),
              rng.uniform(half[1] + 5, height - half[1] - 5)]
    matrix = cv2.getPerspectiveTransform(corners, (placed + centre).astype(np.float32))
    card = cv2.warpPerspective(face.astype(np.float32), matrix, (width, height))
    alpha = card[:, :, 3:4] / 255
    frame = frame * (1 - alpha) + card[:, :, :3] * alpha
    y, x = np.mgrid[0:height, 0:width]
    lamp_x, lamp_y = rng.uniform(-0.1, 1.1) * width, rng.uniform(-0.1, 1.1) * height
    light = 0.35 + 0.9 * np.exp(-(((x - lamp_x) / (0.5 * width)) ** 2
                                  + ((y - lamp_y) / (0.7 * height)) ** 2))
    frame *= np.clip(light, 0.6, 1.0)[:, :, None]
    frame = cv2.GaussianBlur(frame, (0, 0), 1.0) + rng.normal(0, 3, frame.shape)
    return np.clip(frame, 0, 255).astype(np.uint8)


def test_a_deck_enrolled_on_a_pale_desk_under_a_lamp_reads_it(designs, card_cache: Path,
                                                               tmp_path: Path) -> None:
    """Twelve cards, ten frames each: enrolled from five of each (seed 1), the other five
    read. By harness on such a folder (seed 21): a card found in 59 of the 60 enrolment
    photos and all 60 others read right; before this search, no card found in 43 of the
    60 and 33 % read (none wrong)."""
    faces = render_deck(designs["anglo"], CARDS, cache=card_cache)
    rng = np.random.default_rng(21)
    with (tmp_path / "labels.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["file", "card"])
        for card in CARDS:
            for number in range(10):
                name = f"{card.code}_{number:02d}.png"
                cv2.imwrite(str(tmp_path / name), _on_a_pale_desk(faces[card], rng))
                writer.writerow([name, card.code])
    measured = holdout_bench(tmp_path, 5, seed=1)
    assert len(measured.skipped) <= 3, measured.skipped
    assert not measured.not_enrolled
    result = measured.result
    assert result.frames == 60
    assert result.wrong == 0, result.mistakes
    assert result.right >= 57, (result.right, result.declined_as)
