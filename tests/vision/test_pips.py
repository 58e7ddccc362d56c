"""A number card read by its pips (vision.pips), against an independent statement of where a
standard deck prints them (the table below, written from the layout common decks print,
not from the module), on cards drawn here: paper, an index in two corners, pips of one
size; with noise, uneven light and a little misplacement."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_controller.cards import Card
from vision.model import VisionModelError, card_index, card_of
from vision.pips import MAX_TOLERANCE, PipReader, learn_pips, pip_marks
from vision.quad import CARD_SIZE
from vision.recognise import Recogniser, Recognition

LEFT, MIDDLE, RIGHT = 0.3, 0.5, 0.7
SIDES = [(x, y) for y in (0.2, 0.5, 0.8) for x in (LEFT, RIGHT)]
FOUR_ROWS = [(x, y) for y in (0.2, 0.4, 0.6, 0.8) for x in (LEFT, RIGHT)]
STANDARD: dict[int, list[tuple[float, float]]] = {
    1: [(MIDDLE, 0.5)],
    2: [(MIDDLE, 0.2), (MIDDLE, 0.8)],
    3: [(MIDDLE, 0.2), (MIDDLE, 0.5), (MIDDLE, 0.8)],
    4: [(LEFT, 0.2), (RIGHT, 0.2), (LEFT, 0.8), (RIGHT, 0.8)],
    5: [(LEFT, 0.2), (RIGHT, 0.2), (MIDDLE, 0.5), (LEFT, 0.8), (RIGHT, 0.8)],
    6: SIDES,
    7: [*SIDES, (MIDDLE, 0.35)],
    8: [*SIDES, (MIDDLE, 0.35), (MIDDLE, 0.65)],
    9: [*FOUR_ROWS, (MIDDLE, 0.5)],
    10: [*FOUR_ROWS, (MIDDLE, 0.3), (MIDDLE, 0.7)],
}
"""Where a standard deck's number cards carry their pips (x across, y down, fractions of the
card), the card upright."""
INDEX_BOX = (0.0, 0.0, 0.17, 0.25)
RED, BLACK = (40, 30, 190), (30, 30, 30)
HEARTS, SPADES = Card.from_code("AH").suit, Card.from_code("AS").suit
PIP_RADIUS = 0.1  # of the card's width: about 1250 pixels on the rectified card


def drawn(rank: int, colour: tuple[int, int, int], rng: np.random.Generator, *,
          pips: list[tuple[float, float]] | None = None, turned: bool = False,
          jitter: float = 0.005) -> np.ndarray:
    """A rectified card: paper lit unevenly, an index in two corners, its pips (the
    standard layout unless ``pips``), noise; turned half round if ``turned``."""
    width, height = CARD_SIZE
    across = np.linspace(0.85, 1.0, width)[None, :] * np.ones((height, 1))
    card = np.dstack([np.full((height, width), level) * across
                      for level in (225, 230, 235)]).astype(np.uint8)
    for x0, y0 in ((0.03, 0.03), (0.86, 0.8)):  # a glyph in each index corner
        cv2.rectangle(card, (int(x0 * width), int(y0 * height)),
                      (int((x0 + 0.1) * width), int((y0 + 0.15) * height)), colour, -1)
    radius = int(PIP_RADIUS * width)
    for x, y in STANDARD[rank] if pips is None else pips:
        x, y = np.array([x, y]) + rng.uniform(-jitter, jitter, 2)
        cv2.ellipse(card, (int(x * width), int(y * height)), (radius, int(radius * 1.1)),
                    0, 0, 360, colour, -1)
    noisy = card.astype(np.int16) + rng.normal(0, 3, card.shape).astype(np.int16)
    card = np.clip(noisy, 0, 255).astype(np.uint8)
    return cv2.rotate(card, cv2.ROTATE_180) if turned else card


def number_cards() -> list[Card]:
    return [Card.from_code(rank + suit) for suit in "HS" for rank in "A23456789T"]


@pytest.fixture(scope="module")
def reader() -> PipReader:
    rng = np.random.default_rng(5)
    cards, labels = [], []
    for card in number_cards():
        for photo in range(3):
            cards.append(drawn(card.rank, RED if card.code[1] == "H" else BLACK, rng,
                               turned=photo == 1))
            labels.append(card_index(card))
    learnt = learn_pips(cards, labels, INDEX_BOX)
    assert learnt is not None
    return learnt


def test_every_number_card_is_read_by_its_rank_either_way_up(reader: PipReader) -> None:
    rng = np.random.default_rng(6)
    assert set(reader.layouts) == {card_index(card) for card in number_cards()}
    for rank in STANDARD:
        for turned in (False, True):
            read = reader.read(drawn(rank, RED, rng, turned=turned))
            assert read is not None, (rank, turned)
            # Hearts and spades lie alike: the pips tell the rank, not the suit.
            assert set(read.labels) == {card_index(Card(rank, suit)) for suit in (HEARTS, SPADES)}, rank
            assert read.offset <= reader.tolerance


def test_a_court_card_or_a_blank_card_is_no_number_card(reader: PipReader) -> None:
    rng = np.random.default_rng(7)
    blank = drawn(1, RED, rng, pips=[])
    assert reader.read(blank) is None
    picture = blank.copy()  # a court card: a picture, not pips
    cv2.rectangle(picture, (50, 70), (150, 220), RED, -1)
    assert reader.read(picture) is None


def test_a_pip_covered_or_missing_is_no_read(reader: PipReader) -> None:
    rng = np.random.default_rng(8)
    covered = drawn(8, RED, rng)
    width, height = CARD_SIZE  # a finger's tip over the lower left pip, and past it
    cv2.ellipse(covered, (int(LEFT * width), int(0.8 * height)), (34, 60), 30, 0, 360,
                (90, 110, 160), -1)
    assert reader.read(covered) is None
    # An 8 with a corner pip gone: 7 pips, but not where a 7 has them.
    assert reader.read(drawn(8, RED, rng, pips=STANDARD[8][1:])) is None
    # Two pips run together (a smear, a blurred card found too small): one mark too big.
    merged = drawn(2, RED, rng, pips=[(MIDDLE, 0.45), (MIDDLE, 0.55)])
    assert reader.read(merged) is None


@settings(max_examples=40, deadline=None)
@given(rank=st.integers(1, 10), angle=st.floats(0, 2 * np.pi), turned=st.booleans())
def test_pips_are_matched_within_the_tolerance_and_not_beyond(
        reader: PipReader, rank: int, angle: float, turned: bool) -> None:
    """Every pip moved by the same step: within half the learnt tolerance the card reads,
    beyond twice it (in any direction) it does not."""
    rng = np.random.default_rng(9)
    aspect = CARD_SIZE[1] / CARD_SIZE[0]
    step = np.array([np.cos(angle), np.sin(angle) / aspect])  # one card width long
    for scale, readable in ((0.4, True), (2.2, False)):
        x_step, y_step = step * scale * reader.tolerance
        pips = [(x + x_step, y + y_step) for x, y in STANDARD[rank]]
        read = reader.read(drawn(rank, BLACK, rng, pips=pips, turned=turned, jitter=0.0))
        found = read is not None and card_index(Card(rank, SPADES)) in read.labels
        assert found == readable, (rank, scale, read)


def test_the_marks_are_where_they_were_drawn() -> None:
    rng = np.random.default_rng(10)
    centres, areas = pip_marks(drawn(4, RED, rng, jitter=0.0), INDEX_BOX, 100)
    order = np.lexsort((centres[:, 0], centres[:, 1]))
    assert np.allclose(centres[order], STANDARD[4], atol=0.01)
    radius = PIP_RADIUS * CARD_SIZE[0]
    assert np.allclose(areas, np.pi * radius * radius * 1.1, rtol=0.1)


def test_a_reader_round_trips_and_a_bad_one_is_refused(reader: PipReader) -> None:
    again = PipReader.from_dict(reader.to_dict())
    assert again.tolerance == reader.tolerance and again.box == reader.box
    assert again.areas == reader.areas
    assert all(np.array_equal(one, two) for label in reader.layouts
               for one, two in zip(reader.layouts[label], again.layouts[label], strict=True))
    good = reader.to_dict()
    bad_cards = [{"12": {"area": 900, "layouts": [[[0.5, 0.5]]]}},  # a king has no pips
                 {"7": {"area": 900, "layouts": [[[0.5, 0.5]]]}},  # an 8 with one pip
                 {"0": {"area": -1, "layouts": [[[0.5, 0.5]]]}},
                 {"0": {"area": 900, "layouts": [[[1.5, 0.5]]]}}, {}]
    for cards in bad_cards:
        with pytest.raises(ValueError):
            PipReader.from_dict({**good, "cards": cards})
    with pytest.raises(ValueError):
        PipReader.from_dict({**good, "tolerance": MAX_TOLERANCE * 2})
    with pytest.raises(ValueError):
        PipReader.from_dict({**good, "box": [0.0, 0.0, 1.5, 0.25]})
    with pytest.raises(TypeError):
        PipReader.from_dict([1, 2])


def test_a_deck_with_bad_pips_is_refused_when_loaded(reader: PipReader, tmp_path) -> None:
    from vision.model import DeckModel

    vectors = np.eye(2, 4, dtype=np.float32)
    model = DeckModel("pipdeck", "whole", vectors, np.array([0, 1]), 1.0, 0.2, {},
                      pips=reader)
    folder = model.save(tmp_path).parent
    loaded = DeckModel.load("pipdeck", folder)
    assert loaded.pips is not None and loaded.pips.areas == reader.areas
    broken = {**reader.to_dict(), "tolerance": "wide"}
    bad = DeckModel("pipdeck", "whole", vectors, np.array([0, 1]), 1.0, 0.2, {})
    bad.pips = SimpleNamespace(to_dict=lambda: broken)  # type: ignore[assignment]
    bad.save(tmp_path)
    with pytest.raises(VisionModelError, match="bad pip layouts"):
        DeckModel.load("pipdeck", folder)


@pytest.mark.parametrize(("named", "taken"), [
    (("8H", "6H", None), "8H"),  # the whole card unsure between an 8 and a 6
    (("6H", "5H", "8H"), "8H"),  # the index named it
    (("8H", "8S", None), None),  # two eights: the pips cannot tell their suits apart
    (("6H", "5H", None), None),  # no read named an eight
    (("8D", "6H", None), None),  # an eight whose pips were never learnt (no diamonds)
])
def test_the_pips_choose_among_the_cards_the_reads_named(
        reader: PipReader, named: tuple[str | None, ...], taken: str | None) -> None:
    model = SimpleNamespace(pips=reader, threshold=0.2)
    card = drawn(8, RED, np.random.default_rng(11))
    cards = tuple(None if code is None else Card.from_code(code) for code in named)
    read = Recogniser(model)._read_pips(card, cards, 0.4)  # type: ignore[arg-type]
    assert (None if read is None else read.card) == (
        None if taken is None else Card.from_code(taken))
    if read is not None:
        assert read.reason == "" and 0 <= read.confidence <= 1 and read.distance == 0.4


def test_a_threshold_set_by_hand_leaves_the_pips_out(reader: PipReader) -> None:
    model = SimpleNamespace(pips=reader, threshold=0.2)
    card = drawn(8, RED, np.random.default_rng(12))
    stricter = Recogniser(model, threshold=0.5)  # type: ignore[arg-type]
    assert stricter._read_pips(card, (Card.from_code("8H"), None), 0.4) is None


def cut(at: float, side: str) -> np.ndarray:
    """The in-view mask of a rectified card the frame cuts ``at`` (a fraction of the card)
    from ``side`` (top, bottom, left, right)."""
    width, height = CARD_SIZE
    view = np.full((height, width), 255, np.uint8)
    if side == "top":
        view[:int(at * height)] = 0
    elif side == "bottom":
        view[height - int(at * height):] = 0
    elif side == "left":
        view[:, :int(at * width)] = 0
    else:
        view[:, width - int(at * width):] = 0
    return view


def test_a_card_the_frame_cuts_is_told_by_the_pips_in_view(reader: PipReader) -> None:
    """An ace cut across its lower third shows its one pip whole: an ace, surely no 4 (two
    pips of a 4 would show in the upper part) and no 2 (its upper pip would show)."""
    rng = np.random.default_rng(13)
    view = cut(0.3, "bottom")
    ace = drawn(1, RED, rng)
    ace[view == 0] = 0  # beyond the frame: whatever the rectification smears there
    seen = reader.read_in_view(ace, view)
    assert seen is not None
    aces = {card_index(Card(1, suit)) for suit in (HEARTS, SPADES)}
    assert seen.matched == aces
    for rank in (2, 4, 6):
        assert card_index(Card(rank, HEARTS)) in seen.unmatched
    assert reader.read_in_view(ace, cut(0.6, "bottom")) is None  # too little in view


@settings(max_examples=60, deadline=None)
@given(rank=st.integers(1, 10), at=st.floats(0.0, 0.45),
       side=st.sampled_from(["top", "bottom", "left", "right"]), turned=st.booleans(),
       seed=st.integers(0, 2**16))
def test_the_pips_in_view_never_rule_out_the_card_itself(
        reader: PipReader, rank: int, at: float, side: str, turned: bool, seed: int) -> None:
    """Whatever the cut, the card's own pips in view never say it is surely not that card
    (the one way a read by the pips in view could go wrong: the card ruled out, another
    named card taken), and what they match is of its rank or shows the same there."""
    rng = np.random.default_rng(seed)
    card = drawn(rank, RED, rng, turned=turned)
    view = cut(at, side)
    card[view == 0] = 0
    seen = reader.read_in_view(card, view)
    if seen is None:
        return
    assert card_index(Card(rank, HEARTS)) not in seen.unmatched, (rank, at, side)
    if card_index(Card(rank, HEARTS)) not in seen.matched:
        return
    assert seen.offset <= reader.tolerance


@pytest.mark.parametrize(("named", "taken"), [
    (("AH", "4H"), "AH"),  # the 4's pips would show above the cut: surely no 4
    (("AH", "QH"), None),  # a court card: the pips cannot rule it out
    (("4H", "2H"), None),  # neither is what shows
])
def test_the_pips_in_view_choose_between_the_two_cards_an_index_named(
        reader: PipReader, named: tuple[str, str], taken: str | None) -> None:
    model = SimpleNamespace(pips=reader, threshold=0.2)
    view = cut(0.3, "bottom")
    ace = drawn(1, RED, np.random.default_rng(14))
    ace[view == 0] = 0
    first, second = (Card.from_code(code) for code in named)
    unsure = Recognition(None, 0.1, 0.5, first, "index corner unsure", 0.0, second)
    read = Recogniser(model)._read_pips_in_view(ace, view, unsure)  # type: ignore[arg-type]
    assert (None if read is None else read.card) == (
        None if taken is None else Card.from_code(taken))


def test_the_pips_in_view_never_choose_between_two_suits(reader: PipReader) -> None:
    """An index unsure between the ace of hearts and the ace of spades: the pips tell a
    rank, not a suit, so they choose neither, even where the deck learnt its spades' pips
    smaller (as a real deck prints them, or a camera's blur makes them), so that the
    hearts' pips "match" and the spades' "surely do not"."""
    spades = {label: area * 0.5 for label, area in reader.areas.items()
              if Card.from_code("AS").suit == card_of(label).suit}
    sized = replace(reader, areas={**reader.areas, **spades})
    model = SimpleNamespace(pips=sized, threshold=0.2)
    view = cut(0.3, "bottom")
    ace = drawn(1, RED, np.random.default_rng(14))
    ace[view == 0] = 0
    seen = sized.read_in_view(ace, view)
    assert seen is not None  # the premise: the sizes alone would tell the two apart
    assert card_index(Card.from_code("AH")) in seen.matched
    assert card_index(Card.from_code("AS")) in seen.unmatched
    for first, second in (("AH", "AS"), ("AS", "AH")):
        unsure = Recognition(None, 0.01, 0.5, Card.from_code(first), "index corner unsure",
                             0.0, Card.from_code(second))
        assert Recogniser(model)._read_pips_in_view(  # type: ignore[arg-type]
            ace, view, unsure) is None


JSON = st.recursive(st.none() | st.booleans() | st.floats(allow_nan=True) | st.integers()
                    | st.text(max_size=4),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=3), inner, max_size=4), max_leaves=20)


@settings(max_examples=200, deadline=None)
@given(tolerance=JSON, box=JSON, cards=JSON, entry=JSON)
def test_a_hostile_saved_reader_is_refused_cleanly(reader: PipReader, tolerance, box, cards,
                                                   entry) -> None:
    """Whatever a model file holds where a pip reader should be, loading it gives a reader
    or one of the errors the model's loader turns into "bad pip layouts" (never another
    exception, which would reach the operator as a traceback)."""
    good = reader.to_dict()
    for value in ({**good, "tolerance": tolerance}, {**good, "box": box},
                  {**good, "cards": cards}, {**good, "cards": {"7": entry}}, cards):
        try:
            PipReader.from_dict(value)
        except (TypeError, ValueError, KeyError):
            pass
