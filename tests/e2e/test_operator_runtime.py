"""``shoe run`` as an operator sees it (issue 15): an absent shoe is a WARNING naming the device,
a broken journal or a bad option stops the start before the journal is touched, a signal
leaves a "table stopped" line, and fatal errors are JSON lines under ``--log-json``."""

from __future__ import annotations

import json
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from shoe_controller.errors import ConfigError
from shoe_controller.journal import Journal

from .processes import PROFILE, ProcessKeeper, journal_records, run_shoe_cli, shoe_command

pytestmark = pytest.mark.timeout(90)

NOWHERE = "socket://127.0.0.1:1"  # nothing listens on port 1: connection refused at once


def run_cmd(journal: Path, *extra: str, device: str = NOWHERE) -> list[str]:
    return ["run", "--device", device, "--profile", PROFILE, "--journal", str(journal),
            "--quiet", *extra]


def wait_for_text(started, text: str, timeout: float = 20.0) -> str:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        err = started.stderr()
        if text in err:
            return err
        assert started.alive(), err
        time.sleep(0.05)
    raise AssertionError(f"{text!r} not logged within {timeout} s:\n{started.stderr()}")


def one_line_error(done, *expected: str) -> str:  # type: ignore[no-untyped-def]
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    matching = [line for line in lines if all(part in line for part in expected)]
    assert matching, (expected, lines)
    return matching[0]


# -- 1 and 6: an absent shoe is said at the default level; a signal leaves a stopped line ----


@pytest.mark.parametrize("device", [NOWHERE, "/dev/ttyNOPE0"])
def test_an_absent_shoe_is_a_warning_naming_the_device_and_a_stopped_line(
        tmp_path: Path, procs: ProcessKeeper, device: str) -> None:
    journal = tmp_path / "j.db"
    run = procs.start(shoe_command(*run_cmd(journal, "--log-json", device=device)), "run")
    wait_for_text(run, "table running")
    wait_for_text(run, "cannot connect to the shoe")
    time.sleep(2.5)  # a retry a second or so: they must not all be logged
    run.popen.send_signal(signal.SIGTERM)
    assert run.wait(20) == 0
    lines = [json.loads(line) for line in run.stderr().splitlines() if line.strip()]
    warnings = [line for line in lines if "connect to the shoe" in line["msg"]
                or "still not connected" in line["msg"]]
    assert warnings[0]["level"] == "warning"
    assert warnings[0]["device"] == device and warnings[0]["error"]
    assert len(warnings) == 1, warnings  # later failures with the same error: rate-limited
    stopped = [line for line in lines if line["msg"].startswith("table stopped")]
    assert len(stopped) == 1 and stopped[0]["level"] == "info"
    assert stopped[0]["reason"] == "SIGTERM"


def test_sigint_is_named_in_the_stopped_line(tmp_path: Path, procs: ProcessKeeper) -> None:
    run = procs.start(shoe_command(*run_cmd(tmp_path / "j.db")), "run")
    wait_for_text(run, "table running")
    run.popen.send_signal(signal.SIGINT)
    assert run.wait(20) == 0
    assert "table stopped (SIGINT)" in run.stderr()


# -- 2: a journal that fails verification is refused ------------------------------------------


def edited_journal(path: Path) -> None:
    with Journal(path) as journal:
        journal.append("session", {"profile": PROFILE, "game": "baccarat", "version": "x"})
        journal.append("link", {"up": True, "reason": ""})
    conn = sqlite3.connect(path)
    conn.execute("UPDATE records SET data = '{\"up\": false, \"reason\": \"\"}' WHERE seq = 2")
    conn.commit()
    conn.close()


def test_run_refuses_an_edited_journal_and_appends_nothing(tmp_path: Path) -> None:
    journal = tmp_path / "j.db"
    edited_journal(journal)
    assert run_shoe_cli("journal", "verify", str(journal)).returncode != 0
    done = run_shoe_cli(*run_cmd(journal))
    line = one_line_error(done, str(journal), "failed verification", "not started")
    assert line.startswith("shoe run: error:")
    assert journal_records(journal) == 2  # no session record added


# -- 5: nothing is touched by a start that fails --------------------------------------------


def test_a_missing_journal_directory_is_an_error_not_created(tmp_path: Path) -> None:
    journal = tmp_path / "typo" / "j.db"
    done = run_shoe_cli(*run_cmd(journal))
    one_line_error(done, f"directory {tmp_path / 'typo'} does not exist")
    assert not (tmp_path / "typo").exists()


