"""The overhead webcam's real photographs (issue 16, ``cardai_hearts``: a Bicycle-style deck
on dim green felt, any rotation, hands touching the card, some partly out of frame): a deck
enrolled from 5 photos per card reads the others right or declines them, never wrong, and a
photo whose card is partly out of the frame is declined or read right.

The whole set on one seeded draw (2024; about 15 s on one core). Both draws are measured with ``shoe vision bench
--enrol-per-card 5``.
"""

from __future__ import annotations

import csv
import time
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shoe_controller.cards import Card
from shoe_controller.commands.vision import _index_line
from vision.bench import HoldoutResult, enroll_items, holdout_bench, read_labels
from vision.capture import read_image
from vision.detect import survey
from vision.index_corner import MIN_CORNER_THRESHOLD
from vision.index_glyphs import SECOND_READ_FLOOR
from vision.model import DeckModel
from vision.recognise import Recogniser

HEARTS = Path(__file__).resolve().parents[2].parent / "shared" / "real-cards" / "cardai_hearts"

pytestmark = pytest.mark.skipif(not HEARTS.is_dir(), reason=f"{HEARTS} is not here")


def _flagged() -> list[tuple[Path, Card]]:
    """Every photo of the whole set flagged in flags.csv (partly out of frame, a hand over
    the card, motion blur, a small far card, another card's back in view, in shadow)."""
    with (HEARTS / "flags.csv").open(newline="") as handle:
        flagged = {row["file"] for row in csv.DictReader(handle)}
    return [(path, card) for path, card in read_labels(HEARTS) if path.name in flagged]


@pytest.fixture(scope="module")
def held_2024() -> HoldoutResult:
    """The whole set, enrolled from draw 2024, every other photo read."""
    cv2.setNumThreads(1)
    return holdout_bench(HEARTS, 5, seed=2024, name="hearts")


