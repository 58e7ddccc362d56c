"""Which boxes a deck is read in: enrolment chooses among vision.corner.LAYOUTS by held-out
reads, and the index is preferred unless the whole card reads more frames right."""

from __future__ import annotations

from tests.vision.synthetic_deck import deck
from vision.corner import WHOLE_CARD
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
