"""Which way up each enrolment frame is, so that the deck's index is in the same corner on all.

The rectified card comes out with one of its two short edges on top, depending on how the
card lay (:mod:`vision.detect`). Most decks print the index twice, point-symmetric, so either
way up shows one. Some do not: a deck may print its index along the top edge only (rank in
one corner, suit in the other) and let the picture run off the bottom, or print it in the
top-right corner only. Read the wrong way up, such a card shows no index at all, and the
cards can only be told apart by their pictures.

So enrolment turns every frame to a common *up* (:func:`upright`), and the recogniser reads a
card both ways up and keeps the way that looks more like the enrolled deck
(:meth:`vision.model.DeckModel.match`). Two steps:

1. Frames of the same card are turned to agree with the card's first frame (the whole card,
   at low resolution, is nearly the same image the same way up).
2. Cards are turned to agree with each other by their top and bottom bands, where the index
   is: the index is at the same place on every card while pictures and pips differ. Whether
   card ``c`` should be turned relative to card ``d`` is the sign of how much better their
   bands agree the same way up than turned; the signs of the leading eigenvector of that
   matrix are the turns that agree best overall (the spectral solution of sign
   synchronisation).

That leaves two candidate ups, the index on top or at the bottom. Which is which is not
guessed here (a court card's frame or a row of pips can be as regular as an index): enrolment
tries both and keeps the one its held-out reads prefer.

On a point-symmetric deck both ways up look alike and any choice is right.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from shoe_controller.cards import Card

BAND = 0.3  # the top band, as a fraction of the card's height, that carries the index
BAND_SIZE = (24, 8)  # width, height the band is compared at: where the ink is, not its shape
WHOLE_SIZE = (20, 29)


def upright(images: Sequence[np.ndarray], cards: Sequence[Card]) -> list[bool]:
    """For each rectified enrolment image, whether to turn it half round so that all the
    frames are the same way up (one of the deck's two ups, not necessarily the index's)."""
    turned = [False] * len(images)
    by_card: dict[Card, list[int]] = {}
    for index, card in enumerate(cards):
        by_card.setdefault(card, []).append(index)
    wholes = [(_signature(image, WHOLE_SIZE), _signature(_half_round(image), WHOLE_SIZE))
              for image in images]
    for members in by_card.values():
        reference = wholes[members[0]][0]
        for index in members[1:]:
            same, other = wholes[index]
            turned[index] = float(other @ reference) > float(same @ reference)

    groups = list(by_card.values())
    # Per card, its top band and its bottom band (turned), averaged over its frames.
    bands = np.stack([
        np.mean([_bands(images[index], turned[index]) for index in members], axis=0)
        for members in groups])  # (cards, 2, features)
    bands /= np.linalg.norm(bands, axis=2, keepdims=True) + 1e-6
    same = bands[:, 0] @ bands[:, 0].T + bands[:, 1] @ bands[:, 1].T
    crossed = bands[:, 0] @ bands[:, 1].T + bands[:, 1] @ bands[:, 0].T
    agreement = same - crossed
    np.fill_diagonal(agreement, 0.0)
    _, vectors = np.linalg.eigh(agreement)
    lead = vectors[:, -1]
    flips = lead < 0
    for members, flip in zip(groups, flips):
        for index in members:
            turned[index] ^= bool(flip)
    return turned


def _half_round(image: np.ndarray) -> np.ndarray:
    return cv2.rotate(image, cv2.ROTATE_180)


def _signature(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Zero-mean, unit-length darkness at low resolution."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    small = cv2.resize(grey, size, interpolation=cv2.INTER_AREA).astype(np.float32).ravel()
    small = small.mean() - small
    return small / (float(np.linalg.norm(small)) + 1e-6)


def _bands(image: np.ndarray, turned: bool) -> np.ndarray:
    """The top band and the bottom band (seen turned, as it would be on top) of an image."""
    view = _half_round(image) if turned else image
    height = view.shape[0]
    cut = int(BAND * height)
    top = view[:cut]
    bottom = _half_round(view)[:cut]
    return np.stack([_signature(top, BAND_SIZE), _signature(bottom, BAND_SIZE)])
