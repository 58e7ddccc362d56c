"""The realistic camera against the real photographs it mirrors: the same recogniser, enrolled
the same way, on a simulated set laid out like the real one.

For a camera condition (:data:`simulators.camera_realism.CONDITIONS`) and its real set in
``../shared/real-cards``: the real set's photos give the *plan* (which card, which capture
session, in file-name order); the simulation renders one frame per photo of the plan; both
folders are then measured by :func:`vision.bench.holdout_bench` with the same number of
enrolment photos per card, the same seed and the same reading mode (a region of interest or
the card's outline). Their figures are compared: they *agree* when they differ by at most
:data:`AGREEMENT` percentage points. The frames' statistics (:mod:`simulators.camera_stats`)
are compared per session too.
"""

from __future__ import annotations

import csv
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from shoe_controller.cards import Card
from simulators.camera import find_designs
from simulators.camera_realism import CameraCondition, write_matching_folder
from simulators.camera_stats import StatRange, summarise_files
from vision.bench import HoldoutResult, holdout_bench, read_labels, read_sessions
from vision.roi import WHOLE_FRAME

AGREEMENT = 3.0
"""Percentage points within which a simulated figure agrees with the real one."""

FIGURES = ("accuracy", "precision", "decline_rate")


def real_plan(folder: Path) -> list[tuple[Card, str, Path]]:
    """The real set's photos as (card, session, path), in file-name order. The session is
    the one the file name says (``AH_s1_04.jpg``: s1); a set whose names carry none but whose
    ``origin.csv`` gives capture times is split by capture month (``feb``, ``sep``)."""
    items = sorted(read_labels(folder), key=lambda item: item[0].name)
    sessions = read_sessions(folder)
    origin = folder / "origin.csv"
    if not any(sessions.values()) and origin.is_file():
        with origin.open(newline="") as handle:
            for row in csv.DictReader(handle):
                stamp = row.get("capture_time_from_uuid1") or row.get("capture_time") or ""
                if stamp:
                    month = datetime.fromisoformat(stamp).strftime("%b").lower()
                    sessions[row["file"]] = month
    return [(card, sessions.get(path.name, ""), path) for path, card in items]


@dataclass
class Comparison:
    condition: CameraCondition
    seed: int
    sim: HoldoutResult
    real: HoldoutResult
    sim_stats: dict[str, dict[str, StatRange]]
    real_stats: dict[str, dict[str, StatRange]]
    """Per session, each statistic's p10 / p50 / p90."""

    def rows(self) -> list[tuple[str, float, float, float, bool]]:
        """(figure, sim %, real %, sim - real in points, within AGREEMENT)."""
        out = []
        for name in FIGURES:
            sim = 100 * getattr(self.sim.result, name)
            real = 100 * getattr(self.real.result, name)
            out.append((name, sim, real, sim - real, abs(sim - real) <= AGREEMENT))
        return out


def compare(condition: CameraCondition, real_folder: Path, seed: int, *,
            sim_seed: int | None = None, cache: Path | None = None, work: Path | None = None,
            stats_per_session: int = 40) -> Comparison:
    """Simulate ``condition``'s camera over ``real_folder``'s plan and measure both: the
    enrolment draw from ``seed``, the simulated frames from ``sim_seed`` (default: ``seed``;
    another shows how much the simulated figures move with the frames drawn)."""
    plan = real_plan(real_folder)
    sessions = sorted({session for _, session, _ in plan})
    unknown = [session for session in sessions if session not in condition.sessions]
    if unknown:
        raise ValueError(f"{real_folder}: sessions {unknown} are not sessions of the camera "
                         f"condition {condition.name} ({', '.join(condition.sessions)})")
    design = find_designs()[condition.face_design]
    roi = WHOLE_FRAME if condition.roi else None
    with tempfile.TemporaryDirectory(dir=work) as scratch:
        folder = Path(scratch) / condition.name
        write_matching_folder(folder, design, condition,
                              [(card, session) for card, session, _ in plan],
                              seed=seed if sim_seed is None else sim_seed, cache=cache)
        sim = holdout_bench(folder, condition.enrol_per_card, seed, roi, name="sim")
        sim_paths = {session: sorted(folder.glob(f"*_{session}_*.png")) for session in sessions}
        sim_stats = {session: summarise_files(_spread(paths, stats_per_session))[0]
                     for session, paths in sim_paths.items()}
    real = holdout_bench(real_folder, condition.enrol_per_card, seed, roi, name="real",
                         sessions={path.name: session for _, session, path in plan})
    real_stats = {session: summarise_files(_spread(
        [path for _, s, path in plan if s == session], stats_per_session))[0]
        for session in sessions}
    return Comparison(condition, seed, sim, real, sim_stats, real_stats)


def _spread(paths: list[Path], count: int) -> list[Path]:
    """Up to ``count`` of ``paths``, evenly spread (every card, not the first few)."""
    step = max(1, len(paths) // count)
    return paths[::step][:count]
