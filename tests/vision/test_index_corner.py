"""The corner reader's enrolment (issue 16): jittered copies of each enrolment corner, and
the rows kept as their projection onto principal directions.

References of their own: the principal directions against an exact singular value
decomposition of a matrix built with known directions, distances in the projection against
distances in the full space for points that lie in the projected subspace, and the copies
against the affine map they are said to apply.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.index_corner import (
    CORNER_JITTERS,
    JITTER_SCALE,
    JITTER_SHIFT,
    _distances,
    jittered_corners,
    principal_directions,
)


def _low_rank(rows: int, columns: int, rank: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows that vary along ``rank`` known orthonormal directions (columns of the second
    array), around a mean, with decreasing spread."""
    rng = np.random.default_rng(seed)
    directions, _ = np.linalg.qr(rng.standard_normal((columns, rank)))
    spread = np.linspace(3.0, 1.0, rank)
    rows_ = (rng.standard_normal((rows, rank)) * spread) @ directions.T + rng.standard_normal(
        columns)
    return rows_.astype(np.float32), directions


@pytest.mark.parametrize("rows", [40, 900])  # exact below count + oversampling, else randomised
def test_the_principal_directions_span_the_directions_the_rows_vary_along(rows: int) -> None:
    data, directions = _low_rank(rows, 700, 24, seed=rows)
    centre, projection = principal_directions(data, 24)
    assert np.allclose(centre, data.mean(axis=0), atol=1e-4)
    assert projection.shape == (700, 24)
    assert np.allclose(projection.T @ projection, np.eye(24), atol=1e-3)  # orthonormal
    # The same subspace: each known direction lies in the projection's span.
    inside = projection @ (projection.T @ directions)
    assert np.allclose(inside, directions, atol=1e-3)


def test_fewer_rows_than_directions_keep_as_many_as_there_are() -> None:
    data, _ = _low_rank(10, 50, 5, seed=1)
    _, projection = principal_directions(data, 512)
    assert projection.shape == (50, 10)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_distances_between_projections_are_distances_in_the_subspace(seed: int) -> None:
    """Points in the subspace the rows span: their distances after projection are their
    distances before it."""
    data, _ = _low_rank(60, 120, 8, seed=seed)
    centre, projection = principal_directions(data, 8)
    projected = (data - centre) @ projection
    full = np.linalg.norm(data[:, None, :] - data[None, :5, :], axis=2)
    # (float32: a distance of 0 comes out as the root of a rounding error, about 0.003)
    assert np.allclose(_distances(projected, projected[:5]), full, atol=1e-2, rtol=1e-3)


def _marked_card() -> np.ndarray:
    """A white rectified card (200 x 290) with a black square mark at a known place."""
    card = np.full((290, 200, 3), 255, np.uint8)
    card[40:60, 30:50] = 0
    return card


def test_jittered_copies_are_small_affine_moves_of_the_corner_the_same_each_time() -> None:
    card = _marked_card()
    copies = jittered_corners(card, np.random.default_rng(5))
    again = jittered_corners(card, np.random.default_rng(5))
    assert len(copies) == CORNER_JITTERS
    assert all(np.array_equal(one, other) for one, other in zip(copies, again, strict=True))
    for copy in copies:
        assert copy.shape == card.shape
        mark = np.argwhere(copy.min(axis=2) < 128)
        centre_y, centre_x = mark.mean(axis=0)
        # The mark's centre (40, 50 from the corner) moves by the shift and the scale
        # about the corner (and a turn of a few degrees): within those bounds.
        reach = (1 + JITTER_SCALE) * np.hypot(40, 50) + JITTER_SHIFT * 200 * np.sqrt(2)
        assert np.hypot(centre_x, centre_y) <= reach + 2
        assert abs(centre_x - 40) <= JITTER_SHIFT * 200 + JITTER_SCALE * 40 + 0.1 * 50 + 2
        area = len(mark)
        assert (1 - JITTER_SCALE) ** 2 * 400 * 0.8 <= area <= (1 + JITTER_SCALE) ** 2 * 400 * 1.3
    assert any(not np.array_equal(copy, card) for copy in copies)
