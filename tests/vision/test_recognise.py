"""Reading cards from rendered frames of several real deck designs; declining when unsure."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from simulators.camera import background, render_deck, synthesise
from vision.bench import measure
from vision.detect import detect, find_card
from vision.model import DeckModel, VisionModelError, models_dir
from vision.recognise import Recogniser

from .conftest import CARDS


def frames(design, cache: Path, seed: int, per_card: int):
    faces = render_deck(design, CARDS, cache=cache)
    rng = np.random.default_rng(seed)
    return [(synthesise(faces[card], rng), card) for card in CARDS for _ in range(per_card)]


@pytest.mark.parametrize("name", ["anglo", "tango", "kde-penguins"])
def test_reads_cards_of_several_designs_and_never_takes_a_wrong_one(
    name, designs, enrolled, card_cache
) -> None:
    result = measure(Recogniser(enrolled(name)), frames(designs[name], card_cache, 7, 3))
    assert result.wrong == 0, result.mistakes
    assert result.accuracy >= 0.8, result.to_dict()


def test_a_deck_enrolled_from_one_design_declines_another(designs, enrolled, card_cache) -> None:
    recogniser = Recogniser(enrolled("anglo"))
    for frame, _ in frames(designs["kde-oxygen"], card_cache, 8, 2):
        read = recogniser.recognise(frame)
        assert read.card is None, read


def test_no_card_in_the_frame_is_declined(enrolled) -> None:
    rng = np.random.default_rng(3)
    read = Recogniser(enrolled("anglo")).recognise(background(rng, (640, 480)))
    assert read.card is None and read.reason


def test_detection_finds_the_card_corners(designs, card_cache) -> None:
    face = render_deck(designs["anglo"], CARDS[:1], cache=card_cache)[CARDS[0]]
    found = detect(synthesise(face, np.random.default_rng(4)))
    assert found is not None and found.card.shape[:2] == (290, 200)


@pytest.mark.parametrize("stroke", [False, True])
@pytest.mark.parametrize("angle", [0.0, 17.0, -35.0, 80.0])
def test_detection_finds_the_sharp_corners_of_a_rounded_card(angle: float, stroke: bool) -> None:
    """A card's rounded corners must not pull its corners inwards, and a dark border stroke
    (many printed designs have one) must not move its edges: the corners are where the
    paper's straight edges meet, within a pixel, on a blurred, noisy frame."""
    frame, placed = _card_on_table(angle, stroke=stroke)
    quad = find_card(frame)
    assert quad is not None
    error = np.linalg.norm(quad[:, None, :] - placed[None, :, :], axis=2).min(axis=1)
    assert error.max() < 1.0, (quad, placed)  # on the arcs it would be about 7 pixels off


@pytest.mark.parametrize("angle", [8.0, -50.0])
def test_detection_finds_a_card_whose_dark_picture_runs_off_its_edge(angle: float) -> None:
    """A dark picture printed to the card's edge (a full-bleed design), on a dark table:
    that part of the card looks like the table and bites a corner out of the card's blob.
    The corners are still found from the edges that show, not from the bite."""
    frame, placed = _card_on_table(angle, table=(32, 30, 28), picture=(48, 46, 44))
    quad = find_card(frame)
    assert quad is not None
    error = np.linalg.norm(quad[:, None, :] - placed[None, :, :], axis=2).min(axis=1)
    assert error.max() < 1.0, (quad, placed)


