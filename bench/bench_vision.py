"""Camera fallback accuracy and speed on deck designs the recogniser was not tuned on.

Each deck is enrolled from 5 rendered frames per card (all 52 cards) and tested on other
frames of the same deck. Prints per deck: accuracy, precision of accepted reads, decline
rate, time per frame p50/p95 on one core, beside the targets (99.5 %, 99.9 %, 20 ms).
Usage: .venv/bin/python bench/bench_vision.py [--test-frames N] [--seed S] [DECK ...]

With ``--simulate CONDITION`` (or ``all``) it measures instead the realistic simulated camera
against the real photographs it mirrors (``../shared/real-cards``): per camera condition,
the same recogniser enrolled the same way on a simulated set laid out like the real set and
on the real set, their accuracy, precision and decline rate side by side, the difference in
points and whether it is within a few (3) points; then the frames' statistics per session.
Usage: .venv/bin/python bench/bench_vision.py --simulate all [--seed S] [--sim-seed S]
[--real DIR]

With ``--fixed-cameras`` it measures the real fixed-camera sets (pp2021_feeder, 5 photos per
card enrolled; ece395_ov7670, 2) read in the region ``whole``, one row per enrolment draw
(``--draws``, default 2024,7,11), beside issue 16's targets. Wall-clock figures mean
something only on a quiet machine: run it under ``flock /tmp/bench.lock`` (the CPU figures
are the reading thread's, one core's cost whatever else runs).
Usage: flock /tmp/bench.lock .venv/bin/python bench/bench_vision.py --fixed-cameras
[--draws 2024,7,11] [--real DIR]

With ``--full-deck CONDITION`` it renders all 52 cards under a simulated camera condition
(``--frames-per-card`` each, 20 by default, the sessions in the real set's shares) and
reads them as the real set would be read, one row per enrolment draw: accuracy, precision,
declines, per session, and every wrong read. The real sets a camera condition mirrors may
hold fewer cards (cardai: hearts only), and so never ask a read to tell a suit from
another of its colour; this does. Usage: .venv/bin/python bench/bench_vision.py
--full-deck overhead_felt [--sim-seed S] [--draws 2024,7] [--frames-per-card N]
[--keep DIR]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from simulators.camera import all_cards, find_designs, render_deck, synthesise
from vision.bench import measure
from vision.cores import read_on_one_core
from vision.detect import detect
from vision.model import enroll
from vision.recognise import Recogniser

DEVELOPED_ON = ("anglo", "kde-oxygen", "tango", "paris", "kde-penguins", "neoclassical",
                "kde-standard", "simplistic", "guyenne-classic", "kde-nicu-white", "bellot")
"""Decks whose failures were studied while the recogniser was built."""
VALIDATED_ON = ("anglo_modern", "plastic", "ornamental", "kde-oxygen-white", "lattmann",
                "tigullio", "atlasnye", "gnomangelo", "kde-gm-paris", "dondorf",
                "kde-jolly-royal", "anglo_poker", "ancient_french")
"""Decks measured once the design was settled, whose figures led to two more changes (a
looser deck-distance limit; rank and suit read apart preferred on a tie)."""
DEFAULT_DECKS = ("berlin", "orell", "rheinland", "slavic_costumes", "tarocco",
                 "kde-ancient-egyptians", "kde-nicu-ornamental", "kde-oxygen-air",
                 "anglo_bitmap", "anglo_modern_4_color", "atlasnye_skat", "gnomangelo_bitmap",
                 "kde-dondorf", "kde-tigullio-international", "neoclassical_4_color",
                 "tango_nuevo")
"""Every other installed design. The second half are re-drawings of designs above (bitmap,
four-colour, other publisher), not the same faces. Measured first after the validation
changes; the failures of three of them were then studied (``tango_nuevo``: a dark full-bleed
picture bit into the card's outline, and court pictures in nearly the felt's colour cut it
short; ``kde-oxygen-air``: an index printed one way up only, and the rank alone on number
cards; ``anglo_modern_4_color``: a pale yellow index), which led to detection of bitten
cards, the loose second try, reading cards either way up, the whole-card layout and ink
taken from the darkest channel. Those three are no longer untuned; the other thirteen still
are (none of their failures led to a change)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("decks", nargs="*", default=list(DEFAULT_DECKS))
    parser.add_argument("--test-frames", type=int, default=8, help="test frames per card")
    parser.add_argument("--seed", type=int, default=2024,
                        help="draws the frames (2024: the figures in docs/vision.md)")
    parser.add_argument("--simulate", metavar="CONDITION", action="append",
                        help="compare the realistic camera with real photos: a condition "
                        "(in_shoe_corner, low_res_slot, overhead_felt) or 'all'; repeatable")
    parser.add_argument("--sim-seed", type=int, metavar="S",
                        help="with --simulate: draw the simulated frames with S instead of "
                        "--seed (the enrolment draw stays --seed's)")
    parser.add_argument("--real", type=Path, default=REAL_CARDS,
                        help="the real photographs (default: ../shared/real-cards)")
    parser.add_argument("--fixed-cameras", action="store_true",
                        help="measure the real fixed-camera sets against issue 16's targets")
    parser.add_argument("--draws", default="2024,7,11", metavar="S,S,...",
                        help="with --fixed-cameras or --full-deck: the enrolment draws (seeds)")
    parser.add_argument("--full-deck", metavar="CONDITION",
                        help="all 52 cards under a simulated camera condition (e.g. "
                        "overhead_felt), read as its real set would be")
    parser.add_argument("--frames-per-card", type=int, default=20, metavar="N",
                        help="with --full-deck: simulated frames of each card")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="with --full-deck: write the frames into DIR (kept, with "
                        "labels.csv, to read again with shoe vision bench) instead of a "
                        "temporary folder")
    args = parser.parse_args()
    read_on_one_core()
    if args.fixed_cameras or args.full_deck:
        try:
            draws = [int(seed) for seed in args.draws.split(",")]
        except ValueError:
            parser.exit(2, f"bench_vision.py: --draws: seeds separated by commas, not "
                        f"{args.draws!r}\n")
        from simulators.camera_realism import ConditionError
        from vision.model import VisionModelError

        try:
            if args.full_deck:
                full_deck(args.full_deck, draws, args.frames_per_card, args.real,
                          args.seed if args.sim_seed is None else args.sim_seed, args.keep)
            else:
                fixed_cameras(args.real, draws)
        except (ConditionError, VisionModelError, ValueError) as exc:
            parser.exit(2, f"bench_vision.py: {exc}\n")
        return
    if args.simulate:
        from simulators.camera_realism import ConditionError
        from vision.model import VisionModelError

        try:
            simulate(args.simulate, args.seed, args.real, args.sim_seed)
        except (ConditionError, VisionModelError) as exc:
            parser.exit(2, f"bench_vision.py: {exc}\n")
        return
    designs = find_designs()
    cache = Path(tempfile.gettempdir()) / "shoe-bench-cards"
    print(f"{'deck':26s} {'frames':>6s} {'accuracy':>9s} {'precision':>9s} {'declined':>8s} "
          f"{'p50 ms':>7s} {'p95 ms':>7s}  targets: >=99.5 %, >=99.9 %, p95 <= 20 ms")
    meeting = 0
    for name in args.decks:
        faces = render_deck(designs[name], cache=cache)
        rng = np.random.default_rng(args.seed)
        samples = []
        for card in all_cards():
            for _ in range(5):
                found = detect(synthesise(faces[card], rng))
                if found is not None:
                    samples.append((found.card, card))
        model = enroll(name, samples)
        tests = [(synthesise(faces[card], rng), card) for card in all_cards()
                 for _ in range(args.test_frames)]
        result = measure(Recogniser(model), tests)
        met = (result.accuracy >= 0.995 and result.precision >= 0.999
               and result.percentile_ms(95) <= 20)
        meeting += met
        flag = "" if met else "  BELOW TARGET"
        print(f"{name:26s} {result.frames:6d} {result.accuracy:9.2%} {result.precision:9.2%} "
              f"{result.decline_rate:8.2%} {result.percentile_ms(50):7.1f} "
              f"{result.percentile_ms(95):7.1f}{flag}", flush=True)
    print(f"{meeting} of {len(args.decks)} decks meet all three targets")


