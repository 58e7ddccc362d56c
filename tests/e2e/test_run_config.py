"""``shoe run`` refuses a bad configuration as a process would show it to an operator.

Exit code 1, a short error on stderr naming the file (or ``command line``) and the key, no
traceback, nothing on stdout, and nothing created or changed on disk.
"""

from __future__ import annotations

import contextlib
import hashlib
import signal
import time
from pathlib import Path

import pytest

from shoe_controller.errors import ShoeError
from shoe_controller.journal import Journal

from .processes import PROFILE, ProcessKeeper, run_shoe_cli, shoe_command

pytestmark = pytest.mark.timeout(60)

#: A port nothing listens on: ``shoe run`` keeps retrying it, which is all these tests need.
NOWHERE = "socket://127.0.0.1:9"


def assert_refused(done_stderr: str, done_stdout: str, code: int, *expected: str) -> list[str]:
    """Exit 1, no traceback, and one stderr line holding all of ``expected``."""
    assert code == 1, done_stderr
    assert "Traceback" not in done_stderr, done_stderr
    assert done_stdout == ""
    lines = [line for line in done_stderr.splitlines() if line.strip()]
    assert any(all(part in line for part in expected) for line in lines), (expected, lines)
    return lines


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        ("betting_seconds = -3\n", ("betting_seconds", "must be >= 0")),
        ("betting_secs = 3\n", ("betting_secs", "unknown key", "betting_seconds")),
        ('durability = "fast"\n', ("durability", "full, normal")),
        ('shoes = "two"\n', ("shoes", "whole number")),
        ('device = "usb://xyz"\n', ("device", "usb://VID:PID")),
    ],
    ids=["bad-value", "unknown-key", "bad-choice", "bad-type", "bad-device-url"],
)
def test_bad_config_file_value_names_file_and_key(
    toml: str, expected: tuple[str, ...], tmp_path: Path
) -> None:
    config = tmp_path / "table.toml"
    config.write_text(toml, encoding="utf-8")
    journal = tmp_path / "journal.sqlite"
    args = ["run", "--config", str(config), "--profile", PROFILE, "--journal", str(journal)]
    if "device" not in toml:
        args += ["--device", NOWHERE]
    done = run_shoe_cli(*args)
    lines = assert_refused(
        done.stderr, done.stdout, done.returncode, f"{config}: {expected[0]}:", *expected[1:]
    )
    assert len(lines) <= 2, lines  # "1 problem(s) ..." and the problem itself
    assert not journal.exists(), "the journal was created although the config was refused"


def test_every_problem_is_listed_at_once(tmp_path: Path) -> None:
    config = tmp_path / "table.toml"
    config.write_text(
        'betting_seconds = -1\nbetting_secs = 2\ndurability = "x"\n', encoding="utf-8"
    )
    done = run_shoe_cli("run", "--config", str(config))
    lines = assert_refused(done.stderr, done.stdout, done.returncode, "betting_secs")
    for key in ("betting_seconds", "betting_secs", "durability", "device", "profile", "journal"):
        assert any(f": {key}:" in line for line in lines), (key, lines)


def test_missing_device_is_named(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite"
    done = run_shoe_cli("run", "--profile", PROFILE, "--journal", str(journal))
    lines = assert_refused(
        done.stderr, done.stdout, done.returncode, "command line: device: required", "--device"
    )
    assert len(lines) <= 2, lines
    assert not journal.exists()


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        ("missing-file", ("no such configuration file",)),
        ("bad-toml", ("not valid TOML", "line 1")),
    ],
)
def test_unreadable_config_file_is_named(
    setup: str, expected: tuple[str, ...], tmp_path: Path
) -> None:
    config = tmp_path / "table.toml"
    if setup == "bad-toml":
        config.write_text("device = \n", encoding="utf-8")
    done = run_shoe_cli("run", "--config", str(config))
    assert_refused(done.stderr, done.stdout, done.returncode, str(config), *expected)


def test_unknown_profile_is_named(tmp_path: Path) -> None:
    done = run_shoe_cli(
        "run",
        "--device",
        NOWHERE,
        "--profile",
        "no-such-game",
        "--journal",
        str(tmp_path / "j.sqlite"),
    )
    assert_refused(done.stderr, done.stdout, done.returncode, "no-such-game", "no such profile")


def test_a_file_that_is_not_a_journal_is_refused_untouched(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite"
    journal.write_bytes(b"the pit boss's notes\n")
    done = run_shoe_cli("run", "--device", NOWHERE, "--profile", PROFILE, "--journal", str(journal))
    assert_refused(done.stderr, done.stdout, done.returncode, str(journal), "not a journal")
    assert journal.read_bytes() == b"the pit boss's notes\n"


def test_journal_in_a_directory_that_cannot_exist_is_a_clear_error(tmp_path: Path) -> None:
    """A journal path below a regular file: an operator's typo, not a crash.

    Fails today: ``Journal._open_writable`` (shoe_controller/journal/store.py) calls
    ``self.path.parent.mkdir(...)`` outside its ``try``, so the ``OSError`` escapes as a traceback.
    """
    blocker = tmp_path / "journals"
    blocker.write_text("not a directory\n", encoding="utf-8")
    done = run_shoe_cli(
        "run", "--device", NOWHERE, "--profile", PROFILE, "--journal", str(blocker / "table.sqlite")
    )
    assert_refused(done.stderr, done.stdout, done.returncode, str(blocker))


def wait_for_session_record(journal: Path, timeout: float = 20.0, sessions: int = 1) -> int:
    """Wait until ``shoe run`` has journalled its session start (the ``sessions``-th);
    returns the record count."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if journal.exists():
            # The file may be half-created: look again.
            with contextlib.suppress(ShoeError), Journal(journal, readonly=True) as store:
                if sum(r.kind == "session" for r in store.records()) >= sessions:
                    return store.count()
        time.sleep(0.02)
    raise AssertionError(f"no session record in {journal} within {timeout} s")


def test_a_journal_keeps_the_profile_each_session_played(tmp_path: Path,
                                                        procs: ProcessKeeper) -> None:
    """The profile is journalled with each session (its text and hash), so another profile
    between shoes is taken as it is, and nothing old is re-read from a file."""
    journal = tmp_path / "journal.sqlite"
    for profile in (PROFILE, "baccarat-6d"):
        run = procs.start(
            shoe_command("run", "--device", NOWHERE, "--profile", profile, "--journal",
                         str(journal), "--quiet"),
            profile,
        )
        wait_for_session_record(journal, sessions=1 if profile == PROFILE else 2)
        run.popen.send_signal(signal.SIGTERM)
        assert run.wait(20) == 0, run.stderr()[-2000:]
    with Journal(journal, readonly=True) as store:
        sessions = [r.data for r in store.records() if r.kind == "session"]
    assert [s["profile"] for s in sessions] == [PROFILE, "baccarat-6d"]
    for session in sessions:
        assert f'name = "{session["profile"]}"' in session["profile_toml"]
        assert hashlib.sha256(session["profile_toml"].encode()).hexdigest() == \
            session["profile_sha256"]
    verify = run_shoe_cli("journal", "verify", str(journal))
    assert verify.returncode == 0, verify.stdout
