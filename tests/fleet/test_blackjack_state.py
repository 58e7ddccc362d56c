"""A live blackjack table publishing to a real Mosquitto (issue 17): the retained state's last
result in blackjack's form, checked against the table-driven reference of tests/blackjack
(totals and each hand's payout worked out from the cards the events carry), and the hole card
in no state before the stream releases it.

A one-deck shoe, so each card's code names one card: a code in a state names that card.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from shoe_controller.journal import Journal
from shoe_controller.table.fold import replay_records
from tests.blackjack.blackjack_reference import hand_units, natural, total

from .rig import Mosquitto, Subscriber, fleet_table
from .test_publisher import SCHEMAS, first_copies

TABLE = "bj-1"


@pytest.fixture
def broker(tmp_path: Path) -> Any:
    mosquitto = Mosquitto(tmp_path / "broker").start()
    yield mosquitto
    mosquitto.stop()


def hole_cards(journal: Path) -> dict[int, str]:
    """Round -> its hole card, from the journal (the table's fold of its records)."""
    holes: dict[int, str] = {}

    def on_record(_record: Any, _item: Any, events: list[dict[str, Any]]) -> None:
        for event in events:
            if event["type"] == "card" and event.get("reason") == "hole":
                holes[event["round"]] = event["card"]

    with Journal(journal, readonly=True) as store:
        replay_records(store, settings=None, on_record=on_record)
    return holes


def expected_result(data: dict[str, Any]) -> dict[str, Any]:
    """What the pit should be told of a round, from its cards by the reference rules."""
    dealer = data["dealer"]["cards"]
    dealer_total, _ = total(dealer)
    seats = {}
    for seat, hands in data["seats"].items():
        seats[seat] = []
        for hand in hands:
            units = hand_units(hand["cards"], hand["from_split"], hand["doubled"], dealer)
            mine, soft = total(hand["cards"])
            seats[seat].append({
                "total": mine, "soft": soft, "bust": mine > 21,
                "blackjack": natural(hand["cards"], hand["from_split"]),
                "doubled": hand["doubled"], "payout": units,
                "outcome": "win" if units > 0 else "lose" if units < 0 else "push"})
    return {"round": data["round"], "seats": seats,
            "dealer": {"total": dealer_total, "bust": dealer_total > 21,
                       "blackjack": natural(dealer, False)}}


def test_blackjack_last_result_and_the_hole_card_on_mqtt(tmp_path: Path,
                                                         broker: Mosquitto) -> None:
    watcher = Subscriber(broker)
    try:
        with fleet_table(tmp_path, broker.settings(), TABLE, seed=5, profile="blackjack-8d",
                         wait_connected=True) as table:
            watcher.wait(lambda: table.controller.shoes_finished >= 1, "the shoe dealt", 60)

            def final_state_out() -> bool:
                states = watcher.payloads(TABLE, "state")
                return bool(states) and states[-1]["shoe"]["finished"]
            watcher.wait(final_state_out, "the finished shoe's state")
        events = first_copies(watcher.payloads(TABLE, "events"))
        states = watcher.payloads(TABLE, "state")
        for state in states:
            SCHEMAS["state"].validate(state)
        assert states[0]["game"] == "blackjack" and states[0]["profile"] == "blackjack-8d"
        assert states[-1]["shoe"]["cards_total"] == 8 * 52  # the profile's shoe: its progress

        # Each round's result, as the state says it once the round_result is out.
        results = [e for e in events if e["type"] == "round_result"]
        assert len(results) >= 3, "too few rounds dealt"
        for event in results:
            after = [s for s in states if s["last_event_seq"] >= event["seq"]
                     and (s["last_result"] or {}).get("round") == event["data"]["round"]]
            assert after, f"no state with round {event['data']['round']}'s result"
            told = {k: v for k, v in after[0]["last_result"].items() if k != "at"}
            assert told == expected_result(event["data"])

        # No state names a hole card before the stream has released that card.
        released = {e["data"]["card"]: e["seq"] for e in events if e["type"] == "card"}
        checked = 0
        for round_number, hole in hole_cards(table.journal).items():
            code = re.compile(rf"\b{hole}\b")
            before = [s for s in states if s["last_event_seq"] < released[hole]
                      and s["round"] == round_number]
            for state in before:
                assert not code.search(json.dumps(state)), (hole, state)
            checked += len(before)
        assert checked > 0  # states were published between a hole card and its reveal
    finally:
        watcher.close()
