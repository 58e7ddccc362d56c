"""The light over a fixed camera's card, measured on frames: what the simulated slot
camera's lamp, shadows and glare were placed and calibrated on (docs/vision.md, "How each
parameter was chosen"), so the figures there can be measured again, on the real photos and
on simulated frames alike.

A fixed camera sees its card in one place (the session's ``card_box``), so the light over
the card can be read off the card's paper: the paper's level round each pixel (the
lightest over a share of the card's width, then the darkest: a closing, which fills the
pips and the index) over the card's lit paper (its 95th percentile).

    .venv/bin/python -m simulators.slot_light [--real DIR] [--sim-seed S]

prints, per session, the real photos' figures beside those of simulated frames.
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

INSET = 0.05
"""Each side of the card's box left out (a share of the frame): the card's edge and the
slot round it are no paper."""
SHADE_REACH = 0.25
"""The paper's level for the shaded share: the lightest over this share of the card's
width (a pip is filled, a shadow's edge stays)."""
MAP_REACH = 0.12
"""The paper's level for a session's median map: finer, to place a shadow's edges."""
SHADED = 0.65
"""Paper below this share of the card's lit paper is in shade."""
DIM = 0.8
"""Paper below this share of the lit paper is dim (the lamp's fall-off shows here)."""
GRID = 5
"""The black pips' ink level is gathered in a grid of this many cells a side."""
PIP_AREA = (0.008, 0.03)
"""A pip's area, a share of the frame (ece395's pips are 0.017 to 0.019 of it)."""


@dataclass(frozen=True)
class Shading:
    """How the light falls over one frame's card."""

    shaded: float
    """Share of the card's paper below :data:`SHADED` of its lit paper."""
    dim: float
    """Share below :data:`DIM`."""
    level: float | None
    """The shaded paper's median level over the lit paper (None: no shade)."""
    cast: tuple[float, float] | None
    """The shaded paper's blue / green and red / green (None: under 20 pixels shaded)."""


def _inside(frame: np.ndarray, box: tuple[float, float, float, float]) -> tuple[slice, slice]:
    height, width = frame.shape[:2]
    x0, y0, x1, y1 = box
    return (slice(int(max(0.0, y0 + INSET) * height), int(min(1.0, y1 - INSET) * height)),
            slice(int(max(0.0, x0 + INSET) * width), int(min(1.0, x1 - INSET) * width)))


def _closing(channel: np.ndarray, reach: float) -> np.ndarray:
    size = max(3, int(reach * channel.shape[1]) | 1)
    return cv2.morphologyEx(channel, cv2.MORPH_CLOSE,
                            cv2.getStructuringElement(cv2.MORPH_RECT, (size, size)))


def paper_map(frame: np.ndarray, box: tuple[float, float, float, float],
              reach: float = MAP_REACH) -> np.ndarray:
    """The paper's level over the card's lit paper at each pixel of the frame (float32), NaN
    outside the card's box (less :data:`INSET`)."""
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY).astype(np.float32)
    rows, columns = _inside(frame, box)
    paper = _closing(grey[rows, columns], reach)
    out = np.full(grey.shape, np.nan, np.float32)
    out[rows, columns] = paper / max(float(np.percentile(paper, 95)), 1.0)
    return out


def shading(frame: np.ndarray, box: tuple[float, float, float, float]) -> Shading:
    """How much of the card's paper lies in shade, how deep and in what colour."""
    rows, columns = _inside(frame, box)
    card = frame[rows, columns].astype(np.float32)
    grey = _closing(cv2.cvtColor(card, cv2.COLOR_BGR2GRAY), SHADE_REACH)
    relative = grey / max(float(np.percentile(grey, 95)), 1.0)
    shaded = relative < SHADED
    level = float(np.median(relative[shaded])) if shaded.any() else None
    cast = None
    if shaded.sum() > 20:
        blue, green, red = (float(np.median(_closing(card[:, :, index], SHADE_REACH)[shaded]))
                            for index in range(3))
        cast = (blue / max(green, 1.0), red / max(green, 1.0))
    return Shading(float(shaded.mean()), float((relative < DIM).mean()), level, cast)


EDGE_WINDOW = 0.15
"""A shadow's side is looked for this far (a share of the frame's width) either side of
where the session's shadow box puts it."""
EDGE_STEP = 0.25
"""A row shows the shadow's side where its paper steps by at least this share of the lit
paper within the window."""


def edge_rise(frame: np.ndarray, box: tuple[float, float, float, float],
              side: float, rows: tuple[float, float]) -> float | None:
    """How soft a shadow's upright side is: over the paper map's rows ``rows`` (shares of
    the frame's height), within :data:`EDGE_WINDOW` of ``side`` (a share of its width),
    the pixels over which the paper rises from 20 % to 80 % of its step at the steepest
    rise; the median over the rows that show a step (None: none does). A lamp's shadow
    has a penumbra as wide as the lamp seen from the card; the simulated one is a box
    blurred by its ``softness``."""
    height, width = frame.shape[:2]
    paper = paper_map(frame, box, reach=MAP_REACH / 2)
    left = max(0, int((side - EDGE_WINDOW) * width))
    right = min(width, int((side + EDGE_WINDOW) * width))
    rises = []
    for row in range(int(rows[0] * height), int(rows[1] * height)):
        profile = paper[row, left:right]
        profile = profile[~np.isnan(profile)]
        if len(profile) < 8 or np.ptp(profile) < EDGE_STEP:
            continue
        low, high = np.percentile(profile, 10), np.percentile(profile, 90)
        steepest = int(np.argmax(np.gradient(profile)))
        start = end = steepest
        while start > 0 and profile[start] > low + 0.2 * (high - low):
            start -= 1
        while end < len(profile) - 1 and profile[end] < low + 0.8 * (high - low):
            end += 1
        rises.append(end - start)
    return float(np.median(rises)) if rises else None


