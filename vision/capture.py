"""Frames in: a camera (index), a video file, an RTSP/HTTP stream or still image files.

``open_source("0")`` opens camera 0 through ``cv2.VideoCapture``; ``open_source("rtsp://...")``
a stream; ``open_source("clip.mp4")`` a video; ``open_source("card.png")`` a still image (the
same frame every time, which is what a test or a replay of a stored frame wants).
"""

from __future__ import annotations

import contextlib
import io
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import cv2
import numpy as np
import PIL.Image

from shoe_controller.errors import ShoeError

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"})

MAX_IMAGE_PIXELS = 100_000_000
"""The largest image file read (a hundred megapixels: twelve times a 4K frame, most
phones' photos at full size). A file's header can declare far more than its bytes hold: a PNG of
under a megabyte declaring 30,000 x 30,000 pixels took OpenCV 13 s and 5.3 GB to decode
(measured), so the size is read from the header first and a larger image refused undecoded."""

MAX_IMAGE_BYTES = 4 * MAX_IMAGE_PIXELS
"""The largest image file read into memory: four bytes a pixel, an uncompressed RGBA image
of the largest size taken."""

_FORMATS = "PNG, JPEG, BMP, TIFF, WebP, ..."


class CaptureError(ShoeError, OSError):
    """A camera, stream or image cannot be opened or gave no frame."""


class FrameSource(Protocol):
    """Anything the camera fallback can take a frame from (BGR ``uint8`` image)."""

    def capture(self) -> np.ndarray: ...

    def close(self) -> None: ...


def read_image(path: str | Path) -> np.ndarray:
    """A BGR frame from an image file; raises :class:`CaptureError` naming the file and
    saying what is wrong with it (missing, unreadable, empty, not an image, too large).

    The file is read here and decoded by ``cv2.imdecode`` (the same pixels as
    ``cv2.imread``, its EXIF orientation applied alike): ``imread`` says only "no image",
    and writes its own warning to stderr for a missing file. (Compared on every photo in
    ``../shared/real-cards``: the same pixels, all 1,787.) Before decoding, Pillow reads
    the size the file's header declares (its pixels left undecoded: 0.07 ms a photo there,
    the same pixel count as OpenCV's on all 1,787), and an image over
    :data:`MAX_IMAGE_PIXELS` is refused."""
    file = Path(path)
    if file.exists() and not file.is_file() and not file.is_dir():
        # (a named pipe or a device would be read until its writer stops: perhaps never)
        raise CaptureError(f"{path}: not a regular file (a pipe or a device), not an image")
    try:
        size = file.stat().st_size if file.is_file() else 0
        if size > MAX_IMAGE_BYTES:
            raise CaptureError(f"{path}: a file of {size:,} bytes, more than the "
                               f"{MAX_IMAGE_BYTES:,} an image is read from")
        data = file.read_bytes()
    except FileNotFoundError:
        raise CaptureError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CaptureError(f"{path}: a folder, not an image file") from None
    except CaptureError:
        raise
    except OSError as exc:
        raise CaptureError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not data:
        raise CaptureError(f"{path}: an empty file, not an image")
    _refuse_oversized(path, data)
    with _opencv_quiet():
        image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise CaptureError(f"{path}: not an image OpenCV can decode ({_FORMATS})")
    return image


