"""Which boxes a deck is read in: enrolment chooses among vision.corner.LAYOUTS by held-out
reads, and the index is preferred unless the whole card reads more frames right."""

from __future__ import annotations

import numpy as np

from tests.vision.synthetic_deck import deck
from vision.corner import LAYOUTS, WHOLE_CARD, features, features_by_layout
from vision.model import enroll


def test_a_deck_whose_index_has_no_suit_is_read_from_the_whole_card() -> None:
    """The index is the rank alone and only the pips tell 2S from 2C: the index box adds
    nothing to tell them apart and its noise dilutes the pips, so the whole card alone is
    enrolled, and its cards are read right and nearly all taken."""
    model = enroll("rank-only-index", deck(14, frames=3, rank_only_index=True))
    assert model.layout == WHOLE_CARD
    tests = deck(15, frames=2, rank_only_index=True)
    matches = [(model.match(image), card) for image, card in tests]
    taken = [(match, card) for match, card in matches if match.confidence >= model.threshold]
    assert all(match.card == card for match, card in taken)
    assert len(taken) >= 0.97 * len(tests), (len(taken), len(tests))


def test_a_deck_with_a_full_index_keeps_reading_its_index() -> None:
    """A deck whose index holds rank and suit is read in its index boxes, not from the
    whole card alone (the index is what tells a blurred 6 from an 8)."""
    model = enroll("full-index", deck(16, frames=3))
    assert model.layout != WHOLE_CARD


def test_every_layout_read_at_once_is_each_layout_read_alone() -> None:
    """Enrolment reads every layout at once (the whole card computed once); a card is then
    read in its deck's layout alone: the two must agree exactly."""
    image, _ = deck(17, frames=1)[0]
    at_once = features_by_layout(image)
    assert set(at_once) == set(LAYOUTS)
    for layout in LAYOUTS:
        np.testing.assert_array_equal(at_once[layout], features(image, layout))
