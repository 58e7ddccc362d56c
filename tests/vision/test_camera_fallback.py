"""End to end: the software shoe misreads cards, the simulated camera films them, the camera
fallback reads them and the round goes on with the right cards, journalled as camera reads.
Twice: with the renderer's clean frames of a camera over the exit (the card found by its
outline), and with the realistic camera inside the shoe (simulators/camera_realism.py: the
index corner behind a rod, in its measured light, noise and JPEG, read in a region)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from live.rig import (  # type: ignore[import-not-found]
    TableShoeModel,
    check_no_card_lost,
    live_table,
    one_deck,
    plan_of,
    records_of,
)

from shoe_controller.camera_fallback import CameraFallback, check_against_scanner
from shoe_controller.cards import Card
from shoe_controller.metrics import TableMetrics
from simulators.camera import SimulatedCamera, render_deck
from simulators.camera_realism import (
    FACE_HEIGHT,
    IN_SHOE_CORNER,
    RealisticCamera,
    realistic_frame,
)
from vision.capture import open_source
from vision.model import enroll
from vision.recognise import Recogniser
from vision.roi import WHOLE_FRAME

from .conftest import enrol_design

CARDS = one_deck(3)
PLAN = plan_of(CARDS)


def test_misread_cards_are_read_by_the_camera(tmp_path: Path, designs, card_cache) -> None:
    misread = (PLAN.card(1, 2), PLAN.card(2, 1), PLAN.card(2, 3))
    truth = {counter: CARDS[counter - 1] for counter in misread}
    model = enrol_design(designs["tango"], sorted(set(truth.values()) | set(CARDS[:8])),
                         card_cache, seed=5)
    with live_table(tmp_path, CARDS, model=TableShoeModel(CARDS, misread_at=misread)) as live:
        camera = SimulatedCamera(lambda: live.shoe.dealt()[-1].card, designs["tango"],
                                 seed=2, cache=card_cache)
        with CameraFallback(camera, Recogniser(model), None, live.controller) as fallback:
            live.step_until(lambda: live.controller.shoes_finished >= 1, "the shoe to finish",
                            timeout=40)
            fallback.check()
        records = live.records()
        reads = {r.data["counter"]: r.data["card"] for r in records_of(records, "camera_read")}
        assert reads == {counter: card.code for counter, card in truth.items()}
        assert not [r for r in records if r.kind == "supervisor"]
        check_no_card_lost(live)
        camera_cards = [e for u in live.updates for e in u.events
                        if e["type"] == "card" and e["source"] == "camera"]
        assert sorted(e["counter"] for e in camera_cards) == sorted(misread)


def test_misread_cards_are_read_by_the_realistic_in_shoe_camera(tmp_path: Path, designs,
                                                               card_cache) -> None:
    """The same round with the realistic camera: enrolled from 5 of its frames per card (the
    cards dealt, in their feb session's light), the misread cards read in the whole frame."""
    misread = (PLAN.card(1, 2), PLAN.card(2, 1), PLAN.card(2, 3))
    truth = {counter: CARDS[counter - 1] for counter in misread}
    enrolled = sorted(set(truth.values()) | set(CARDS[:8]),
                      key=lambda card: (int(card.suit), card.rank))
    faces = render_deck(designs["anglo"], enrolled, height=FACE_HEIGHT, cache=card_cache)
    rng = np.random.default_rng(5)
    model = enroll("in-shoe", [(realistic_frame(faces[card], rng, IN_SHOE_CORNER), card)
                               for card in enrolled for _ in range(5)], roi=WHOLE_FRAME)
    with live_table(tmp_path, CARDS, model=TableShoeModel(CARDS, misread_at=misread)) as live:
        camera = RealisticCamera(lambda: live.shoe.dealt()[-1].card, designs["anglo"],
                                 IN_SHOE_CORNER, seed=2, cache=card_cache)
        with CameraFallback(camera, Recogniser(model), None, live.controller) as fallback:
            live.step_until(lambda: live.controller.shoes_finished >= 1, "the shoe to finish",
                            timeout=40)
            fallback.check()
        records = live.records()
        reads = {r.data["counter"]: r.data["card"] for r in records_of(records, "camera_read")}
        assert reads == {counter: card.code for counter, card in truth.items()}
        assert camera.captures == len(misread)
        assert not [r for r in records if r.kind == "supervisor"]
        check_no_card_lost(live)


def test_a_camera_that_gives_no_frame_leaves_the_card_to_the_supervisor(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The camera's video has run out when a card is misread, as a camera unplugged mid-shoe
    gives no frame: the misread stays latched, the log says why at error level, the
    supervisor enters the card and the shoe plays on. The fallback's owner sees no error
    (before, the worker's CaptureError stopped the controller)."""
    clip = tmp_path / "felt.avi"
    writer = cv2.VideoWriter(str(clip), cv2.VideoWriter_fourcc(*"MJPG"), 5, (160, 120))
    writer.write(np.full((120, 160, 3), (40, 90, 30), np.uint8))
    writer.release()
    source = open_source(str(clip))
    source.capture()  # (its one frame taken: none is left)
    counter = PLAN.card(1, 2)
    unread = CARDS[counter - 1]
    with live_table(tmp_path, CARDS, model=TableShoeModel(CARDS, misread_at=(counter,))) as live:
        metrics = TableMetrics("t1", process=False)
        with CameraFallback(source, _NeverCalled(), None, live.controller,
                            metrics=metrics) as fallback:
            live.step_until(lambda: live.controller.table.alarm == "latched", "the misread")
            assert fallback.wait_idle(10)
            fallback.check()
            (outcome,) = fallback.outcomes
            assert (outcome.kind, outcome.counter, outcome.card) == ("no_frame", counter, None)
            assert "gave no frame" in outcome.reason
            assert metrics.registry.get_sample_value(
                "shoe_camera_reads_total",
                {"table_id": "t1", "purpose": "misread", "outcome": "no_frame"}) == 1
            assert f"camera gave no frame for card {counter}" in caplog.text
            assert "the supervisor must enter it" in caplog.text
            assert live.controller.table.alarm == "latched"
            live.step_until(lambda: live.controller.table.view().latched[0]["remedy"]
                            .startswith("The camera gave no picture"), "the dealer told")
            live.supervise("enter_card", card=unread.code)
            live.step_until(lambda: live.controller.table.alarm == "ok", "the card entered")
            live.play_to_end()
            fallback.check()
        (entered,) = records_of(live.records(), "supervisor", action="enter_card")
        assert entered.data["card"] == unread.code
        assert not records_of(live.records(), "camera_read")
        (declined,) = records_of(live.records(), "camera_declined")
        assert (declined.data["counter"], declined.data["outcome"]) == (counter, "no_frame")
        assert "gave no frame" in declined.data["reason"]
        check_no_card_lost(live)
    source.close()


def test_a_card_the_camera_declines_is_journalled_and_the_dealer_told(tmp_path: Path) -> None:
    """A read under the threshold: the card is not played, the decline is journalled with
    its reason, and the dealer's remedy says to call a supervisor."""
    counter = PLAN.card(1, 2)
    unread = CARDS[counter - 1]
    camera = _Frames()
    with live_table(tmp_path, CARDS, model=TableShoeModel(CARDS, misread_at=(counter,))) as live:
        unsure = _Unsure(Card.from_code("QS" if unread.code != "QS" else "QH"), 0.4)
        with CameraFallback(camera, unsure, 0.9, live.controller) as fallback:
            live.step_until(lambda: live.controller.table.alarm == "latched", "the misread")
            live.step_until(lambda: live.controller.table.view().latched[0]["remedy"]
                            .startswith("The camera could not read it"), "the dealer told")
            live.supervise("enter_card", card=unread.code)
            live.play_to_end()
            fallback.check()
        (declined,) = records_of(live.records(), "camera_declined")
        assert declined.data == {"counter": counter, "outcome": "declined",
                                 "reason": "unsure between two cards"}
        assert not records_of(live.records(), "camera_read")
        check_no_card_lost(live)


class _Frames:
    def capture(self) -> np.ndarray:
        return np.zeros((120, 160, 3), np.uint8)

    def close(self) -> None:
        pass


class _Unsure:
    """A recogniser whose every read is one card at one confidence, with a reason."""

    def __init__(self, card: Card, confidence: float) -> None:
        self.card, self.confidence = card, confidence
        self.reason = "unsure between two cards"

    def recognise(self, frame: np.ndarray) -> _Unsure:
        return self


class _NeverCalled:
    """A recogniser for a camera that gives no frame: nothing to recognise."""

    def recognise(self, frame: np.ndarray) -> None:
        raise AssertionError("a frame was recognised, but the camera gave none")


class _Read:
    def __init__(self, card: Card | None, confidence: float) -> None:
        self.card, self.confidence = card, confidence


def test_cross_check_reports_only_a_confident_disagreement() -> None:
    qs, ks = Card.from_code("QS"), Card.from_code("KS")
    assert check_against_scanner(4, qs, _Read(qs, 0.9), 0.2) is None
    assert check_against_scanner(4, qs, _Read(None, 0.0), 0.2) is None
    assert check_against_scanner(4, qs, _Read(ks, 0.1), 0.2) is None
    found = check_against_scanner(4, qs, _Read(ks, 0.5), 0.2)
    assert found is not None and found.camera == ks and found.scanner == qs
