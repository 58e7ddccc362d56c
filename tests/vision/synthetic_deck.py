"""A synthetic deck of rectified cards whose index is exactly where the test says.

Real deck designs (rendered by simulators.camera) show that the pipeline works; this deck
shows *why*: its rank and suit glyphs are drawn in known boxes, so a test can check that
the boxes found are the boxes printed, and that a deck printed only one way up is read
either way up.
"""

from __future__ import annotations

import cv2
import numpy as np

from shoe_controller.cards import Card, Suit
from vision.quad import CARD_SIZE

WIDTH, HEIGHT = CARD_SIZE
RANK_AT = (8, 12, 34, 44)  # x0, y0, x1, y1 of the space for the rank (stacked index)
SUIT_AT = (10, 52, 28, 70)  # and its suit, below the rank
SIDE_SUIT_AT = (10, 12, 28, 30)  # side-by-side index: the suit in the top-left corner...
SIDE_RANK_AT = (160, 8, 190, 36)  # ...and the rank in the top-right corner, on one row
RANK_TEXT = {1: "A", 10: "10", 11: "J", 12: "Q", 13: "K"}


TWO_COLOURS = {Suit.SPADES: (0, 0, 0), Suit.HEARTS: (0, 0, 200), Suit.DIAMONDS: (0, 0, 200),
               Suit.CLUBS: (0, 0, 0)}  # BGR
FOUR_COLOURS = {Suit.SPADES: (0, 0, 0), Suit.HEARTS: (0, 0, 200),
                Suit.DIAMONDS: (60, 225, 245), Suit.CLUBS: (40, 150, 30)}
"""A four-colour deck: diamonds in a pale yellow, light in grey (nearly paper) but deep in
blue, and clubs in green."""


def suit_glyph(image: np.ndarray, suit: Suit, box: tuple[int, int, int, int],
               colours: dict[Suit, tuple[int, int, int]] = TWO_COLOURS) -> None:
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
    colour = colours[suit]
    if suit is Suit.SPADES:
        cv2.fillPoly(image, [np.array([[cx, y0], [x1 - 1, y1 - 1], [x0, y1 - 1]])], colour)
    elif suit is Suit.HEARTS:
        cv2.circle(image, (cx, cy), (x1 - x0) // 2 - 1, colour, -1)
    elif suit is Suit.DIAMONDS:
        cv2.fillPoly(image, [np.array([[cx, y0], [x1 - 1, cy], [cx, y1 - 1], [x0, cy]])],
                     colour)
    else:
        cv2.rectangle(image, (x0, y0), (x1 - 1, y1 - 1), colour, -1)


def rank_text(image: np.ndarray, rank: int, colour: tuple[int, int, int],
              at: tuple[int, int, int, int] = RANK_AT) -> None:
    text = RANK_TEXT.get(rank, str(rank))
    (text_w, text_h), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.9, 2)
    x0, y0, x1, y1 = at
    scale = min((x1 - x0) / text_w, (y1 - y0) / text_h) * 0.9
    cv2.putText(image, text, (x0, y1 - 2), cv2.FONT_HERSHEY_SIMPLEX, 0.9 * scale, colour, 2)


def printed_rank_box(at: tuple[int, int, int, int] = RANK_AT) -> tuple[int, int, int, int]:
    """Where the rank texts' ink actually is, all ranks together."""
    ink = np.zeros((HEIGHT, WIDTH, 3), np.uint8)
    for rank in range(1, 14):
        rank_text(ink, rank, (255, 255, 255), at)
    ys, xs = np.nonzero(ink[:, :, 0])
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def card_image(card: Card, rng: np.random.Generator, *,
               suit_at: tuple[int, int, int, int] | None = SUIT_AT, side_by_side: bool = False,
               point_symmetric: bool = True,
               colours: dict[Suit, tuple[int, int, int]] = TWO_COLOURS,
               edge: bool = False, rank_only_index: bool = False) -> np.ndarray:
    """A rectified card: the index in the top-left corner (or suit top-left and rank
    top-right, ``side_by_side``), and turned round in the opposite corner as most printed
    cards have it (unless not ``point_symmetric``), pips that depend on the rank (the first
    row level with a side-by-side index), a dark edge stroke (``edge``), a little noise.
    With ``rank_only_index`` the index is the rank alone, and only the pips tell the suit
    (a court card then has a picture, and one pip under it)."""
    image = np.full((HEIGHT, WIDTH, 3), 250, np.uint8)
    rank_text(image, card.rank, colours[card.suit], SIDE_RANK_AT if side_by_side else RANK_AT)
    if side_by_side:
        suit_at = SIDE_SUIT_AT
    if suit_at is None:  # printed anywhere: no suit index at all
        x, y = int(rng.integers(5, 40)), int(rng.integers(50, 100))
        suit_at = (x, y, x + 18, y + 18)
    if rank_only_index and card.rank > 10:
        _court_picture(image, card.rank)
    else:
        suit_glyph(image, card.suit, suit_at, colours)
    for x, y in _pips(card.rank, top=10 if side_by_side else 40, court_pip=rank_only_index):
        suit_glyph(image, card.suit, (x, y, x + 24, y + 24), colours)
    if edge:
        cv2.rectangle(image, (1, 1), (WIDTH - 2, HEIGHT - 2), (40, 40, 40), 2)
    if point_symmetric:
        bottom = cv2.rotate(image[:HEIGHT // 2, :WIDTH // 2], cv2.ROTATE_180)
        image[HEIGHT - HEIGHT // 2:, WIDTH - WIDTH // 2:] = np.minimum(
            image[HEIGHT - HEIGHT // 2:, WIDTH - WIDTH // 2:], bottom)
    noisy = image.astype(np.float32) + rng.normal(0, 6, image.shape)
    return np.clip(noisy, 0, 255).astype(np.uint8)


def _court_picture(image: np.ndarray, rank: int) -> None:
    """A court card's picture, one shape per rank, the same in every suit."""
    ink = (90, 60, 40)
    if rank == 11:
        cv2.rectangle(image, (55, 60), (145, 185), ink, 5)
    elif rank == 12:
        cv2.ellipse(image, (100, 122), (45, 62), 0, 0, 360, ink, 5)
    else:
        cv2.polylines(image, [np.array([[55, 185], [55, 70], [78, 110], [100, 60], [122, 110],
                                        [145, 70], [145, 185]])], True, ink, 5)


def _pips(rank: int, top: int, court_pip: bool = False) -> list[tuple[int, int]]:
    """Pip positions as printed cards have them: one in the middle for an ace, a column for
    a 2 or 3, rows of up to three from the 4 up, none on a court card (or one low down,
    ``court_pip``)."""
    if rank == 1:
        return [(88, 130)]
    if rank > 10 and court_pip:
        return [(88, 200)]
    if rank <= 3:
        return [(88, top + index * 60) for index in range(rank)]
    return [(60 + (index % 3) * 35, top + (index // 3) * 50)
            for index in range(rank if rank <= 10 else 0)]


def deck(seed: int, *, frames: int = 2, **style: object) -> list[tuple[np.ndarray, Card]]:
    """``frames`` images of each of the 52 cards (``style``: see :func:`card_image`)."""
    rng = np.random.default_rng(seed)
    return [(card_image(Card(rank, suit), rng, **style), Card(rank, suit))  # type: ignore[arg-type]
            for suit in Suit for rank in range(1, 14) for _ in range(frames)]
