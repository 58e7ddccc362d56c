"""What the controller tells the shoe: lights and lock together, or in an order that is safe.

A shoe that takes SetState (revision 1.2) gets the lights and the lock as one command; any
other shoe gets SetIndicators and SetExitLock, the lights of a state before the unlock that
belongs to it and after the lock that ends one (SPEC 6.4). Either way, whenever the shoe's exit
is open, its lights are those of the state that opened it.
"""

from __future__ import annotations

import pytest

from firmware_protocol.messages import SetExitLock, SetIndicators, SetState
from shoe_controller.table.controller import LIGHTS

from .harness import Harness


def deal_a_few(harness: Harness, cards: int) -> None:
    harness.settle()
    for _ in range(cards):
        table = harness.controller.table
        view = table.view()
        if view.state.endswith("betting_open") or table.waiting_for_round():
            from shoe_controller.table.inputs import BettingCommand

            harness.controller.submit(BettingCommand(
                "close" if view.state.endswith("betting_open") else "open", "table-system"))
            harness.settle()
        harness.shoe.pull(harness.clock())
        harness.settle()


@pytest.mark.parametrize("state_command", [True, False], ids=["SetState", "two-commands"])
def test_the_shoes_lights_always_belong_to_its_exit_state(state_command: bool) -> None:
    harness = Harness(seed=4, state_command=state_command)
    try:
        deal_a_few(harness, 12)
        received = harness.shoe.received
        kinds = {type(m) for m in received}
        if state_command:
            assert SetState in kinds and not kinds & {SetExitLock, SetIndicators}
        else:
            assert SetState not in kinds and {SetExitLock, SetIndicators} <= kinds
            # The lights of a state go before the unlock of that state.
            lights = None
            for message in received:
                if isinstance(message, SetIndicators):
                    lights = message.lights
                elif isinstance(message, SetExitLock) and not message.locked:
                    assert lights is not None
        view = harness.controller.table.view()
        expected = 0
        for name in view.lights:
            expected |= LIGHTS[name]
        assert harness.shoe.model.indicators == int(expected)
        assert harness.shoe.model.exit_locked == view.exit_locked
    finally:
        harness.close()
