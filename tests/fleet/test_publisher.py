"""MQTT publishing (issue 19) against a real Mosquitto started by the test on loopback.

Checked against independent references: the journal (what the table recorded, card by card),
the table-driven Punto Banco reference of tests/baccarat (who won each round), the JSON
Schemas in docs/mqtt and docs/table-protocol; never the publisher's own functions.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from prometheus_client.parser import text_string_to_metric_families
from referencing import Registry, Resource

from shoe_controller.cards import Card, new_shoe
from shoe_controller.fleet.broker import Topics
from shoe_controller.fleet.publisher import MqttPublisher
from shoe_controller.journal import Journal
from shoe_controller.table.controller import Update
from shoe_controller.table.machine import Level, TableView
from tests.baccarat.baccarat_reference import brute_force_counts, reference_winner

from .rig import PIT_PASSWORD, PIT_USER, PREFIX, Mosquitto, Subscriber, fleet_table

DOCS = Path(__file__).resolve().parents[2] / "docs"


def schemas() -> dict[str, jsonschema.protocols.Validator]:
    resources = []
    for path in [*(DOCS / "table-protocol").glob("*.schema.json"),
                 *(DOCS / "mqtt").glob("*.schema.json")]:
        document = json.loads(path.read_text(encoding="utf-8"))
        resources.append((document["$id"], Resource.from_contents(document)))
    registry = Registry().with_resources(resources)
    out = {}
    for kind in ("state", "event", "status"):
        document = json.loads((DOCS / "mqtt" / f"{kind}.schema.json").read_text())
        out[kind] = jsonschema.Draft202012Validator(document, registry=registry)
    return out


SCHEMAS = schemas()


def first_copies(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """QoS 1 may deliver a message twice; its id says so."""
    seen: set[str] = set()
    out = []
    for event in events:
        if event["id"] not in seen:
            seen.add(event["id"])
            out.append(event)
    return out


def journal_cards(journal: Path) -> list[tuple[int, str]]:
    with Journal(journal, readonly=True) as store:
        return [(r.data["counter"], r.data["card"])
                for r in store.records() if r.kind == "card"]


def values(codes: list[str]) -> tuple[int, ...]:
    return tuple(min(Card.from_code(code).rank, 10) % 10 for code in codes)


def value_counts(cards: Counter[Card]) -> list[int]:
    """How many cards of each baccarat value (0..9) ``cards`` holds."""
    counts = [0] * 10
    for card, n in cards.items():
        counts[min(card.rank, 10) % 10] += n
    return counts


def assert_live_odds(odds: dict[str, Any], journal: Path, *, seed: int, rounds: int) -> None:
    """The live odds (computed at most every few seconds, the newest at the latest when the
    publisher stops) are those of the cards left after the last round: the shoe's cards
    minus the journal's, by the reference walk of tests/baccarat (an error once fewer than
    the six cards a round can need are left)."""
    left = Counter(new_shoe(1, seed)) - Counter(
        Card.from_code(code) for _, code in journal_cards(journal))
    assert odds["after_round"] == rounds
    if sum(left.values()) < 6:
        assert odds["cards_left"] is None and "six cards" in odds["error"]
        return
    expected = brute_force_counts(value_counts(left))
    sequences = sum(expected[k] for k in ("banker", "player", "tie"))
    assert odds["cards_left"] == sum(left.values()) and odds["error"] is None
    for outcome in ("banker", "player", "tie"):
        assert odds["outcomes"][outcome] == pytest.approx(expected[outcome] / sequences,
                                                          rel=1e-12)


@pytest.fixture
def broker(tmp_path: Path) -> Any:
    mosquitto = Mosquitto(tmp_path / "broker").start()
    yield mosquitto
    mosquitto.stop()


# Seed 3's shoe ends with 5 cards left (no odds: a round can need 6), seed 5's with 10.
@pytest.mark.parametrize("seed", [3, 5])
def test_events_in_order_and_the_state_retained(tmp_path: Path, broker: Mosquitto,
                                                seed: int) -> None:
    watcher = Subscriber(broker)
    try:
        with fleet_table(tmp_path, broker.settings(), "t-07", seed=seed, pit="pit-2") as table:
            watcher.wait(lambda: table.controller.shoes_finished >= 1, "the shoe dealt", 60)
            def final_state_out() -> bool:
                states = watcher.payloads("t-07", "state")
                return bool(states) and states[-1]["shoe"]["finished"]
            watcher.wait(final_state_out, "the finished shoe's state")
            scrape = table.controller.metrics.exposition().decode()
        events = first_copies(watcher.payloads("t-07", "events"))
        # Every event, in order, gap-free from 1, each valid against the schemas.
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        for event in events:
            SCHEMAS["event"].validate(event)
        # The cards are the journal's, in its order: the burn, then every card dealt.
        burn = next(e for e in events if e["type"] == "shoe_burn")["data"]["cards"]
        cards = [e["data"]["card"] for e in events if e["type"] == "card"]
        assert [code for _, code in journal_cards(table.journal)] == burn + cards
        # Each result agrees with the independent reference dealer's winner.
        results = [e["data"] for e in events if e["type"] == "round_result"]
        assert results, "no round was dealt"
        for result in results:
            winner = reference_winner(values(result["player"]), values(result["banker"]))
            assert result["outcome"] == winner, result
        # A pit that subscribes now gets the retained state (and status) at once.
        late = Subscriber(broker)
        try:
            late.wait(lambda: late.of("t-07", "state") and late.of("t-07", "status"),
                      "the retained state and status")
            state_msg, status_msg = late.of("t-07", "state")[0], late.of("t-07", "status")[0]
        finally:
            late.close()
        assert state_msg.retain and status_msg.retain
        state = state_msg.payload
        SCHEMAS["state"].validate(state)
        assert state["table_id"] == "t-07" and state["pit"] == "pit-2"
        assert state["game"] == "baccarat" and state["state"] == "shoe_finished"
        assert state["shoe"]["cards_dealt"] == len(burn) + len(cards)
        assert state["shoe"]["cards_total"] == 52
        assert [r["outcome"] for r in state["recent_results"]] == [r["outcome"] for r in results]
        assert state["last_result"]["round"] == results[-1]["round"]
        assert state["last_event_seq"] == events[-1]["seq"]
        assert_live_odds(state["odds"], table.journal, seed=seed, rounds=len(results))
        # The controller stopped cleanly: status offline, "stopped".
        assert status_msg.payload["online"] is False
        assert status_msg.payload["reason"] == "stopped"
        for status in watcher.payloads("t-07", "status"):
            SCHEMAS["status"].validate(status)
        # The publisher's figures are in the table's Prometheus metrics.
        samples = {s.name: s.value for f in text_string_to_metric_families(scrape)
                   for s in f.samples if s.name.startswith("shoe_mqtt")}
        assert samples["shoe_mqtt_enabled"] == 1 and samples["shoe_mqtt_connected"] == 1
        assert samples["shoe_mqtt_events_published_total"] == len(events)
        assert samples["shoe_mqtt_events_dropped_total"] == 0
    finally:
        watcher.close()


def test_state_republished_after_a_broker_restart(tmp_path: Path, broker: Mosquitto) -> None:
    with fleet_table(tmp_path, broker.settings(), "t-01", seed=5, pace=0.03) as table:
        published = table.publisher.stats
        watcher = Subscriber(broker)
        watcher.wait(lambda: len(watcher.of("t-01", "events")) >= 5, "the first events")
        watcher.close()
        broker.stop()  # a crash: the retained state is gone with it (no persistence)
        dealt = table.controller.view.cards_dealt
        watcher.wait(lambda: table.controller.view.cards_dealt >= dealt + 4
                     and not table.publisher.connected, "cards dealt while it is away")
        assert published.states_dropped > 0  # superseded while away, counted
        broker.start()
        fresh = Subscriber(broker)
        try:
            fresh.wait(lambda: fresh.of("t-01", "state"), "the state re-published", 20)
            first = fresh.of("t-01", "state")[0]
            fresh.wait(lambda: table.controller.shoes_finished >= 1, "the shoe dealt", 60)
            fresh.wait(lambda: fresh.payloads("t-01", "state")[-1]["shoe"]["finished"],
                       "the last state")
        finally:
            fresh.close()
    assert first.payload["version"] > 1 and first.payload["shoe"]["cards_dealt"] > dealt
    events = first_copies(fresh.payloads("t-01", "events"))
    seqs = [e["seq"] for e in events]
    # What was kept while the broker was away came after the restart, in order.
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    assert published.events_dropped == 0


def test_acl_refuses_a_table_publishing_under_another_id(tmp_path: Path) -> None:
    users = {"t-01": "t-01-password", "t-02": "t-02-password", PIT_USER: PIT_PASSWORD}
    broker = Mosquitto(tmp_path / "broker", users=users).start()
    try:
        pit = Subscriber(broker, user=PIT_USER, password=PIT_PASSWORD)
        honest = broker.settings("t-01", users["t-01"])
        with fleet_table(tmp_path / "a", honest, "t-01", seed=1) as good, \
                fleet_table(tmp_path / "b", honest, "t-02", seed=2) as rogue:
            pit.wait(lambda: good.controller.shoes_finished and rogue.controller.shoes_finished,
                     "both shoes dealt", 60)
            pit.wait(lambda: rogue.publisher.stats.refused > 0, "the broker's refusal")
            pit.wait(lambda: pit.payloads("t-01", "state")
                     and pit.payloads("t-01", "state")[-1]["shoe"]["finished"],
                     "the honest table's last state")
        assert pit.of("t-02", "state") == [] and pit.of("t-02", "events") == []
        # The pit's login can read but not write.
        pit.client.publish(f"{PREFIX}/tables/t-01/state", b"{}", qos=1, retain=True).wait_for_publish(5)
        spy = Subscriber(broker, user=PIT_USER, password=PIT_PASSWORD)
        spy.wait(lambda: spy.of("t-01", "state"), "the retained state")
        assert spy.payloads("t-01", "state")[0] != {}
        spy.close()
        pit.close()
    finally:
        broker.stop()


def _view(**changes: Any) -> TableView:
    base = {"state": "in_play.dealing.initial_deal", "alarm": "ok", "prompt": "Deal",
            "level": Level.ACTION, "detail": "", "exit_locked": False, "lights": (), "round": 1,
            "cards_dealt": 0, "due": "player", "latched": (), "lid_open": False,
            "link_up": True}
    base.update(changes)
    return TableView(**base)


def test_held_events_are_published_only_once_revealed(tmp_path: Path,
                                                      broker: Mosquitto) -> None:
    """The stream's hold/reveal used directly (no game holds a card yet): a held card is in
    neither the events nor the state until the event that reveals it."""
    watcher = Subscriber(broker)
    publisher = MqttPublisher(broker.settings(), Topics(PREFIX, "bj-1")).start()
    now = time.time()

    def record(seq: int, events: list[dict[str, Any]], dealt: int) -> None:
        publisher.on_record(seq, now, events, True)
        publisher.on_update(Update(_view(cards_dealt=dealt), events, "card"))

    try:
        watcher.wait(lambda: publisher.connected, "the publisher connected")
        record(1, [{"type": "round_opened", "round": 1}], 0)
        record(2, [{"type": "card", "target": "player", "position": 1, "card": "9H",
                    "counter": 1, "source": "scanner"}], 1)
        record(3, [{"type": "card", "target": "dealer", "position": 2, "card": "KS",
                    "counter": 2, "source": "scanner", "hold": "hole-1"}], 2)
        watcher.wait(lambda: any(s["shoe"]["cards_dealt"] == 2
                                 for s in watcher.payloads("bj-1", "state")),
                     "the state after the held card")
        everything = json.dumps([m.payload for m in watcher.messages])
        assert "KS" not in everything
        assert [e["seq"] for e in watcher.payloads("bj-1", "events")] == [1, 2]
        record(4, [{"type": "round_result", "round": 1, "outcome": "player",
                    "reveal": "hole-1"}], 2)
        watcher.wait(lambda: len(watcher.payloads("bj-1", "events")) >= 4, "the reveal")
        events = watcher.payloads("bj-1", "events")
        assert [(e["seq"], e["type"]) for e in events] == [
            (1, "round_opened"), (2, "card"), (3, "card"), (4, "round_result")]
        assert events[2]["data"]["card"] == "KS" and events[2]["id"] == "bj-1:3:0"
    finally:
        publisher.close()
        watcher.close()