@pytest.mark.slow
def test_overhead_photos_are_read_right_or_declined(tmp_path: Path,
                                                    held_2024: HoldoutResult) -> None:
    """Measured on the whole set (seed 2024: 65 photos drawn, a card found in 35, 7H left
    out of the whole-card deck with fewer than 2; 771 read): 723 right (93.8 %; 720 before
    a card found by its index alone could be as much larger than the enrolment's cards as
    one found by its outline, a card held up towards the camera; 702 before
    an index read under the corner threshold, though over half its floor, was taken when
    its glyphs cut out read the same card surely, vision.index_glyphs; 700 before
    an index found alone just under the threshold was taken when the card it placed,
    read whole, named the same card; 690 before a number card both reads were unsure of
    was read by its pips, vision.pips; 684 before
    a card found by its index alone was placed again by its edges; 641 before
    a frame where no card was read by its outline was searched for an index alone,
    vision.index_first; 642 before
    an index read a shift made surer needed the card read whole to name it too; 634 before
    the index corners were moved to where the deck's rank glyph sits,
    vision.index_corner.anchored_index, and their floor raised from 0.2 to 0.3; 620 before
    an index read under the corner reader's threshold, though over its floor, or one the
    card's other corner disputed unsurely, was taken when the same card read whole named the
    same card (630 with the first alone); 613 before
    a whole card neither whole nor by its index read was looked for again in part; 587 before
    an unsure index corner was read again a little shifted, CornerReader.read_aligned; 562
    before a card a hand lies over was found by its corners in view, vision.corners_in_view; 536
    before an index corner was read with the table beyond the half of its sides next to it, the
    table's colour taken further from a blurred edge, cut cards allowed the view's edges'
    perspective, and a cut that fits either length completed at the deck's size; 480 before
    cards the frame cuts at a corner or across two sides were read by their measured
    sides, and the index corners were enrolled with jittered copies and projected onto
    their principal directions; 481 before the second index read beside a hand,
    vision.partial.readable_in_part; 471 before paper in shadow was looked for,
    detect.PAPER_DIM; 411 before cards cut by the frame's edge or bordered by a hand, and
    whole cards the whole-card read declined, were read by an index corner; 7H is read by
    its index corners alone), none wrong, the rest declined; seed 7 93.5 %, none wrong.
    Asserted: no wrong read, at least 92 % right (the time is the bench's to show); the deck
    learnt the camera's card shape and sizes and keeps its index corners and its number
    cards' pips when saved; and of the 33 flagged photos (flags.csv), none read wrong.

    Why the whole set: on a sample of 6 cards (AH 2H 5H 8H TH QH, every photo), before
    detection checked what lies beyond each edge, 2 to 14 of 351 reads were wrong (a hand's
    edge taken for the card's: part of the card read as another); with the check none of
    three such samples on either draw read a card wrong, but a sample's deck has fewer
    held-out enrolment reads to set its threshold, so the figure asserted is the whole
    set's."""
    held = held_2024
    result = held.result
    assert held.model is not None and result.frames == 771
    assert result.wrong == 0, result.mistakes  # precision 100 %: the 99.9 % target
    assert result.accuracy >= 0.92, result.to_dict()
    # No time asserted: the 20 ms target is the bench's to show (docs/vision.md). Here the
    # CPU time per frame follows the machine and what else runs (the same code read at a
    # p95 of 17.5 ms one afternoon, 28.7 ms the next evening, 43.5 ms beside the rest of
    # CI's suite).
    corners = held.model.corners
    assert corners is not None  # cardai's webcam stretches its pixels: about 1.14
    assert 1.05 <= corners.shape.stretch <= 1.3 and 1.3 <= corners.shape.aspect <= 1.5
    assert corners.shape.sizes is not None  # whole cards' short sides: 170 to 280 pixels
    assert 150 <= corners.shape.sizes[0] <= corners.shape.sizes[1] <= 300
    loaded = DeckModel.load("hearts", held.model.save(tmp_path).parent).corners
    assert loaded is not None and loaded.shape == corners.shape
    assert np.array_equal(loaded.vectors, corners.vectors)
    assert corners.projection is not None and loaded.projection is not None
    assert np.array_equal(loaded.projection, corners.projection)
    assert (loaded.threshold, loaded.box) == (corners.threshold, corners.box)
    assert corners.anchor is not None and loaded.anchor == corners.anchor
    assert corners.geometry is not None and loaded.geometry == corners.geometry
    assert corners.glyphs is not None and loaded.glyphs is not None
    assert np.array_equal(loaded.glyphs.vectors, corners.glyphs.vectors)
    assert loaded.glyphs.threshold == corners.glyphs.threshold
    pips = held.model.pips
    assert pips is not None and len(pips.layouts) >= 6  # 7H: no whole card among its 5
    loaded_pips = DeckModel.load("hearts", tmp_path).pips
    assert loaded_pips is not None and loaded_pips.to_dict() == pips.to_dict()
    assert corners.red_ink and loaded.red_ink  # (its red cards' ink shows red)
    assert "no colour" not in (_index_line(held.model) or "")
    recogniser = Recogniser(held.model)
    for path, card in _flagged():
        read = recogniser.recognise(read_image(path))
        assert read.card is None or read.card == card, (path.name, read)


@pytest.mark.slow
def test_a_card_held_up_towards_the_camera_is_found_by_its_index(
        held_2024: HoldoutResult) -> None:
    """2H_s2_26: the two of hearts held up in both hands, its top cut by the frame and a
    thumb over its side, so no outline is found; its index shows whole, but the card is
    larger than any of draw 2024's enrolment cards (its short side about 1.37 times the
    largest), beyond the 1.2 the search for an index alone allowed, which then took two
    pips for an index and declined it ("4H or 7H"). The search now allows a card as much
    larger as a card found by its outline may be (vision.partial.SIZE_MARGIN)."""
    assert held_2024.model is not None and held_2024.model.corners is not None
    sizes = held_2024.model.corners.shape.sizes
    assert sizes is not None and sizes[1] < 300  # (the card held up: about 380 pixels)
    read = Recogniser(held_2024.model).recognise(read_image(HEARTS / "2H_s2_26.jpg"))
    assert read.card == Card.from_code("2H"), read


