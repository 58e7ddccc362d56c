"""Every ``shoe`` command, given bad arguments, says what and why in one line: never a traceback.

The commands are found by walking the argparse tree from ``shoe_controller.cli.build_parser``
(nested ones too: ``journal verify``, ``vision enroll``); a command without cases here fails
:func:`test_every_command_has_bad_argument_cases`, so a new command cannot skip this. Each case
runs as a real subprocess, as an operator would type it: the exit status is not 0, stderr has
no ``Traceback (most recent call last)``, and its last line is the message,
``shoe COMMAND: error: ...``. The cases run in a few threads at once (a module fixture), so
the whole file takes seconds; each parametrized test then checks one case's result.

"One line" is the first line of the message; a message may go on with indented lines when
there is more than one thing wrong (``shoe run`` lists every problem of its configuration).
"""

from __future__ import annotations

import re
import socket
import sqlite3
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from shoe_controller.cli import build_parser, iter_parsers
from shoe_controller.journal import Journal

from .processes import shoe_command

PROFILE = "punto-banco-8d"
TIMEOUT = 20.0  # a case that hangs (a server that started after all) fails, never blocks
MESSAGE = re.compile(r"^shoe( [\w-]+)*: error: \S.*$")

@dataclass(frozen=True)
class Case:
    command: tuple[str, ...]
    args: tuple[str, ...]
    stdin: str = ""
    xfail: str | None = None

    @property
    def id(self) -> str:
        return " ".join((*self.command, *self.args)).replace("\n", " ")[:120]


@dataclass(frozen=True)
class Files:
    """Bad things to hand a command, made once for the module."""

    root: Path
    missing: Path  # does not exist
    in_missing_dir: Path  # its directory does not exist
    directory: Path  # a directory where a file is expected
    empty: Path  # 0 bytes
    garbage: Path  # binary noise
    corrupt_db: Path  # an SQLite header, then noise
    not_journal: Path  # a valid SQLite file without a journal's tables
    journal: Path  # a real (empty) journal
    key: Path  # a good 32-byte key
    short_key: Path  # too short a key
    too_many_aces: Path  # a shoe file with more aces than an 8-deck shoe holds
    busy: int  # a TCP port something listens on


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Files]:
    root = tmp_path_factory.mktemp("bad-args")
    (root / "a-directory").mkdir()
    (root / "empty").write_bytes(b"")
    (root / "garbage").write_bytes(bytes(range(256)) * 8)
    (root / "corrupt.sqlite").write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 16)
    with sqlite3.connect(root / "other.sqlite") as conn:
        conn.execute("CREATE TABLE t (x)")
    conn.close()
    with Journal(root / "journal.sqlite"):
        pass
    (root / "key").write_text("k" * 32)
    (root / "short-key").write_text("short")
    (root / "aces.txt").write_text("AS " * 40)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield Files(
            root=root, missing=root / "missing.sqlite",
            in_missing_dir=root / "no-such-dir" / "x.sqlite", directory=root / "a-directory",
            empty=root / "empty", garbage=root / "garbage", corrupt_db=root / "corrupt.sqlite",
            not_journal=root / "other.sqlite", journal=root / "journal.sqlite", key=root / "key",
            short_key=root / "short-key", too_many_aces=root / "aces.txt",
            busy=listener.getsockname()[1],
        )