REAL_CARDS = Path(__file__).resolve().parents[1].parent / "shared" / "real-cards"
FIXED_CAMERAS = (("pp2021_feeder", 5, 0.995), ("ece395_ov7670", 2, None))
"""Real sets from fixed cameras, photos per card enrolled, and the accuracy target (ece395 is
a stress set: its accuracy is reported, aimed at 95 %, not a target)."""
TARGET_PRECISION, TARGET_P95_MS = 0.999, 20.0
ECE395_AIM = 0.95


def full_deck(name: str, draws: list[int], per_card: int, real: Path, sim_seed: int,
              keep: Path | None = None) -> None:
    """All 52 cards under the simulated camera condition ``name``, ``per_card`` frames each,
    the sessions in the shares of the real set it mirrors; enrolled and read as that set
    is (its photos per card, its reading mode), one row per enrolment draw. ``keep``: the
    folder to write the frames to (else a temporary one)."""
    from collections import Counter
    from contextlib import nullcontext

    from simulators.camera_compare import real_plan
    from simulators.camera_realism import condition_named, write_matching_folder
    from vision.bench import holdout_bench
    from vision.roi import WHOLE_FRAME

    condition = condition_named(name)
    if per_card <= condition.enrol_per_card:
        raise ValueError(f"--frames-per-card must be over the {condition.enrol_per_card} "
                         f"frames per card enrolled")
    shares = Counter(session for _, session, _ in real_plan(real / condition.real_set))
    total = sum(shares.values())
    counts = {session: round(per_card * count / total) for session, count in shares.items()}
    counts[max(shares, key=lambda session: shares[session])] += per_card - sum(counts.values())
    plan = [(card, session) for card in all_cards() for session in sorted(counts)
            for _ in range(counts[session])]
    design = find_designs()[condition.face_design]
    cache = Path(tempfile.gettempdir()) / "shoe-bench-cards"
    print(f"{condition.name}: all 52 cards of '{condition.face_design}', {per_card} frames "
          f"each (" + ", ".join(f"{session} {count}" for session, count in sorted(counts.items()))
          + f"), simulated with seed {sim_seed}; {condition.enrol_per_card} per card enrolled, "
          f"{'region whole' if condition.roi else 'card outline'}")
    if keep is not None and keep.exists() and any(keep.iterdir()):
        raise ValueError(f"--keep {keep}: not an empty folder (the frames would mix)")
    with (nullcontext(str(keep)) if keep is not None else tempfile.TemporaryDirectory()
          ) as folder:
        start = time.monotonic()
        write_matching_folder(Path(folder), design, condition, plan, seed=sim_seed,
                              cache=cache)
        print(f"rendered {len(plan)} frames in {time.monotonic() - start:.0f} s")
        print(f"{'draw':>5s} {'tested':>6s} {'accuracy':>9s} {'precision':>9s} "
              f"{'declined':>8s}  per session  wrong reads")
        for seed in draws:
            held = holdout_bench(Path(folder), condition.enrol_per_card, seed,
                                 roi=WHOLE_FRAME if condition.roi else None)
            result = held.result
            sessions = ", ".join(f"{session} {figures.accuracy:.2%}"
                                 for session, figures in sorted(result.sessions.items()))
            wrong = ", ".join(f"{truth}->{taken} x{count}" for (truth, taken), count
                              in sorted(result.confusions.items())) or "none"
            print(f"{seed:5d} {result.frames:6d} {result.accuracy:9.2%} "
                  f"{result.precision:9.2%} {result.decline_rate:8.2%}  {sessions}  {wrong}",
                  flush=True)


