"""The camera fallback: when the shoe cannot read a card, read it from the camera, or decline.

Wiring: :meth:`CameraFallback.attach` adds a listener to a :class:`TableController`. The
listener runs on the controller's thread, so it only queues work: a worker thread of the
fallback captures a frame and recognises it, and never touches the table itself. For a card
whose face is unknown (a ``card_pending`` event of reason ``misread``, or ``counter_gap`` for
a card that left the shoe unreported, carrying the card's ``counter``):

- confident read (the deck's threshold, or a stricter one given here): it submits
  ``CameraRead(counter, card, confidence)`` with ``controller.submit``; the controller's
  thread journals it (a ``camera_read`` record) and the table plays the card with source
  ``camera``;
- otherwise the misread stays latched, the supervisor enters the card by hand, and the log says
  why the camera declined; it submits ``CameraDeclined(counter, "declined", reason)``, so the
  dealer's remedy turns from "leave it under the camera" to "call a supervisor".

Cross-check mode reads every card the scanner read too, and reports each *confident*
disagreement (:func:`check_against_scanner`) to ``on_disagreement`` and the log; a camera that
declines is not a disagreement.

A camera that gives no frame (its capture raises ``OSError``, as
:class:`vision.capture.CaptureError` is: a camera unplugged, a stream that stopped) is a
fault of the camera, not of the table: the card is not read (a misread stays latched for the
supervisor, as when the camera declines, with ``CameraDeclined(counter, "no_frame", ...)``),
the log says so at error level, the metrics count it (outcome ``no_frame``), and the next card
tries the camera again. Any other exception in the worker is a fault of the fallback itself
and reaches the owner: it is passed to ``on_error`` and re-raised by :meth:`check` and
:meth:`close`.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, Self

import numpy as np

from shoe_controller.cards import Card
from shoe_controller.table.inputs import CameraDeclined, CameraRead, TableInput

_UNREAD = ("misread", "counter_gap")
"""Pending cards whose face the shoe did not report (misread, or left unreported)."""

log = logging.getLogger("shoe_controller.camera")


class Camera(Protocol):
    def capture(self) -> np.ndarray:
        """The newest frame (BGR); ``OSError`` when the camera gives none."""
        ...


OUTCOMES_KEPT = 1000
"""The most recent outcomes kept (:attr:`CameraFallback.outcomes`): a table that cross-checks
every card runs for weeks, and the log and the metrics keep the rest."""


class Reader(Protocol):
    """What the fallback needs from :class:`vision.recognise.Recogniser`."""

    def recognise(self, frame: np.ndarray) -> Any: ...


class Submitter(Protocol):
    listeners: list[Callable[[Any], None]]

    def submit(self, item: TableInput) -> None: ...


@dataclass(frozen=True)
class Disagreement:
    """The camera confidently read another card than the scanner did."""

    counter: int
    scanner: Card
    camera: Card
    confidence: float


@dataclass(frozen=True)
class Outcome:
    """What the fallback did with one card (kept in :attr:`CameraFallback.outcomes`)."""

    kind: str  # "camera_read", "declined", "agrees", "disagrees", "unchecked", "no_frame"
    counter: int
    card: Card | None
    confidence: float
    reason: str = ""


def check_against_scanner(counter: int, scanner: Card, read: Any, threshold: float
                          ) -> Disagreement | None:
    """A disagreement if the camera read (``Recognition``) names another card confidently."""
    if read.card is None or read.confidence < threshold or read.card == scanner:
        return None
    return Disagreement(counter, scanner, read.card, float(read.confidence))


_STOP = object()


class CameraFallback:
    def __init__(
        self,
        camera: Camera,
        recogniser: Reader,
        threshold: float | None,
        controller: Submitter,
        *,
        cross_check: bool = False,
        on_disagreement: Callable[[Disagreement], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
        metrics: Any = None,
    ) -> None:
        self.camera = camera
        self.recogniser = recogniser
        self.threshold = threshold if threshold is not None else float(
            getattr(recogniser, "threshold", 0.0))
        self.controller = controller
        self.cross_check = cross_check
        self.on_disagreement = on_disagreement
        self.on_error = on_error
        #: ``TableMetrics`` (or None): each read's time and outcome (``observe_camera``).
        self.metrics = metrics
        self.outcomes: deque[Outcome] = deque(maxlen=OUTCOMES_KEPT)
        self._work: queue.Queue[object] = queue.Queue()
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._idle = threading.Condition()
        self._pending = 0

    # ------------------------------------------------------------- life
    def attach(self) -> CameraFallback:
        """Listen to the controller and start the worker thread."""
        self.controller.listeners.append(self.on_update)
        self._thread = threading.Thread(target=self._run, name="camera-fallback", daemon=True)
        self._thread.start()
        return self

    def close(self, timeout: float = 5.0) -> None:
        if self.on_update in self.controller.listeners:
            self.controller.listeners.remove(self.on_update)
        if self._thread is not None:
            self._work.put(_STOP)
            self._thread.join(timeout)
            self._thread = None
        self.check()

    def __enter__(self) -> Self:
        return self.attach()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def check(self) -> None:
        """Re-raise an error the worker met (the owner calls this, e.g. once per step)."""
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def wait_idle(self, timeout: float) -> bool:
        """Wait until every queued card has been handled (for tests and orderly shutdown)."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    # ------------------------------------------------------------- listener (controller thread)
    def on_update(self, update: Any) -> None:
        for event in update.events:
            kind = event.get("type")
            if kind == "card_pending" and event.get("reason") in _UNREAD:
                # A card whose face is unknown lies where it was due: read it there.
                self._enqueue(("misread", int(event["counter"]), None))
            elif (self.cross_check and kind in ("card", "burn_card")
                  and event.get("source") == "scanner" and event.get("counter") is not None):
                self._enqueue(("check", int(event["counter"]), Card.from_code(event["card"])))

    def _enqueue(self, job: tuple[str, int, Card | None]) -> None:
        with self._idle:
            self._pending += 1
        self._work.put(job)

    # ------------------------------------------------------------- worker thread
    def _run(self) -> None:
        while True:
            job = self._work.get()
            if job is _STOP:
                return
            try:
                kind, counter, scanner = job  # type: ignore[misc]
                if kind == "misread":
                    self._read_misread(counter)
                else:
                    self._cross_check(counter, scanner)
            except Exception as exc:
                log.exception("camera fallback failed")
                self._error = exc
                if self.on_error is not None:
                    self.on_error(exc)
            finally:
                with self._idle:
                    self._pending -= 1
                    self._idle.notify_all()

    def _read(self, purpose: str, counter: int) -> tuple[Any, float] | None:
        """Capture a frame and recognise it: (the read, seconds it took); None when the
        camera gave no frame (counted, logged and kept as an outcome ``no_frame``)."""
        started = time.perf_counter()
        try:
            frame = self.camera.capture()
        except OSError as exc:
            self._observe(purpose, "no_frame", time.perf_counter() - started)
            self.outcomes.append(Outcome("no_frame", counter, None, 0.0, str(exc)))
            after = ("the supervisor must enter it" if purpose == "misread"
                     else "not cross-checked")
            log.error("camera gave no frame for card %d (%s): %s", counter, exc, after,
                      extra={"counter": counter})
            if purpose == "misread":  # (the dealer is told to call the supervisor now)
                self.controller.submit(CameraDeclined(counter, "no_frame", str(exc)))
            return None
        read = self.recogniser.recognise(frame)
        return read, time.perf_counter() - started

    def _observe(self, purpose: str, outcome: str, seconds: float) -> None:
        if self.metrics is not None:
            self.metrics.observe_camera(purpose, outcome, seconds)

    def _read_misread(self, counter: int) -> None:
        done = self._read("misread", counter)
        if done is None:
            return
        read, seconds = done
        confident = read.card is not None and read.confidence >= self.threshold
        self._observe("misread", "read" if confident else "declined", seconds)
        if confident:
            self.outcomes.append(Outcome("camera_read", counter, read.card, read.confidence))
            log.info("camera read unread card %d as %s (confidence %.3f)", counter,
                     read.card.code, read.confidence,
                     extra={"counter": counter, "card": read.card.code})
            self.controller.submit(CameraRead(counter, read.card, float(read.confidence)))
            return
        reason = read.reason or f"confidence {read.confidence:.3f} < {self.threshold:.3f}"
        self.outcomes.append(Outcome("declined", counter, None, read.confidence, reason))
        log.warning("camera could not read card %d (%s): the supervisor must enter it",
                    counter, reason, extra={"counter": counter})
        self.controller.submit(CameraDeclined(counter, "declined", reason))

    def _cross_check(self, counter: int, scanner: Card | None) -> None:
        assert scanner is not None
        done = self._read("check", counter)
        if done is None:
            return
        read, seconds = done
        disagreement = check_against_scanner(counter, scanner, read, self.threshold)
        if disagreement is None:
            kind = "agrees" if read.card == scanner else "unchecked"
            self._observe("check", kind, seconds)
            self.outcomes.append(Outcome(kind, counter, read.card, read.confidence, read.reason))
            return
        self._observe("check", "disagrees", seconds)
        self.outcomes.append(Outcome("disagrees", counter, read.card, read.confidence))
        log.warning("camera reads card %d as %s but the scanner as %s", counter,
                    disagreement.camera.code, scanner.code,
                    extra={"counter": counter, "camera": disagreement.camera.code,
                           "scanner": scanner.code})
        if self.on_disagreement is not None:
            self.on_disagreement(disagreement)