def _card_on_table(angle: float, *, stroke: bool = False,
                   table: tuple[int, int, int] = (40, 110, 30),
                   picture: tuple[int, int, int] | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
    """A frame of a rounded white card (optionally with a 3-pixel black border, or a dark
    disc printed to its bottom-right edges), turned by ``angle``; and the corners of its
    paper in the frame."""
    frame = np.full((480, 640, 3), table, np.uint8)
    width, height, radius = 180.0, 260.0, 18
    card = np.zeros((int(height), int(width)), np.uint8)
    cv2.rectangle(card, (radius, 0), (int(width) - 1 - radius, int(height) - 1), 255, -1)
    cv2.rectangle(card, (0, radius), (int(width) - 1, int(height) - 1 - radius), 255, -1)
    for x, y in ((radius, radius), (int(width) - 1 - radius, radius),
                 (radius, int(height) - 1 - radius),
                 (int(width) - 1 - radius, int(height) - 1 - radius)):
        cv2.circle(card, (x, y), radius, 255, -1)
    paper = card.copy()
    if stroke:  # a 3-pixel black border: the paper starts inside it
        paper = cv2.erode(card, np.ones((7, 7), np.uint8), borderType=cv2.BORDER_CONSTANT,
                          borderValue=0)
    dark = np.zeros_like(card)
    if picture is not None:  # a disc cut by the card's right and bottom edges
        cv2.circle(dark, (int(width * 0.8), int(height * 0.82)), 75, 255, -1)
        dark = np.minimum(dark, card)
        paper = np.where(dark > 0, 0, paper).astype(np.uint8)
    inset = 3.0 if stroke else 0.0
    corners = np.array([[inset, inset], [width - 1 - inset, inset],
                        [width - 1 - inset, height - 1 - inset], [inset, height - 1 - inset]],
                       np.float32)
    turn = cv2.getRotationMatrix2D((width / 2, height / 2), angle, 1.0)
    turn[:, 2] += (320 - width / 2, 240 - height / 2)
    placed = cv2.transform(corners[None], turn)[0]
    whole = cv2.warpAffine(card, turn, (640, 480), flags=cv2.INTER_LINEAR) / 255.0
    white = cv2.warpAffine(paper, turn, (640, 480), flags=cv2.INTER_LINEAR) / 255.0
    shade = cv2.warpAffine(dark, turn, (640, 480), flags=cv2.INTER_LINEAR) / 255.0
    image = frame * (1 - whole[:, :, None]) + (10, 10, 10) * (whole - white - shade)[:, :, None]
    image += (235, 240, 240) * white[:, :, None]
    image += np.array(picture or (0, 0, 0)) * shade[:, :, None]
    image = cv2.GaussianBlur(image, (0, 0), 1.0)
    image += np.random.default_rng(5).normal(0, 4, image.shape)
    return np.clip(image, 0, 255).astype(np.uint8), placed


def test_model_round_trips_through_its_file(enrolled, tmp_path: Path) -> None:
    model = enrolled("anglo")
    model.save(tmp_path)
    loaded = DeckModel.load("anglo", tmp_path)
    assert loaded.layout == model.layout and loaded.threshold == model.threshold
    assert loaded.split == model.split and loaded.split_name == model.split_name
    assert np.array_equal(loaded.labels, model.labels)
    if model.split is not None:
        assert np.array_equal(loaded.rank_vectors, model.rank_vectors)
        assert np.array_equal(loaded.suit_vectors, model.suit_vectors)
    with pytest.raises(VisionModelError, match="not enrolled"):
        DeckModel.load("other", tmp_path)
    with pytest.raises(VisionModelError, match="bad deck name"):
        DeckModel.load("../x", tmp_path)


def _rewrite_meta(path: Path, **changes) -> None:
    with np.load(path, allow_pickle=False) as data:
        arrays = {key: data[key] for key in data.files}
    meta = json.loads(str(arrays["meta"]))
    meta.update(changes)
    arrays["meta"] = np.array(json.dumps(meta))
    with path.open("wb") as handle:
        np.savez_compressed(handle, **arrays)


def test_a_model_of_another_format_or_with_bad_boxes_is_refused(enrolled, tmp_path: Path
                                                                 ) -> None:
    path = enrolled("anglo").save(tmp_path)
    _rewrite_meta(path, format=2)
    with pytest.raises(VisionModelError, match="format 2 .*enrol the deck again"):
        DeckModel.load("anglo", tmp_path)
    path = enrolled("anglo").save(tmp_path)
    _rewrite_meta(path, split=[[0.0, 0.0, 0.2, 0.1], [0.3, 0.2, 0.1, 0.4]])
    with pytest.raises(VisionModelError, match="bad rank and suit boxes"):
        DeckModel.load("anglo", tmp_path)


def test_models_folder_can_be_chosen(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SHOE_VISION_MODELS", str(tmp_path))
    assert models_dir() == tmp_path
    assert models_dir(tmp_path / "x") == tmp_path / "x"
