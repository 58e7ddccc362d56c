"""The real-photo bench (``shoe vision bench --enrol-per-card``) and the fixed-camera region
of interest, on small samples of the real photographs in ``../shared/real-cards`` (skipped
when that folder is absent; the photos are never copied into the repository).

The figures asserted are the ones measured on these samples (docs/vision.md gives the figures
on the whole sets): the harness's arithmetic against a hand-computed case, the region mode
reading pp2021's index corners at the issue's targets (19 of its 52 cards, both enrolment
draws: the whole set takes about a minute a draw), ece395's number cards read by their pips
and nothing misread (the whole set, draw 2024; 7 and 11 slow), decks enrolled on one set
declining another set's photos (a pp2021 deck: every photo of the other two sets).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from shoe_controller.cards import Card, deck
from shoe_controller.cli import main
from vision.bench import (
    BenchResult,
    draw_enrolment,
    enroll_items,
    holdout_bench,
    measure,
    read_labels,
    read_sessions,
    session_of,
)
from vision.capture import read_image
from vision.model import DeckModel, VisionModelError, card_of
from vision.recognise import Recogniser
from vision.roi import WHOLE_FRAME, RoiError, parse_roi

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "real-cards"
FEEDER, OV7670, HEARTS = "pp2021_feeder", "ece395_ov7670", "cardai_hearts"
SAMPLE = ["AS", "7H", "KC", "5S", "9H", "QC"]  # no two share rank and suit, all four suits
INDEX_CORNER = (0.4, 0.1, 0.95, 1.0)  # where pp2021's camera sees the index (configured)


def real_set(name: str) -> Path:
    folder = REAL / name
    if not (folder / "labels.csv").is_file():
        pytest.skip(f"real photographs not present: {folder}")
    return folder


def sample_folder(tmp: Path, name: str, codes: list[str], limit: int | None = None) -> Path:
    """A labelled folder of some cards of a real set: labels.csv naming the photos where
    they are (absolute paths), nothing copied."""
    source = real_set(name)
    tmp.mkdir(parents=True, exist_ok=True)
    rows: dict[str, list[str]] = {}
    with (source / "labels.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            if row["card"] in codes:
                rows.setdefault(row["card"], []).append(row["file"])
    with (tmp / "labels.csv").open("w") as handle:
        handle.write("file,card\n")
        for code, files in rows.items():
            for file in sorted(files)[:limit]:
                handle.write(f"{source / file},{code}\n")
    return tmp


# ------------------------------------------------------------------ the harness, by hand
def _read(card: str | None, guess: str | None = None, seconds: float = 0.01):
    return SimpleNamespace(card=None if card is None else Card.from_code(card),
                           best_guess=Card.from_code(guess or card) if (guess or card) else None,
                           seconds=seconds)


def test_bench_arithmetic_against_a_hand_computed_case() -> None:
    result = BenchResult()
    reads = [("AS", _read("AS")), ("AS", _read("AC")), ("KH", _read("KH")),
             ("KH", _read(None, "QH")), ("2C", _read(None, "2C")), ("2C", _read("2S")),
             ("2C", _read("2S")), ("QD", _read("QD", seconds=0.05))]
    for truth, read in reads:
        result.add(Card.from_code(truth), read, "x")
    # 8 frames: 3 right, 3 wrong (AS->AC, 2C->2S twice), 2 declined (one guessing QH).
    assert (result.frames, result.right, result.wrong, result.declined) == (8, 3, 3, 2)
    assert result.accuracy == pytest.approx(3 / 8)
    assert result.precision == pytest.approx(3 / 6)
    assert result.decline_rate == pytest.approx(2 / 8)
    assert result.confusions.most_common() == [(("2C", "2S"), 2), (("AS", "AC"), 1)]
    assert dict(result.declined_as) == {("KH", "QH"): 1}
    assert result.percentile_ms(50) == pytest.approx(10.0)
    assert result.percentile_ms(95) == pytest.approx(10 + 0.65 * 40)  # numpy's linear rule
    figures = result.to_dict()
    assert figures["confusions"][0] == {"card": "2C", "read_as": "2S", "count": 2}
    assert BenchResult().precision == 1.0 and BenchResult().accuracy == 0.0


def test_sessions_from_file_names_or_a_column(tmp_path: Path) -> None:
    ace = Card.from_code("AH")
    assert session_of(Path("AH_s1_04.jpg"), ace) == "s1"
    assert session_of(Path("AH_b.png"), ace) == "b"
    assert session_of(Path("AH_01.jpg"), ace) == ""
    assert session_of(Path("AH_01.jpg"), ace, "night") == "night"
    for name in ("AH_x_1.png", "AH_y_2.png", "AH_x_3.png"):
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "labels.csv").write_text(
        "file,card,session\nAH_x_1.png,AH,\nAH_y_2.png,AH,day\nAH_x_3.png,AH,\n")
    assert read_sessions(tmp_path) == {"AH_x_1.png": "x", "AH_y_2.png": "day",
                                       "AH_x_3.png": "x"}


def test_the_enrolment_draw_is_seeded_disjoint_and_per_card() -> None:
    items = [(Path(f"{code}_{index:02d}.jpg"), Card.from_code(code))
             for code in ("AS", "KD", "7C") for index in range(1, 8)]
    items += [(Path("2H_01.jpg"), Card.from_code("2H")), (Path("2H_02.jpg"),
                                                          Card.from_code("2H"))]
    enrol, test = draw_enrolment(items, 3, seed=5)
    again, _ = draw_enrolment(list(reversed(items)), 3, seed=5)
    assert enrol == again  # the same draw whatever the order of labels.csv
    assert draw_enrolment(items, 3, seed=6)[0] != enrol
    assert sorted(enrol + test) == sorted(items) and not set(enrol) & set(test)
    per_card = {card.code: sum(1 for _, c in enrol if c == card) for _, card in items}
    assert per_card == {"AS": 3, "KD": 3, "7C": 3, "2H": 2}  # 2H: all it has, none tested
    assert not [path for path, card in test if card.code == "2H"]


def test_regions_are_parsed_and_checked() -> None:
    assert parse_roi("whole") == WHOLE_FRAME
    assert parse_roi("0.4,0.1,0.95,1") == INDEX_CORNER
    for bad in ("0.5,0.1,0.4,1", "0,0,1", "a,b,c,d", "0,0,1.5,1"):
        with pytest.raises(RoiError):
            parse_roi(bad)


# ------------------------------------------------------------------ real photographs
@pytest.fixture(scope="module")
def feeder_corner(tmp_path_factory: pytest.TempPathFactory):
    """pp2021 sample enrolled with the whole frame as its region (5 photos per card)."""
    folder = sample_folder(tmp_path_factory.mktemp("feeder"), FEEDER, SAMPLE)
    return folder, holdout_bench(folder, 5, seed=2024, roi=WHOLE_FRAME)


def test_the_region_mode_reads_pp2021_index_corners(feeder_corner) -> None:
    """No card outline is in view (the feeder's camera sees the index corner only): the
    outline recogniser cannot enrol these photos; read in the region (the whole frame),
    the sample's held-out photos are read right or declined (measured: 34 of 36 right, 2
    declined, none wrong, before the camera-view check; now 36 of 36)."""
    _, held = feeder_corner
    result = held.result
    assert held.model is not None and held.model.roi == WHOLE_FRAME
    assert held.skipped == [] and held.not_enrolled == []
    assert result.frames == 36 and result.wrong == 0
    assert result.right == 36  # the 99.5 % target: on 36 photos, every one
    # A camera that sees only the index corner shows no card's pips: no pip counter.
    assert held.model.region_pips is None


FEEDER_SAMPLE = sorted(set(SAMPLE) | {f"{rank}D" for rank in "A23456789TJQK"})
"""19 cards of pp2021: every diamond (the suit with two capture sessions, seven months
apart, in another light: the hard part of the set) and the six of SAMPLE."""


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2024, 7])
def test_pp2021_reads_its_index_corners_at_the_targets(seed: int, tmp_path: Path) -> None:
    """Issue 16's targets on a sample of pp2021 (19 cards, 95 enrolment photos, 366 read;
    the whole set is in docs/vision.md: 100 % on draws 2024, 7 and 11, no wrong read):
    enrolled from 5 photos per card in the region ``whole``, every other photo read.
    Measured on this sample: 366 right on both draws; CPU p95 about 3.3 ms (not asserted)."""
    folder = sample_folder(tmp_path, FEEDER, FEEDER_SAMPLE)
    result = holdout_bench(folder, 5, seed, roi=WHOLE_FRAME).result
    assert result.frames == 366
    assert result.wrong == 0  # precision 100 %: at least the 99.9 % target
    assert result.accuracy >= 0.995  # the target: 365 of 366 right at least
    # No time asserted: the 20 ms target is the bench's to show (docs/vision.md); the CPU
    # time per frame here follows the machine and what else CI runs beside it.


def test_the_outline_recogniser_declines_rather_than_misreads_the_feeder(tmp_path: Path
                                                                        ) -> None:
    """The baseline the region mode exists for: a pp2021 photo shows only the index corner,
    the card running off the frame, so the outline recogniser finds no whole card and reads
    nothing wrong. Measured (issue 16, a card partly out of frame is none): no card in any
    of the 30 enrolment photos, all 36 others declined."""
    folder = sample_folder(tmp_path, FEEDER, SAMPLE)
    held = holdout_bench(folder, 5, seed=2024)
    assert held.skipped  # photos whose card runs off the frame
    assert held.result.wrong == 0


def test_bench_cli_json_agrees_with_each_read(feeder_corner, tmp_path: Path, capsys) -> None:
    """``shoe vision bench --enrol-per-card`` prints the draw and figures that match reading
    each held-out photo with a deck enrolled from the printed photos."""
    folder, _ = feeder_corner
    assert main(["vision", "bench", "--enrol-per-card", "5", "--seed", "2024", "--roi",
                 "whole", "--json", str(folder)]) == 0
    figures = json.loads(capsys.readouterr().out)
    items = read_labels(folder)
    enrolled = set(figures["enrolled_frames"])
    assert len(enrolled) == 30 and figures["per_card"] == 5 and figures["seed"] == 2024
    model, _, _ = enroll_items(
        "check", [item for item in items if item[0].name in enrolled], WHOLE_FRAME)
    recogniser = Recogniser(model)
    reads = [(recogniser.recognise(read_image(path)).card, card) for path, card in items
             if path.name not in enrolled]
    right = sum(read == card for read, card in reads)
    declined = sum(read is None for read, _ in reads)
    assert figures["frames"] == len(reads) == 36
    assert figures["right"] == right and figures["declined"] == declined
    assert figures["accuracy"] == pytest.approx(right / len(reads))
    assert main(["vision", "bench", "--enrol-per-card", "5", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "enrolled from 5 photos per card (seed 2024, 30 photos)" in out
    assert "no card found in" in out  # the outline recogniser on index-only photos


def test_a_region_deck_is_saved_and_loaded(feeder_corner, tmp_path: Path) -> None:
    folder, held = feeder_corner
    path = held.model.save(tmp_path)
    loaded = DeckModel.load(held.model.name, tmp_path)
    assert loaded.roi == WHOLE_FRAME and loaded.layout == "roi"
    photo = read_labels(folder)[0][0]
    assert loaded.read(read_image(photo)) == held.model.read(read_image(photo))
    import numpy as np

    with np.load(path) as data:
        arrays = {key: data[key] for key in data.files}
    meta = json.loads(str(arrays["meta"]))
    meta["roi"] = [0.5, 0.1, 0.4, 1.0]
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez_compressed(path, **arrays)
    with pytest.raises(VisionModelError, match="bad region of interest"):
        DeckModel.load(held.model.name, tmp_path)


def test_a_deck_enrolled_on_one_set_declines_the_others(feeder_corner, tmp_path: Path
                                                        ) -> None:
    """Other cameras, other decks: nothing from ece395 or cardai is read by the pp2021
    deck, and nothing from pp2021 or ece395 (all 156 photos) by a cardai deck (outline
    mode). The cardai deck knows its camera's frame size (every enrolment photo 960 x
    540): before it did, a deck of the whole set (draw 2024) read ece395's 9H_c as 9H, its
    card 114 pixels across, just within the card sizes the deck allows."""
    _, held = feeder_corner
    others = (read_labels(sample_folder(tmp_path / "ov", OV7670, SAMPLE))
              + read_labels(sample_folder(tmp_path / "hearts", HEARTS, ["7H", "9H"], 6)))
    result = measure(Recogniser(held.model), others)
    assert result.frames == 18 + 12 and result.declined == result.frames
    hearts = sample_folder(tmp_path / "hearts-enrol", HEARTS, ["AH", "7H", "9H", "KH"])
    # Cards with fewer than 2 enrolment photos whose card is whole in the frame are left out.
    model = holdout_bench(hearts, 5, seed=2024, name="hearts").model
    assert model is not None
    assert model.frame_size == (540, 960)
    strangers = (read_labels(sample_folder(tmp_path / "feeder", FEEDER, SAMPLE, 4))
                 + read_labels(real_set(OV7670)))
    result = measure(Recogniser(model), strangers)
    assert result.frames == 24 + 156 and result.declined == result.frames


OV7670_RIGHT = {2024: 44, 7: 44, 11: 40}
"""ece395, 2 photos per card enrolled, the third read: right of 52 (measured on the whole
set; every other read declined, none wrong). The look of a card does not carry over from
two lights to a third (0, 0 and 1 right by it alone); the number cards' pips do, and the
aces' one pip (vision.region_pips: the four aces of each draw, the ace of spades by its
large spade where the enrolment's lay), and the court cards' index letters with the pips
beside them (vision.index_letters: 6, 7 and 7 of the 12)."""


@pytest.mark.parametrize("seed", [2024, pytest.param(7, marks=pytest.mark.slow),
                                  pytest.param(11, marks=pytest.mark.slow)])
def test_ov7670_reads_number_cards_by_their_pips_in_a_light_it_never_saw(
        seed: int, tmp_path: Path) -> None:
    """The stress set (issue 16): 2 photos per card enrolled, each in another light, the
    third light's photo read. The classifier's top guess is right on about half of them, so
    the threshold calibrated on the enrolment photos declines nearly all; a number card is
    read by its pips (how many, where, and each one's look and colour, learnt from every
    pip of the enrolment). Precision holds (no wrong read); accuracy is far below the 95 %
    aimed at. Draw 11 once read 3C as 2C by its look, above the worst wrong held-out read:
    the threshold now keeps a margin over it. The deck is saved with its pip counter and
    loaded (model format 17)."""
    held = holdout_bench(real_set(OV7670), 2, seed=seed, roi=WHOLE_FRAME)
    assert held.result.frames == 52 and held.result.wrong == 0, held.result.mistakes
    assert held.model is not None and held.model.region_pips is not None
    assert held.result.right >= OV7670_RIGHT[seed] - 2  # (a margin for a library's change)
    held.model.save(tmp_path)
    loaded = DeckModel.load(held.model.name, tmp_path)
    recogniser, again = Recogniser(held.model), Recogniser(loaded)
    for photo, _ in read_labels(real_set(OV7670))[:12]:
        frame = read_image(photo)
        first, second = recogniser.recognise(frame), again.recognise(frame)
        assert (first.card, first.reason) == (second.card, second.reason)
    if seed == 2024:
        # Other cameras' photos are not this deck's, and not counted: declined (measured
        # on the whole sets, draws 2024 and 7: all 795 of pp2021 and all 836 of cardai).
        strangers = (read_labels(sample_folder(tmp_path / "feeder", FEEDER, SAMPLE, 4))
                     + read_labels(sample_folder(tmp_path / "hearts", HEARTS,
                                                 ["2H", "5H", "9H", "TH"], 6)))
        result = measure(recogniser, strangers)
        assert result.frames == 24 + 24 and result.declined == result.frames


def test_a_deck_that_lacks_cards_does_not_take_them_for_the_ones_it_knows() -> None:
    """ece395 enrolled by the card's outline (no region; draw 2024): detection finds a card
    in 36 of the 104 enrolment photos, and only AS, 6S, 9S and 8H twice. Such a deck read
    9H_c and TH_c as 8H, its only heart (precision 0 %, 2 of 2 accepted reads wrong). The
    cards it lacks are recorded on it, and a read of a card sharing a rank or a suit with
    one of them is declined: now none wrong (and, every known card sharing a suit with
    some missing one, none accepted). Since the paper is also looked for as colourless as
    the frame's white (ece395's sessions are tinted green and magenta), detection finds 19
    cards twice, not 4, and still 33 are missing: none wrong, none accepted."""
    held = holdout_bench(real_set(OV7670), 2, seed=2024)
    assert held.model is not None and held.result.frames == 52
    known = {card_of(int(label)).code for label in np.unique(held.model.labels)}
    assert held.model.corners is None
    assert {card.code for card in held.model.missing} == {
        card.code for card in deck()} - known
    assert len(held.model.missing) >= 20  # (what makes the test: a deck lacking many cards)
    assert held.result.wrong == 0, held.result.mistakes


def test_ov7670_sessions_are_counted_apart(tmp_path: Path) -> None:
    """Enrolled from two lighting sessions, tested on the third: the sessions a, b, c come
    from the file names. What it reads is declined, never wrong (measured: all declined)."""
    folder = sample_folder(tmp_path, OV7670, SAMPLE)
    held = holdout_bench(folder, 2, seed=2024, roi=WHOLE_FRAME)
    result = held.result
    assert result.frames == 6 and sum(s.frames for s in result.sessions.values()) == 6
    assert set(result.sessions) <= {"a", "b", "c"} and len(result.sessions) >= 2
    assert result.wrong == 0


@pytest.mark.slow
def test_a_pp2021_deck_declines_every_photo_of_the_other_sets(feeder_corner) -> None:
    """Another camera and deck: every fourth photo of cardai (209 of 836, overhead webcam on
    felt, both sessions; the whole set takes a minute) and all 156 of ece395 (a whole card
    in a slot) are declined by a deck enrolled on pp2021 (measured on the whole sets: all
    declined, the nearest at 1.65 x the deck's limit; a deck of all 52 cards, 5 photos
    each, let 1 or 2 cardai photos within its limit on draws 2024 and 7, and declined them
    as unsure: docs/vision.md)."""
    _, held = feeder_corner
    recogniser = Recogniser(held.model)
    hearts = sorted(read_labels(real_set(HEARTS)), key=lambda item: item[0].name)[::4]
    for photos, count in ((hearts, 209), (read_labels(real_set(OV7670)), 156)):
        result = measure(recogniser, photos)
        assert result.frames == count and result.declined == count


def test_bench_needs_a_deck_or_an_enrolment_draw(tmp_path: Path, capsys) -> None:
    assert main(["vision", "bench", str(tmp_path)]) == 1
    assert "give --deck NAME, or --enrol-per-card N" in capsys.readouterr().err
    assert main(["vision", "bench", "--enrol-per-card", "1", str(tmp_path)]) == 1
    assert "at least 2 photos per card" in capsys.readouterr().err
    assert main(["vision", "enroll", "--deck", "d", "--roi", "1,0,0.5,1", str(tmp_path)]) == 1
    assert "not inside the frame" in capsys.readouterr().err


def test_enrol_warns_and_says_what_to_do_when_held_out_reads_are_poor(tmp_path: Path,
                                                                      capsys) -> None:
    """ece395's six sample cards, each photographed once per light: held-out reads are
    poor (measured: 22 % of them wrong), and ``enroll`` says so and what to do."""
    folder = sample_folder(tmp_path / "ov", OV7670, SAMPLE)
    assert main(["vision", "enroll", "--deck", "ov", "--roi", "whole", "--models",
                 str(tmp_path / "models"), str(folder)]) == 0
    out = capsys.readouterr().out
    assert "held-out enrolment reads were wrong" in out
    for advice in ("more frames per card", "--roi", "light the card evenly", "bench"):
        assert advice in out
