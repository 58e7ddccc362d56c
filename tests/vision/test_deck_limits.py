"""A fixed camera's deck limits (vision.calibration.deck_limit, vision.roi.scene_features): is a
frame this deck under this camera at all?

References are independent of the code: the quantile of a log-normal distribution from its
definition (``statistics.NormalDist``), and frames drawn here whose relation is known (the
same scene lighter or darker; the same scene on another table colour).
"""

from __future__ import annotations

import json
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.calibration import DECK_QUANTILE, deck_limit
from vision.model import DeckModel, VisionModelError
from vision.roi import scene_features


@settings(max_examples=30, deadline=None)
@given(mu=st.floats(-2.5, -0.3), sigma=st.floats(0.05, 0.6), seed=st.integers(0, 2**32 - 1))
def test_the_limit_is_the_log_normal_quantile_of_held_out_distances(mu: float, sigma: float,
                                                                    seed: int) -> None:
    """Distances drawn log-normal: the limit is the distribution's 99.9th percentile, and
    about 1 in 1000 draws of the same distribution lies beyond it."""
    rng = np.random.default_rng(seed)
    held_out = np.exp(rng.normal(mu, sigma, 20_000))
    limit = deck_limit(held_out)
    exact = float(np.exp(mu + NormalDist().inv_cdf(DECK_QUANTILE) * sigma))
    assert limit == pytest.approx(exact, rel=0.03)
    fresh = np.exp(rng.normal(mu, sigma, 200_000))
    assert 0.0005 <= float((fresh > limit).mean()) <= 0.002


def test_a_photo_never_its_own_neighbour_does_not_count() -> None:
    """Infinite held-out distances (a card enrolled from one photo has no neighbour of its
    own) are left out, and identical photos (distance 0) do not drag the limit to 0."""
    held_out = np.array([0.2, 0.25, 0.3, 0.22, np.inf, 0.0, 0.27])
    limit = deck_limit(held_out)
    assert np.isfinite(limit) and limit > 0.3


def scene(table: tuple[int, int, int], gain: float = 1.0) -> np.ndarray:
    """A fixed camera's view: a white card corner with a dark index on a table colour,
    a grey rod at the right, under a light of ``gain``."""
    frame = np.zeros((120, 120, 3), np.float32)
    frame[:] = table
    frame[20:, 30:100] = (235, 235, 235)
    frame[30:60, 40:55] = (40, 40, 40)
    frame[:, 100:110] = (150, 150, 150)
    return np.clip(frame * gain, 0, 255).astype(np.uint8)


def distance(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(scene_features(a) - scene_features(b)))


@pytest.mark.parametrize("gain", [0.6, 0.8, 1.1])
def test_the_camera_view_ignores_exposure_and_sees_another_table(gain: float) -> None:
    """The same view lighter or darker is (nearly) the same view; the same card on green
    felt instead of a grey shoe is not."""
    grey_shoe, felt = (90, 90, 90), (40, 110, 30)  # BGR
    same = distance(scene(grey_shoe), scene(grey_shoe, gain))
    other = distance(scene(grey_shoe), scene(felt))
    assert same < 0.1 < other
    assert other > 5 * same


def test_a_region_deck_without_its_camera_view_must_be_enrolled_again(tmp_path) -> None:
    """A format-5 region deck (before the camera view) loads with a message that says what
    to do, not with an error from numpy."""
    vectors = np.eye(3, 4, dtype=np.float32)
    model = DeckModel("old", "roi", vectors, np.array([0, 1, 2]), 1.0, 0.1, {},
                      both_ways=True, roi=(0.0, 0.0, 1.0, 1.0),
                      weights=np.zeros((5, 52), np.float32),
                      scene_vectors=np.zeros((3, 80), np.float32), deck_limits=(0.5, 0.9))
    path = model.save(tmp_path)
    assert DeckModel.load("old", tmp_path).deck_limits == (0.5, 0.9)
    with np.load(path) as data:
        arrays = {key: data[key] for key in data.files}
    meta = json.loads(str(arrays["meta"]))
    meta.update(format=5, deck_limits=None)
    arrays["meta"] = np.array(json.dumps(meta))
    del arrays["scene_vectors"]
    np.savez_compressed(path, **arrays)
    with pytest.raises(VisionModelError, match="enrol the deck again"):
        DeckModel.load("old", tmp_path)
