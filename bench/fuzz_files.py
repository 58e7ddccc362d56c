"""Coverage-guided fuzzing (atheris, i.e. libFuzzer) of the file decoders outside input reaches.

Run on demand, not in CI (CI runs the hypothesis tests in tests/fuzz/test_file_decoders_fuzz.py
with fixed budgets). Needs the ``fuzz`` extra: ``.venv/bin/pip install -e '.[fuzz]'``.

    .venv/bin/python bench/fuzz_files.py --target config --runs 50000
    .venv/bin/python bench/fuzz_files.py --target profile --runs 20000 --save artifacts/fuzz
    .venv/bin/python bench/fuzz_files.py --target shoefile --runs 200000 --seconds 600

Every input is written to a file and read the way ``shoe run``, ``shoe odds`` and the simulator
read theirs: ``load_run_config`` (config), ``load_profile`` (profile), ``read_shoe_file``
(shoefile). The decoder's own errors are expected (``ConfigError``; ``ShoeFileError`` /
``CardCodeError``). Anything else is a bug, and so is a loaded value that fails when used (the
link settings built from a config, a profile's odds and replay, a shoe that does not round-trip):
each distinct one (exception type and the line that raised it) is printed with its input when
first seen and counted; the run goes on, so one run reports them all. ``--save DIR`` also writes
each first input to ``DIR/<target>-<n>.bin`` for a regression test.

The seeds are the docs' config example, the packaged profiles and a formatted shoe, with a
dictionary of the real keys and card codes, so libFuzzer starts from valid files and mutates
its way past the TOML parser. Exit status: 0 if nothing but the decoder's own errors was seen.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGETS = ("config", "profile", "shoefile")

try:
    import atheris
except ModuleNotFoundError:  # pragma: no cover - depends on the extra
    atheris = None

M: Any = SimpleNamespace()  # the decoders, imported by load()


def load(instrument: bool) -> None:
    """Import the decoders, instrumented for coverage when fuzzing.

    The standard library is not instrumented: atheris 2.3 on Python 3.11 miscompiles tomllib
    (an input tomllib refuses with TOMLDecodeError raised a TypeError "'str' object does not
    support the context manager protocol" once instrumented). For the same reason every
    finding is re-run without instrumentation (``--replay``) before it counts.
    """
    context: Any = contextlib.nullcontext()
    if instrument:
        context = atheris.instrument_imports(include=["shoe_controller", "firmware_protocol"])
    with context:
        from shoe_controller.cards import format_shoe, new_shoe, parse_shoe, read_shoe_file
        from shoe_controller.config import KNOWN_KEYS, load_run_config
        from shoe_controller.errors import CardCodeError, ConfigError, ShoeError, ShoeFileError
        from shoe_controller.games.baccarat.odds import exact_odds, full_shoe
        from shoe_controller.games.baccarat.profile import FACTS, PACKAGED_DIR, load_profile
        from shoe_controller.games.baccarat.replay import replay_shoe
        from shoe_controller.table.runtime import link_config
    M.__dict__.update(
        format_shoe=format_shoe,
        new_shoe=new_shoe,
        parse_shoe=parse_shoe,
        read_shoe_file=read_shoe_file,
        KNOWN_KEYS=KNOWN_KEYS,
        load_run_config=load_run_config,
        CardCodeError=CardCodeError,
        ConfigError=ConfigError,
        ShoeError=ShoeError,
        ShoeFileError=ShoeFileError,
        exact_odds=exact_odds,
        full_shoe=full_shoe,
        FACTS=FACTS,
        PACKAGED_DIR=PACKAGED_DIR,
        load_profile=load_profile,
        replay_shoe=replay_shoe,
        link_config=link_config,
    )


# -- what each target does with one file; the decoder's own errors are returned, not raised ----


def run_config(path: Path) -> None:
    try:
        config = M.load_run_config(path, {})
    except M.ConfigError:
        return
    M.link_config(config)  # what `shoe run` builds from it must not fail at start
    for value in (config.journal, config.table_key_file, config.table_ca_file):
        assert value is None or "\x00" not in str(value), value


def run_profile(path: Path) -> None:
    try:
        profile = M.load_profile(path)
    except M.ConfigError:
        return
    for bet in M.exact_odds(M.full_shoe(profile.decks), profile).bets.values():
        float(bet.house_edge)  # what `shoe odds` prints
    try:
        list(M.replay_shoe(M.new_shoe(profile.decks, seed=7), profile))
    except M.ShoeError:
        pass


def run_shoefile(path: Path) -> None:
    try:
        cards = M.read_shoe_file(path)
    except (M.ShoeFileError, M.CardCodeError):
        return
    assert M.parse_shoe(M.format_shoe(cards)) == cards
    text = path.read_bytes().decode("utf-8-sig")
    assert text.isascii() or all(
        token.isascii() for line in text.split("\n") for token in line.split("#", 1)[0].split()
    ), "a non-ASCII token was read as a card"


# -- seeds and dictionary --------------------------------------------------------------------


def seeds(target: str) -> list[bytes]:
    if target == "config":
        doc = (ROOT / "docs/config.md").read_text(encoding="utf-8")
        example = doc.split("```toml\n", 1)[1].split("```", 1)[0]
        return [example.encode(), b'device = "loop://"\nprofile = "p"\njournal = "j.db"\n']
    if target == "profile":
        return [path.read_bytes() for path in sorted(M.PACKAGED_DIR.glob("*.toml"))]
    return [M.format_shoe(M.new_shoe(1, seed=1)).encode(), b"# burn\nAS 10h kd\n9C # x\n"]


def dictionary(target: str) -> list[str]:
    if target == "config":
        words = [
            *M.KNOWN_KEYS,
            "[supervisors]",
            "pbkdf2_sha256$",
            "usb://",
            "socket://",
            "ws://",
            "~",
            "keep-dealing",
            "normal",
            "full",
        ]
    elif target == "profile":
        words = [
            "decks",
            "cut_card",
            "last_round",
            "rounding",
            "allow_player_edge",
            "[burn]",
            "procedure",
            "count",
            "[bets.x]",
            "wins_on",
            "pays",
            "commission",
            "pushes_on",
            "[[bets.x.exceptions]]",
            "when",
            "result",
            "push",
            "fixed",
            "turn-and-burn",
            *M.FACTS,
        ]
    else:
        words = ["AS", "10H", "td", "#", "\n"]
    words += ["=", '"', "[", "]", "{", "}", ",", "true", "1e999", "nan", "inf", "\\u0000"]
    return ['"' + "".join(_dict_byte(b) for b in w.encode()) + '"' for w in words]


def _dict_byte(byte: int) -> str:
    """libFuzzer's dictionary syntax: printable ASCII as is, the rest (and \\, ") as \\xNN."""
    return chr(byte) if 0x20 <= byte < 0x7F and chr(byte) not in '"\\' else f"\\x{byte:02x}"


# -- the driver --------------------------------------------------------------------------------


RUNNERS: dict[str, Callable[[Path], None]] = {
    "config": run_config,
    "profile": run_profile,
    "shoefile": run_shoefile,
}


def replay(target: str, files: list[Path]) -> int:
    """Run saved inputs without instrumentation; 1 if any raised a foreign exception."""
    load(instrument=False)
    status = 0
    for file in files:
        try:
            RUNNERS[target](file)
        except Exception:  # noqa: BLE001 - anything but the decoder's own error is a finding
            status = 1
            print(f"{file}: FOREIGN")
            traceback.print_exc(file=sys.stdout)
        else:
            print(f"{file}: ok (loaded, or refused with the decoder's own error)")
    return status


class Tally:
    """Inputs run and every distinct foreign exception, printed when first seen."""

    def __init__(
        self, target: str, runs: int, seconds: float | None, save: Path | None, work: Path
    ) -> None:
        self.target = target
        self.runs = runs
        self.deadline = None if seconds is None else time.monotonic() + seconds
        self.save = save
        self.work = work
        self.inputs = 0
        self.started = time.monotonic()
        self.found: dict[tuple[str, str], int] = {}
        self.confirmed: set[tuple[str, str]] = set()

    def foreign(self, data: bytes, exc: BaseException) -> None:
        frames = traceback.extract_tb(exc.__traceback__)
        ours = [f for f in frames if "shoe_controller" in f.filename or "tomllib" in f.filename]
        where = ours[-1] if ours else (frames[-1] if frames else None)
        place = f"{Path(where.filename).name}:{where.lineno}" if where else "?"
        key = (type(exc).__name__, place)
        self.found[key] = self.found.get(key, 0) + 1
        if self.found[key] > 1:
            return
        number = len(self.found)
        suffix = "toml" if self.target != "shoefile" else "txt"
        sample = self.work / f"finding-{number}.{suffix}"
        sample.write_bytes(data)
        check = subprocess.run(
            [sys.executable, __file__, "--target", self.target, "--replay", str(sample)],
            capture_output=True,
            text=True,
            check=False,
        )
        real = check.returncode != 0
        if real:
            self.confirmed.add(key)
        verdict = (
            "confirmed without instrumentation"
            if real
            else ("NOT reproduced without instrumentation: an atheris artefact, not counted")
        )
        print(f"FOREIGN #{number}: {type(exc).__name__}: {str(exc)[:300]} (at {place}); {verdict}")
        print(f"  input ({len(data)} bytes): {data[:300]!r}{'...' if len(data) > 300 else ''}")
        if self.save is not None:
            self.save.mkdir(parents=True, exist_ok=True)
            out = self.save / f"{self.target}-{number}.bin"
            out.write_bytes(data)
            print(
                f"  saved: {out} (re-run: bench/fuzz_files.py --target {self.target} "
                f"--replay {out})"
            )
        sys.stdout.flush()

    def done(self) -> bool:
        if self.inputs >= self.runs:
            return True
        return self.deadline is not None and time.monotonic() >= self.deadline

    def summary(self) -> str:
        elapsed = time.monotonic() - self.started
        lines = [
            f"{self.target}: {self.inputs} inputs run in {elapsed:.1f} s "
            f"({self.inputs / max(elapsed, 1e-9):.0f}/s); {len(self.confirmed)} distinct "
            f"foreign exception(s)"
            + (
                f" (+{len(self.found) - len(self.confirmed)} atheris artefact(s))"
                if len(self.found) > len(self.confirmed)
                else ""
            )
        ]
        lines += [
            f"  {count} x {name} at {place}"
            + ("" if (name, place) in self.confirmed else " (artefact)")
            for (name, place), count in self.found.items()
        ]
        return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", choices=TARGETS, required=True)
    parser.add_argument("--runs", type=int, default=10_000, help="inputs to run (default 10000)")
    parser.add_argument("--seconds", type=float, help="stop earlier after this long")
    parser.add_argument("--max-len", type=int, default=4096, help="longest input in bytes")
    parser.add_argument("--save", type=Path, help="write each new foreign input here")
    parser.add_argument("--seed", type=int, default=1, help="libFuzzer's random seed")
    parser.add_argument(
        "--replay",
        type=Path,
        nargs="+",
        metavar="FILE",
        help="run these inputs once, uninstrumented, and show what they raise",
    )
    args = parser.parse_args(argv)
    if args.replay:
        return replay(args.target, args.replay)
    if atheris is None:
        print("atheris is not installed: .venv/bin/pip install -e '.[fuzz]'", file=sys.stderr)
        return 2

    load(instrument=True)
    run = RUNNERS[args.target]
    work = Path(tempfile.mkdtemp(prefix=f"fuzz-{args.target}-"))
    corpus = work / "corpus"
    corpus.mkdir()
    for number, seed in enumerate(seeds(args.target)):
        (corpus / f"seed-{number}").write_bytes(seed)
    (work / "words.dict").write_text("\n".join(dictionary(args.target)) + "\n", encoding="utf-8")
    path = work / ("table.toml" if args.target != "shoefile" else "shoe.txt")
    tally = Tally(args.target, args.runs, args.seconds, args.save, work)

    def finish() -> None:
        print(tally.summary())
        sys.stdout.flush()
        shutil.rmtree(work, ignore_errors=True)
        os._exit(1 if tally.confirmed else 0)  # libFuzzer never returns to us

    def one_input(data: bytes) -> None:
        path.write_bytes(data)
        tally.inputs += 1
        try:
            run(path)
        except Exception as exc:  # noqa: BLE001 - anything the decoder let through is a finding
            tally.foreign(data, exc)
        if tally.done():
            finish()

    atheris.Setup(
        [
            sys.argv[0],
            f"-dict={work / 'words.dict'}",
            f"-max_len={args.max_len}",
            f"-seed={args.seed}",
            "-timeout=20",
            "-rss_limit_mb=4096",
            "-print_final_stats=0",
            str(corpus),
        ],
        one_input,
    )
    atheris.Fuzz()
    finish()  # only reached if libFuzzer stops on its own
    return 0


if __name__ == "__main__":
    sys.exit(main())
