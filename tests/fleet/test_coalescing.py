"""States are coalesced, events never (docs/mqtt/README.md), against a real Mosquitto.

The reference is what the test handed over: the views (cards dealt) and the events, in
order. Whatever the timing of the updates, a subscriber gets every event, in order, once
(by id), and states whose versions follow one another without a gap, at most one per
``state_seconds``, the last of which is the newest view handed over; every change handed
over is either in a published state or counted as coalesced into a later one.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shoe_controller.fleet.broker import Topics
from shoe_controller.fleet.publisher import MqttPublisher
from shoe_controller.table.controller import Update
from shoe_controller.table.machine import Level, TableView

from .rig import PREFIX, Mosquitto, Subscriber, wait_for

_tables = itertools.count(1)


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Any:
    mosquitto = Mosquitto(tmp_path_factory.mktemp("coalescing") / "broker").start()
    yield mosquitto
    mosquitto.stop()


def view(dealt: int) -> TableView:
    return TableView(state="in_play.dealing", alarm="ok", prompt=f"card {dealt + 1}",
                     level=Level.ACTION, detail="", exit_locked=False, lights=(), round=1,
                     cards_dealt=dealt, due="player", latched=(), lid_open=False,
                     link_up=True)


def first_copies(payloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    return [p for p in payloads if not (p["id"] in seen or seen.add(p["id"]))]


def deal(broker: Mosquitto, gaps: list[float], state_seconds: float) -> None:
    """One card per gap (seconds before it), then check what a subscriber got."""
    table_id = f"c-{next(_tables):03d}"
    watcher = Subscriber(broker)
    publisher = MqttPublisher(broker.settings(), Topics(PREFIX, table_id),
                              state_seconds=state_seconds).start()
    try:
        wait_for(lambda: publisher.connected, "the publisher connected")
        wait_for(lambda: watcher.payloads(table_id, "state"), "the first state")
        for dealt, gap in enumerate(gaps, start=1):
            time.sleep(gap)
            events = [{"type": "card", "target": "player", "position": dealt,
                       "card": "9H", "counter": dealt, "source": "scanner"}]
            publisher.on_record(dealt, time.time(), events, True)
            publisher.on_update(Update(view(dealt), events, "card"))
        cards = len(gaps)

        def converged() -> bool:
            states = watcher.payloads(table_id, "state")
            return states[-1]["shoe"]["cards_dealt"] == cards
        # The newest view is out at most state_seconds after the last change, unasked.
        wait_for(converged, "the newest state", state_seconds + 10)
        time.sleep(state_seconds + 0.05)  # nothing more is coming
        states = watcher.payloads(table_id, "state")
        events = first_copies(watcher.payloads(table_id, "events"))
    finally:
        publisher.close()
        watcher.close()
    # Every event, once, in order: never coalesced.
    assert [e["seq"] for e in events] == list(range(1, cards + 1))
    assert [e["data"]["counter"] for e in events] == list(range(1, cards + 1))
    # States: consecutive versions, none missed; the last is the newest view and names the
    # last event; no two closer than state_seconds (their own clock, a little slack).
    assert [s["version"] for s in states] == list(range(1, len(states) + 1))
    last = states[-1]
    assert last["shoe"]["cards_dealt"] == cards and last["prompt"]["text"] == f"card {cards + 1}"
    assert last["last_event_seq"] == cards
    dealt = [s["shoe"]["cards_dealt"] for s in states]
    assert dealt == sorted(dealt)
    for before, after in itertools.pairwise(states):
        assert after["at"] - before["at"] >= state_seconds - 0.01, (before["at"], after["at"])
    # Each change handed over (the start, and one per card) went out or was coalesced.
    stats = publisher.stats
    assert stats.states_published == len(states)
    assert stats.states_published + stats.states_coalesced == cards + 1
    assert stats.states_dropped == stats.events_dropped == stats.inbox_dropped == 0
    assert stats.events_published == cards


def test_a_burst_is_coalesced_into_the_newest_state(broker: Mosquitto) -> None:
    deal(broker, [0.01] * 30, state_seconds=0.3)


@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from([0.0, 0.002, 0.03, 0.07]), min_size=1, max_size=15))
def test_any_timing_converges_to_the_newest_state(broker: Mosquitto,
                                                   gaps: list[float]) -> None:
    deal(broker, gaps, state_seconds=0.05)