@pytest.mark.parametrize(("device", "expected"), [
    ("socket://127.0.0.1", "expected socket://HOST:PORT"),
    ("foo://x", "protocol 'foo' not known"),
])
def test_a_bad_device_url_creates_no_journal(tmp_path: Path, device: str,
                                             expected: str) -> None:
    journal = tmp_path / "j.db"
    done = run_shoe_cli(*run_cmd(journal, device=device))
    one_line_error(done, expected)
    assert not journal.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("extra", "expected"), [
    (("--camera", "0"), "--camera needs --deck"),
    (("--deck", "house"), "--deck: only used with --camera"),
    (("--camera", "nosuchfile.mp4", "--deck", "nosuchdeck"), "nosuchdeck"),
    (("--http", "127.0.0.1:{busy}"), "cannot listen on 127.0.0.1:{busy}"),
], ids=["camera-without-deck", "deck-without-camera", "unknown-deck", "http-port-in-use"])
def test_failed_starts_leave_the_journal_untouched(tmp_path: Path, extra: tuple[str, ...],
                                                   expected: str) -> None:
    import socket

    journal = tmp_path / "j.db"
    with Journal(journal) as store:  # an existing table
        store.append("session", {"profile": PROFILE, "game": "baccarat", "version": "x"})
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = str(busy.getsockname()[1])
        args = [part.replace("{busy}", port) for part in extra]
        done = run_shoe_cli(*run_cmd(journal, *args))
        one_line_error(done, expected.replace("{busy}", port))
    assert journal_records(journal) == 1


def _camera_deck(models: Path) -> None:
    """A small deck ``house`` saved in ``models``, enrolled (by hand) from a camera of 960 x
    540 frames."""
    import numpy as np

    from vision.model import DeckModel

    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(4, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    DeckModel("house", "top-left", vectors, np.array([0, 0, 1, 1]), 1.0, 0.2, {},
              frame_size=(540, 960)).save(models)


def _still(path: Path, width: int, height: int) -> str:
    import cv2
    import numpy as np

    assert cv2.imwrite(str(path), np.full((height, width, 3), (40, 90, 30), np.uint8))
    return str(path)


def test_a_camera_of_another_resolution_than_the_deck_s_stops_the_start(tmp_path: Path
                                                                         ) -> None:
    """The camera's first frame is checked before the table starts: at another resolution
    than the deck was enrolled from, every card would be declined at the table."""
    models = tmp_path / "models"
    _camera_deck(models)
    journal = tmp_path / "j.db"
    camera = _still(tmp_path / "small.png", 320, 240)
    done = run_shoe_cli(*run_cmd(journal, "--camera", camera, "--deck", "house",
                                 "--models", str(models)))
    one_line_error(done, f"--camera {camera}: a frame of 320 x 240 pixels, where this deck's "
                         f"camera gave 960 x 540 at enrolment")
    assert not journal.exists()


def test_a_camera_of_the_deck_s_resolution_passes_the_start_checks(tmp_path: Path) -> None:
    from shoe_controller.table.runtime import check_services

    models = tmp_path / "models"
    _camera_deck(models)
    for width, height in ((960, 540), (540, 960)):  # (either way round: a camera turned)
        camera = _still(tmp_path / f"frame{width}.png", width, height)
        with check_services(camera=camera, deck="house", models=str(models)) as checked:
            assert checked.camera is not None and checked.camera.spec == camera


def test_a_table_with_a_camera_runs_and_stops(tmp_path: Path, procs: ProcessKeeper) -> None:
    """``shoe run --camera`` with a camera of the deck's resolution starts the table (the
    camera the start check opened handed to the fallback) and stops on a signal."""
    models = tmp_path / "models"
    _camera_deck(models)
    camera = _still(tmp_path / "frame.png", 960, 540)
    run = procs.start(shoe_command(*run_cmd(tmp_path / "j.db", "--camera", camera, "--deck",
                                            "house", "--models", str(models))), "run")
    wait_for_text(run, "table running")
    run.popen.send_signal(signal.SIGTERM)
    assert run.wait(20) == 0
    assert "table stopped (SIGTERM)" in run.stderr() and "Traceback" not in run.stderr()


def test_the_camera_checked_at_start_is_the_one_the_table_reads(tmp_path: Path, mocker
                                                                ) -> None:
    """The camera is opened once: the start check's first frame is taken from the source the
    table then reads, not closed and opened again, and the deck is loaded once. A start
    that stops at the check closes it."""
    import vision.capture
    from shoe_controller.table.runtime import check_services, services
    from vision.model import DeckModel

    models = tmp_path / "models"
    _camera_deck(models)
    opened = mocker.spy(vision.capture, "open_source")
    loaded = mocker.spy(DeckModel, "load")
    closed = mocker.spy(vision.capture.ImageFileSource, "close")
    camera = _still(tmp_path / "frame.png", 960, 540)
    with check_services(camera=camera, deck="house", models=str(models)) as checked:
        assert checked.camera is not None
        with services(mocker.Mock(listeners=[]), camera=checked.camera) as started:
            assert started.checks[-1].camera is checked.camera.source
            assert closed.call_count == 0
        assert closed.call_count == 1
    assert opened.call_count == 1 and loaded.call_count == 1
    other = _still(tmp_path / "small.png", 320, 240)
    with pytest.raises(ConfigError, match="a frame of 320 x 240 pixels"):
        check_services(camera=other, deck="house", models=str(models))
    assert opened.call_count == 2 and closed.call_count == 3  # (1 and 2: services, the with)


def test_a_table_that_reads_cards_reads_them_on_one_core(tmp_path: Path, mocker,
                                                         monkeypatch) -> None:
    """With a camera, the process keeps OpenCV and every BLAS to one thread each, numpy's
    and the one scipy.optimize brings when the pips' reader first needs it: BLAS's second
    thread spun waiting, twice the CPU of a read for the same cards (vision/cores.py)."""
    import cv2
    from threadpoolctl import threadpool_info, threadpool_limits

    from shoe_controller.table.runtime import check_services, services

    models = tmp_path / "models"
    _camera_deck(models)
    camera = _still(tmp_path / "frame.png", 960, 540)
    threads = cv2.getNumThreads()
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)  # (restored after the test)
    try:
        with threadpool_limits(2, user_api="blas"):  # (as numpy starts; restored after)
            cv2.setNumThreads(2)
            with check_services(camera=camera, deck="house", models=str(models)) as checked, \
                    services(mocker.Mock(listeners=[]), camera=checked.camera):
                assert cv2.getNumThreads() == 1
                import scipy.optimize  # noqa: F401 - (loads a BLAS of its own, if not yet)

                blas = [pool["num_threads"] for pool in threadpool_info()
                        if pool["user_api"] == "blas"]
                assert blas and set(blas) == {1}
    finally:
        cv2.setNumThreads(threads)


