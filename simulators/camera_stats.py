"""Measurable statistics of camera frames, real or simulated, measured the same way on both.

The realistic camera (:mod:`simulators.camera_realism`) takes its parameters from these
figures measured on the real photographs in ``../shared/real-cards``, and the tests check
that its frames measure within the real sets' ranges. Every statistic is computed on the
frame as it would reach the recogniser (after JPEG), at its own resolution:

- ``brightness``: mean grey level (0-255); ``highlight``: the 95th percentile of grey (the
  lit paper); ``contrast``: the spread between the 5th and 95th percentile of grey;
- ``noise``: the sensor noise's standard deviation in grey levels, estimated on the frame's
  flat half (the half with the weakest gradient) with Immerkaer's operator (J. Immerkaer,
  "Fast noise variance estimation", CVIU 64(2), 1996): a 3x3 kernel that cancels any local
  plane, so what it leaves on a flat region is noise;
- ``sharpness``: the variance of the Laplacian (the usual focus measure: blur lowers it);
- ``paper_cast``: the colour of the brightest 5 % of the frame (the card's paper under the
  scene's light) as (blue / green, red / green): 1, 1 is neutral;
- ``corner_ratio``: the median grey of the four corner patches over the frame's median
  (vignetting and a light falling off away from the card);
- ``light_spread``: how uneven the light is: the frame cut into a 6 x 6 grid, the 75th over
  the 25th percentile of the cells' median grey (a lit patch of table against its dark side;
  the card lifts only a few cells);
- ``jpeg_quality``: the IJG quality a JPEG file was written with, from its luminance
  quantisation table (None for a lossless file).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import cv2
import numpy as np

_IMMERKAER = np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1]], np.float32)

_IJG_LUMINANCE = np.array((
    16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55,
    14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62,
    18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92,
    49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99), np.int64)
"""The JPEG standard's (Annex K) luminance table, which IJG libjpeg scales by its quality."""