def fixed_cameras(real: Path, draws: list[int]) -> None:
    """One row per set and draw: the figures of ``shoe vision bench --enrol-per-card N
    --seed S --roi whole`` beside the targets."""
    from vision.bench import holdout_bench
    from vision.roi import WHOLE_FRAME

    print(f"{'set':14s} {'draw':>5s} {'tested':>6s} {'accuracy':>9s} {'precision':>9s} "
          f"{'declined':>8s} {'wall p50/p95':>13s} {'CPU p50/p95':>12s} {'enrol':>6s}  "
          f"targets: accuracy >= 99.5 % (ece395: aim 95 %), precision >= 99.9 %, "
          f"p95 <= {TARGET_P95_MS:g} ms")
    for name, per_card, accuracy_target in FIXED_CAMERAS:
        for seed in draws:
            held = holdout_bench(real / name, per_card, seed, roi=WHOLE_FRAME)
            result = held.result
            missed = []
            if accuracy_target is not None and result.accuracy < accuracy_target:
                missed.append("accuracy")
            if result.precision < TARGET_PRECISION:
                missed.append("precision")
            if result.percentile_ms(95) > TARGET_P95_MS:
                missed.append("wall p95")
            if result.cpu_percentile_ms(95) > TARGET_P95_MS:
                missed.append("CPU p95")
            print(f"{name:14s} {seed:5d} {result.frames:6d} {result.accuracy:9.2%} "
                  f"{result.precision:9.2%} {result.decline_rate:8.2%} "
                  f"{result.percentile_ms(50):6.1f}/{result.percentile_ms(95):<6.1f} "
                  f"{result.cpu_percentile_ms(50):5.1f}/{result.cpu_percentile_ms(95):<6.1f} "
                  f"{held.enrol_seconds:5.0f}s  "
                  + ("all met" if not missed else "NOT met: " + ", ".join(missed))
                  + ("" if accuracy_target is not None else
                     f" (accuracy not a target: aim {ECE395_AIM:.0%})"),
                  flush=True)