# -- 6: options that would be ignored; fatal errors as JSON ----------------------------------


@pytest.mark.parametrize("option", [("--table-token", "t7-3f9c2a61d0b4"),
                                    ("--table-key-file", "k.key")])
def test_table_system_options_without_a_table_url_are_an_error(
        tmp_path: Path, option: tuple[str, str]) -> None:
    done = run_shoe_cli(*run_cmd(tmp_path / "j.db", *option))
    key = option[0].removeprefix("--").replace("-", "_")
    one_line_error(done, f"{key}: only used with table_url")
    assert not (tmp_path / "j.db").exists()


def test_a_fatal_error_is_a_json_line_with_log_json(tmp_path: Path) -> None:
    done = run_shoe_cli(*run_cmd(tmp_path / "typo" / "j.db", "--log-json"))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    lines = [json.loads(line) for line in done.stderr.splitlines() if line.strip()]
    (fatal,) = [line for line in lines if line["level"] == "error"]
    assert fatal["msg"].startswith("shoe run: error:") and "does not exist" in fatal["msg"]


def test_a_config_error_is_a_json_line_with_log_json(tmp_path: Path) -> None:
    done = run_shoe_cli(*run_cmd(tmp_path / "j.db", "--log-json", "--betting-seconds", "-1"))
    assert done.returncode == 1
    (line,) = [json.loads(text) for text in done.stderr.splitlines() if text.strip()]
    assert line["level"] == "error" and "betting_seconds" in line["msg"]


# -- 8: a keyed journal from shoe run ------------------------------------------------------


def test_run_creates_a_keyed_journal_that_verifies_with_its_key(
        tmp_path: Path, procs: ProcessKeeper) -> None:
    journal = tmp_path / "j.db"
    key = tmp_path / "journal.key"
    key.write_text("0123456789abcdef0123456789abcdef\n")
    run = procs.start(shoe_command(*run_cmd(journal, "--journal-key-file", str(key))), "run")
    wait_for_text(run, "table running")
    run.popen.send_signal(signal.SIGTERM)
    assert run.wait(20) == 0
    plain = run_shoe_cli("journal", "verify", str(journal))
    assert plain.returncode != 0 and "keyed" in plain.stderr
    keyed = run_shoe_cli("journal", "verify", str(journal), "--key-file", str(key))
    assert keyed.returncode == 0, keyed.stdout + keyed.stderr
    # The same journal without its key is refused at start, with what to do.
    done = run_shoe_cli(*run_cmd(journal))
    one_line_error(done, "keyed")
    short = tmp_path / "short.key"
    short.write_text("abc")
    done = run_shoe_cli(*run_cmd(tmp_path / "other.db", "--journal-key-file", str(short)))
    one_line_error(done, "at least 16 bytes")
    assert not (tmp_path / "other.db").exists()


def test_the_dealer_sees_connecting_then_not_connected(tmp_path: Path,
                                                       procs: ProcessKeeper) -> None:
    args = [part for part in run_cmd(tmp_path / "j.db", device="/dev/ttyNOPE0")
            if part != "--quiet"]
    run = procs.start(shoe_command(*args), "run")
    deadline = time.monotonic() + 30
    while "Shoe not connected" not in run.stdout():
        assert run.alive() and time.monotonic() < deadline, run.stdout() + run.stderr()
        time.sleep(0.1)
    run.popen.send_signal(signal.SIGTERM)
    assert run.wait(20) == 0
    prompts = [line for line in run.stdout().splitlines() if line.startswith("> ")]
    assert prompts[0].startswith("> Connecting to the shoe...")
    assert prompts[1].startswith("> Shoe not connected: check its cable")
    assert "/dev/ttyNOPE0" in prompts[1]
    assert not any("Load a shuffled shoe" in line for line in prompts)
