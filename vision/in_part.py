"""Where a card shows only in part: the searches for it, in the order the recogniser and
enrolment try them (issue 16). Its own module so that each search's module needs none of
the others."""

from __future__ import annotations

import numpy as np

from vision.corner import Box
from vision.corners_in_view import find_by_corners
from vision.detect import CardInPart, WorkFrame
from vision.partial import CardShape, PartialCard, find_partial_card, readable_in_part

__all__ = ["find_in_part"]


def find_in_part(frame: np.ndarray, shape: CardShape, index: Box, seen: CardInPart | None,
                 work: WorkFrame | None = None) -> PartialCard | None:
    """A card the frame's edge cuts (:func:`vision.partial.find_partial_card`), else the
    card found in part (``seen``, from :func:`vision.detect.survey`;
    :func:`vision.partial.readable_in_part`), else a card found by its corners in view (a
    hand over the rest of it: :func:`vision.corners_in_view.find_by_corners`). ``work``:
    the frame's :func:`vision.detect.work_frame`, if made already."""
    found = find_partial_card(frame, shape, index, work)
    if found is None and seen is not None:
        height, width = frame.shape[:2]
        found = readable_in_part(seen, shape, index, width, height)
    if found is None:
        found = find_by_corners(frame, shape, index, work)
    return found