def test_a_read_s_time_is_the_whole_read_s(held_2024: HoldoutResult) -> None:
    """A read's ``seconds`` (the wall time `shoe vision bench` reports) covers the whole
    read: one thread's CPU time cannot exceed its wall time, yet a whole card read, then
    borne out by its index, carried the time it was decided at, before its index was read
    (the bench's wall p50 was 3 ms under the reading thread's CPU p50)."""
    assert held_2024.model is not None
    recogniser = Recogniser(held_2024.model)
    for path, _ in read_labels(HEARTS)[::40]:
        frame = read_image(path)
        cpu = time.thread_time()
        read = recogniser.recognise(frame)
        cpu = time.thread_time() - cpu
        assert read.seconds >= cpu - 1e-4, (path.name, read.seconds, cpu)


@pytest.mark.slow
def test_a_camera_without_colour_reads_its_red_cards(tmp_path: Path) -> None:
    """The whole set as a camera without colour takes it (each photo made grey, as a
    monochrome or infrared camera, or a webcam's night mode, gives it). The deck learns
    at enrolment that its red cards' ink is not red (:func:`vision.ink.red_ink_shows`):
    before, every read of an index was declined as "its ink is black" (355 of the 771
    photos of draw 7), and 197 were read, by the whole card. Measured: 631 of 771 right
    (81.8 %; 93.5 % in colour: a hand is as light as the paper without its colour, and
    fewer cards are found), none wrong.
    Asserted: none wrong, at least 78 % right. (Draw 2024 found 7H in no enrolment photo
    without colour, and its deck declines every heart: the bench says so.)"""
    cv2.setNumThreads(1)
    for path, _ in read_labels(HEARTS):
        grey = cv2.cvtColor(read_image(path), cv2.COLOR_BGR2GRAY)
        assert cv2.imwrite(str(tmp_path / path.name), grey, [cv2.IMWRITE_JPEG_QUALITY, 95])
    (tmp_path / "labels.csv").write_bytes((HEARTS / "labels.csv").read_bytes())
    held = holdout_bench(tmp_path, 5, seed=7, name="grey")
    assert held.model is not None and held.model.corners is not None
    assert not held.model.corners.red_ink
    said = _index_line(held.model)  # (what `shoe vision enroll` says of the index)
    assert said is not None and "the camera shows no colour" in said
    result = held.result
    assert result.frames == 771
    assert result.wrong == 0, result.mistakes
    assert result.accuracy >= 0.78, result.to_dict()


@pytest.mark.slow
@pytest.mark.parametrize(("name", "code"), [("9H_s2_23", "9H"), ("KH_s2_45", "KH"),
                                            ("JH_s1_02", "JH"), ("9H_s1_15", "9H")])
def test_a_card_no_outline_finds_is_read_by_its_index_alone(
        held_2024: HoldoutResult, name: str, code: str) -> None:
    """Cards whose outline no search finds (a hand over most of them, a hand holding one up
    off the felt, one the frame cuts at two sides) show an index corner whole (read at 0.64,
    0.62, 0.37 and 0.47 against a threshold of 0.3): found by its rank and suit
    glyphs alone (vision.index_first) and read under the corner reader's own limits."""
    cv2.setNumThreads(1)
    assert held_2024.model is not None and held_2024.model.corners is not None
    assert held_2024.model.corners.geometry is not None
    recogniser = Recogniser(held_2024.model)
    frame = read_image(HEARTS / f"{name}.jpg")
    by_outline = recogniser._read_outline(frame)
    assert by_outline.card is None and not by_outline.conclusive, by_outline
    read = recogniser.recognise(frame)
    assert read.card == Card.from_code(code), read
    assert read.confidence >= held_2024.model.corners.threshold, read


@pytest.mark.slow
@pytest.mark.parametrize(("name", "code"), [("6H_s1_10", "6H"), ("8H_s2_27", "8H"),
                                            ("JH_s2_26", "JH")])
