"""The corner reader's enrolment (issue 16): jittered copies of each enrolment corner, and
the rows kept as their projection onto principal directions.

References of their own: the principal directions against an exact singular value
decomposition of a matrix built with known directions, distances in the projection against
distances in the full space for points that lie in the projected subspace, and the copies
against the affine map they are said to apply.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.index_corner import (
    ALIGN_SHIFTS,
    CORNER_JITTERS,
    JITTER_SCALE,
    JITTER_SHIFT,
    MIN_CORNER_THRESHOLD,
    CornerRead,
    CornerReader,
    combined_read,
    corner_vector,
    jittered_corners,
    pair_distances,
    principal_directions,
    shifted,
)
from vision.partial import CardShape


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
    assert np.allclose(pair_distances(projected, projected[:5]), full, atol=1e-2, rtol=1e-3)


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


INDEX_BOX = (0.0, 0.0, 0.17, 0.25)


def _index_card(glyph: int, offset: tuple[float, float] = (0.0, 0.0)) -> np.ndarray:
    """A white rectified card with one of three glyphs in its top-left index box (a bar,
    a cross, a ring), moved by ``offset`` (shares of the card's width and height)."""
    card = np.full((290, 200, 3), 255, np.uint8)
    x, y = round(17 + offset[0] * 200), round(36 + offset[1] * 290)
    if glyph == 0:
        cv2.rectangle(card, (x - 3, y - 22), (x + 3, y + 22), (0, 0, 0), -1)
    elif glyph == 1:
        cv2.rectangle(card, (x - 12, y - 3), (x + 12, y + 3), (0, 0, 0), -1)
        cv2.rectangle(card, (x - 3, y - 22), (x + 3, y + 22), (0, 0, 0), -1)
    else:
        cv2.circle(card, (x, y), 12, (0, 0, 0), 4)
    return card


def _glyph_reader(threshold: float) -> CornerReader:
    """A corner reader of the three glyphs, each enrolled where the deck prints it and a
    little either side of it."""
    vectors, labels = [], []
    for glyph in range(3):
        for offset in ((0.0, 0.0), (0.01, 0.0), (-0.01, 0.0), (0.0, 0.01), (0.0, -0.01)):
            vectors.append(corner_vector(_index_card(glyph, offset), None, INDEX_BOX))
            labels.append(glyph)
    return CornerReader(np.stack(vectors), np.array(labels), None, INDEX_BOX,
                        CardShape(1.0, 1.4), 10.0, threshold)


def test_a_shift_moves_the_card_by_shares_of_its_size() -> None:
    card = _index_card(0)
    moved = shifted(card, (0.05, -0.02))
    before, after = np.argwhere(card.min(axis=2) < 128), np.argwhere(moved.min(axis=2) < 128)
    assert np.allclose(after.mean(axis=0) - before.mean(axis=0), [-0.02 * 290, 0.05 * 200],
                       atol=0.6)


@settings(max_examples=30, deadline=None)
@given(glyph=st.integers(0, 2), dx=st.floats(-0.05, 0.05), dy=st.floats(-0.05, 0.05))
def test_an_aligned_read_names_the_same_card_as_the_plain_one_never_less_surely(
        glyph: int, dx: float, dy: float) -> None:
    """Whatever the index's offset, the aligned read names the card the plain read names
    (a shift that reads as another card is a doubt), at least as surely, and a read the
    plain one already takes is left as it is."""
    card = _index_card(glyph, (dx, dy))
    unsure = _glyph_reader(threshold=1.01)  # nothing is sure enough: every read is retried
    plain, aligned = unsure.read(card, (0,)), unsure.read_aligned(card, (0,))
    assert plain is not None and aligned is not None
    assert aligned.label == plain.label and aligned.confidence >= plain.confidence
    assert aligned.lifted == (aligned.confidence > plain.confidence) and not plain.lifted
    sure = _glyph_reader(threshold=0.0)
    assert sure.read_aligned(card, (0,)) == sure.read(card, (0,))


def test_an_index_printed_off_its_place_is_read_more_surely_where_a_shift_puts_it_back(
        ) -> None:
    """The glyph lies one shift (ALIGN_SHIFTS) away from where the deck prints it: read
    again at the shift that puts it back, the card is read more surely."""
    reader = _glyph_reader(threshold=1.01)
    for glyph in range(3):
        card = _index_card(glyph, (-ALIGN_SHIFTS[0][0], 0.0))
        plain, aligned = reader.read(card, (0,)), reader.read_aligned(card, (0,))
        assert plain is not None and aligned is not None
        assert aligned.label == plain.label == glyph
        assert aligned.confidence > plain.confidence + 0.05, (glyph, plain, aligned)
        assert aligned.lifted  # (the recogniser then asks the whole card to bear it out)


def test_a_read_a_shift_lifts_must_be_sure_on_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Below ALIGN_MIN_CONFIDENCE a shifted read is not taken, whatever the threshold: the
    plain read stands."""
    monkeypatch.setattr("vision.index_corner.ALIGN_MIN_CONFIDENCE", 1.01)
    reader = _glyph_reader(threshold=1.01)
    card = _index_card(1, (-ALIGN_SHIFTS[0][0], 0.0))
    assert reader.read_aligned(card, (0,)) == reader.read(card, (0,))


@given(sure=st.floats(0.0, 1.0), other=st.floats(0.0, 1.0), nearer=st.booleans())
def test_two_corners_that_disagree_give_no_read_unless_only_the_nearer_is_sure(
        sure: float, other: float, nearer: bool) -> None:
    """Two usable index corners reading as two cards: the nearer one's card, with no
    confidence, unless the nearer is over the floor and the other under it; then with the
    nearer's own confidence, marked disputed (the recogniser then asks the whole card)."""
    first = CornerRead(3, sure, 0.3 if nearer else 0.6, 4)
    second = CornerRead(7, other, 0.6 if nearer else 0.3, 3)
    read = combined_read([first, second])
    best, rest = (first, second) if nearer else (second, first)
    assert read is not None and read.label == best.label and read.distance == best.distance
    if best.confidence >= MIN_CORNER_THRESHOLD > rest.confidence:
        assert read.disputed and read.confidence == best.confidence
    else:
        assert not read.disputed and read.confidence == 0.0
    agreeing = combined_read([first, CornerRead(3, other, 0.6, 4)])
    assert agreeing == first and not agreeing.disputed  # the nearer of two that agree
    assert combined_read([]) is None
