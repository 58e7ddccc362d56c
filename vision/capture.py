"""Frames in: a camera (index), a video file, an RTSP/HTTP stream or still image files.

``open_source("0")`` opens camera 0 through ``cv2.VideoCapture``; ``open_source("rtsp://...")``
a stream; ``open_source("clip.mp4")`` a video; ``open_source("card.png")`` a still image (the
same frame every time, which is what a test or a replay of a stored frame wants).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Protocol

import cv2
import numpy as np

from shoe_controller.errors import ShoeError

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"})


class CaptureError(ShoeError, OSError):
    """A camera, stream or image cannot be opened or gave no frame."""


class FrameSource(Protocol):
    """Anything the camera fallback can take a frame from (BGR ``uint8`` image)."""

    def capture(self) -> np.ndarray: ...

    def close(self) -> None: ...


def read_image(path: str | Path) -> np.ndarray:
    """A BGR frame from an image file; raises :class:`CaptureError` naming the file."""
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise CaptureError(f"{path}: not a readable image")
    return image


class ImageFileSource:
    """A still image as a camera: each capture returns (a copy of) the same frame."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._frame = read_image(self.path)

    def capture(self) -> np.ndarray:
        return self._frame.copy()

    def close(self) -> None:
        pass


class VideoSource:
    """``cv2.VideoCapture`` on a camera index, a video file or a stream URL.

    A camera buffers frames; the fallback wants the card on the table *now*, so each capture
    grabs (and drops) what is buffered before retrieving the newest frame.
    """

    def __init__(self, spec: str | int, *, flush: int = 2) -> None:
        self.spec = spec
        self.flush = flush
        self._lock = threading.Lock()
        self._video = cv2.VideoCapture(spec)
        if not self._video.isOpened():
            raise CaptureError(f"cannot open camera or video {spec!r}")

    def capture(self) -> np.ndarray:
        with self._lock:
            for _ in range(self.flush):
                self._video.grab()
            ok, frame = self._video.read()
        if not ok or frame is None:
            raise CaptureError(f"camera or video {self.spec!r} gave no frame")
        return frame

    def close(self) -> None:
        with self._lock:
            self._video.release()


def open_source(spec: str) -> FrameSource:
    """Open a frame source from its command-line spelling (see the module docstring)."""
    text = spec.strip()
    if text.isdigit():
        return VideoSource(int(text))
    if "://" in text:
        return VideoSource(text, flush=0 if text.startswith("file://") else 2)
    path = Path(text)
    if not path.exists():
        raise CaptureError(f"{text}: no such file (give a camera index, a URL or a file)")
    if path.suffix.lower() in IMAGE_SUFFIXES:
        return ImageFileSource(path)
    return VideoSource(text, flush=0)
