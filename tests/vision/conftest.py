"""Rendered decks and enrolled models shared by the vision tests (rendered once, cached).

Card faces are rendered from the Debian SVG decks into the run's temporary folder, one for
all of a run's workers (a face is written whole or not at all: ``render_deck``), or into
``$SHOE_CARD_CACHE`` when set, to reuse them between runs; nothing rendered enters the tree.
Only a subset of cards is enrolled to keep the suite fast.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from shoe_controller.cards import Card
from simulators.camera import DeckDesign, find_designs, render_deck, synthesise
from vision.detect import detect
from vision.model import DeckModel, enroll

CODES = ["AS", "5S", "6S", "8S", "KH", "QH", "7D", "TD", "TH", "2C", "3C", "JC"]
CARDS = [Card.from_code(code) for code in CODES]
ENROL_FRAMES = 5


@pytest.fixture(scope="session")
def card_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    configured = os.environ.get("SHOE_CARD_CACHE")
    if configured:
        return Path(configured)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # Each worker's temporary folder lies in the run's: the faces one worker rendered,
        # the other reads.
        shared = tmp_path_factory.getbasetemp().parent / "cards"
        shared.mkdir(exist_ok=True)
        return shared
    return tmp_path_factory.mktemp("cards")


@pytest.fixture(scope="session")
def designs() -> dict[str, DeckDesign]:
    found = find_designs()
    if "anglo" not in found:
        pytest.fail("Debian card decks missing: apt-get install gnome-cards-data "
                    "kdegames-card-data-kf5 librsvg2-bin (scripts/debian-packages.txt)")
    return found


def enrol_design(design: DeckDesign, cards: list[Card], cache: Path, seed: int) -> DeckModel:
    faces = render_deck(design, cards, cache=cache)
    rng = np.random.default_rng(seed)
    samples = []
    for card in cards:
        for _ in range(ENROL_FRAMES):
            found = detect(synthesise(faces[card], rng))
            assert found is not None, f"{design.name} {card.code}: card not found"
            samples.append((found.card, card))
    return enroll(design.name, samples)


@pytest.fixture(scope="session")
def enrolled(designs: dict[str, DeckDesign], card_cache: Path):
    models: dict[str, DeckModel] = {}

    def get(name: str) -> DeckModel:
        if name not in models:
            models[name] = enrol_design(designs[name], CARDS, card_cache, seed=1)
        return models[name]

    return get
