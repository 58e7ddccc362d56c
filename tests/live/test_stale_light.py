"""Issue 20, reproduced exactly: a stale SHUFFLE light and a dealer who reloads on it.

What happened on a bad line (``shoe sim --tcp`` behind a corrupting proxy, ``shoe run``): the
controller lit SHUFFLE ("Load a shuffled shoe") before it had taken in the shoe's SHOE_LOADED;
then it unlocked for the first burn card and turned SHUFFLE off. The frame turning it off was
damaged; the unlock got through. The first card came out, the exit locked behind it, SHUFFLE
was still lit, and the virtual dealer loaded a new shoe. The controller kept asking for card 2,
the new shoe's next card is 1, so it ignored every unlock: the table froze, nothing latched.

Here the same sequence is arranged deterministically on the in-memory wire, with two
manipulators that decode the frames passing by (:class:`FrameFilter`):

* shoe -> host: the shoe's SHOE_LOADED is held back until the host has lit SHUFFLE (the host
  lights it at link-up, seeing no shoe yet; the shoe retransmits the announcement);
* host -> shoe: the first SetIndicators that turns SHUFFLE off is dropped, once (the link
  retransmits it); everything else passes.

With the careful dealer (the default) the stale light is ignored and the shoe is dealt to the
end. With the careless dealer (``careless_reload=True``: the dealer of issue 20) the table must
not stall in silence: within a bounded time it either latches an irregularity the dealer sees
(level error) or deals on correctly. That second test fails on a controller that sends a
light after the unlock that relates to it and has no liveness guard (the table freezes).
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from firmware_protocol.codec import FrameDecoder
from firmware_protocol.messages import (
    Indicator,
    Message,
    SetIndicators,
    ShoeEvent,
    ShoeStateChanged,
)
from shoe_controller.table.machine import Level
from shoe_controller.transports.memory import memory_pair
from simulators.dealer import VirtualDealer
from simulators.shoe import ShoeRunner, SimulatedShoe, simulator_identity

from .rig import (
    LINK,
    STEP,
    LiveTable,
    Shoe,
    TableShoeModel,
    check_matches_replay,
    check_no_card_lost,
    controller_on,
    one_deck,
)

CARDS = one_deck(20)
FINISH_SECONDS = 40.0
"""Longest a 52-card shoe may take here (it takes a few seconds; a loaded 2-core box is slow)."""
SILENCE_SECONDS = 15.0
"""No input reaching the table for this long, with no irregularity latched, is a silent stall.
Here a round takes well under a second and a link loss (1 s) heals within a second or two; the
rest is room for a liveness guard that asks a silent shoe for its state before it latches."""


class FrameFilter:
    """A memory-wire manipulator that drops the frames ``drop(message)`` picks.

    Bursts are split at the 0x00 delimiters and each frame is decoded on its own (a fresh
    :class:`FrameDecoder` per frame), so exactly the chosen frames vanish and every other byte
    passes unchanged. A partial frame (no delimiter yet) is held until it is complete.
    """

    def __init__(self, drop: Callable[[Message], bool]) -> None:
        self._drop = drop
        self._partial = bytearray()
        self.dropped: list[Message] = []
        self.passed: list[Message] = []

    def __call__(self, data: bytes) -> list[bytes]:
        self._partial += data
        end = self._partial.rfind(0)
        if end < 0:
            return []
        complete = bytes(self._partial[: end + 1])
        del self._partial[: end + 1]
        out = bytearray()
        start = 0
        while start < len(complete):
            stop = complete.index(0, start) + 1
            frame = complete[start:stop]
            start = stop
            decoded = FrameDecoder().feed(frame) if len(frame) > 1 else []
            if decoded and self._drop(decoded[0].message):
                self.dropped.append(decoded[0].message)
                continue
            self.passed += [f.message for f in decoded]
            out += frame
        return [bytes(out)] if out else []


def shuffle_lit(message: Message) -> bool:
    return isinstance(message, SetIndicators) and bool(message.lights & Indicator.SHUFFLE)


class StaleLightLine:
    """Both manipulators of the issue-20 sequence, and what they did."""

    def __init__(self) -> None:
        self.host_lit_shuffle = False
        self.loaded_held_back = 0
        self.to_host = FrameFilter(self._hold_back_loaded)
        self.to_shoe = FrameFilter(self._drop_first_shuffle_off)

    def _hold_back_loaded(self, message: Message) -> bool:
        held = (isinstance(message, ShoeStateChanged) and message.event is ShoeEvent.SHOE_LOADED
                and not self.host_lit_shuffle)
        self.loaded_held_back += held
        return held

    def _drop_first_shuffle_off(self, message: Message) -> bool:
        if not isinstance(message, SetIndicators):
            return False
        if shuffle_lit(message):
            self.host_lit_shuffle = True
            return False
        return self.host_lit_shuffle and not self.to_shoe.dropped


@contextlib.contextmanager
def stale_light_table(tmp_path: Path, *, careless_reload: bool) -> Iterator[
        tuple[LiveTable, StaleLightLine]]:
    line = StaleLightLine()
    sim = SimulatedShoe(
        TableShoeModel(CARDS),
        dealer=VirtualDealer(pace=0, button_delay=0.01, careless_reload=careless_reload),
        link_config=LINK,
        # The freeze needs lights and lock as two commands (a shoe without STATE_COMMAND);
        # with SetState they travel as one and cannot disagree.
        identity=simulator_identity(state_command=False),
        rng=random.Random(7),
        announce_loaded=True,
    )
    host, device = memory_pair(host_to_device=line.to_shoe, device_to_host=line.to_host)
    with ShoeRunner(sim, device) as runner:
        try:
            shoe = Shoe(sim, runner, host.wire, host)
            with controller_on(shoe, tmp_path / "journal.sqlite", CARDS, host=host) as live:
                yield live, line
        finally:
            host.close()


def check_sequence_happened(line: StaleLightLine) -> None:
    """The manipulators really arranged issue 20's sequence."""
    assert line.loaded_held_back >= 1, "SHOE_LOADED was never held back"
    assert line.host_lit_shuffle, "the host never lit SHUFFLE"
    assert len(line.to_shoe.dropped) == 1, line.to_shoe.dropped
    dropped = line.to_shoe.dropped[0]
    assert isinstance(dropped, SetIndicators) and not dropped.lights & Indicator.SHUFFLE


