"""Cards printed one way up: enrolment turns every frame the same way (vision.orientation)
and the recogniser reads a card either way up (vision.model)."""

from __future__ import annotations

import cv2
import numpy as np

from tests.vision.synthetic_deck import deck
from vision.model import enroll
from vision.orientation import upright


def _turned_at_random(samples: list, seed: int) -> tuple[list, np.ndarray]:
    """The frames, about half of them turned half round (as a card lies either way)."""
    turns = np.random.default_rng(seed).random(len(samples)) < 0.5
    return ([(cv2.rotate(image, cv2.ROTATE_180) if turn else image, card)
             for (image, card), turn in zip(samples, turns)], turns)


def test_frames_turned_either_way_are_all_brought_the_same_way_up() -> None:
    samples, turns = _turned_at_random(
        deck(5, frames=3, side_by_side=True, point_symmetric=False), seed=6)
    turned = np.array(upright([image for image, _ in samples], [card for _, card in samples]))
    # Undone, every frame is the way it was printed, or every one is turned: one up for all.
    assert len(set((turned ^ turns).tolist())) == 1


def test_a_deck_printed_one_way_up_is_read_right_either_way_up() -> None:
    """The index is only at the top: a card lying the other way up shows none where the
    enrolled frames have it, yet it is read, and read right."""
    samples, _ = _turned_at_random(
        deck(7, frames=3, side_by_side=True, point_symmetric=False), seed=8)
    model = enroll("one-way-up", samples)
    assert model.split_name == "located" and not model.both_ways
    for image, card in deck(9, frames=1, side_by_side=True, point_symmetric=False):
        for view in (image, cv2.rotate(image, cv2.ROTATE_180)):
            match = model.match(view)
            assert match.card == card
            assert match.confidence >= model.threshold, (card, match)


def test_a_deck_printed_both_ways_up_enrols_every_frame_both_ways() -> None:
    """Point-symmetric: a frame turned round is one more example of the card, as good as
    another frame (held-out reads are as right), so it is kept."""
    samples, _ = _turned_at_random(deck(10, frames=3), seed=11)
    model = enroll("both-ways-up", samples)
    assert model.both_ways and len(model.vectors) == 2 * len(samples)
    for image, card in deck(12, frames=1):
        assert model.match(cv2.rotate(image, cv2.ROTATE_180)).card == card