def test_an_index_found_alone_just_under_the_threshold_is_taken_when_its_card_agrees(
        held_2024: HoldoutResult, name: str, code: str) -> None:
    """Cards no outline search finds (a hand over them, one cut by the frame), whose index
    found alone reads right at 0.29, 0.27 and 0.30, just under the corner threshold (0.3):
    the card the index placed, read as a whole card, names the same card, a second read,
    so 0.9 of the threshold is enough (vision.index_first.SECONDED_SHARE). Declined with a
    threshold set by hand (no second read lowers it)."""
    cv2.setNumThreads(1)
    model = held_2024.model
    assert model is not None and model.corners is not None
    frame = read_image(HEARTS / f"{name}.jpg")
    read = Recogniser(model).recognise(frame)
    assert read.card == Card.from_code(code), read
    assert 0.9 * model.corners.threshold <= read.confidence < model.corners.threshold, read
    strict = Recogniser(model, threshold=model.threshold + 1e-6).recognise(frame)
    assert strict.card is None, strict


@pytest.mark.slow
def test_a_card_whose_edge_a_shadow_hides_is_found_whole_by_measuring_its_edges_again(
        held_2024: HoldoutResult, monkeypatch: pytest.MonkeyPatch) -> None:
    """4H_s1_08: a whole 4H on the felt, a hand's shadow over one end. The mask stops short
    in the shadow, the side measured from it lies askew, and the card's own paper lies
    beyond its far end (no single table round the card: taken for part of one, whose index
    corner no search then reads). Measured again from where the edges were found, the
    sides lie on the card's edges: the card is found whole and read."""
    cv2.setNumThreads(1)
    frame = read_image(HEARTS / "4H_s1_08.jpg")
    quad, hand = survey(frame)
    assert quad is not None and hand is None
    assert Recogniser(held_2024.model).recognise(frame).card == Card.from_code("4H")
    monkeypatch.setattr("vision.detect.REMEASURES", 0)
    quad, hand = survey(frame)
    assert quad is None and hand is not None  # (as part of a card, bordered by a hand)


@pytest.mark.slow
def test_an_index_found_alone_but_unsure_is_declined_with_its_guess_not_as_no_card(
        held_2024: HoldoutResult) -> None:
    """4H_s2_25: a 4H held up in a hand, its outline found by no search; its index, found
    alone, reads 4H, unsurely (0.12 against 0.3: 4H or AH). Declined, and the decline says
    so (a card was seen, which and how sure), not "no card found"; an empty felt still
    says no card."""
    cv2.setNumThreads(1)
    model = held_2024.model
    assert model is not None and model.corners is not None
    recogniser = Recogniser(model)
    frame = read_image(HEARTS / "4H_s2_25.jpg")
    assert recogniser._read_outline(frame).best_guess is None
    read = recogniser.recognise(frame)
    assert read.card is None and read.best_guess == Card.from_code("4H"), read
    assert read.confidence < model.corners.threshold, read
    assert read.reason.startswith("no card outline found; index found alone unsure: 4H"), read
    felt = cv2.GaussianBlur(frame[:40, :40], (0, 0), 3)  # a corner of bare felt, enlarged
    empty = recogniser.recognise(cv2.resize(felt, frame.shape[1::-1]))
    assert empty.card is None and empty.reason.startswith("no card found"), empty


@pytest.mark.slow
@pytest.mark.parametrize(("name", "code"), [("8H_s2_11", "8H"), ("7H_s2_26", "7H"),
                                            ("7H_s2_02", "7H")])
def test_an_unsure_index_is_taken_when_its_glyphs_cut_out_read_the_same_card_surely(
        held_2024: HoldoutResult, name: str, code: str) -> None:
    """Indexes in plain view read right under the corner threshold (0.3): an 8 a finger
    touches, found by its index alone (0.26), a 7 found in part (0.215), a 7 the frame's
    top cuts (0.269). The same glyphs, cut out and brought to one size (vision.index_glyphs), read
    as the same card surely: taken. Without the glyph reader, or with a threshold set by
    hand, declined."""
    cv2.setNumThreads(1)
    model = held_2024.model
    assert model is not None and model.corners is not None
    assert model.corners.glyphs is not None
    frame = read_image(HEARTS / f"{name}.jpg")
    read = Recogniser(model).recognise(frame)
    assert read.card == Card.from_code(code), read
    assert SECOND_READ_FLOOR <= read.confidence < model.corners.threshold, read
    alone = replace(model, corners=replace(model.corners, glyphs=None))
    assert Recogniser(alone).recognise(frame).card is None
    strict = Recogniser(model, threshold=model.threshold + 1e-6).recognise(frame)
    assert strict.card is None, strict