def _ijg_table(quality: int) -> np.ndarray:
    """The sorted luminance table libjpeg writes at ``quality`` (its jcparam.c rule). Sorted,
    because the rule is monotonic: the zig-zag order of a stored table then does not matter."""
    scale = 5000 // quality if quality < 50 else 200 - 2 * quality
    return np.sort(np.clip((_IJG_LUMINANCE * scale + 50) // 100, 1, 255))


_IJG_TABLES = {quality: _ijg_table(quality) for quality in range(1, 101)}


@dataclass(frozen=True)
class FrameStats:
    width: int
    height: int
    brightness: float
    highlight: float
    contrast: float
    noise: float
    sharpness: float
    paper_cast: tuple[float, float]
    corner_ratio: float
    light_spread: float

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def grey_of(frame: np.ndarray) -> np.ndarray:
    if frame.ndim == 2:
        return frame.astype(np.float32)
    return cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY).astype(np.float32)


def noise_sigma(frame: np.ndarray) -> float:
    """Immerkaer's estimate of the noise's standard deviation on the frame's flat half."""
    grey = grey_of(frame)
    response = np.abs(cv2.filter2D(grey, -1, _IMMERKAER))[1:-1, 1:-1]
    gradient = np.hypot(cv2.Sobel(grey, cv2.CV_32F, 1, 0), cv2.Sobel(grey, cv2.CV_32F, 0, 1))
    gradient = gradient[1:-1, 1:-1]
    flat = gradient <= np.median(gradient)
    if not flat.any():
        return 0.0
    return float(np.sqrt(np.pi / 2) * response[flat].mean() / 6)


def sharpness(frame: np.ndarray) -> float:
    """The variance of the Laplacian of the grey frame."""
    return float(cv2.Laplacian(grey_of(frame), cv2.CV_32F).var())


def paper_cast(frame: np.ndarray) -> tuple[float, float]:
    """(blue / green, red / green) of the brightest 5 % of the frame's pixels."""
    grey = grey_of(frame)
    bright = grey >= np.percentile(grey, 95)
    blue, green, red = (float(frame[:, :, channel][bright].mean()) + 1 for channel in range(3))
    return blue / green, red / green


def corner_ratio(frame: np.ndarray) -> float:
    grey = grey_of(frame)
    height, width = grey.shape
    h, w = max(height // 8, 1), max(width // 8, 1)
    corners = np.concatenate([grey[:h, :w].ravel(), grey[:h, -w:].ravel(),
                              grey[-h:, :w].ravel(), grey[-h:, -w:].ravel()])
    return float(np.median(corners) / max(float(np.median(grey)), 1.0))


def light_spread(frame: np.ndarray) -> float:
    grey = grey_of(frame)
    rows = np.array_split(np.arange(grey.shape[0]), 6)
    columns = np.array_split(np.arange(grey.shape[1]), 6)
    cells = [float(np.median(grey[np.ix_(r, c)])) for r in rows for c in columns]
    low, high = np.percentile(cells, [25, 75])
    return float(high / max(low, 1.0))


def frame_stats(frame: np.ndarray) -> FrameStats:
    grey = grey_of(frame)
    low, high = np.percentile(grey, [5, 95])
    return FrameStats(width=frame.shape[1], height=frame.shape[0],
                      brightness=float(grey.mean()), highlight=float(high),
                      contrast=float(high - low),
                      noise=noise_sigma(frame), sharpness=sharpness(frame),
                      paper_cast=paper_cast(frame), corner_ratio=corner_ratio(frame),
                      light_spread=light_spread(frame))


def jpeg_quality(data: bytes) -> int | None:
    """The IJG quality (1-100) whose luminance table is nearest the JPEG's first quantisation
    table; None if the data is not a JPEG or holds no 8-bit table."""
    if data[:2] != b"\xff\xd8":
        return None
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        length = int.from_bytes(data[at + 2:at + 4], "big")
        if marker == 0xDB:
            if data[at + 4] >> 4:  # 16-bit table: not written by a quality setting
                return None
            table = data[at + 5:at + 5 + 64]
            if len(table) < 64:
                return None
            stored = np.sort(np.frombuffer(table, np.uint8).astype(np.int64))
            return min(_IJG_TABLES, key=lambda quality: (
                int(np.abs(_IJG_TABLES[quality] - stored).sum()), -quality))
        if marker == 0xDA:  # start of scan: no table before it
            return None
        at += 2 + length
    return None


@dataclass(frozen=True)
class StatRange:
    """One statistic over a set of frames: its 10th, 50th and 90th percentiles."""

    p10: float
    p50: float
    p90: float


STAT_NAMES = ("brightness", "highlight", "contrast", "noise", "sharpness", "cast_blue", "cast_red",
              "corner_ratio", "light_spread")


def _values(stats: FrameStats) -> dict[str, float]:
    return {"brightness": stats.brightness, "highlight": stats.highlight, "contrast": stats.contrast, "noise": stats.noise,
            "sharpness": stats.sharpness, "cast_blue": stats.paper_cast[0],
            "cast_red": stats.paper_cast[1], "corner_ratio": stats.corner_ratio,
            "light_spread": stats.light_spread}


def summarise(frames: Iterable[FrameStats]) -> dict[str, StatRange]:
    """Per statistic, its spread over ``frames``."""
    rows = [_values(stats) for stats in frames]
    if not rows:
        raise ValueError("no frames to summarise")
    return {name: StatRange(*(float(v) for v in np.percentile([row[name] for row in rows],
                                                              [10, 50, 90])))
            for name in STAT_NAMES}


def summarise_files(paths: Sequence[Path]) -> tuple[dict[str, StatRange], list[int | None]]:
    """:func:`summarise` over image files, and each file's JPEG quality."""
    stats, qualities = [], []
    for path in paths:
        data = path.read_bytes()
        frame = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        if frame is None:
            raise ValueError(f"{path}: not an image")
        stats.append(frame_stats(frame))
        qualities.append(jpeg_quality(data))
    return summarise(stats), qualities