def cases(f: Files) -> list[Case]:
    busy = f"127.0.0.1:{f.busy}"
    unreadable_files = [f.missing, f.in_missing_dir, f.directory, f.empty, f.garbage,
                        f.corrupt_db, f.not_journal]
    out: list[Case] = []

    def add(command: str, *args: object, stdin: str = "", xfail: str | None = None) -> None:
        out.append(Case(tuple(command.split()), tuple(str(a) for a in args), stdin, xfail))

    # -- demo
    for args in (["--misread-rate", "5"], ["--misread-rate", "-0.5"], ["--misread-rate", "x"],
                 ["--pace", "abc"], ["--pace", "-1"], ["--seed", "x"],
                 ["--profile", "no-such-profile"], ["--profile", f.garbage],
                 ["--journal", f.directory], ["--journal", f.garbage],
                 ["--journal", f.journal], ["--http", "garbage"], ["--http", busy],
                 ["--http", "0", "--http-cert", f.missing], ["--log-level", "loud"],
                 ["--supervisor-delay", "-2"]):
        add("demo", *args)
    # -- run: each stops before it would deal (no device is ever reached)
    device = ["--device", f"socket://{busy}", "--profile", PROFILE]
    add("run", "--config", f.missing)
    add("run", "--config", f.directory)
    add("run", "--config", f.garbage)
    add("run", "--config", f.empty)
    add("run", *device, "--journal", f.corrupt_db)
    add("run", *device, "--journal", f.not_journal)
    add("run", *device, "--journal", f.directory)
    add("run", "--device", "loop://", "--profile", "no-such-profile", "--journal", f.missing)
    add("run", *device, "--journal", f.missing, "--betting-seconds", "-1")
    add("run", *device, "--journal", f.missing, "--shoes", "zero")
    add("run", *device, "--journal", f.missing, "--http", "garbage")
    add("run", "--device", "garbage://x", "--profile", PROFILE, "--journal", f.root / "new1")
    add("run", "--device", f"socket://{busy}", "--profile", PROFILE, "--journal",
        f.in_missing_dir)
    add("run", *device, "--journal", f.root / "new2", "--table-token", "t")
    # -- sim
    for args in (["--tcp", busy], ["--tcp", "no-such-host.invalid:0"], ["--tcp", "garbage"],
                 ["--pty", "--cards", f.missing], ["--pty", "--cards", f.directory],
                 ["--pty", "--cards", f.empty], ["--pty", "--cards", f.garbage],
                 ["--pty", "--misread-rate", "2"], ["--pty", "--decks", "0"],
                 ["--pty", "--cut-card", "100000"], ["--pty", "--faults", "garbage"],
                 ["--pty", "--mistake", "garbage"], ["--pty", "--pace", "-1"]):
        add("sim", *args)
    # -- odds, replay
    for args in (["--profile", "no-such-profile"], ["--profile", f.directory],
                 ["--profile", PROFILE, "--seen", f.missing],
                 ["--profile", PROFILE, "--seen", f.directory],
                 ["--profile", PROFILE, "--seen", f.garbage],
                 ["--profile", PROFILE, "--seen", f.too_many_aces],
                 ["--profile", PROFILE, "--decks", "0"], ["--decks", "7"]):
        add("odds", *args)
    for args in ([f.missing], [f.directory], [f.garbage], [f.empty]):
        add("replay", *args, "--profile", PROFILE)
    add("replay", f.too_many_aces, "--profile", "no-such-profile")
    add("replay", f.too_many_aces, "--profile", PROFILE, "--cut-card", "-1")
    add("replay", f.too_many_aces, "--profile", PROFILE, "--cut-card", "many")
    # -- journal
    for action in ("verify", "export", "recall"):
        for path in unreadable_files:
            add(f"journal {action}", path)
        add(f"journal {action}", f.journal, "--key-file", f.missing)
        add(f"journal {action}", f.journal, "--key-file", f.empty)
    add("journal export", f.journal, "-o", f.in_missing_dir)
    add("journal export", f.journal, "-o", f.directory)
    add("journal recall", f.journal, "--last", "0")
    add("journal recall", f.journal, "--last", "ten")
    # -- vision
    models = ["--models", f.root / "models"]
    add("vision enroll", "--deck", "house", *models, f.missing)
    add("vision enroll", "--deck", "house", *models, f.empty)
    add("vision enroll", "--deck", "house", *models, f.directory)
    add("vision classify", "--deck", "no-such-deck", *models, f.garbage)
    add("vision classify", "--deck", "house", "--models", f.garbage, f.garbage)
    add("vision bench", "--deck", "no-such-deck", *models, f.directory)
    add("vision bench", "--deck", "house", *models, f.missing)
    # -- table-sim
    good = ["--token", "T", "--key-file", f.key]
    record = ["--record", f.root / "record.jsonl"]
    add("table-sim", "--listen", busy, *record, *good)
    add("table-sim", "--listen", "no-such-host.invalid:0", *record, *good)
    add("table-sim", "--listen", "127.0.0.1:99999", *record, *good)
    add("table-sim", "--listen", "127.0.0.1:0", "--record", f.in_missing_dir, *good)
    add("table-sim", "--listen", "127.0.0.1:0", "--record", f.directory, *good)
    for key in (f.missing, f.empty, f.short_key, f.directory):
        add("table-sim", "--listen", "127.0.0.1:0", *record, "--token", "T", "--key-file", key)
    add("table-sim", "--listen", "127.0.0.1:0", *record, *good, "--down-at", "garbage")
    add("table-sim", "--listen", "127.0.0.1:0", *record, *good, "--betting-seconds", "-1")
    # -- hash-pin (the PIN on standard input)
    add("hash-pin", stdin="12\n")
    add("hash-pin", stdin="abcdefgh\n")
    add("hash-pin", stdin="")
    add("hash-pin", "--pin", "123456")
    # -- pit: each stops before it would connect (no broker is ever reached)
    broker = ["--broker", "mqtt://127.0.0.1"]
    for args in (["--broker", "http://127.0.0.1", "--http", "0"],
                 ["--broker", "mqtt://user:pw@127.0.0.1", "--http", "0"],
                 [*broker, "--http", "garbage"], [*broker, "--http", busy],
                 [*broker, "--http", "0", "--prefix", "shoe/#"],
                 ["--broker", "mqtt://u@127.0.0.1", "--http", "0", "--password-file", f.missing],
                 ["--broker", "mqtts://127.0.0.1", "--http", "0", "--ca-file", f.garbage],
                 ["--http", "0"]):
        add("pit", *args)
    add("run", *device, "--journal", f.missing, "--mqtt", "mqtt://127.0.0.1/floor")
    # -- every command: an option it does not have is reported with its own usage
    for path, _ in leaves():
        add(" ".join(path), "--no-such-option")
    return out


