"""Coverage-guided fuzzing of the table-system decoder with atheris (libFuzzer), on demand.

    .venv/bin/pip install -e '.[fuzz]'
    .venv/bin/python bench/fuzz_table_protocol.py --runs 200000

Every input goes to ``protocol.decode`` as each sender (controller, table system), as bytes and
as text (lone surrogates included). The property is the decoder's contract: it returns a
well-formed, correctly signed message or raises ``ProtocolViolation``; anything else is a
crash, which libFuzzer saves under ``--artifacts`` (and this script exits non-zero). Inputs are
taken four ways (the first byte says which): raw bytes; text; a valid signed frame with bytes
changed; a valid message with one field replaced by fuzzed JSON and signed again (so the
fuzzer gets past the signature to the shape checks). ``--runs N`` bounds the run; at the end
it prints how many inputs ran and that none raised another exception.

The hypothesis tests in ``tests/fuzz/test_table_protocol_fuzz.py`` check the same property on
every test run; this harness is for longer, coverage-guided runs.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

try:
    import atheris
except ImportError:  # pragma: no cover - the optional extra
    sys.exit("atheris is not installed: .venv/bin/pip install -e '.[fuzz]'")

with atheris.instrument_imports():
    import rfc8785  # noqa: F401 - instrumented for coverage

    from shoe_controller.reporting import protocol as p

KEY = b"fuzz-key-0123456789abcdef"
SENDERS = ("controller", "table_system")
SEEDS: list[dict[str, Any]] = [
    p.message("challenge", nonce="n1"),
    p.message("hello", table_id="T-07", token="tok", nonce="n1", client_nonce="c1",
              controller="2.0", head=12),
    p.message("welcome", session="n1.c1", last_seq=3, drives_betting=True),
    p.message("ack", session="n1.c1", seq=4, upto=3),
    p.message("resend", session="n1.c1", seq=5, from_seq=1),
    p.message("open_betting", session="n1.c1", seq=6, shoe=1, round=2),
    p.message("void_round", session="n1.c1", seq=7, shoe=1, round=2, reason="carte retournée"),
    p.message("error", session=None, code="malformed", detail="x", ref=None),
    p.message("card", session="n1.c1", table_id="T-07", seq=41, id="T-07:120:0",
              at=1718035201.75, shoe=3, data={"round": 12, "hand": "banker", "hand_position": 2,
                                              "position": 4, "card": "QH", "source": "scanner",
                                              "counter": 57}),
    p.message("round_void", session="n1.c1", table_id="T-07", seq=42, id="T-07:131:0",
              at=1718035260.0, shoe=3, data={"round": 13, "supervisor": "Zoë",
                                             "reason": "— 🂡 vue"}),
]
FRAMES = [p.encode(seed, KEY).encode("utf-8") for seed in SEEDS]


class Tally:
    def __init__(self, runs: int) -> None:
        self.runs = runs
        self.inputs = 0
        self.taken = 0
        self.refused: collections.Counter[str] = collections.Counter()

    def report(self) -> str:
        codes = ", ".join(f"{code} {n}" for code, n in self.refused.most_common())
        return (f"fuzzed {self.inputs} inputs ({self.inputs * 2 * len(SENDERS)} decode calls: "
                f"bytes and text, both senders): none raised anything but ProtocolViolation; "
                f"{self.taken} taken, refused: {codes}")


def check(raw: str | bytes, tally: Tally) -> None:
    for sender in SENDERS:
        try:
            message = p.decode(raw, KEY, sender=sender)
        except p.ProtocolViolation as exc:
            if exc.code not in p.ERROR_CODES:
                raise AssertionError(f"unknown error code {exc.code!r}") from exc
            tally.refused[exc.code] += 1
            continue
        p.check_message(message)
        if message["sig"] != p.signature(message, KEY):
            raise AssertionError("taken with a wrong signature")
        tally.taken += 1


def inputs(data: bytes) -> list[str | bytes]:
    fdp = atheris.FuzzedDataProvider(data)
    mode = fdp.ConsumeIntInRange(0, 3)
    if mode == 0:
        raw: bytes = fdp.ConsumeBytes(fdp.remaining_bytes())
    elif mode == 1:
        text = fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes()) if fdp.ConsumeBool() \
            else fdp.ConsumeUnicode(fdp.remaining_bytes())
        return [text]
    elif mode == 2:
        frame = bytearray(FRAMES[fdp.ConsumeIntInRange(0, len(FRAMES) - 1)])
        for _ in range(fdp.ConsumeIntInRange(1, 8)):
            at = fdp.ConsumeIntInRange(0, len(frame))
            how = fdp.ConsumeIntInRange(0, 2)
            if how == 0:
                frame[at:at] = fdp.ConsumeBytes(fdp.ConsumeIntInRange(1, 8))
            elif at < len(frame):
                if how == 1:
                    frame[at] = fdp.ConsumeInt(1) & 0xFF
                else:
                    del frame[at:at + fdp.ConsumeIntInRange(1, 8)]
        raw = bytes(frame)
    else:
        message = dict(SEEDS[fdp.ConsumeIntInRange(0, len(SEEDS) - 1)])
        name = sorted(message)[fdp.ConsumeIntInRange(0, len(message) - 1)]
        fragment = fdp.ConsumeUnicode(fdp.remaining_bytes())
        try:
            message[name] = json.loads(fragment)  # lenient: NaN, duplicates, surrogates ...
        except (ValueError, RecursionError):
            message[name] = fragment
        try:
            raw = p.encode(message, KEY).encode("utf-8")  # signed: past the signature check
        except (ValueError, TypeError, RecursionError):  # no canonical form: sent unsigned
            try:
                raw = json.dumps(message, allow_nan=True).encode("utf-8", "surrogatepass")
            except (ValueError, RecursionError):
                return []
    return [raw, raw.decode("utf-8", "surrogateescape")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100_000, help="inputs to try (default 1e5)")
    parser.add_argument("--max-len", type=int, default=8192, help="longest input, bytes")
    parser.add_argument("--seed", type=int, default=0, help="libFuzzer seed (0: random)")
    parser.add_argument("--artifacts", type=Path, default=None,
                        help="where a crashing input is saved (default: a temporary folder)")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    artifacts = args.artifacts or Path(tempfile.mkdtemp(prefix="fuzz-table-protocol-"))
    artifacts.mkdir(parents=True, exist_ok=True)
    corpus = Path(tempfile.mkdtemp(prefix="fuzz-table-protocol-corpus-"))
    for index, frame in enumerate(FRAMES):  # seeds: mode 0 (raw bytes) and 2 (mutated frames)
        (corpus / f"raw-{index}").write_bytes(b"\x00" + frame)
        (corpus / f"mutated-{index}").write_bytes(b"\x02" + bytes([index]) + b"\x01" * 8)
    tally = Tally(args.runs)

    def one_input(data: bytes) -> None:
        tally.inputs += 1
        try:
            for raw in inputs(data):
                check(raw, tally)
        except BaseException:
            print(f"FAILED on input {tally.inputs} (saved under {artifacts}/): {data!r:.300}",
                  flush=True)
            raise
        if tally.inputs >= tally.runs:
            print(tally.report(), flush=True)
            shutil.rmtree(corpus, ignore_errors=True)
            if args.artifacts is None:
                shutil.rmtree(artifacts, ignore_errors=True)  # nothing crashed: nothing in it
            os._exit(0)  # libFuzzer would exit without running Python's atexit handlers

    atheris.Setup([sys.argv[0], f"-max_len={args.max_len}", f"-seed={args.seed}",
                   f"-artifact_prefix={artifacts}/", "-print_final_stats=0", str(corpus)],
                  one_input)
    atheris.Fuzz()
    print(tally.report(), flush=True)  # libFuzzer stopped first (it does not, with no -runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
