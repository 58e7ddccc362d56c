"""Hole-card secrecy through a real controller: the real journal, table, shoe link and software
shoe (tests/table/harness.py, a one-deck shoe so each card's code is unique), the built-in
players answering. Until the dealer turns the hole card over, its code is in no output: not in
what the controller hands its listeners (the dealer display, its API, the console), not in its
logs, not in the table-system stream; a restart between the hole card and its reveal holds it
again. The journal has it from the moment it was scanned.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from shoe_controller.reporting.stream import EventStream
from shoe_controller.table.inputs import BettingCommand
from tests.table import harness as harness_module


@pytest.fixture
def table(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(harness_module, "PROFILE", "blackjack-8d")
    table = harness_module.Harness(seed=11)
    yield table
    table.close()


class Outputs:
    """Everything that left the controller, in order, as text."""

    def __init__(self, table: Any) -> None:
        self.lines: list[str] = []
        self.stream = EventStream("t1")
        self.attach(table)

    def attach(self, table: Any) -> None:
        controller = table.controller
        controller.listeners.append(self.on_update)
        controller.record_taps.append(self.on_record)
        self.lines.append(repr(controller.view.to_dict()))

    def on_update(self, update: Any) -> None:
        self.lines.append(repr(update.events) + repr(update.view.to_dict()))

    def on_record(self, seq: int, at: float, events: list, live: bool) -> None:
        if live:
            for out in self.stream.add(seq, at, events):
                self.lines.append(repr(out.to_message("t1", "s")))
        else:
            self.stream.add(seq, at, events)


class Logs(logging.Handler):
    def __init__(self, outputs: Outputs) -> None:
        super().__init__(logging.DEBUG)
        self.outputs = outputs

    def emit(self, record: logging.LogRecord) -> None:
        self.outputs.lines.append(self.format(record) + repr(record.__dict__))


def hole_cards(table: Any) -> dict[int, str]:
    """Round -> hole card, from the journal (the fold's events)."""
    holes: dict[int, str] = {}
    from shoe_controller.table.fold import replay_records

    def on_record(_record: Any, _item: Any, events: list) -> None:
        for event in events:
            if event["type"] == "card" and event.get("reason") == "hole":
                holes[event["round"]] = event["card"]

    replay_records(table.journal, settings=None, on_record=on_record)
    return holes


def deal(table: Any, until: Any, limit: int = 600) -> None:
    """The dealer draws whenever the exit is open and confirms results, until ``until()``."""
    for _ in range(limit):
        if until():
            return
        view = table.controller.table.view()
        if view.due is not None and not view.exit_locked:
            table.shoe.pull(table.clock())
        table.run(0.02)
    raise AssertionError(f"stuck: {table.controller.table.view()}")


def test_no_output_has_the_hole_card_before_it_is_turned(table: Any) -> None:
    outputs = Outputs(table)
    handler = Logs(outputs)
    root = logging.getLogger()
    root.addHandler(handler)
    old_level = root.level
    root.setLevel(logging.DEBUG)
    try:
        deal(table, lambda: table.controller.table.waiting_for_round())
        checked = 0
        restarted = False
        while table.controller.table.state != "shoe_finished":
            controller = table.controller
            controller.submit(BettingCommand("open", "table-system"))
            table.run(0.05)
            round_number = controller.table.round_number
            mark = len(outputs.lines)
            controller.submit(BettingCommand("close", "table-system", [2, 4]))
            # Deal until the hole card is journalled, then look before it is revealed.
            deal(table, lambda n=round_number: n in hole_cards(table))
            hole = hole_cards(table)[round_number]
            if not any("hole_card_revealed" in line for line in outputs.lines[mark:]):
                assert not any(hole in line for line in outputs.lines[mark:]), hole
                checked += 1
                if not restarted:
                    table.restart()  # between the hole card and its reveal
                    outputs.attach(table)
                    restarted = True
                    table.run(0.5)
                    assert not any(hole in line for line in outputs.lines[mark:]), hole
            deal(table, lambda: table.controller.table.state.endswith("result_shown"))
            assert any(hole in line for line in outputs.lines[mark:])  # shown in the end
            table.shoe.press_button(table.clock())
            deal(table, lambda: table.controller.table.waiting_for_round()
                 or table.controller.table.state == "shoe_finished")
        assert checked >= 2 and restarted
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    assert table.violations == []
