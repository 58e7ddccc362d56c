"""Reading cards from rendered frames of several real deck designs; declining when unsure."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from simulators.camera import background, render_deck, synthesise
from vision.bench import measure
from vision.detect import detect
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


def test_model_round_trips_through_its_file(enrolled, tmp_path: Path) -> None:
    model = enrolled("anglo")
    model.save(tmp_path)
    loaded = DeckModel.load("anglo", tmp_path)
    assert loaded.layout == model.layout and loaded.threshold == model.threshold
    assert np.array_equal(loaded.labels, model.labels)
    with pytest.raises(VisionModelError, match="not enrolled"):
        DeckModel.load("other", tmp_path)
    with pytest.raises(VisionModelError, match="bad deck name"):
        DeckModel.load("../x", tmp_path)


def test_models_folder_can_be_chosen(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SHOE_VISION_MODELS", str(tmp_path))
    assert models_dir() == tmp_path
    assert models_dir(tmp_path / "x") == tmp_path / "x"
