"""Running the real ``shoe`` commands as separate processes, and never leaving one behind.

The end-to-end tests start ``shoe sim`` and ``shoe run`` exactly as an operator would (through
``sys.executable -m shoe_controller`` so the test's virtualenv is used), talk to them only
through their command line, files and exit codes, and kill them whatever happens:
:class:`ProcessKeeper` is a context manager (used by the ``procs`` fixture) that SIGKILLs every
process it started that is still running. Output goes to files, never to pipes nobody reads,
so a chatty process cannot block on a full pipe.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from shoe_controller.cards import format_shoe, new_shoe
from shoe_controller.errors import JournalNotReady
from shoe_controller.journal import Journal

PROFILE = "punto-banco-8d"
#: Seconds any single command may take before the test fails instead of hanging.
COMMAND_TIMEOUT = 60.0


def shoe_command(*args: str) -> list[str]:
    """The ``shoe`` CLI run by this interpreter (the project venv)."""
    return [sys.executable, "-m", "shoe_controller", *args]


def write_shoe_file(directory: Path, seed: int, decks: int = 8) -> Path:
    path = directory / f"shoe-{seed}.txt"
    path.write_text(format_shoe(new_shoe(decks, seed)), encoding="utf-8")
    return path


def run_shoe_cli(
    *args: str, timeout: float = COMMAND_TIMEOUT, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run one ``shoe`` command to completion (killed and failed after ``timeout``)."""
    return subprocess.run(
        shoe_command(*args), capture_output=True, text=True, timeout=timeout, cwd=cwd, check=False
    )


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def replay_lines(shoe_file: Path) -> list[str]:
    """``shoe replay FILE --profile punto-banco-8d --json``, line by line."""
    done = run_shoe_cli("replay", str(shoe_file), "--profile", PROFILE, "--json")
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@dataclass
class Started:
    """A process started by :class:`ProcessKeeper`, with the files holding its output."""

    popen: subprocess.Popen[bytes]
    stdout_path: Path
    stderr_path: Path

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def stdout(self) -> str:
        return self.stdout_path.read_text(encoding="utf-8", errors="replace")

    def wait(self, timeout: float) -> int:
        """The exit code; on timeout the process is killed and the test fails, with its log."""
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait(5)
            tail = self.stderr()[-3000:]
            raise AssertionError(
                f"pid {self.pid} still running after {timeout} s; stderr ends with:\n{tail}"
            ) from None

    def first_line(self, timeout: float) -> str:
        """The first complete stdout line, waiting for it (fails if the process dies first)."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.stdout_path.read_text(encoding="utf-8", errors="replace")
            if "\n" in text:
                return text.split("\n", 1)[0]
            if not self.alive():
                raise AssertionError(
                    f"exited with {self.popen.returncode} before printing a "
                    f"line; stderr:\n{self.stderr()[-3000:]}"
                )
            if time.monotonic() > deadline:
                raise AssertionError(f"no stdout line within {timeout} s")
            time.sleep(0.01)


class ProcessKeeper:
    """Starts processes with output in ``directory`` and kills every survivor on exit."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.started: list[Started] = []

    def start(self, argv: Sequence[str], name: str) -> Started:
        index = len(self.started)
        out = self.directory / f"{index:03d}-{name}.out"
        err = self.directory / f"{index:03d}-{name}.err"
        with open(out, "wb") as stdout, open(err, "wb") as stderr:
            popen = subprocess.Popen(
                list(argv), stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL
            )
        started = Started(popen, out, err)
        self.started.append(started)
        return started

    def close(self) -> None:
        for started in self.started:
            if started.popen.poll() is None:
                started.popen.kill()
        for started in self.started:
            try:
                started.popen.wait(10)
            except subprocess.TimeoutExpired:  # pragma: no cover - a zombie we cannot reap
                pass

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def announced_port(started: Started, timeout: float) -> int:
    """The port in the ``TCP 127.0.0.1:PORT`` line a server prints first (``shoe sim --tcp``,
    ``simulators.faulty_proxy``)."""
    line = started.first_line(timeout)
    kind, _, where = line.partition(" ")
    host, _, port = where.rpartition(":")
    assert kind == "TCP" and host == "127.0.0.1" and port.isdigit(), f"announced {line!r}"
    return int(port)