@pytest.mark.slow
def test_an_unsure_or_disputed_index_is_taken_only_when_the_card_read_whole_names_it(
        held_2024: HoldoutResult) -> None:
    """Draw 2024 sets the corner reader's threshold at its floor (0.3). Raised to 0.6, as a
    deck whose held-out reads were less sure would have it: QH_s1_01 is a card in part
    whose index reads QH at 0.569, under it but over the floor; read as a whole card, the
    same rectified card is nearest QH: taken. KH_s1_06's index reads KH at 0.377, but the
    card read whole is not nearest KH: without the glyph reader, declined, though the index
    was right (a second read that does not bear it out is a doubt; under the deck's own
    threshold it is read); its glyphs cut out read KH surely: taken. Under
    the deck's own threshold, AH_s2_47's two index corners disagree, AH sure and 4H unsure;
    the card read whole is nearest AH: taken (declined before disputed reads)."""
    cv2.setNumThreads(1)
    assert held_2024.model is not None and held_2024.model.corners is not None
    corners = held_2024.model.corners
    assert corners.threshold >= MIN_CORNER_THRESHOLD
    doubtful = replace(held_2024.model, corners=replace(corners, threshold=0.6))
    recogniser = Recogniser(doubtful)
    read = recogniser.recognise(read_image(HEARTS / "QH_s1_01.jpg"))
    assert read.card == Card.from_code("QH"), read
    assert MIN_CORNER_THRESHOLD <= read.confidence < 0.6, read
    # (Without the glyph reader, the other second read: KH_s1_06's glyphs say KH.)
    alone = replace(held_2024.model, corners=replace(corners, threshold=0.6, glyphs=None))
    read = Recogniser(alone).recognise(read_image(HEARTS / "KH_s1_06.jpg"))
    assert read.card is None and read.best_guess == Card.from_code("KH"), read
    assert "index corner unsure" in read.reason, read
    read = recogniser.recognise(read_image(HEARTS / "KH_s1_06.jpg"))
    assert read.card == Card.from_code("KH"), read
    own = Recogniser(held_2024.model)
    read = own.recognise(read_image(HEARTS / "KH_s1_06.jpg"))
    assert read.card == Card.from_code("KH"), read
    read = own.recognise(read_image(HEARTS / "AH_s2_47.jpg"))
    assert read.card == Card.from_code("AH") and read.confidence >= corners.threshold, read


@pytest.mark.slow
@pytest.mark.parametrize(("name", "runner_up"), [("5H_s1_05", "9H"), ("8H_s2_05", "6H"),
                                                 ("9H_s1_04", "TH"), ("TH_s1_01", "9H"),
                                                 ("AH_s1_05", "4H"), ("6H_s1_02", "5H")])
def test_a_number_card_both_reads_are_unsure_of_is_read_by_its_pips(
        held_2024: HoldoutResult, name: str, runner_up: str) -> None:
    """Whole cards the whole-card read is unsure of between two neighbours (5H or 9H, 8H or
    6H, 9H or TH, TH or 9H: blurred, or in dim light), whose index does not read surely
    either: their pips are all in view, as many as the card's rank, where the enrolment
    photos of that card had them (vision.pips). Cards the frame cuts (AH_s1_05 at a corner,
    6H_s1_02 along its top), whose index reads unsurely as AH or 4H, 6H or 5H: the pips in
    view are the ace's one, the six's, and surely not the other card's. Draw 2024: 10 such
    photos read, none wrong (draws 7, 11 and 3: 9, 4 and 5). Without the pips, declined."""
    cv2.setNumThreads(1)
    model = held_2024.model
    assert model is not None and model.pips is not None
    code = name[:2]
    frame = read_image(HEARTS / f"{name}.jpg")
    read = Recogniser(model).recognise(frame)
    assert read.card == Card.from_code(code) and read.reason == "", read
    without = Recogniser(replace(model, pips=None)).recognise(frame)
    assert without.card is None, without
    assert without.best_guess in (Card.from_code(code), Card.from_code(runner_up)), without


