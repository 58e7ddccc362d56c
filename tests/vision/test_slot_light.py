"""The measures the simulated slot camera's light was calibrated on
(:mod:`simulators.slot_light`), checked on frames drawn with a known shadow and a known
ink level."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulators.slot_light import edge_rise, ink_grid, paper_map, pip_ink, shading

BOX = (0.0, 0.0, 1.0, 1.0)
REAL = Path(__file__).resolve().parents[2].parent / "shared" / "real-cards" / "ece395_ov7670"


def _card(size: int = 128, paper: float = 200.0) -> np.ndarray:
    return np.full((size, size, 3), paper, np.float32)


@settings(max_examples=40, deadline=None)
@given(cut=st.floats(0.3, 0.7), depth=st.floats(0.2, 0.55),
       blue=st.floats(0.6, 1.6), red=st.floats(0.6, 1.6))
def test_a_shadow_is_measured_where_and_as_deep_as_it_was_drawn(cut, depth, blue, red) -> None:
    frame = _card()
    rows = int(cut * 128)
    frame[rows:] *= depth * np.array([blue, 1.0, red], np.float32)
    found = shading(frame.clip(0, 255).astype(np.uint8), BOX)
    # The card less its inset: rows 6 to 121 (115 of them), the shaded ones from ``rows``.
    expected = (121 - rows) / 115
    assert found.shaded == pytest.approx(expected, abs=0.03)
    assert found.dim == pytest.approx(expected, abs=0.03)
    assert found.level is not None
    grey = depth * (0.114 * blue + 0.587 + 0.299 * red)
    assert found.level == pytest.approx(grey, abs=0.02)
    assert found.cast is not None
    assert found.cast[0] == pytest.approx(blue, rel=0.05)
    assert found.cast[1] == pytest.approx(red, rel=0.05)


def test_an_evenly_lit_card_has_no_shade_and_a_flat_paper_map() -> None:
    frame = _card().astype(np.uint8)
    cv2.circle(frame, (64, 64), 8, (0, 0, 0), -1)  # a pip does not count as shade
    found = shading(frame, BOX)
    assert found.shaded == 0 and found.dim == 0 and found.level is None and found.cast is None
    level = paper_map(frame, BOX)
    assert np.isnan(level[0, 0])  # the inset
    assert np.nanmin(level) == pytest.approx(1.0)


@pytest.mark.parametrize("sigma", [1.5, 4.0, 7.0])
def test_a_shadow_side_s_softness_is_measured_as_drawn(sigma: float) -> None:
    """A shadow's upright side blurred by a Gaussian of ``sigma`` pixels rises from 20 % to
    80 % of its step over 2 x 0.8416 sigma (the normal distribution's 80th percentile each
    side of the middle), whatever pips lie away from it."""
    frame = _card()
    frame[:, :70] *= 0.4  # the shade left of x = 70 of 128
    frame = cv2.GaussianBlur(frame, (0, 0), sigma)
    cv2.circle(frame, (100, 30), 8, (0, 0, 0), -1)  # a pip off the side's rows
    rise = edge_rise(frame.clip(0, 255).astype(np.uint8), BOX, 70 / 128, (0.5, 0.9))
    assert rise is not None
    assert rise == pytest.approx(2 * 0.8416 * sigma, abs=1.5)
    assert edge_rise(_card().astype(np.uint8), BOX, 70 / 128, (0.5, 0.9)) is None  # no side


@pytest.mark.parametrize("ink", [0.0, 0.2, 0.5])
def test_a_pip_s_ink_level_is_read_over_its_paper(ink: float) -> None:
    frame = _card().astype(np.uint8)
    cv2.circle(frame, (40, 90), 9, (int(200 * ink),) * 3, -1)  # about 0.016 of the frame
    found = pip_ink(frame)
    assert len(found) == 1
    x, y, level = found[0]
    assert (x, y) == (pytest.approx(40 / 128, abs=0.01), pytest.approx(90 / 128, abs=0.01))
    assert level == pytest.approx(ink, abs=0.02)
    grid, count = ink_grid([frame, frame])
    assert count.sum() == 2 and count[3, 1] == 2  # column 40/128 * 5 = 1, row 90/128 * 5 = 3
    assert grid[3, 1] == pytest.approx(ink, abs=0.02)


def test_the_command_prints_real_beside_simulated() -> None:
    if not (REAL / "labels.csv").is_file():
        pytest.skip(f"real photographs not present: {REAL}")
    done = subprocess.run([sys.executable, "-m", "simulators.slot_light", "--real", str(REAL),
                           "--sim-seed", "3"], check=False, capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    for session in "abc":
        assert f"session {session}, real (52 frames):" in done.stdout
        assert f"session {session}, sim 3 (52 frames):" in done.stdout
    assert "Traceback" not in done.stderr


def test_the_command_says_what_it_needs(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "simulators.slot_light", "--real",
                           str(tmp_path)], check=False, capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 2
    assert "no labels.csv" in done.stderr and "Traceback" not in done.stderr
