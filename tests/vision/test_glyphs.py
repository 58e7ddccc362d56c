"""Locating a deck's rank and suit glyphs from its enrolment frames (vision.glyphs)."""

from __future__ import annotations

import cv2
import numpy as np

from shoe_controller.cards import Card, Suit
from vision.detect import CARD_SIZE
from vision.glyphs import PAD, locate_index

WIDTH, HEIGHT = CARD_SIZE
RANK_AT = (8, 12, 34, 44)  # x0, y0, x1, y1 of the space for the synthetic deck's rank
SUIT_AT = (10, 52, 28, 70)  # and its suit, below the rank
RANK_TEXT = {1: "A", 10: "10", 11: "J", 12: "Q", 13: "K"}


def _suit_glyph(image: np.ndarray, suit: Suit, box: tuple[int, int, int, int]) -> None:
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
    if suit is Suit.SPADES:
        cv2.fillPoly(image, [np.array([[cx, y0], [x1 - 1, y1 - 1], [x0, y1 - 1]])], (0, 0, 0))
    elif suit is Suit.HEARTS:
        cv2.circle(image, (cx, cy), (x1 - x0) // 2 - 1, (0, 0, 200), -1)
    elif suit is Suit.DIAMONDS:
        cv2.fillPoly(image, [np.array([[cx, y0], [x1 - 1, cy], [cx, y1 - 1], [x0, cy]])],
                     (0, 0, 200))
    else:
        cv2.rectangle(image, (x0, y0), (x1 - 1, y1 - 1), (0, 0, 0), -1)


def _rank_text(image: np.ndarray, rank: int, colour: tuple[int, int, int]) -> None:
    text = RANK_TEXT.get(rank, str(rank))
    (text_w, text_h), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.9, 2)
    x0, y0, x1, y1 = RANK_AT
    scale = min((x1 - x0) / text_w, (y1 - y0) / text_h) * 0.9
    cv2.putText(image, text, (x0, y1 - 2), cv2.FONT_HERSHEY_SIMPLEX, 0.9 * scale, colour, 2)


def _printed_rank_box() -> tuple[int, int, int, int]:
    """Where the rank texts' ink actually is, all ranks together."""
    ink = np.zeros((HEIGHT, WIDTH, 3), np.uint8)
    for rank in range(1, 14):
        _rank_text(ink, rank, (255, 255, 255))
    ys, xs = np.nonzero(ink[:, :, 0])
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def _card(card: Card, rng: np.random.Generator, *, suit_at: tuple[int, int, int, int] | None
          ) -> np.ndarray:
    """A rectified card: the index in the top-left corner (and, turned round, in the
    bottom-right, as printed cards have it), pips that depend on the rank, a little noise."""
    image = np.full((HEIGHT, WIDTH, 3), 250, np.uint8)
    colour = (0, 0, 200) if card.suit in (Suit.HEARTS, Suit.DIAMONDS) else (0, 0, 0)
    _rank_text(image, card.rank, colour)
    box = suit_at or (lambda x, y: (x, y, x + 18, y + 18))(
        int(rng.integers(5, 40)), int(rng.integers(50, 100)))
    _suit_glyph(image, card.suit, box)
    for index in range(card.rank if card.rank <= 10 else 0):  # pips vary with the rank
        x, y = 60 + (index % 3) * 40, 40 + (index // 3) * 50
        _suit_glyph(image, card.suit, (x, y, x + 24, y + 24))
    bottom = cv2.rotate(image[:HEIGHT // 2, :WIDTH // 2], cv2.ROTATE_180)
    image[HEIGHT - HEIGHT // 2:, WIDTH - WIDTH // 2:] = np.minimum(
        image[HEIGHT - HEIGHT // 2:, WIDTH - WIDTH // 2:], bottom)
    noisy = image.astype(np.float32) + rng.normal(0, 6, image.shape)
    return np.clip(noisy, 0, 255).astype(np.uint8)


def _deck(seed: int, *, suit_at: tuple[int, int, int, int] | None = SUIT_AT
          ) -> list[tuple[np.ndarray, Card]]:
    rng = np.random.default_rng(seed)
    return [(_card(Card(rank, suit), rng, suit_at=suit_at), Card(rank, suit))
            for suit in Suit for rank in range(1, 14) for _ in range(2)]


def _pixels(box: tuple[float, float, float, float]) -> np.ndarray:
    return np.array(box) * [WIDTH, HEIGHT, WIDTH, HEIGHT]


def test_the_rank_and_suit_glyphs_are_found_where_the_deck_prints_them() -> None:
    located = locate_index(_deck(1))
    assert located is not None
    rank_box, suit_box = (_pixels(box) for box in located)
    # Each box holds its glyph, padded by PAD pixels, and not much more.
    for found, printed in ((rank_box, _printed_rank_box()), (suit_box, SUIT_AT)):
        assert np.all(found[:2] <= np.array(printed[:2]) - PAD + 1), (found, printed)
        assert np.all(found[2:] >= np.array(printed[2:]) + PAD - 1), (found, printed)
        assert np.abs(found - printed).max() <= PAD + 4, (found, printed)
    assert rank_box[3] <= suit_box[1] + 2 * PAD  # the rank sits above the suit


def test_a_deck_without_a_suit_glyph_in_a_fixed_place_is_not_located() -> None:
    """Suits printed anywhere (or not at all) give no box: the fixed candidates take over."""
    assert locate_index(_deck(2, suit_at=None)) is None


def test_too_few_cards_to_tell_are_not_located() -> None:
    assert locate_index([]) is None
    one_suit = [(image, card) for image, card in _deck(3) if card.suit is Suit.SPADES]
    assert locate_index(one_suit) is None