def _refuse_oversized(path: str | Path, data: bytes) -> None:
    """Raise :class:`CaptureError` if the header of the image in ``data`` declares more than
    :data:`MAX_IMAGE_PIXELS`, or if Pillow knows no image format in it (every format OpenCV
    decodes for a camera's frames, PNG, JPEG, BMP, TIFF, WebP, Pillow knows too)."""
    try:
        with warnings.catch_warnings():
            # (Pillow warns of an image over its own limit, 89 megapixels, then opens it:
            # the size is all that is wanted of it, and the refusal below says why)
            warnings.simplefilter("ignore", PIL.Image.DecompressionBombWarning)
            with PIL.Image.open(io.BytesIO(data)) as image:
                width, height = image.size
    except PIL.Image.DecompressionBombError:
        # (Pillow's own refusal, past twice its limit: more than ours in any case)
        raise CaptureError(f"{path}: an image of more than {MAX_IMAGE_PIXELS:,} pixels "
                           f"declared (scale it down)") from None
    except (PIL.UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        # (a damaged header raises what its format's parser raises: these, in Pillow)
        raise CaptureError(f"{path}: not an image OpenCV can decode ({_FORMATS})") from exc
    if width * height > MAX_IMAGE_PIXELS:
        raise CaptureError(f"{path}: an image of {width:,} x {height:,} pixels declared, more "
                           f"than {MAX_IMAGE_PIXELS:,} (scale it down)")


@contextlib.contextmanager
def _opencv_quiet() -> Iterator[None]:
    """OpenCV's own warnings off for a moment: it writes them to stderr as it declines a
    file cut short (an incomplete PNG) or a camera that is not there, and the error raised
    then says so, once, in the words of the command that asked. (The level is the
    process's: a warning another thread would write in that moment is lost.)"""
    level = cv2.utils.logging.getLogLevel()
    cv2.utils.logging.setLogLevel(min(level, cv2.utils.logging.LOG_LEVEL_ERROR))
    try:
        yield
    finally:
        cv2.utils.logging.setLogLevel(level)


class ImageFileSource:
    """A still image as a camera: each capture returns (a copy of) the same frame."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._frame = read_image(self.path)

    def capture(self) -> np.ndarray:
        return self._frame.copy()

    def close(self) -> None:
        pass


STREAM_TIMEOUT_MS = 5000
"""How long a network stream may take to open, or to give its next frame, before it counts
as gone. OpenCV's FFmpeg default is 30 s (measured: a loopback server that accepts and says
nothing holds the open for 30.1 s), and the card waits for the camera all that time."""


class VideoSource:
    """``cv2.VideoCapture`` on a camera index, a video file or a stream URL.

    A camera buffers frames; the fallback wants the card on the table *now*, so each capture
    grabs (and drops) what is buffered before retrieving the newest frame.

    ``reopen``: a capture that gets no frame opens the source anew and tries once more (a
    camera unplugged and plugged in again, a stream whose server restarted); a video file
    is not reopened (at its end it has no more frames). ``timeout_ms``: how long a network
    stream may take to open or to give a frame (:data:`STREAM_TIMEOUT_MS`); None for
    OpenCV's own (a camera, a file).
    """

    def __init__(self, spec: str | int, *, flush: int = 2, reopen: bool = False,
                 timeout_ms: int | None = None) -> None:
        self.spec = spec
        self.flush = flush
        self.reopen = reopen
        self._params = ([] if timeout_ms is None
                        else [cv2.CAP_PROP_OPEN_TIMEOUT_MSEC, timeout_ms,
                              cv2.CAP_PROP_READ_TIMEOUT_MSEC, timeout_ms])
        self._lock = threading.Lock()
        self._video = self._open()
        if not self._video.isOpened():
            raise CaptureError(f"cannot open camera or video {spec!r} (a camera index that is "
                               f"not there or is in use, a stream that does not answer, or "
                               f"a file that is no video)")

    def _open(self) -> cv2.VideoCapture:
        with _opencv_quiet():
            return cv2.VideoCapture(self.spec, cv2.CAP_ANY, self._params)

    def _newest(self) -> np.ndarray | None:
        for _ in range(self.flush):
            self._video.grab()
        ok, frame = self._video.read()
        return frame if ok and frame is not None else None

    def capture(self) -> np.ndarray:
        with self._lock, _opencv_quiet():  # (a stream's timeout is this error, said once)
            frame = self._newest()
            if frame is None and self.reopen:
                self._video.release()
                self._video = self._open()
                frame = self._newest() if self._video.isOpened() else None
        if frame is None:
            raise CaptureError(f"camera or video {self.spec!r} gave no frame"
                               + (" (opened again, still none)" if self.reopen else ""))
        return frame

    def close(self) -> None:
        with self._lock:
            self._video.release()


def open_source(spec: str) -> FrameSource:
    """Open a frame source from its command-line spelling (see the module docstring)."""
    text = spec.strip()
    if not text:
        raise CaptureError("no camera given: a camera index (0, 1, ...), a URL or a file")
    if text.isdigit():
        return VideoSource(int(text), reopen=True)
    if "://" in text:
        if text.startswith("file://"):
            return VideoSource(text, flush=0)
        return VideoSource(text, reopen=True, timeout_ms=STREAM_TIMEOUT_MS)
    path = Path(text)
    if not path.exists():
        raise CaptureError(f"{text}: no such file (give a camera index, a URL or a file)")
    if path.suffix.lower() in IMAGE_SUFFIXES:
        return ImageFileSource(path)
    return VideoSource(text, flush=0)
