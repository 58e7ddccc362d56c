"""Where a fixed camera's region is anchored (vision.roi.first_glyph): the index's rank, not a
blob of the shoe that happens to have ink under it.

The regions are drawn here (rectangles of known place and size on white paper), so the
expected anchor is the drawn rank's box, not anything the code computes.
"""

from __future__ import annotations

import cv2
import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from vision.roi import first_glyph, glyph_boxes

SIZE = 224


def region(rank: tuple[int, int, int, int], plate: tuple[int, int, int, int] | None
           ) -> np.ndarray:
    """White paper with a rank glyph (a tall box outline, like a '0'), a suit glyph (a
    filled box) under it, and optionally a wide dark blob (the edge of the shoe's top
    plate) above the rank."""
    image = np.full((SIZE, SIZE, 3), 235, np.uint8)
    x, y, width, height = rank
    cv2.rectangle(image, (x, y), (x + width - 1, y + height - 1), (30, 30, 30), 4)
    suit_top = y + height + 8
    cv2.rectangle(image, (x + 2, suit_top), (x + width - 3, suit_top + height // 2),
                  (30, 30, 200), -1)
    if plate is not None:  # its edge: a thick dark outline
        px, py, pw, ph = plate
        cv2.rectangle(image, (px + 3, py + 3), (px + pw - 4, py + ph - 4), (60, 60, 60), 6)
    return image


def test_the_rank_with_its_suit_under_it_is_the_anchor() -> None:
    rank = (100, 40, 22, 60)
    x, y, width, height = first_glyph(glyph_boxes(region(rank, None)))
    # within the stroke: a 4-pixel line drawn on the box's edge reaches 2 pixels outside it
    assert abs(x - rank[0]) <= 2 and abs(y - rank[1]) <= 2
    assert abs(width - rank[2]) <= 4 and abs(height - rank[3]) <= 4


@settings(max_examples=25, deadline=None)
@given(x=st.integers(60, 140), y=st.integers(90, 100), width=st.integers(16, 26),
       height=st.integers(40, 50), plate_width=st.integers(75, 95),
       plate_left=st.integers(-30, -5))
def test_a_wide_blob_above_the_rank_is_never_the_anchor(x: int, y: int, width: int,
                                                        height: int, plate_width: int,
                                                        plate_left: int) -> None:
    """A low card under the shoe's top plate (pp2021's 6D_26): the plate's edge is a wide
    blob left of the rank with the rank under it, which once made it the 'rank'."""
    plate = (x + plate_left, y - 75, plate_width, 65)
    # Wholly in the region (hypothesis drew one ending on its edge: a glyph touching the
    # region's edge is cut off there, so no plate was seen at all).
    assume(plate[0] + plate_width <= SIZE - 4)
    boxes = glyph_boxes(region((x, y, width, height), plate))
    assert any(box[2] > 1.1 * box[3] for box in boxes)  # the plate is seen as a glyph box
    found = first_glyph(boxes)
    assert abs(found[0] - x) <= 2 and abs(found[1] - y) <= 2