def latched(live: LiveTable) -> bool:
    """The table latched an irregularity and shows it to the dealer as an error."""
    view = live.controller.view
    return view.level is Level.ERROR and bool(view.latched)


def table_state(live: LiveTable) -> str:
    view = live.controller.view
    model = live.shoe.model
    return (f"table: {view.state}, {view.level.value}, prompt {view.prompt!r}, "
            f"last card {live.controller.table.last_counter}, latched {view.latched}; "
            f"shoe: {model.counter} cards out of this load, reloaded "
            f"{model.first_shoe is not None}, exit locked {model.exit_locked}, "
            f"lights {Indicator(model.indicators)!r}")


def test_careful_dealer_ignores_the_stale_light_and_the_shoe_is_dealt_to_the_end(
    tmp_path: Path,
) -> None:
    with stale_light_table(tmp_path, careless_reload=False) as (live, line):
        live.play_to_end(timeout=FINISH_SECONDS)
        check_sequence_happened(line)
        lines = check_no_card_lost(live)
        check_matches_replay(live, lines)


def test_careless_dealer_reloading_on_the_stale_light_does_not_freeze_the_table_silently(
    tmp_path: Path,
) -> None:
    with stale_light_table(tmp_path, careless_reload=True) as (live, line):
        controller = live.controller
        end = time.monotonic() + FINISH_SECONDS
        inputs, quiet_since = len(live.updates), time.monotonic()
        while not latched(live) and controller.shoes_finished < 1:
            live.shoe.runner.check()
            now = time.monotonic()
            if len(live.updates) != inputs:
                inputs, quiet_since = len(live.updates), now
            assert now - quiet_since < SILENCE_SECONDS, (
                f"the table stalled in silence: nothing for {SILENCE_SECONDS:g} s and no "
                f"irregularity shown; {table_state(live)}")
            assert now < end, f"the shoe did not finish in {FINISH_SECONDS:g} s; " + (
                table_state(live))
            controller.step(STEP)
        check_sequence_happened(line)
        if latched(live):
            return  # the dealer is told: the prompt is the irregularity's, the exit locked
        # It dealt on: every card of the first shoe accounted for, as `shoe replay` deals it.
        lines = check_no_card_lost(live)
        check_matches_replay(live, lines)