@pytest.mark.slow
def test_the_pips_of_every_card_found_say_its_rank_or_nothing(
        held_2024: HoldoutResult) -> None:
    """The pip reader alone, on every photo not enrolled, against the photo's own label.
    A card found whole (court cards too: they have no pips to read): the rank or no read,
    never another rank. A card found in part (cut by the frame, beside a hand): its pips in
    view never say it is surely not its own card (what a read by the pips in view must
    never do: rule the card out and take the other card its index named). Measured (draw
    2024): 485 whole cards, 296 read by their pips, all right; the rest (court cards, a
    7H, whose pips the deck never learnt, pips under a hand, in shadow or blurred) not
    read; 225 cards found in part, whose pips in view matched their own card in 36 and
    ruled it out in none."""
    from vision.bench import draw_enrolment
    from vision.detect import survey, work_frame
    from vision.in_part import find_in_part
    from vision.model import card_index, card_of
    from vision.quad import in_view, rectify

    cv2.setNumThreads(1)
    model = held_2024.model
    assert model is not None and model.pips is not None and model.corners is not None
    _, tested = draw_enrolment(read_labels(HEARTS), 5, 2024)
    found = read = in_part = matched = 0
    for path, card in tested:
        frame = read_image(path)
        work = work_frame(frame)
        quad, hand = survey(frame, work=work)
        if quad is None:
            part = find_in_part(frame, model.corners.shape, model.corners.box, hand, work)
            if part is None:
                continue
            seen = model.pips.read_in_view(rectify(frame, part.quad),
                                           in_view(frame, part.quad))
            in_part += 1
            if seen is not None:
                assert card_index(card) not in seen.unmatched, (path.name, seen)
                matched += card_index(card) in seen.matched
            continue
        found += 1
        said = model.pips.read(rectify(frame, quad))
        if said is None:
            continue
        read += 1
        assert {card_of(label).rank for label in said.labels} == {card.rank}, (path.name,
                                                                               said)
    assert found >= 450 and read >= 280, (found, read)
    assert in_part >= 200 and matched >= 30, (in_part, matched)


@pytest.mark.slow
def test_a_card_missing_from_the_whole_card_deck_is_not_read_as_its_neighbour() -> None:
    """Draw 11 leaves 8H out of the whole-card deck (fewer than 2 of its 5 enrolment photos
    show a whole card); before the index check, six 8H photos were read as 6H, whose pips
    differ by two (precision 98.7 %). The index of each said otherwise: now declined (then
    522 of 771 right, 67.7 %; then 532, 69.0 %; 603 before index corners were anchored,
    610 since, 79.1 %), none wrong. With anchored corners under the floor that held before
    (0.2), 5H_s1_20, cut by the frame, was read as 3H at 0.242; the floor is now 0.3.
    Asserted: no wrong read, and 8H among the cards the whole-card deck lacks (what makes
    this draw the test)."""
    cv2.setNumThreads(1)
    held = holdout_bench(HEARTS, 5, seed=11, name="hearts")
    assert held.model is not None and held.result.frames == 771
    assert "8H" in held.not_enrolled
    assert held.result.wrong == 0, held.result.mistakes


@pytest.mark.slow
def test_a_blurred_index_is_not_taken_for_its_neighbour() -> None:
    """Draw 3: 9H_s1_07, a card swept through the frame (motion blur), whose whole-card read
    is unsure, was read as TH by its index at a confidence of 0.173, above the corner
    reader's threshold as its enrolment set it (0.172); the least threshold an index read
    alone is held to (vision.index_corner.MIN_CORNER_THRESHOLD, then 0.2) declined it. With
    index corners anchored (vision.index_corner.anchored_index) it read as TH at 0.242, its
    whole card nearest TH too, over that floor: the floor is now 0.3. Measured: 578 of 771
    right (75.0 %) then, 637 before the anchoring, 639 (82.9 %) since, none wrong.
    Asserted: no wrong read, and that photo not taken for another card (it is declined)."""
    cv2.setNumThreads(1)
    held = holdout_bench(HEARTS, 5, seed=3, name="hearts")
    assert held.model is not None and held.result.frames == 771
    assert held.result.wrong == 0, held.result.mistakes
    read = Recogniser(held.model).recognise(read_image(HEARTS / "9H_s1_07.jpg"))
    assert read.card in (None, Card.from_code("9H")), read


