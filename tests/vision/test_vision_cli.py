"""``shoe vision enroll|classify|bench`` on a folder of rendered, labelled frames."""

from __future__ import annotations

import copy
import json
import os
import struct
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from shoe_controller.cli import main
from simulators.camera import write_labelled_folder
from vision.bench import read_labels, read_sessions
from vision.capture import CaptureError, open_source, read_image
from vision.model import card_index, card_of

from .conftest import CARDS


def test_enroll_then_classify_and_bench(tmp_path: Path, designs, card_cache, capsys) -> None:
    cards = CARDS[:6]
    write_labelled_folder(tmp_path / "enrol", designs["anglo"], frames_per_card=5, seed=1,
                          cards=cards, cache=card_cache)
    write_labelled_folder(tmp_path / "test", designs["anglo"], frames_per_card=1, seed=2,
                          cards=cards, cache=card_cache)
    models = str(tmp_path / "models")
    assert main(["vision", "enroll", "--deck", "house", "--models", models,
                 str(tmp_path / "enrol")]) == 0
    assert (tmp_path / "models" / "house.npz").exists()
    out = capsys.readouterr().out
    assert "printed" in out  # one way up or both: the operator is told
    assert "camera: every frame 640 x 480 pixels" in out  # and which frames it reads
    assert "of 4 number cards also read by their pips" in out  # AS 5S 6S 8S
    images = sorted((tmp_path / "test").glob("*.png"))
    assert main(["vision", "classify", "--deck", "house", "--models", models, "--json",
                 *map(str, images)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["file"] for line in lines] == [str(image) for image in images]
    for line, image in zip(lines, images):
        assert line["card"] in (None, image.name.split("-")[0])
        assert 0.0 <= line["confidence"] <= 1.0
    assert main(["vision", "bench", "--deck", "house", "--models", models, "--json",
                 str(tmp_path / "test")]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["frames"] == len(cards) and figures["wrong"] == 0


def test_bad_labels_are_named(tmp_path: Path, capsys) -> None:
    (tmp_path / "labels.csv").write_text("file,card\nx.png,ZZ\n")
    (tmp_path / "x.png").write_bytes(b"")
    assert main(["vision", "enroll", "--deck", "d", "--models", str(tmp_path / "m"),
                 str(tmp_path)]) == 1
    assert "labels.csv:2" in capsys.readouterr().err


def test_a_camera_that_cannot_be_opened_is_named_with_what_it_may_be(tmp_path: Path, capfd
                                                                   ) -> None:
    """--camera given as nothing, as a camera index that is not there, or as a file that is
    no video: a CaptureError saying so, and nothing from OpenCV on stderr."""
    with pytest.raises(CaptureError, match="no camera given"):
        open_source("  ")
    (tmp_path / "notes.txt").write_text("not a video")
    for spec in ("99", str(tmp_path / "notes.txt")):
        with pytest.raises(CaptureError, match="cannot open camera or video .* not there or "
                                               "is in use"):
            open_source(spec)
    assert capfd.readouterr().err == ""


def test_a_spreadsheets_labels_are_read(tmp_path: Path) -> None:
    """labels.csv as a spreadsheet saves it: a byte-order mark, capitalised names with
    spaces, CRLF line ends, a blank line, and a session column."""
    for name in ("a.png", "b.png"):
        (tmp_path / name).write_bytes(b"x")
    (tmp_path / "labels.csv").write_bytes(
        "\ufeffFile, Card ,Session\r\na.png,AS,s1\r\n\r\nb.png, KH ,s2\r\n".encode())
    assert [(path.name, card.code) for path, card in read_labels(tmp_path)] == [
        ("a.png", "AS"), ("b.png", "KH")]
    assert read_sessions(tmp_path) == {"a.png": "s1", "b.png": "s2"}


@pytest.mark.parametrize(("content", "said"), [
    (b"file,card\na.png,AS\na.png,KH\n", "labels.csv:3: 'a.png' is listed already, on line 2"),
    (b"file,card\na.png\n", "labels.csv:2: no card given for 'a.png'"),
    (b"file,card\na.png,\xc9S\n", "labels.csv: not UTF-8 text"),
    (b"name,code\na.png,AS\n", "the header must name the columns file,card"),
    (b"", "the header must name the columns file,card"),
    (b"file,card\n\n", "labels.csv: no frames listed"),
])
def test_bad_labels_say_what_is_wrong(tmp_path: Path, content: bytes, said: str, capsys
                                      ) -> None:
    (tmp_path / "a.png").write_bytes(b"x")
    (tmp_path / "labels.csv").write_bytes(content)
    assert main(["vision", "enroll", "--deck", "d", "--models", str(tmp_path / "m"),
                 str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert said in captured.err and "Traceback" not in captured.err
    assert not (tmp_path / "m").exists()


def test_a_bench_with_nothing_left_to_read_says_so(tmp_path: Path, capsys) -> None:
    (tmp_path / "labels.csv").write_text("file,card\na.png,AS\nb.png,AS\nc.png,KH\n")
    for name in ("a.png", "b.png", "c.png"):
        (tmp_path / name).write_bytes(b"x")
    assert main(["vision", "bench", "--enrol-per-card", "2", str(tmp_path)]) == 1
    assert "none is left to read" in capsys.readouterr().err


def test_unknown_deck_is_a_clear_error(tmp_path: Path, capsys) -> None:
    assert main(["vision", "classify", "--deck", "nope", "--models", str(tmp_path),
                 str(tmp_path / "x.png")]) == 1
    assert "not enrolled" in capsys.readouterr().err


def test_files_that_are_no_frame_are_each_named_once_with_what_is_wrong(
        tmp_path: Path, enrolled, capfd) -> None:
    """A batch of images with bad ones among them: each bad one gets one line saying what
    is wrong with it (its name once, no OpenCV warning, no traceback), the good ones are
    still read, and the exit status says that some could not be."""
    model = copy.copy(enrolled("anglo"))
    model.name = "house"
    model.save(tmp_path / "models")
    good = tmp_path / "good.png"
    assert cv2.imwrite(str(good), np.full((480, 640, 3), 40, np.uint8))
    (tmp_path / "empty.png").write_bytes(b"")
    (tmp_path / "notes.png").write_text("not an image")
    (tmp_path / "cut.png").write_bytes(good.read_bytes()[:200])  # cut short in the copy
    (tmp_path / "folder.png").mkdir()
    names = ["missing.png", "empty.png", "notes.png", "cut.png", "folder.png", "good.png"]
    assert main(["vision", "classify", "--deck", "house", "--models", str(tmp_path / "models"),
                 *(str(tmp_path / name) for name in names)]) == 1
    captured = capfd.readouterr()  # (the file descriptors: OpenCV writes to them itself)
    lines = captured.out.splitlines()
    assert len(lines) == len(names)
    expected = ["no such file", "an empty file", "not an image OpenCV can decode",
                "not an image OpenCV can decode", "a folder, not an image file", "unknown"]
    for line, name, what in zip(lines, names, expected, strict=True):
        assert line.startswith(f"{tmp_path / name}: ") and what in line, line
        assert line.count(name) == 1, line
    assert captured.err == ""
    with pytest.raises(CaptureError, match="no such file"):
        read_image(tmp_path / "missing.png")
    os.mkfifo(tmp_path / "pipe.png")  # no writer: reading it would wait for ever
    with pytest.raises(CaptureError, match="not a regular file"):
        read_image(tmp_path / "pipe.png")


def _png_declaring(width: int, height: int, rows: int) -> bytes:
    """A grey PNG declaring ``width`` x ``height`` pixels whose data holds ``rows`` rows of
    zeros: all of them a decompression bomb of a few hundred kilobytes, none a truncated
    PNG's header alone."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body)))
    packer = zlib.compressobj(9)
    row = bytes(1 + width)  # (the filter byte, then the row)
    data = b"".join(packer.compress(row) for _ in range(rows)) + packer.flush()
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data)
            + chunk(b"IEND", b""))


def test_an_image_declaring_more_pixels_than_a_camera_gives_is_refused_undecoded(
        tmp_path: Path, enrolled, mocker, capsys) -> None:
    """A file whose header declares a huge image (a decompression bomb: 12,000 x 12,000
    pixels in 140 kB decode to 432 MB, 30,000 x 30,000 to 2.7 GB) is refused from its header,
    with what it declares; so is a file too large to read, and classify goes on to the next."""
    bomb = tmp_path / "bomb.png"
    bomb.write_bytes(_png_declaring(12_000, 12_000, 12_000))
    assert bomb.stat().st_size < 200_000
    decode = mocker.spy(cv2, "imdecode")
    with pytest.raises(CaptureError, match=r"12,000 x 12,000 pixels declared, more than "
                                           r"100,000,000 \(scale it down\)"):
        read_image(bomb)
    huge = tmp_path / "huge.png"  # (past Pillow's own limit, which it refuses to open)
    huge.write_bytes(_png_declaring(30_000, 30_000, 1))
    with pytest.raises(CaptureError, match="more than 100,000,000 pixels declared"):
        read_image(huge)
    assert decode.call_count == 0
    within = tmp_path / "within.png"
    within.write_bytes(_png_declaring(800, 600, 600))
    assert read_image(within).shape == (600, 800, 3)
    mocker.patch("vision.capture.MAX_IMAGE_BYTES", within.stat().st_size - 1)
    with pytest.raises(CaptureError, match=f"a file of {within.stat().st_size:,} bytes, more "
                                           f"than the {within.stat().st_size - 1:,}"):
        read_image(within)
    mocker.stopall()
    model = copy.copy(enrolled("anglo"))
    model.name = "house"
    model.save(tmp_path / "models")
    assert main(["vision", "classify", "--deck", "house", "--models", str(tmp_path / "models"),
                 str(bomb), str(within)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{bomb}: ") and "12,000 x 12,000 pixels declared" in lines[0]
    assert lines[1].startswith(f"{within}: ")


def test_enrolling_a_deck_hard_for_the_camera_warns(tmp_path: Path, enrolled, mocker, capsys
                                                    ) -> None:
    model = copy.copy(enrolled("anglo"))
    model.enrolment = {**model.enrolment, "held_out_accuracy": 0.97}
    known = sorted({card_of(int(label)) for label in model.labels}, key=card_index)
    frame = tmp_path / "frame.png"
    mocker.patch("vision.bench.read_labels", return_value=[(frame, card) for card in known])
    mocker.patch("vision.bench.enroll_items", return_value=(model, ["blurred.png"], []))
    assert main(["vision", "enroll", "--deck", "anglo", "--models", str(tmp_path),
                 str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "warning: 3.0% of the held-out enrolment reads were wrong" in out
    assert "skipped blurred.png: no card found" in out
    assert "not enrolled" not in out
    model.enrolment["held_out_accuracy"] = 1.0
    assert main(["vision", "enroll", "--deck", "anglo", "--models", str(tmp_path),
                 str(tmp_path)]) == 0
    assert "warning" not in capsys.readouterr().out


def test_enrolling_leaves_no_card_of_the_folder_unnamed(tmp_path: Path, enrolled, mocker,
                                                         capsys) -> None:
    """A card of the folder the deck learnt nothing of (no frame showed it whole) is named:
    the deck may take it for a card it knows."""
    model = enrolled("anglo")
    known = sorted({card_of(int(label)) for label in model.labels}, key=card_index)
    missing = [card for card in map(card_of, range(52)) if card not in known][:2]
    assert len(missing) == 2
    frame = tmp_path / "frame.png"
    mocker.patch("vision.bench.read_labels",
                 return_value=[(frame, card) for card in [*known, *missing, missing[0]]])
    mocker.patch("vision.bench.enroll_items", return_value=(model, [], []))
    assert main(["vision", "enroll", "--deck", "anglo", "--models", str(tmp_path),
                 str(tmp_path)]) == 0
    out = capsys.readouterr().out
    codes = ", ".join(card.code for card in sorted(missing, key=card_index))
    assert (f"warning: 2 of the folder's {len(known) + 2} cards were not enrolled ({codes})"
            in out), out


def test_enrolling_names_the_cards_whose_index_reads_need_more(tmp_path: Path, enrolled, mocker,
                                                               capsys) -> None:
    """The cards held-out enrolment reads took for others (their index threshold over most
    cards') are named, with what would help; a deck without such cards says only the
    usual threshold."""
    import numpy as np

    from vision.index_corner import CornerReader
    from vision.partial import CardShape

    model = copy.copy(enrolled("anglo"))
    known = sorted({card_of(int(label)) for label in model.labels}, key=card_index)
    labels = np.array([card_index(card) for card in known for _ in range(2)])
    vectors = np.eye(len(labels), dtype=np.float32)
    hard = known[:2]
    model.corners = CornerReader(vectors, labels, None, (0.0, 0.0, 0.2, 0.3),
                                 CardShape(1.0, 1.4), 0.9, 0.62, card_thresholds={
                                     card_index(card): 0.3 for card in known[2:]})
    frame = tmp_path / "frame.png"
    mocker.patch("vision.bench.read_labels", return_value=[(frame, card) for card in known])
    mocker.patch("vision.bench.enroll_items", return_value=(model, [], []))
    assert main(["vision", "enroll", "--deck", "anglo", "--models", str(tmp_path),
                 str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert (f"index corners: {len(known)} cards, most read at a confidence of 0.30; "
            f"{hard[0].code}, {hard[1].code} need up to 0.62 (held-out enrolment reads took "
            f"them for other cards" in out), out
    model.corners = CornerReader(vectors, labels, None, (0.0, 0.0, 0.2, 0.3),
                                 CardShape(1.0, 1.4), 0.9, 0.3)
    assert main(["vision", "enroll", "--deck", "anglo", "--models", str(tmp_path),
                 str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"index corners: {len(known)} cards, most read at a confidence of 0.30\n" in out


def test_a_card_only_one_frame_shows_is_left_out_not_the_enrolment_refused(
        tmp_path: Path, designs, card_cache, capsys) -> None:
    """A card whose frames but one show no card (the operator's photos missed it) is left
    out and named, as a card none of whose frames shows it is; the other cards are enrolled
    and read."""
    import cv2
    import numpy as np

    cards = CARDS[:6]
    write_labelled_folder(tmp_path / "enrol", designs["anglo"], frames_per_card=4, seed=1,
                          cards=cards, cache=card_cache)
    lost = cards[-1]
    frames = sorted((tmp_path / "enrol").glob(f"{lost.code}*.png"))
    assert len(frames) == 4
    felt = np.zeros_like(cv2.imread(str(frames[0])))
    felt[:] = (40, 110, 30)  # green felt, no card
    for frame in frames[1:]:
        cv2.imwrite(str(frame), felt)
    models = str(tmp_path / "models")
    assert main(["vision", "enroll", "--deck", "house", "--models", models,
                 str(tmp_path / "enrol")]) == 0
    out = capsys.readouterr().out
    assert f"cards were not enrolled ({lost.code}): fewer than 2 of their frames" in out, out
    assert out.count("skipped ") == 3
    assert (tmp_path / "models" / "house.npz").exists()
