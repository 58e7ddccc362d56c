"""A card's four corners: their order, the shape a card has under the camera, and the card
seen square-on.

A quad is four corners (float32, shape (4, 2), frame pixels), clockwise from the top-left of
the rectified card (:func:`clockwise`: its first side is a short one). :func:`rectify` turns
the frame's card into a portrait image of ``CARD_SIZE`` pixels, on which every reader of the
deck (whole card, index corner, pips) looks at the same place on every card.
"""

from __future__ import annotations

import cv2
import numpy as np

CARD_SIZE = (200, 290)  # width, height of the rectified card
CORNER_ANGLES = (60.0, 120.0)  # degrees: a card's corners, under the camera's perspective
OPPOSITE_SIDES = 1.6  # longest over shortest of two opposite sides
ELONGATION = 2.2
"""Long sides over short sides, at most: a card is 1.4 to 1.6, and a webcam that stretches
its picture (cardai's: 4:3 pixels shown 16:9) makes it up to 2.1 or as little as 1.05."""

CARD_CORNERS = np.array([[0, 0], [CARD_SIZE[0] - 1, 0], [CARD_SIZE[0] - 1, CARD_SIZE[1] - 1],
                         [0, CARD_SIZE[1] - 1]], np.float32)
"""The rectified card's corners (pixels), in the order of a quad's."""


def following(points: np.ndarray) -> np.ndarray:
    """Each row's next, the last's the first (``np.roll(points, -1, axis=0)``, without its
    overhead: a frame's search measures many quads of four corners)."""
    return np.concatenate((points[1:], points[:1]))


def preceding(points: np.ndarray) -> np.ndarray:
    """Each row's previous, the first's the last (``np.roll(points, 1, axis=0)``)."""
    return np.concatenate((points[-1:], points[:-1]))


def quad_area(quad: np.ndarray) -> float:
    """The area the four corners enclose (pixels squared)."""
    return float(cv2.contourArea(quad.reshape(-1, 1, 2).astype(np.float32)))


def card_shaped(quad: np.ndarray) -> bool:
    """Convex, each corner near a right angle and opposite sides of similar length, as a
    card seen from a camera above the table is (75 to 106 degrees and sides within 1.25
    of each other on every simulated frame): not a blob bitten by a dark picture. And no
    longer than ``ELONGATION`` times its width: not a strip of pips or of a hand."""
    after = following(quad) - quad
    before = preceding(quad) - quad
    lengths = np.linalg.norm(after, axis=1)
    if lengths.min() < 1e-3:
        return False
    cosines = np.sum(after * before, axis=1) / (lengths * preceding(lengths))
    angles = np.degrees(np.arccos(np.clip(cosines, -1.0, 1.0)))
    then = following(after)
    turns = after[:, 0] * then[:, 1] - after[:, 1] * then[:, 0]
    long_over_short = max(lengths[0] + lengths[2], lengths[1] + lengths[3]) / min(
        lengths[0] + lengths[2], lengths[1] + lengths[3])
    return bool(np.all(np.sign(turns) == np.sign(turns[0]))
                and long_over_short <= ELONGATION
                and CORNER_ANGLES[0] <= angles.min() and angles.max() <= CORNER_ANGLES[1]
                and max(lengths[0], lengths[2]) <= OPPOSITE_SIDES * min(lengths[0], lengths[2])
                and max(lengths[1], lengths[3]) <= OPPOSITE_SIDES * min(lengths[1], lengths[3]))


def side_lines_out(quad: np.ndarray, shortest: float
                   ) -> list[tuple[np.ndarray, float, np.ndarray, np.ndarray]] | None:
    """:func:`side_lines`, each normal pointing out of the quad (onto the table)."""
    sides = side_lines(quad, shortest)
    if sides is None:
        return None
    centre = quad.mean(axis=0)
    return [(start, length, unit,
             -normal if float((start + unit * length / 2 - centre) @ normal) < 0 else normal)
            for start, length, unit, normal in sides]


def side_lines(quad: np.ndarray, shortest: float
               ) -> list[tuple[np.ndarray, float, np.ndarray, np.ndarray]] | None:
    """Each side of the quad as (start, length, unit direction, unit normal); None if a side
    is shorter than ``shortest`` pixels (no card there to measure)."""
    sides = []
    for start, end in zip(quad, following(quad)):
        along = end - start
        length = float(np.linalg.norm(along))
        if length < shortest:
            return None
        unit = along / length
        sides.append((start, length, unit, np.array([-unit[1], unit[0]], np.float32)))
    return sides


def intersections(lines: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray | None:
    """Corner ``i`` where the line of edge ``i - 1`` meets that of edge ``i``."""
    corners = []
    for index in range(4):
        (p, d), (q, e) = lines[index - 1], lines[index]
        cross = d[0] * e[1] - d[1] * e[0]
        if abs(cross) < 0.2:  # neighbouring edges nearly parallel: not a card's corner
            return None
        t = ((q[0] - p[0]) * e[1] - (q[1] - p[1]) * e[0]) / cross
        corners.append(p + t * d)
    return np.array(corners, np.float32)


def four_corners(hull: np.ndarray) -> np.ndarray | None:
    """The four-sided polygon around the hull that adds the least area (cv2.approxPolyN):
    its sides lie along the card's straight edges, so a corner cut off in the mask (an index
    glyph against a dark border) does not pull the quad inwards. None for a hull of fewer
    than four corners (a triangle of paper: OpenCV fits it no quad)."""
    if len(hull.reshape(-1, 2)) < 4:
        return None
    quad = cv2.approxPolyN(hull.astype(np.float32), 4, epsilon_percentage=-1.0,
                           ensure_convex=True)
    if quad is None or len(quad.reshape(-1, 2)) != 4:
        return None
    return quad.reshape(4, 2).astype(np.float32)


def clockwise(quad: np.ndarray) -> np.ndarray:
    """Corners clockwise (image coordinates), starting so that the first edge is short."""
    centre = quad.mean(axis=0)
    angles = np.arctan2(quad[:, 1] - centre[1], quad[:, 0] - centre[0])
    quad = quad[np.argsort(angles)]  # clockwise on screen (y points down)
    edges = np.linalg.norm(quad - following(quad), axis=1)
    if edges[0] + edges[2] > edges[1] + edges[3]:
        quad = following(quad)  # first edge was a long one: start one corner later
    return quad.astype(np.float32)


def same_quad(first: np.ndarray, second: np.ndarray) -> bool:
    """The same four corners, in any order, within a work pixel or two: measure once."""
    gaps = np.linalg.norm(first[:, None, :] - second[None, :, :], axis=2).min(axis=1)
    return bool(gaps.max() <= 2.0)


def rectify(frame: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """The card seen square-on, ``CARD_SIZE`` pixels, portrait."""
    matrix = cv2.getPerspectiveTransform(quad.astype(np.float32), CARD_CORNERS)
    return cv2.warpPerspective(frame, matrix, CARD_SIZE, flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE)


def in_view(frame: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """Where the card :func:`rectify` makes of ``quad`` lies inside ``frame``: a mask of
    the rectified card, 255 in view, 0 beyond the frame's edge."""
    matrix = cv2.getPerspectiveTransform(quad.astype(np.float32), CARD_CORNERS)
    inside = np.full(frame.shape[:2], 255, np.uint8)
    return cv2.warpPerspective(inside, matrix, CARD_SIZE, flags=cv2.INTER_NEAREST,
                               borderMode=cv2.BORDER_CONSTANT, borderValue=0)