def pip_ink(frame: np.ndarray) -> list[tuple[float, float, float]]:
    """Each dark pip-sized mark on lit paper (over half the frame's lit paper): its centre
    (shares of the frame's width and height) and its ink level (the 20th percentile of its
    pixels over the paper round them). Black pips read about 0.03 under an even light; a
    glare lifts them towards the paper."""
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY).astype(np.float32)
    height, width = grey.shape
    paper = _closing(grey, SHADE_REACH)
    ratio = grey / np.maximum(paper, 1.0)
    marks = ((ratio < 0.75) & (paper > 0.5 * np.percentile(paper, 95))).astype(np.uint8)
    count, labels, stats, centres = cv2.connectedComponentsWithStats(marks)
    found = []
    for index in range(1, count):
        if PIP_AREA[0] < stats[index, cv2.CC_STAT_AREA] / (height * width) < PIP_AREA[1]:
            found.append((float(centres[index][0] / width), float(centres[index][1] / height),
                          float(np.percentile(ratio[labels == index], 20))))
    return found


def ink_grid(frames: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The pips' mean ink level (:func:`pip_ink`) in each cell of a :data:`GRID` square grid
    over the frames, and how many pips each cell had."""
    total, count = np.zeros((GRID, GRID)), np.zeros((GRID, GRID), int)
    for frame in frames:
        for x, y, level in pip_ink(frame):
            column, row = min(GRID - 1, int(x * GRID)), min(GRID - 1, int(y * GRID))
            total[row, column] += level
            count[row, column] += 1
    return total / np.maximum(count, 1), count


def _describe(frames: list[np.ndarray], black: list[np.ndarray],
              box: tuple[float, float, float, float],
              sides: list[tuple[float, tuple[float, float]]]) -> list[str]:
    found = [shading(frame, box) for frame in frames]

    def spread(values: list[float]) -> str:
        if not values:
            return "-"
        low, middle, high = np.percentile(values, [10, 50, 90])
        return f"{middle:.2f} ({low:.2f}-{high:.2f})"

    casts = [item.cast for item in found if item.cast is not None]
    grid, count = ink_grid(black)
    levels = [item.level for item in found if item.level is not None]
    summary = (f"shaded {spread([item.shaded for item in found])}; "
               f"dim {spread([item.dim for item in found])}; shade level {spread(levels)}; "
               f"shade cast b/g {spread([cast[0] for cast in casts])}, "
               f"r/g {spread([cast[1] for cast in casts])}")
    for side, rows in sides:
        rises = [rise for rise in (edge_rise(frame, box, side, rows) for frame in frames)
                 if rise is not None]
        summary += (f"; shadow side at x {side:.2f}: rise 20-80 % {spread(rises)} px "
                    f"({len(rises)} frames)")
    lines = [summary, "black pips' ink level (pips) by grid cell:"]
    lines += ["  " + " ".join(f"{grid[row, column]:.2f}({count[row, column]:2d})"
                              for column in range(GRID)) for row in range(GRID)]
    return lines


def main(argv: list[str] | None = None) -> int:
    from simulators.camera import find_designs
    from simulators.camera_compare import real_plan
    from simulators.camera_realism import LOW_RES_SLOT, write_matching_folder

    parser = argparse.ArgumentParser(prog="python -m simulators.slot_light",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--real", type=Path,
                        default=Path(__file__).resolve().parents[1].parent / "shared"
                        / "real-cards" / LOW_RES_SLOT.real_set)
    parser.add_argument("--sim-seed", type=int, default=2024)
    args = parser.parse_args(argv)
    if not (args.real / "labels.csv").is_file():
        parser.error(f"no labels.csv in {args.real}: the real set is needed")
    plan = real_plan(args.real)
    design = find_designs()[LOW_RES_SLOT.face_design]
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        write_matching_folder(folder, design, LOW_RES_SLOT,
                              [(card, session) for card, session, _ in plan],
                              seed=args.sim_seed,
                              cache=Path(tempfile.gettempdir()) / "shoe-bench-cards")
        simulated = sorted(folder.glob("*.png"))
        for name, session in LOW_RES_SLOT.sessions.items():
            box = session.card_box or (0.0, 0.0, 1.0, 1.0)
            # Each shadow's upright side that falls inside the card, over the rows where
            # the shadow and the card overlap (an edge's softness: Shadow.softness).
            sides = [(shadow.box[2], (max(shadow.box[1], box[1]) + INSET,
                                      min(shadow.box[3], box[3]) - INSET))
                     for shadow in session.shadows
                     if box[0] + INSET < shadow.box[2] < box[2] - INSET]
            for kind, items in (
                    ("real", [(card.code, path) for card, s, path in plan if s == name]),
                    (f"sim {args.sim_seed}", [(path.name.split("_")[0], path)
                                              for path in simulated
                                              if path.name.split("_")[1] == name])):
                frames = [cv2.imread(str(path)) for _, path in items]
                # Black number cards: their pips' ink is the same dark under an even light.
                black = [frame for (code, _), frame in zip(items, frames, strict=True)
                         if code[0] in "23456789T" and code[1] in "SC"]
                print(f"session {name}, {kind} ({len(frames)} frames):")
                for line in _describe(frames, black, box, sides):
                    print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