def start_sim(keeper: ProcessKeeper, *args: str, timeout: float = 20.0) -> tuple[Started, int]:
    """``shoe sim --tcp 127.0.0.1:0 ARGS``; returns the process and the port it announced."""
    sim = keeper.start(shoe_command("sim", "--tcp", "127.0.0.1:0", *args), "sim")
    return sim, announced_port(sim, timeout)


def start_proxy(
    keeper: ProcessKeeper, target_port: int, faults: str, *, timeout: float = 20.0
) -> tuple[Started, int]:
    """``python -m simulators.faulty_proxy`` from a free port to ``target_port`` with
    ``faults``; returns the process and the port clients connect to."""
    proxy = keeper.start(
        [sys.executable, "-m", "simulators.faulty_proxy", "--listen", "127.0.0.1:0",
         "--target", f"127.0.0.1:{target_port}", "--faults", faults],
        "proxy",
    )
    return proxy, announced_port(proxy, timeout)


def run_args(port: int, journal: Path, *extra: str) -> list[str]:
    """``shoe run`` against the simulator on ``port``: own betting timer at 0 s, one shoe."""
    return shoe_command(
        "run",
        "--device",
        f"socket://127.0.0.1:{port}",
        "--profile",
        PROFILE,
        "--journal",
        str(journal),
        "--betting-seconds",
        "0",
        "--shoes",
        "1",
        "--quiet",
        "--log-level",
        "warning",
        *extra,
    )


def journal_records(journal: Path, kind: str | None = None) -> int:
    """How many records (of ``kind``, or all) the journal holds (read-only: never touches the
    file)."""
    if not journal.exists():
        return 0
    try:
        store = Journal(journal, readonly=True)
    except JournalNotReady:
        return 0  # created this moment, its tables not yet (once a failure of a stress run)
    with store:
        return sum(1 for record in store.records() if kind is None or record.kind == kind)


def card_records(journal: Path) -> int:
    """How many card records the journal holds (read-only: never touches the file)."""
    return journal_records(journal, "card")


def last_rounds(journal: Path, n: int = 3) -> str:
    """``shoe journal recall --last n``: what a supervisor would look at when a table stalls."""
    done = run_shoe_cli("journal", "recall", str(journal), "--last", str(n))
    return done.stdout + done.stderr


def wait_while_dealing(
    run: Started, journal: Path, *, stall: float = 15.0, timeout: float = 120.0
) -> int:
    """Wait for ``run`` to exit; fail early if no card was journalled for ``stall`` seconds."""
    deadline = time.monotonic() + timeout
    cards = card_records(journal)
    progress_at = time.monotonic()
    while True:
        try:
            return run.popen.wait(0.5)
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        latest = card_records(journal)
        if latest != cards:
            cards, progress_at = latest, now
        if now - progress_at > stall or now > deadline:
            run.popen.kill()
            run.popen.wait(5)
            why = f"no card journalled for {stall} s" if now <= deadline else "timed out"
            raise AssertionError(
                f"shoe run stalled ({why}) after {cards} cards; last rounds:\n"
                f"{last_rounds(journal)}\nstderr ends with:\n{run.stderr()[-2000:]}"
            )


def journal_summary(journal: Path) -> dict[str, Any]:
    """What the journal holds, checked through the commands an auditor would use."""
    verify = run_shoe_cli("journal", "verify", str(journal))
    export = run_shoe_cli("journal", "export", str(journal), "--json")
    recall = run_shoe_cli("journal", "recall", str(journal), "--last", "1000", "--json")
    return {"verify": verify, "export": export, "recall": recall}
