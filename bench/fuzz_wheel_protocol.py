"""Coverage-guided fuzzing of the wheel protocol with atheris (libFuzzer), on demand.

    .venv/bin/pip install -e '.[fuzz]'
    .venv/bin/python bench/fuzz_wheel_protocol.py --runs 200000

Each input is a byte stream from a wheel (the first two bytes choose where to split it into
two reads and whether the host starts games). Properties: the parsers (wheel and command
sides) never raise, and give the same messages whatever the split; the game tracker fed with
those messages (times taken from the stream) never raises, numbers each game once, closes
betting before a game ends, and ends each game at most once. Anything else is a crash, saved
under ``--artifacts``; ``--runs N`` bounds the run. The hypothesis tests in tests/wheel check
the same properties on every test run; this harness is for longer, coverage-guided runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

try:
    import atheris
except ImportError:  # pragma: no cover - the optional extra
    sys.exit("atheris is not installed: .venv/bin/pip install -e '.[fuzz]'")

with atheris.instrument_imports():
    from wheel_protocol import (
        CommandParser,
        GameTracker,
        GameVoided,
        NoMoreBets,
        NumberAccepted,
        RoundOpened,
        TrackerConfig,
        WheelParser,
    )

SEEDS = [
    (b"*X;1;011;17;0;250;0\r\n*X;2;012;17;0;251;1\r\n*X;3;012;17;8;249;1\r\n"
     b"*X;4;012;17;1;248;1\r\n*X;5;012; 6;0;247;1\r\n 6\r\n*X;5;012; 6;0;247;1\r\n"),
    b"*X;3;012;17;2;249;1\r\n*X;3;012;17;0;249;1\r\n*X;6;001;36;4;000;0\r\n*F 0\r\n",
    b"*K CAM\r\n*P OK\r\n*o BUSY\r\n27\r\n\xff\x00*X;7;013;  ;F;180;0\n",
]


def check(data: bytes) -> None:
    if len(data) < 2:
        return
    cut, flags, stream = data[0], data[1], data[2:]
    cut %= len(stream) + 1
    whole = WheelParser().feed(stream)
    parser = WheelParser()
    assert parser.feed(stream[:cut]) + parser.feed(stream[cut:]) == whole
    CommandParser().feed(stream)
    tracker = GameTracker(TrackerConfig(host_starts=bool(flags & 1), status_timeout=0))
    opened, closed, ended = 0, set(), set()
    now = 0.0
    for index, message in enumerate(whole):
        now += (stream[index % len(stream)] % 8) / 4 if stream else 0.25
        outputs = tracker.receive(message, now) + tracker.poll(now)
        if tracker.config.host_starts and not tracker.in_progress and index % 5 == 0:
            outputs += tracker.open_betting(now)
        elif tracker.config.host_starts and tracker.phase.value == "betting" and index % 5 == 2:
            outputs += tracker.close_betting(now)
        for event in outputs:
            if isinstance(event, RoundOpened):
                opened += 1
                assert event.game == opened
            elif isinstance(event, NoMoreBets):
                assert event.game == opened and event.game not in closed
                closed.add(event.game)
            elif isinstance(event, (NumberAccepted, GameVoided)):
                assert event.game == opened and event.game in closed
                assert event.game not in ended
                ended.add(event.game)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100_000, help="inputs to try (default 1e5)")
    parser.add_argument("--max-len", type=int, default=4096, help="longest input, bytes")
    parser.add_argument("--seed", type=int, default=0, help="libFuzzer seed (0: random)")
    parser.add_argument("--artifacts", type=Path, default=None,
                        help="where a crashing input is saved (default: a temporary folder)")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    artifacts = args.artifacts or Path(tempfile.mkdtemp(prefix="fuzz-wheel-"))
    artifacts.mkdir(parents=True, exist_ok=True)
    corpus = Path(tempfile.mkdtemp(prefix="fuzz-wheel-corpus-"))
    for index, seed in enumerate(SEEDS):
        (corpus / f"seed-{index}").write_bytes(bytes([index * 7, index]) + seed)
    count = 0

    def one_input(data: bytes) -> None:
        nonlocal count
        count += 1
        try:
            check(data)
        except BaseException:
            print(f"FAILED on input {count} (saved under {artifacts}/): {data!r:.300}",
                  flush=True)
            raise
        if count >= args.runs:
            print(f"{count} inputs: no parser or tracker property broken", flush=True)
            shutil.rmtree(corpus, ignore_errors=True)
            if args.artifacts is None:
                shutil.rmtree(artifacts, ignore_errors=True)
            os._exit(0)  # libFuzzer would exit without running Python's atexit handlers

    atheris.Setup([sys.argv[0], f"-max_len={args.max_len}", f"-seed={args.seed}",
                   f"-artifact_prefix={artifacts}/", "-print_final_stats=0", str(corpus)],
                  one_input)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main())
