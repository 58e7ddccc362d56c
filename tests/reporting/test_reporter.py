"""The controller's reporter against the reference table system: drops, outages, restarts of
either side, betting commands; and the controller's down policies."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from shoe_controller.table.controller import TableController
from simulators.table_system import TableSystem, TableSystemOptions
from tests.reporting.helpers import KEY, TOKEN, card_event, reporter_for

pytestmark = pytest.mark.timeout(60)


def feed(reporter, start: int, count: int) -> None:  # type: ignore[no-untyped-def]
    for seq in range(start, start + count):
        reporter.add(seq, float(seq), [card_event(1, seq)])


def test_exactly_once_through_drops_outages_and_restarts(tmp_path: Path) -> None:
    options = TableSystemOptions(token=TOKEN, key=KEY, record=tmp_path / "r.jsonl",
                                 drives_betting=False, drop_at=(5,), down_at=((12, 0.3),))
    system = TableSystem("127.0.0.1", 0, options)
    system.start()
    port = system.port
    reporter = reporter_for(port)
    feed(reporter, 1, 3)  # before connecting: sent on connect
    reporter.start()
    feed(reporter, 4, 20)
    assert reporter.wait_acked(10), reporter.stats
    assert reporter.stats.connects >= 2  # at least the drop at 5 (the outage may come after)
    system.drop_connections()
    feed(reporter, 24, 5)
    assert reporter.wait_acked(10)
    system.close()  # the table system restarts on its record
    feed(reporter, 29, 5)
    system = TableSystem("127.0.0.1", port, options)
    system.start()
    assert reporter.wait_acked(10)
    reporter.close()
    # The controller restarts: its stream is rebuilt from the "journal" (the same adds).
    reporter = reporter_for(port)
    for seq in range(1, 34):
        reporter.add(seq, float(seq), [card_event(1, seq)], live=False)
    feed(reporter, 34, 2)
    reporter.start()
    assert reporter.wait_acked(10)
    reporter.close()
    system.close()
    ids = [e["id"] for e in TableSystem("127.0.0.1", 0, options).accepted]
    assert ids == [f"t1:{seq}:0" for seq in range(1, 36)]


def test_betting_commands_reach_the_owner(tmp_path: Path) -> None:
    options = TableSystemOptions(token=TOKEN, key=KEY, betting_seconds=0.05)
    with TableSystem("127.0.0.1", 0, options) as system:
        reporter = reporter_for(system.port)
        reporter.add(1, 1.0, [{"type": "shoe_loaded", "shoe": 1}])
        reporter.start()
        commands = []
        assert system.wait_for(lambda s: bool(commands.extend(reporter.take_commands())
                                              or commands), 5)
        assert (commands[0].type, commands[0].shoe, commands[0].round) == ("open_betting", 1, 1)
        assert reporter.drives_betting
        reporter.add(2, 2.0, [{"type": "round_opened", "round": 1}])
        assert system.wait_for(lambda s: bool(commands.extend(reporter.take_commands())
                                              or len(commands) > 1), 5)
        assert (commands[1].type, commands[1].round) == ("close_betting", 1)
        reporter.reject(commands[1], "test says no")
        assert system.wait_for(lambda s: any(e["code"] == "not_applicable"
                                             for e in s.errors_received), 5)
        reporter.close()


def test_unreachable_table_system_is_retried_not_fatal() -> None:
    reporter = reporter_for(1)  # nothing listens on port 1
    reporter.add(1, 1.0, [card_event(1, 1)])
    reporter.start()
    assert not reporter.wait_acked(0.3)
    reporter.check()  # no error for the owner: the table keeps going
    assert not reporter.connected and "Error" in reporter.stats.last_error
    reporter.close(drain=False)


@pytest.mark.parametrize(
    ("connected", "drives", "policy", "own"),
    [(True, True, "keep-dealing", False), (True, False, "keep-dealing", True),
     (False, False, "keep-dealing", True), (False, False, "stop-after-round", False),
     (True, True, "stop-after-round", False)],
)
def test_who_runs_the_betting_window(connected: bool, drives: bool, policy: str,
                                     own: bool) -> None:
    controller = TableController.__new__(TableController)
    controller.auto_betting = True
    controller.down_policy = policy
    controller.reporter = SimpleNamespace(connected=connected,  # type: ignore[assignment]
                                          drives_betting=connected and drives)
    assert controller._own_betting() is own
    controller.reporter = None
    assert controller._own_betting() is True
