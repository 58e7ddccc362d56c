"""The index read again by its glyphs cut out (issue 16, :mod:`vision.index_glyphs`).

References of their own: glyphs drawn at known places and sizes (the same glyph moved and
scaled must read alike, another glyph not), a card labelled as another to make a held-out
read wrong on purpose, and a saved deck read back.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.index_corner import CornerReader
from vision.index_glyphs import (
    GLYPH_MIN_THRESHOLD,
    SECOND_READ_FLOOR,
    GlyphReader,
    _rank_with_second_glyph,
    glyph_length,
    glyph_vector,
    learn_glyph_reader,
)
from vision.model import DeckModel, VisionModelError
from vision.partial import CardShape

BOX = (0.0, 0.0, 0.17, 0.25)  # cardai's index box: the glyph search reaches 54 x 101 pixels


def _card(rank: str, scale: float = 0.9, at: tuple[int, int] = (8, 30)) -> np.ndarray:
    """A white rectified card (290 x 200) with ``rank`` printed at its top-left corner, its
    baseline at ``at``, and a red disc (the suit) under it, both ``scale`` times their size."""
    card = np.full((290, 200, 3), 250, np.uint8)
    cv2.putText(card, rank, at, cv2.FONT_HERSHEY_SIMPLEX, scale, (20, 20, 20), 2,
                cv2.LINE_AA)
    width = cv2.getTextSize(rank, cv2.FONT_HERSHEY_SIMPLEX, scale, 2)[0][0]
    cv2.circle(card, (at[0] + width // 2, at[1] + round(16 * scale)), round(7 * scale),
               (40, 40, 200), -1, cv2.LINE_AA)
    return card


@settings(max_examples=25, deadline=None)
@given(st.floats(0.8, 1.1), st.integers(5, 12), st.integers(28, 34))
def test_a_glyph_reads_alike_wherever_it_lies_and_however_large(scale: float, x: int,
                                                                y: int) -> None:
    reference = glyph_vector(_card("7"), BOX)
    moved = glyph_vector(_card("7", scale, (x, y)), BOX)
    other = glyph_vector(_card("4"), BOX)
    assert reference is not None and moved is not None and other is not None
    assert len(reference) == glyph_length()
    # The same glyph moved and scaled is nearer itself than another glyph where it was.
    assert np.linalg.norm(moved - reference) < 0.5 * np.linalg.norm(other - reference)


def test_a_rank_of_two_glyphs_is_cut_out_whole() -> None:
    one, zero, suit = (10, 20, 6, 24), (19, 21, 14, 23), (12, 50, 14, 14)
    assert _rank_with_second_glyph(one, [one, zero, suit]) == (10, 20, 23, 24)
    # A glyph of another height, or far to the side, is not part of the rank.
    far = (40, 20, 14, 24)
    assert _rank_with_second_glyph(one, [one, far, suit]) == one
    assert _rank_with_second_glyph(one, [one, (19, 21, 14, 10)]) == one


def test_a_blank_corner_has_no_glyphs() -> None:
    assert glyph_vector(np.full((290, 200, 3), 250, np.uint8), BOX) is None


def _views() -> list[tuple[np.ndarray, int, int]]:
    """Three photos each of three ranks, a little moved and scaled: (view, photo, label)."""
    views = []
    for label, rank in enumerate(("2", "7", "4")):
        for shot, (scale, at) in enumerate(((0.9, (8, 30)), (0.95, (10, 31)),
                                            (0.85, (7, 29)))):
            views.append((_card(rank, scale, at), 3 * label + shot, label))
    return views


def test_the_threshold_stands_over_glyph_reads_wrong_with_the_corner_read() -> None:
    views = _views()
    right = [(label, 0.9) for _, _, label in views]
    reader = learn_glyph_reader(views, BOX, right)
    assert reader is not None and reader.threshold == GLYPH_MIN_THRESHOLD
    # A photo of a 7 labelled a 2: its held-out glyph read (7) is wrong against its label.
    # Only when the corner read named that same wrong card, surely enough to be borne out,
    # does the threshold stand over it.
    mislabelled = [*views[:-1], (views[4][0], 99, 0)]
    read = learn_glyph_reader(mislabelled, BOX, [*right[:-1], (1, 0.9)])
    assert read is not None and read.threshold > GLYPH_MIN_THRESHOLD
    unsure = learn_glyph_reader(mislabelled, BOX, [*right[:-1], (1, SECOND_READ_FLOOR / 2)])
    assert unsure is not None and unsure.threshold == GLYPH_MIN_THRESHOLD
    other = learn_glyph_reader(mislabelled, BOX, [*right[:-1], (2, 0.9)])
    assert other is not None and other.threshold == GLYPH_MIN_THRESHOLD


def test_no_glyph_reader_is_learnt_when_no_held_out_read_is_right() -> None:
    # Each card's two photos drawn as the other card's glyph: every held-out read is wrong.
    views = [(_card("2"), 0, 0), (_card("7"), 1, 0), (_card("7"), 2, 1), (_card("2"), 3, 1)]
    assert learn_glyph_reader(views, BOX, [(label, 0.9) for _, _, label in views]) is None
    assert learn_glyph_reader(views[:2], BOX, [(0, 0.9), (0, 0.9)]) is None  # one card


def test_a_glyph_reader_names_a_card_only_surely_and_near_the_deck() -> None:
    learnt = learn_glyph_reader(_views(), BOX, [(label, 0.9) for _, _, label in _views()])
    assert learnt is not None  # (its distance limit, from three drawings each, is tight)
    reader = GlyphReader(learnt.vectors, learnt.labels, BOX, 1.0, learnt.threshold)
    seven = _card("7", 0.92, (9, 30))
    assert reader.names([seven], 1) and not reader.names([seven], 0)
    assert not reader.names([np.full((290, 200, 3), 250, np.uint8)], 1)  # no glyphs
    far = GlyphReader(reader.vectors, reader.labels, BOX, 1e-6, reader.threshold)
    assert not far.names([seven], 1)  # unlike the deck
    # Of two views, the surer read speaks: a blank corner and the 7.
    assert reader.names([np.full((290, 200, 3), 250, np.uint8), seven], 1)


def _deck(glyphs: GlyphReader | None) -> DeckModel:
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(4, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    labels = np.array([0, 0, 1, 1])
    reader = CornerReader(vectors, labels, None, BOX, CardShape(1.1, 1.4, (180.0, 230.0)),
                          0.9, 0.3, glyphs=glyphs)
    return DeckModel("glyphs", "top-left", vectors, labels, 1.0, 0.2, {}, corners=reader)


def _glyph_reader() -> GlyphReader:
    rows = np.random.default_rng(4).normal(size=(4, glyph_length())).astype(np.float32)
    return GlyphReader(rows, np.array([13, 13, 20, 20]), BOX, 1.2, 0.35, {20: 0.3})


def test_a_deck_keeps_its_glyph_reader_when_saved(tmp_path: Path) -> None:
    glyphs = _glyph_reader()
    loaded = DeckModel.load("glyphs", _deck(glyphs).save(tmp_path).parent).corners
    assert loaded is not None and loaded.glyphs is not None
    assert np.array_equal(loaded.glyphs.vectors, glyphs.vectors)
    assert np.array_equal(loaded.glyphs.labels, glyphs.labels)
    assert (loaded.glyphs.max_distance, loaded.glyphs.threshold, loaded.glyphs.box) == (
        1.2, 0.35, BOX)
    assert loaded.glyphs.card_thresholds == {20: 0.3}
    assert (loaded.glyphs.threshold_for(20), loaded.glyphs.threshold_for(13)) == (0.3, 0.35)
    none = DeckModel.load("glyphs", _deck(None).save(tmp_path / "none").parent).corners
    assert none is not None and none.glyphs is None


def _rewrite(path: Path, **arrays_changed: np.ndarray) -> None:
    with np.load(path, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    arrays.update(arrays_changed)
    with path.open("wb") as handle:
        np.savez_compressed(handle, **arrays)


def test_a_deck_enrolled_before_the_glyph_reader_loads_without_it(tmp_path: Path) -> None:
    path = _deck(_glyph_reader()).save(tmp_path)
    with np.load(path, allow_pickle=False) as data:
        meta = json.loads(str(data["meta"]))
    meta["format"] = 11
    del meta["corners"]["glyphs"]
    _rewrite(path, meta=np.array(json.dumps(meta)))
    loaded = DeckModel.load("glyphs", tmp_path).corners
    assert loaded is not None and loaded.glyphs is None


@pytest.mark.parametrize("rows", [np.zeros((4, 7), np.float32),
                                  np.zeros((3, glyph_length()), np.float32)])
def test_glyph_rows_that_do_not_fit_are_a_clear_error(tmp_path: Path, rows: np.ndarray) -> None:
    path = _deck(_glyph_reader()).save(tmp_path)
    _rewrite(path, glyph_vectors=rows)
    with pytest.raises(VisionModelError, match="glyph rows"):
        DeckModel.load("glyphs", tmp_path)