def leaves() -> list[tuple[tuple[str, ...], object]]:
    """Every command that runs (the leaves of the argparse tree)."""
    found = []
    for path, parser in iter_parsers(build_parser()):
        if path and not any(a.__class__.__name__ == "_SubParsersAction"
                            for a in parser._actions):
            found.append((path, parser))
    return found


def run_case(case: Case, cwd: Path) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(shoe_command(*case.command, *case.args), input=case.stdin,
                              capture_output=True, text=True, timeout=TIMEOUT, cwd=cwd,
                              check=False)
    except subprocess.TimeoutExpired as exc:
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else ""
        return subprocess.CompletedProcess(exc.cmd, -999, "", f"TIMED OUT after {TIMEOUT} s\n"
                                           + (err or ""))


@pytest.fixture(scope="module")
def results(files: Files) -> dict[str, subprocess.CompletedProcess[str]]:
    every = cases(files)
    with ThreadPoolExecutor(max_workers=4) as pool:  # 2 cores; most cases wait on imports
        done = pool.map(lambda case: run_case(case, files.root), every)
        return {case.id: result for case, result in zip(every, done, strict=True)}


def _params() -> list[object]:
    # Ids only need the shapes of the cases, so they are made with placeholder paths.
    placeholder = Files(*(Path(f"<{name}>") for name in Files.__dataclass_fields__
                          if name != "busy"), busy=0)  # type: ignore[arg-type]
    return [pytest.param(i, id=case.id.replace(str(placeholder.root), ""),
                         marks=[pytest.mark.xfail(strict=True, reason=case.xfail)]
                         if case.xfail else [])
            for i, case in enumerate(cases(placeholder))]


def test_every_command_has_bad_argument_cases() -> None:
    placeholder = Files(*(Path(f"<{name}>") for name in Files.__dataclass_fields__
                          if name != "busy"), busy=0)  # type: ignore[arg-type]
    covered = {c.command for c in cases(placeholder) if c.args != ("--no-such-option",)}
    missing = {path for path, _ in leaves()} - covered - {("ports",)}  # ports takes no input
    assert not missing, f"commands without bad-argument cases: {sorted(missing)}"


@pytest.mark.timeout(300)
@pytest.mark.parametrize("index", _params())
def test_bad_arguments_get_one_line_and_no_traceback(
    index: int, files: Files, results: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    case = cases(files)[index]
    done = results[case.id]
    assert "Traceback (most recent call last)" not in done.stderr, done.stderr[-3000:]
    assert done.returncode not in (0, -999), (
        f"exit {done.returncode}\nstdout: {done.stdout[-1500:]}\nstderr: {done.stderr[-1500:]}")
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    starts = [i for i, line in enumerate(lines) if MESSAGE.match(line)]
    assert len(starts) == 1, f"not one message line; stderr:\n{done.stderr}"
    message, details = lines[starts[0]], lines[starts[0] + 1:]
    assert len(message) < 400, message
    assert all(line.startswith(" ") for line in details), f"after the message:\n{details}"
    if case.args == ("--no-such-option",):  # the command's own usage, not ``shoe [-h] ...``
        assert message.startswith(f"shoe {' '.join(case.command)}: error: ")
