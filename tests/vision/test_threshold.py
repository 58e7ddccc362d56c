"""The decline threshold of a fixed-camera deck, calibrated on held-out enrolment reads
(:func:`vision.calibration.calibrated_threshold`): hand-computed cases, and the two promises it
makes stated as invariants for hypothesis to break: the held-out reads it accepts are at
least 99.9 % right, and no held-out read of an enrolment photo itself is accepted wrong.
Then an index corner reader's thresholds per card (:func:`vision.index_corner.card_thresholds`),
the same way."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.calibration import (
    ROI_MIN_THRESHOLD,
    THRESHOLD_FACTOR,
    THRESHOLD_SLACK,
    calibrated_threshold,
)
from vision.index_corner import _copies_thresholds, card_thresholds


def reads(confidences: list[float], wrong: list[bool], original: list[bool] | None = None
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    labels = np.zeros(len(confidences), int)
    predicted = np.array([1 if bad else 0 for bad in wrong])
    kept = np.array(original if original is not None else [False] * len(confidences))
    return labels, predicted, np.array(confidences, float), kept


def test_all_right_takes_the_floor() -> None:
    assert calibrated_threshold(*reads([0.5, 0.3, 0.01], [False] * 3)) == ROI_MIN_THRESHOLD


def test_one_wrong_copy_in_two_thousand_is_within_the_target() -> None:
    # 1 wrong in 2000 accepted: 99.95 % right, so everything may be accepted (the least
    # confidence, 0.5), though the wrong read alone would not be.
    confidences = [0.9] + [0.5] * 1999
    assert calibrated_threshold(*reads(confidences, [True] + [False] * 1999)) == 0.5


def test_one_wrong_copy_in_a_hundred_sets_the_threshold_above_it() -> None:
    # 100 reads at 0.6 .. 0.105, the 50th (confidence 0.355) wrong: accepting it makes
    # 1 wrong in at least 50 (98 %), so the threshold is the 49th read's confidence.
    confidences = [0.6 - 0.005 * index for index in range(100)]
    wrong = [index == 49 for index in range(100)]
    assert calibrated_threshold(*reads(confidences, wrong)) == confidences[48]


def test_a_wrong_read_of_an_enrolment_photo_is_never_accepted() -> None:
    confidences = [0.4] + [0.3] * 5000
    wrong = [True] + [False] * 5000
    original = [True] + [False] * 5000
    threshold = calibrated_threshold(*reads(confidences, wrong, original))
    assert threshold > 0.4  # 1 in 5001 would meet 99.9 %, but it is a real photo


def test_a_wrong_enrolment_photo_keeps_a_margin_above_it() -> None:
    # A photo read wrong at 0.2: the threshold is 1.3 x 0.2 + 0.05 = 0.31, not just above
    # 0.2 (the worst of a few wrong photos is a low estimate of how sure one can be).
    confidences = [0.2, 0.3, 0.35, 0.9]
    threshold = calibrated_threshold(*reads(confidences, [True, False, False, False],
                                            [True, True, True, True]))
    assert abs(threshold - 0.31) < 1e-9


def test_a_tie_is_accepted_or_declined_as_one() -> None:
    # The two reads at 0.5 go together: one of them wrong is 1 in 2 (or 1 in 3 with the
    # read at 0.6), so only the read at 0.6 is accepted.
    threshold = calibrated_threshold(*reads([0.6, 0.5, 0.5], [False, False, True]))
    assert threshold == 0.6


def test_nothing_precise_accepts_nothing() -> None:
    threshold = calibrated_threshold(*reads([0.7, 0.2], [True, True]))
    assert threshold > 0.7


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.booleans(), st.booleans()), min_size=1,
                max_size=300))
def test_what_it_accepts_is_precise_and_no_photo_wrong(rows) -> None:  # type: ignore[no-untyped-def]
    confidences = [confidence for confidence, _, _ in rows]
    wrong = [bad for _, bad, _ in rows]
    original = [photo for _, _, photo in rows]
    labels, predicted, confidence, kept = reads(confidences, wrong, original)
    threshold = calibrated_threshold(labels, predicted, confidence, kept)
    accepted = confidence >= threshold
    bad = predicted != labels
    assert threshold >= ROI_MIN_THRESHOLD
    assert not (accepted & bad & kept).any()
    if accepted.any():
        assert (accepted & ~bad).sum() >= 0.999 * accepted.sum() - 1e-9


# ------------------------------------------------------------------ an index corner's, per card
def test_each_card_is_guarded_against_the_wrong_reads_it_took_part_in() -> None:
    # Card 1 read held out as card 2 at 0.48: both need 1.3 x 0.48 + 0.05;
    # card 3 read as card 4 at 0.1 raises neither over the floor (0.18 < 0.3).
    labels = np.array([1, 2, 3, 3, 4])
    predicted = np.array([2, 2, 3, 4, 4])
    confidence = np.array([0.48, 0.9, 0.9, 0.1, 0.9])
    thresholds = card_thresholds(labels, predicted, confidence, 0.3)
    assert thresholds.shape == (52,)
    assert abs(thresholds[1] - 0.674) < 1e-9 and abs(thresholds[2] - 0.674) < 1e-9
    assert thresholds[3] == thresholds[4] == thresholds[0] == 0.3


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 51), st.integers(0, 51), st.floats(0, 1)),
                min_size=1, max_size=200), st.floats(0, 0.5))
def test_no_wrong_read_passes_its_cards_threshold_and_the_strictest_is_the_deck_s(
        rows, floor) -> None:  # type: ignore[no-untyped-def]
    """The promises: no held-out wrong read would be taken (the card it names and the card
    it was both need more than its confidence), and the strictest card needs what one
    threshold for the deck needs (:func:`vision.calibration.held_out_limits`' rule)."""
    labels, predicted, confidence = (np.array(column) for column in zip(*rows, strict=True))
    thresholds = card_thresholds(labels, predicted, confidence, floor)
    wrong = predicted != labels
    assert (thresholds >= floor).all()
    assert (confidence[wrong] < thresholds[predicted[wrong]]).all()
    assert (confidence[wrong] < thresholds[labels[wrong]]).all()
    deck = max(floor, THRESHOLD_FACTOR * float(confidence[wrong].max()) + THRESHOLD_SLACK
               if wrong.any() else floor)
    assert abs(thresholds.max() - deck) < 1e-9


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 51), st.integers(0, 51), st.floats(0, 1),
                          st.booleans()), min_size=1, max_size=200),
       st.lists(st.floats(0, 1), min_size=52, max_size=52))
def test_the_copies_accepted_are_precise_and_no_photo_wrong_passes_its_cards(
        rows, guarded) -> None:  # type: ignore[no-untyped-def]
    """The promises of :func:`vision.index_corner._copies_thresholds`: no card needs less
    than it did (``guarded``); no photo's wrong read passes either of its two cards'
    thresholds; and the reads each accepted by its card's threshold are at least 99.9 %
    right, or none is accepted."""
    labels, predicted, confidence, own = (np.array(column)
                                          for column in zip(*rows, strict=True))
    guarded = np.array(guarded)
    thresholds = _copies_thresholds(labels, own, np.zeros(len(rows)), predicted, confidence,
                                    1.0, guarded)
    assert (thresholds >= guarded).all()
    wrong = predicted != labels
    photo_wrong = own & wrong
    assert (confidence[photo_wrong] < thresholds[predicted[photo_wrong]]).all()
    assert (confidence[photo_wrong] < thresholds[labels[photo_wrong]]).all()
    accepted = confidence >= thresholds[predicted]
    if accepted.any():
        assert (accepted & ~wrong).sum() >= 0.999 * accepted.sum() - 1e-9