def simulate(names: list[str], seed: int, real: Path, sim_seed: int | None = None) -> None:
    from simulators.camera_compare import AGREEMENT, compare
    from simulators.camera_realism import CONDITIONS, condition_named

    conditions = (list(CONDITIONS.values()) if "all" in names
                  else [condition_named(name) for name in names])
    cache = Path(tempfile.gettempdir()) / "shoe-bench-cards"
    print(f"seed {seed} (simulated frames: seed {seed if sim_seed is None else sim_seed}); "
          f"sim and real enrolled the same way (photos per card, seed, mode); agree: within "
          f"{AGREEMENT:g} points")
    print(f"{'condition':15s} {'real set':14s} {'figure':10s} {'sim':>8s} {'real':>8s} "
          f"{'sim-real':>8s}  agree")
    comparisons = []
    for condition in conditions:
        start = time.monotonic()
        found = compare(condition, real / condition.real_set, seed, sim_seed=sim_seed,
                        cache=cache)
        comparisons.append(found)
        for figure, sim, actual, difference, agree in found.rows():
            print(f"{condition.name:15s} {condition.real_set:14s} {figure:10s} {sim:7.2f}% "
                  f"{actual:7.2f}% {difference:+8.2f}  {'yes' if agree else 'NOT'}",
                  flush=True)
        sim, actual = found.sim.result, found.real.result
        print(f"{'':15s} tested {sim.frames} sim / {actual.frames} real frames, "
              f"{condition.enrol_per_card} per card enrolled, "
              f"{'region whole' if condition.roi else 'card outline'}; no card found in "
              f"{len(found.sim.skipped)} sim / {len(found.real.skipped)} real enrolment "
              f"frames; {time.monotonic() - start:.0f} s")
        for name in sorted(set(sim.sessions) | set(actual.sessions)):
            s_fig, r_fig = sim.sessions.get(name), actual.sessions.get(name)
            print(f"{'':15s} session {name:5s} accuracy sim "
                  + (f"{s_fig.accuracy:7.2%}" if s_fig else "      -")
                  + " real " + (f"{r_fig.accuracy:7.2%}" if r_fig else "      -"))
        if sim.confusions or actual.confusions:
            print(f"{'':15s} wrong reads sim {sum(sim.confusions.values())}, real "
                  f"{sum(actual.confusions.values())}")
    print()
    print("frame statistics per session, p50 (p10-p90): sim | real; * sim p50 outside the "
          "real p10-p90")
    for found in comparisons:
        for session, real_stats in found.real_stats.items():
            sim_stats = found.sim_stats[session]
            cells = []
            for name, measured in real_stats.items():
                simulated = sim_stats[name]
                outside = not measured.p10 <= simulated.p50 <= measured.p90
                cells.append(f"{name} {simulated.p50:.3g}{'*' if outside else ''} "
                             f"({simulated.p10:.3g}-{simulated.p90:.3g}) | {measured.p50:.3g} "
                             f"({measured.p10:.3g}-{measured.p90:.3g})")
            print(f"{found.condition.name} {session}: " + "; ".join(cells))


if __name__ == "__main__":
    main()