@pytest.fixture(scope="module")
def four_card_deck() -> DeckModel:
    """A deck of four cards (AH, 5H, 9H, KH), enrolled from the first 5 photos of each: a
    deck of this camera, with its corner reader, index geometry and frame size, in seconds."""
    cv2.setNumThreads(1)
    chosen = {"AH", "5H", "9H", "KH"}
    items = [(path, card) for path, card in read_labels(HEARTS) if card.code in chosen]
    first = [item for card in sorted(chosen)
             for item in sorted((i for i in items if i[1].code == card),
                                key=lambda i: i[0].name)[:5]]
    model, _, _ = enroll_items("four", first)
    assert model.corners is not None and model.frame_size == (540, 960)
    return model


def _tip(corner: int, across: float, down: float, tip: float) -> list[tuple[float, float]]:
    """A tip of something in corner ``corner`` (0 to 3) of the frame, as fractions of it:
    a triangle, or with ``tip`` a quadrilateral (two of the frame's edges and one or two
    sides of its own)."""
    points = [(0.0, 0.0), (across, 0.0), (across * tip, down), (0.0, down)] if tip else [
        (0.0, 0.0), (across, 0.0), (0.0, down)]
    flip_x, flip_y = corner in (1, 2), corner in (2, 3)
    return [(1 - x if flip_x else x, 1 - y if flip_y else y) for x, y in points]


_SHAPE = st.one_of(
    st.lists(st.tuples(st.floats(-0.2, 1.2), st.floats(-0.2, 1.2)), min_size=3, max_size=7),
    st.builds(_tip, st.integers(0, 3), st.floats(0.03, 0.4), st.floats(0.05, 0.6),
              st.one_of(st.just(0.0), st.floats(0.1, 0.7))))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes=st.lists(st.tuples(_SHAPE, st.sampled_from(["paper", "skin", "ink", "felt"])),
                       min_size=1, max_size=5),
       tint=st.tuples(st.floats(0.6, 1.15), st.floats(0.8, 1.1), st.floats(0.6, 1.15)),
       blur=st.sampled_from([0, 3, 9]), seed=st.integers(0, 1000))
def test_a_frame_of_blank_shapes_is_never_read_and_never_fails(
        four_card_deck: DeckModel, shapes: list[tuple[list[tuple[float, float]], str]],
        tint: tuple[float, float, float], blur: int, seed: int) -> None:
    """Polygons of paper, skin, ink and felt anywhere in the frame, cut by its edges and
    corners (a tip of paper in a corner of the frame, a sliver along an edge, a triangle),
    under tinted light, blurred and noisy: every search the recogniser runs meets them
    (whole card, card in part, corners in view, index alone), none raises, and none reads
    blank paper as a card. (A five-cornered paper tip in a corner stopped the read with an
    OpenCV error until this round.)"""
    rows, columns = four_card_deck.frame_size or (540, 960)
    colours = {"paper": (226, 230, 232), "skin": (140, 172, 224), "ink": (40, 40, 200),
               "felt": (40, 75, 28)}
    frame = np.full((rows, columns, 3), colours["felt"], np.float64)
    for points, colour in shapes:
        polygon = np.round(np.array(points) * [columns, rows]).astype(np.int32)
        cv2.fillPoly(frame, [polygon], colours[colour])
    if blur:
        frame = cv2.GaussianBlur(frame, (blur, blur), 0)
    frame = frame * np.array(tint) + np.random.default_rng(seed).normal(0, 3, frame.shape)
    read = Recogniser(four_card_deck).recognise(np.clip(frame, 0, 255).astype(np.uint8))
    assert read.card is None, read
    assert read.reason
