"""The limits a read must meet, set from held-out reads of a deck's own enrolment photos.

Each enrolment photo is read as the recogniser will read a card, by a reader that has not
seen it (leave one out; for a region deck, a classifier learnt without it and its jittered
copies). Those reads set how far from the deck a frame may be and still be this deck
(``max_distance``, :func:`held_out_limits`; a region deck's two limits, :func:`deck_limit`)
and how sure a read must be to be taken (``threshold``): above the surest wrong held-out
read, with a margin (:data:`THRESHOLD_FACTOR`, :data:`THRESHOLD_SLACK`), or, where the
enrolment photos' jittered copies give enough reads to measure it, the least confidence at
which the accepted reads are :data:`TARGET_PRECISION` right (:func:`calibrated_threshold`).
The whole-card deck (:mod:`vision.model`), the index corner reader
(:mod:`vision.index_corner`) and its glyph reader (:mod:`vision.index_glyphs`) all set their
limits here.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

DISTANCE_SLACK = 1.5
"""A deck's ``max_distance``: this many times the 99th percentile of the nearest distances
of its right held-out reads."""
THRESHOLD_FACTOR = 1.3  # held-out reads use one frame fewer per card: stay well above
THRESHOLD_SLACK = 0.05
"""A threshold is at least THRESHOLD_FACTOR x the surest wrong held-out read + this."""
DECK_QUANTILE = 0.999
"""A region deck's two limits (index shape, camera view) each let through this share of the
deck's own photos, estimated from the held-out distances of the enrolment photos with a
log-normal fit (:func:`deck_limit`): the same 1 in 1000 as the precision target."""
DISTANCE_FLOOR = 0.01
"""Held-out distances are taken as at least this before their logarithm: a burst of
near-identical photos would otherwise stretch the fit downwards without end."""
ROI_MIN_THRESHOLD = 0.05
"""A region deck's least threshold: a near tie between two cards is never taken."""
TARGET_PRECISION = 0.999
"""The precision of accepted reads a region deck's threshold is set for (issue 16)."""


def held_out_limits(labels: np.ndarray, d_best: np.ndarray, predicted: np.ndarray,
                    confidence: np.ndarray, floor: float, slack: float = DISTANCE_SLACK
                    ) -> tuple[float, float, dict[str, float]]:
    """``max_distance``, ``threshold`` and the enrolment figures from held-out
    nearest-neighbour reads (``d_best`` the nearest distance, ``predicted`` the card read,
    ``confidence`` its relative margin): a whole card's, a region's and an index corner's
    (:mod:`vision.index_corner`) limits are all set so."""
    right = predicted == labels
    # A frame whose card was badly found is far from everything: the 99th percentile keeps
    # it from widening the deck, and wrong reads it would decline anyway set no threshold.
    max_distance = (slack * float(np.percentile(d_best[right], 99))
                    if right.any() else 0.0)
    considered = ~right & (d_best <= max_distance)
    wrong_conf = float(confidence[considered].max()) if considered.any() else 0.0
    threshold = max(floor, THRESHOLD_FACTOR * wrong_conf + THRESHOLD_SLACK)
    accepted = (confidence >= threshold) & (d_best <= max_distance)
    enrolment = {
        "frames": float(len(labels)),
        "cards": float(len(set(labels.tolist()))),
        "held_out_accuracy": float(right.mean()),
        "held_out_accepted_right": float((accepted & right).mean()),
        "held_out_accepted_wrong": float((accepted & ~right).sum()),
        "median_confidence": float(np.median(confidence[right])) if right.any() else 0.0,
        # How far the least sure right reads clear the threshold: the reads that would be
        # declined first when a frame is a little worse than any enrolled.
        "low_confidence_margin": (float(np.percentile(confidence[right], 2)) / threshold
                                  if right.any() else 0.0),
    }
    return max_distance, threshold, enrolment


def deck_limit(held_out: np.ndarray, quantile: float = DECK_QUANTILE) -> float:
    """The distance under which ``quantile`` of the deck's photos fall, from the held-out
    nearest distances of its enrolment photos: a log-normal fit (distances are positive
    and skewed to the far side). The old rule, 1.2 x their 99th percentile, rested on the
    two or three farthest of 260 and declined the deck's own photos where the card stopped
    somewhere no enrolment photo showed (pp2021: 3 of 535 on draw 2024)."""
    logs = np.log(np.maximum(held_out[np.isfinite(held_out)], DISTANCE_FLOOR))
    return float(np.exp(logs.mean() + NormalDist().inv_cdf(quantile) * logs.std()))


def calibrated_threshold(labels: np.ndarray, predicted: np.ndarray, confidence: np.ndarray,
                         original: np.ndarray) -> float:
    """A region deck's threshold from its held-out reads (each read by a classifier learnt
    without that photo or its copies): the enrolment photos (``original``) and their
    jittered copies, which stand for the worse photos the camera will take (another light,
    blur, a card stopped elsewhere). It is the least confidence at which

    - no held-out read of an enrolment photo itself is wrong (those are the camera's real
      photos: one wrong is one too many), with the outline decks' margin over the worst of
      them (x :data:`THRESHOLD_FACTOR` + :data:`THRESHOLD_SLACK`) when there is one, and
    - the accepted held-out reads, photos and copies together, are at least
      :data:`TARGET_PRECISION` right (seventeen times the reads of the photos alone, so a
      wrong read's tail is measured rather than guessed from the one or two worst);

    and never under :data:`ROI_MIN_THRESHOLD`. Where no photo's held-out read is wrong
    (pp2021), this declines nothing that the held-out evidence does not call doubtful.
    Where some are (ece395: a card's other photo is in another light), the worst of a few
    such reads is a low estimate of how sure a wrong read can be: ece395's third draw
    (seed 11) read 3C as 2C above the worst wrong held-out read, hence the margin."""
    wrong = predicted != labels
    floor = max(ROI_MIN_THRESHOLD, THRESHOLD_FACTOR * float(
        confidence[original & wrong].max()) + THRESHOLD_SLACK
        if (original & wrong).any() else 0.0)
    order = np.argsort(-confidence)
    # The reads accepted at the k-th highest confidence are the first k in that order; the
    # threshold is the lowest confidence whose accepted reads meet the target.
    precise = np.cumsum(wrong[order]) <= (1 - TARGET_PRECISION) * np.arange(1, len(order) + 1)
    # A threshold accepts every read of equal confidence: only the last of a tie may end.
    ordered = confidence[order]
    precise &= np.append(ordered[1:] < ordered[:-1], True)
    if not precise.any():
        return float(np.nextafter(max(floor, float(confidence.max())), 2.0))  # none taken
    calibrated = float(confidence[order[int(np.flatnonzero(precise)[-1])]])
    return max(floor, calibrated)
