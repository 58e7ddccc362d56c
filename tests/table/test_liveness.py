"""The liveness guard: a shoe that does not do what it is told is resynchronised, then latched."""

from __future__ import annotations

from firmware_protocol.messages import Message, SetExitLock, SetState, StatusRequest
from shoe_controller.table.liveness import Expected, LivenessGuard, disagreement

from .harness import PATIENCE, STATUS_INTERVAL, Harness, RecordingShoe

UNLOCKED_FOR_5 = Expected(exit_locked=False, for_card=5, lights=0x01)


def test_a_report_that_reflects_the_commands_agrees() -> None:
    assert disagreement(UNLOCKED_FOR_5, exit_locked=False, counter=4, lights=0x01) == ""
    # Card 5 left and the shoe relocked by itself: what an unlock for card 5 leads to.
    assert disagreement(UNLOCKED_FOR_5, exit_locked=True, counter=5, lights=0x01) == ""


def test_disagreements_are_named() -> None:
    assert "unlocked it for card 5" in disagreement(
        UNLOCKED_FOR_5, exit_locked=True, counter=4, lights=0x01)
    locked = Expected(exit_locked=True, for_card=0, lights=0x10)
    assert "open although" in disagreement(locked, exit_locked=False, counter=4, lights=0x10)
    assert "lights 0x00" in disagreement(locked, exit_locked=True, counter=4, lights=0)
    no_lights = Expected(exit_locked=True, for_card=0, lights=0x10, check_lights=False)
    assert disagreement(no_lights, exit_locked=True, counter=4, lights=0) == ""


def test_the_guard_resyncs_first_and_latches_once_after_its_patience() -> None:
    guard = LivenessGuard(interval=2.0, patience=4.0)
    assert guard.request_due(0.0)
    guard.requested(0.0, UNLOCKED_FOR_5)
    assert not guard.request_due(1.0)  # one request at a time (until it is overdue)
    bad = {"exit_locked": True, "counter": 4, "lights": 0x01}
    assert guard.on_report(0.1, **bad).action == "resync"
    assert guard.request_due(0.1)  # asks again at once after a resync
    times = []
    now = 0.1
    while now < 10:
        now += 0.5
        if guard.request_due(now):
            guard.requested(now, UNLOCKED_FOR_5)
            times.append((now + 0.01, guard.on_report(now + 0.01, **bad).action))
    latches = [t for t, action in times if action == "latch"]
    assert len(latches) == 1 and 4.0 <= latches[0] - 0.1 <= 4.6
    good = {"exit_locked": False, "counter": 4, "lights": 0x01}
    guard.requested(now, UNLOCKED_FOR_5)
    assert guard.on_report(now, **good).action == "ok"  # the episode ends


def test_an_unanswered_request_is_asked_again_but_never_latches() -> None:
    """A bad line can hold a request back for seconds: that is no disobedient shoe."""
    guard = LivenessGuard(interval=2.0, patience=4.0)
    now = 0.0
    actions = []
    while now < 30:
        if guard.request_due(now):
            guard.requested(now, UNLOCKED_FOR_5)
        now += 0.5
        actions.append(guard.check_overdue(now).action)
    assert "resync" in actions and "latch" not in actions


class DeafShoe(RecordingShoe):
    """A shoe whose firmware silently ignores every unlock (and still answers status)."""

    deaf = False

    def _handle_command(self, message: Message, now: float) -> None:
        if self.deaf and is_unlock(message):
            if isinstance(message, SetState):  # the lights are taken, the unlock is not
                self._set_lights(int(message.lights))
            return
        super()._handle_command(message, now)


def is_unlock(message: object) -> bool:
    return isinstance(message, SetExitLock | SetState) and not message.locked


def test_a_shoe_that_ignores_unlocks_is_resynchronised_then_latched_in_time() -> None:
    harness = Harness(seed=11)
    try:
        harness.shoe.__class__ = DeafShoe
        harness.settle()
        table = harness.controller.table
        assert table.view().due == "burn" and not harness.shoe.model.exit_locked
        mark = len(harness.shoe.received)
        harness.shoe.deaf = True  # from now on every unlock is ignored: card 2's too
        harness.shoe.pull(harness.clock())
        started = harness.clock()
        latched_at = None
        while harness.clock() - started < 10 and latched_at is None:
            harness.run(0.05)
            if any(latch["kind"] == "shoe_not_responding" for latch in table.view().latched):
                latched_at = harness.clock() - started
        assert latched_at is not None, "the guard never latched"
        # Documented bound: one status interval to notice, then the patience.
        assert latched_at <= STATUS_INTERVAL + PATIENCE + 0.5
        sent = harness.shoe.received[mark:]
        unlocks = [m for m in sent if is_unlock(m)]
        assert len(unlocks) >= 2, "the unlock was not sent again before latching"
        assert sum(isinstance(m, StatusRequest) for m in sent) >= 2
        view = table.view()
        assert view.exit_locked and view.level.value == "error"
        assert "does not respond" in view.prompt
    finally:
        harness.close()


def test_a_late_answer_is_judged_against_the_request_it_answers() -> None:
    """Seen on a bad line: a request went unanswered, a new one went out after the commands
    had changed, and then the first answer came, reflecting the first request's commands."""
    guard = LivenessGuard(interval=2.0, patience=4.0)
    before = Expected(exit_locked=False, for_card=5, lights=0x01)
    after = Expected(exit_locked=True, for_card=0, lights=0x04)
    guard.requested(0.0, before)
    assert guard.check_overdue(4.0).action == "resync"
    assert guard.request_due(4.0)
    guard.requested(4.0, after)
    late = {"exit_locked": False, "counter": 4, "lights": 0x01}  # the answer to the first
    assert guard.on_report(4.5, **late).action == "ok"
    assert guard.on_report(4.6, exit_locked=True, counter=5, lights=0x04).action == "ok"
    assert guard.on_report(4.7, exit_locked=True, counter=5, lights=0x04).action == "ok"  # unasked
