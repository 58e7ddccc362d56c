"""A camera that goes away (vision.capture.VideoSource): a network stream that stalls or never
answers, served by a real MJPEG server on loopback and read by OpenCV's own FFmpeg; and a
video file that runs out. Each gives up within the stream timeout (OpenCV's default: 30 s),
and a stream or camera is opened again once before a capture says it gave no frame."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision import capture
from vision.capture import CaptureError, VideoSource, open_source

TIMEOUT_MS = 800  # (the tests' stream timeout: the product's is 5 s)


def _jpeg(level: int) -> bytes:
    return cv2.imencode(".jpg", np.full((120, 160, 3), level, np.uint8))[1].tobytes()


class MjpegServer:
    """An HTTP MJPEG camera on loopback (multipart/x-mixed-replace, as IP cameras serve it).
    Connection ``n`` sends frames of grey level ``levels[n]``, ``frames[n]`` of them (None:
    until stopped; later connections as the last of each list), then holds the connection
    open and sends nothing, as a stalled camera does."""

    def __init__(self, levels: list[int], frames: list[int | None]) -> None:
        self.levels, self.frames = levels, frames
        self.connections = 0
        self._stop = threading.Event()
        self._socket = socket.create_server(("127.0.0.1", 0))
        self._socket.settimeout(0.1)  # (the accepting thread looks at the stop that often)
        self._held: list[socket.socket] = []
        self._threads = [threading.Thread(target=self._accept, daemon=True)]
        self._threads[0].start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._socket.getsockname()[1]}/camera.mjpg"

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._socket.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            connection.settimeout(None)
            index = self.connections
            self.connections += 1
            thread = threading.Thread(target=self._serve, args=(connection, index), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve(self, connection: socket.socket, index: int) -> None:
        self._held.append(connection)
        try:
            connection.recv(4096)  # (the request)
            connection.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: multipart/x-mixed-replace; "
                               b"boundary=frame\r\n\r\n")
            level = self.levels[min(index, len(self.levels) - 1)]
            count = self.frames[min(index, len(self.frames) - 1)]
            frame, sent = _jpeg(level), 0
            while not self._stop.is_set() and (count is None or sent < count):
                connection.sendall(b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: "
                                   + str(len(frame)).encode() + b"\r\n\r\n" + frame + b"\r\n")
                sent += 1
                self._stop.wait(0.03)
            self._stop.wait()  # stalled: open, silent
        except OSError:
            pass

    def close(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(5)
            assert not thread.is_alive()
        self._socket.close()
        for connection in self._held:
            connection.close()


@pytest.fixture(autouse=True)
def short_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(capture, "STREAM_TIMEOUT_MS", TIMEOUT_MS)


@pytest.fixture
def served() -> Iterator[list[MjpegServer]]:
    servers: list[MjpegServer] = []
    yield servers
    for server in servers:
        server.close()


def test_a_stream_that_stalls_is_opened_again(served: list[MjpegServer]) -> None:
    """The first connection sends 4 frames and stalls; the capture after that waits the
    stream timeout, opens the stream again and takes the second connection's frame."""
    server = MjpegServer([60, 200], [4, None])
    served.append(server)
    source = open_source(server.url)
    try:
        assert int(source.capture().mean()) == pytest.approx(60, abs=3)
        time.sleep(0.3)  # (the first connection has sent all it will)
        frame = source.capture()
        assert int(frame.mean()) == pytest.approx(200, abs=3)  # the second connection's
        assert server.connections == 2
    finally:
        source.close()


def test_a_stream_that_stays_stalled_says_it_gave_no_frame(served: list[MjpegServer]) -> None:
    """The first connection sends 4 frames and stalls; opened again, the stream sends
    nothing (its camera gone): once the frames sent are taken, a capture raises, after a
    read and an open timed out."""
    server = MjpegServer([90], [4, 0])
    served.append(server)
    source = open_source(server.url)
    try:
        assert int(source.capture().mean()) == pytest.approx(90, abs=3)
        for _ in range(3):  # (the frames sent may still be buffered: at most 4)
            started = time.monotonic()
            try:
                source.capture()
            except CaptureError as error:
                assert str(error).endswith("gave no frame (opened again, still none)")
                break
        else:
            pytest.fail("a stream that sends nothing more still gave frames")
        # The stream timeout twice (a read, then the open again); OpenCV's default: a minute.
        assert time.monotonic() - started < 20
        assert server.connections == 2
    finally:
        source.close()


def test_a_stream_that_never_answers_is_not_waited_for_long() -> None:
    """A server that accepts and says nothing: the open gives up after the stream timeout,
    with a CaptureError saying what the source may be."""
    with socket.create_server(("127.0.0.1", 0)) as silent:
        started = time.monotonic()
        with pytest.raises(CaptureError, match="a stream that does not answer"):
            open_source(f"http://127.0.0.1:{silent.getsockname()[1]}/camera.mjpg")
        assert time.monotonic() - started < 20


def _video(path: Path, levels: list[int]) -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 5, (160, 120))
    assert writer.isOpened()
    for level in levels:
        writer.write(np.full((120, 160, 3), level, np.uint8))
    writer.release()
    return path


def test_a_video_file_is_read_to_its_end_and_not_opened_again(tmp_path: Path) -> None:
    source = open_source(str(_video(tmp_path / "clip.avi", [40, 120])))
    assert isinstance(source, VideoSource) and not source.reopen
    try:
        assert [int(source.capture().mean()) for _ in range(2)] == pytest.approx([40, 120],
                                                                                  abs=3)
        with pytest.raises(CaptureError, match=r"gave no frame$"):
            source.capture()
    finally:
        source.close()


def test_a_source_that_reopens_starts_again_where_a_file_would_end(tmp_path: Path) -> None:
    """The reopening itself, on a file (a camera index reopens so when unplugged and
    plugged in again): after the last frame, the first again."""
    source = VideoSource(str(_video(tmp_path / "clip.avi", [40, 120])), flush=0, reopen=True)
    try:
        levels = [int(source.capture().mean()) for _ in range(3)]
        assert levels == pytest.approx([40, 120, 40], abs=3)
    finally:
        source.close()
