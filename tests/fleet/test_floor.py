"""The pit's floor model: hand-written payloads (checked against docs/mqtt's schemas first),
hostile ones, and hypothesis looking for a message that breaks it."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_controller.fleet.floor import MAX_PAYLOAD, Floor

from .test_publisher import SCHEMAS

T = "shoe/tables/t-1"
STATE: dict[str, Any] = {
    "v": 1, "table_id": "t-1", "pit": "pit-3", "game": "baccarat",
    "profile": "punto-banco-8d", "session": "0123456789ab", "version": 5, "at": 1000.0,
    "state": "in_play.dealing.initial_deal",
    "prompt": {"text": "Deal Player", "level": "action", "detail": ""},
    "exit_locked": False, "alarm": "ok", "round": 4,
    "shoe": {"number": 2, "cards_dealt": 30, "cards_total": 416, "cut_card_out": False,
             "finished": False},
    "latched": [], "link": {"shoe": True, "table_system": None},
    "last_result": None,
    "recent_results": [{"round": r, "outcome": o, "natural": False, "player_pair": False,
                        "banker_pair": False} for r, o in ((1, "banker"), (2, "player"),
                                                          (3, "tie"))],
    "odds": {"after_round": 3, "cards_left": 386, "outcomes": {"banker": 0.45},
             "bets": [{"bet": "tie", "house_edge": -0.01}], "player_edge": ["tie"],
             "error": None},
    "last_event_seq": 40,
}
LATCH = {"kind": "misread", "prompt": "Card not read by the shoe", "detail": "Player's 2nd card",
         "card": None, "round": 4, "since": 990.0}


def event(seq: int, kind: str = "card", **data: Any) -> dict[str, Any]:
    body = {"round": 4, "hand": "player", "hand_position": 1, "card": "AS", "counter": seq,
            "position": 1, "source": "scanner"} if kind == "card" else data
    return {"v": 1, "table_id": "t-1", "seq": seq, "id": f"t-1:{seq}:0", "type": kind,
            "at": 1000.0 + seq, "shoe": 2, "data": body}


def raw(document: Any) -> bytes:
    return json.dumps(document).encode()


def test_the_hand_written_payloads_follow_the_schemas() -> None:
    SCHEMAS["state"].validate(STATE)
    SCHEMAS["state"].validate({**STATE, "latched": [LATCH]})
    SCHEMAS["event"].validate(event(1))
    SCHEMAS["status"].validate({"v": 1, "table_id": "t-1", "online": False,
                                "reason": "connection lost", "session": "0123456789ab"})


def test_a_table_tile() -> None:
    floor = Floor("shoe")
    assert floor.apply(f"{T}/state", raw({**STATE, "latched": [LATCH]}), 1001.0) == "t-1"
    tile = floor.snapshot()["tables"][0]
    assert tile["prompt"]["text"] == "Deal Player" and tile["online"]
    assert tile["results"] == ["banker", "player", "tie"]
    assert tile["latched"] == [{"kind": "misread", "prompt": "Card not read by the shoe",
                                "detail": "Player's 2nd card", "since": 990.0}]
    assert tile["player_edge"] == ["tie"]
    assert floor.snapshot()["pits"] == ["pit-3"] and floor.snapshot()["games"] == ["baccarat"]
    finished = copy.deepcopy(STATE)
    finished.update(version=6, at=1002.0)
    finished["shoe"]["finished"] = True
    floor.apply(f"{T}/state", raw(finished), 1002.0)
    assert floor.summary("t-1")["player_edge"] == []  # no round is dealt from those cards


def test_older_and_repeated_messages_change_nothing() -> None:
    floor = Floor("shoe")
    floor.apply(f"{T}/state", raw(STATE), 1.0)
    version = floor.version
    older = {**STATE, "version": 4, "at": 999.0, "prompt": {**STATE["prompt"], "text": "old"}}
    assert floor.apply(f"{T}/state", raw(older), 2.0) is None
    assert floor.apply(f"{T}/state", raw(STATE), 2.0) is None  # a QoS 1 duplicate
    assert floor.version == version and floor.summary("t-1")["prompt"]["text"] == "Deal Player"
    # A restarted controller (new session) whose state is newer replaces it.
    newer = {**STATE, "session": "ba9876543210", "version": 1, "at": 1005.0}
    assert floor.apply(f"{T}/state", raw(newer), 3.0) == "t-1"
    # Re-published after a reconnection: the same version, later: taken, not a new state.
    assert floor.apply(f"{T}/state", raw({**newer, "at": 1005.5}), 3.5) == "t-1"
    assert floor.summary("t-1")["states_seen"] == 1
    for seq in (1, 2, 2, 3, 6):
        floor.apply(f"{T}/events", raw(event(seq)), 4.0)
    detail = floor.detail("t-1")
    assert [e["seq"] for e in detail["events"]] == [1, 2, 3, 6]
    assert detail["event_gaps"] == 2 and detail["last_event_seq"] == 6
    assert detail["state_gaps"] == 0
    floor.apply(f"{T}/state", raw({**newer, "version": 4, "at": 1006.0}), 5.0)
    assert floor.summary("t-1")["state_gaps"] == 2  # versions 2 and 3 never came
    assert detail["last_card"]["seq"] == 6


def test_offline_by_last_will_and_by_stopping() -> None:
    floor = Floor("shoe")
    floor.apply(f"{T}/state", raw(STATE), 1.0)
    will = {"v": 1, "table_id": "t-1", "online": False, "reason": "connection lost",
            "session": "0123456789ab"}
    floor.apply(f"{T}/status", raw(will), 50.0)
    tile = floor.summary("t-1")
    assert not tile["online"] and tile["offline_reason"] == "connection lost"
    assert tile["offline_since"] == 50.0  # the will has no time of its own: when it came
    floor.apply(f"{T}/status", raw({**will, "online": True, "reason": "", "at": 60.0}), 61.0)
    assert floor.summary("t-1")["online"]
    floor.apply(f"{T}/status", raw({**will, "reason": "stopped", "at": 70.0}), 71.0)
    assert floor.summary("t-1")["offline_since"] == 70.0
    assert floor.counts() == {"tables": 1, "offline": 1, "latched": 0, "player_edge": 1}


HOSTILE = [
    (f"{T}/state", b"not json", "not JSON"),
    (f"{T}/state", b"\xff\xfe", "not JSON"),
    (f"{T}/state", b"[1, 2]", "not a JSON object"),
    (f"{T}/state", raw({**STATE, "v": 2}), "payload version 2"),
    (f"{T}/state", raw({**STATE, "table_id": "t-2"}), "not the topic's"),
    (f"{T}/state", raw({**STATE, "version": -1}), "version"),
    (f"{T}/state", raw({**STATE, "at": "soon"}), "at"),
    (f"{T}/state", raw({**STATE, "prompt": "Deal"}), "prompt"),
    (f"{T}/state", raw({**STATE, "latched": [{"kind": 1}]}), "latched"),
    (f"{T}/state", raw({**STATE, "recent_results": ["banker"]}), "recent_results"),
    (f"{T}/state", raw({**STATE, "odds": {"player_edge": "tie"}}), "odds"),
    (f"{T}/state", b'{"v": 1, "table_id": "t-1", "at": NaN}', "missing"),
    (f"{T}/events", raw({**event(1), "seq": 0}), "seq"),
    (f"{T}/events", raw({**event(1), "data": []}), "data"),
    (f"{T}/status", raw({"v": 1, "table_id": "t-1", "online": "yes", "reason": "",
                         "session": "x"}), "online"),
    (f"{T}/status", raw({"v": 1, "table_id": "t-1", "online": True, "reason": "",
                         "session": "x", "at": [1]}), "at"),
    ("shoe/tables/t-1/other", raw(STATE), "not a table topic"),
    ("elsewhere/t-1/state", raw(STATE), "not a table topic"),
    (f"{T}/state", b" " * (MAX_PAYLOAD + 1), "payload of"),
]


def test_hostile_messages_are_refused_with_a_reason() -> None:
    floor = Floor("shoe")
    for topic, payload, reason in HOSTILE:
        assert floor.apply(topic, payload, 1.0) is None, reason
        assert reason in floor.reasons[-1], (reason, floor.reasons[-1])
    assert floor.rejected == len(HOSTILE) and floor.tables == {} and floor.version == 0


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=5), max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["state", "events", "status", "x"]),
                          st.one_of(st.binary(max_size=40), JSON.map(raw),
                                    st.fixed_dictionaries({}, optional={
                                        k: JSON for k in ("v", "table_id", "seq", "id", "at",
                                                          "online", "session", "version")
                                    }).map(lambda d: raw({**d, "v": 1, "table_id": "t-1"})))),
                max_size=12))
def test_no_message_breaks_the_floor(messages: list[tuple[str, bytes]]) -> None:
    floor = Floor("shoe")
    floor.apply(f"{T}/state", raw(STATE), 0.0)
    for kind, payload in messages:
        before = floor.version
        changed = floor.apply(f"{T}/{kind}", payload, 1.0)
        assert (changed is None) == (floor.version == before)
    json.dumps(floor.snapshot())  # always a JSON document
    assert floor.detail("t-1")["table_id"] == "t-1"


# -- blackjack's last result (a compatible addition to payload version 1) --------------------

BLACKJACK_RESULT = {
    "round": 12, "at": 1000.0,
    "dealer": {"total": 24, "blackjack": False, "bust": True},
    "seats": {
        "1": [{"total": 18, "soft": False, "blackjack": False, "bust": False, "doubled": False,
               "outcome": "win", "payout": 1}],
        "4": [{"total": 20, "soft": False, "blackjack": False, "bust": False, "doubled": True,
               "outcome": "win", "payout": 2},
              {"total": 23, "soft": False, "blackjack": False, "bust": True, "doubled": False,
               "outcome": "lose", "payout": -1}],
        "6": [{"total": 21, "soft": True, "blackjack": True, "bust": False, "doubled": False,
               "outcome": "win", "payout": 1.5}],
    },
}
BLACKJACK_STATE = {**STATE, "game": "blackjack", "profile": "blackjack-8d", "odds": None,
                   "recent_results": [], "last_result": BLACKJACK_RESULT}


def test_a_blackjack_tile_words_the_dealer_and_each_seat() -> None:
    SCHEMAS["state"].validate(BLACKJACK_STATE)
    floor = Floor("shoe")
    floor.apply(f"{T}/state", raw(BLACKJACK_STATE), 1001.0)
    tile = floor.summary("t-1")
    assert tile["last_result_text"] == "round 12: dealer 24 bust; 1 win, 4.1 win, 4.2 lose, 6 win"
    assert tile["last_result"] == BLACKJACK_RESULT
    dealer_bj = copy.deepcopy(BLACKJACK_STATE)
    dealer_bj.update(version=6, at=1002.0)
    dealer_bj["last_result"]["dealer"] = {"total": 21, "blackjack": True, "bust": False}
    dealer_bj["last_result"]["seats"] = {"2": [dict(BLACKJACK_RESULT["seats"]["1"][0],
                                                    outcome="lose", payout=-1)]}
    SCHEMAS["state"].validate(dealer_bj)
    floor.apply(f"{T}/state", raw(dealer_bj), 1002.0)
    assert floor.summary("t-1")["last_result_text"] == "round 12: dealer BJ; 2 lose"
    # Baccarat's form is unchanged.
    baccarat = {**STATE, "version": 7, "at": 1003.0, "last_result": {
        "round": 3, "outcome": "tie", "player_total": 6, "banker_total": 6, "natural": False,
        "player_pair": False, "banker_pair": False, "at": 999.0}}
    SCHEMAS["state"].validate(baccarat)
    floor.apply(f"{T}/state", raw(baccarat), 1003.0)
    assert floor.summary("t-1")["last_result_text"] == "tie 6-6 (round 3)"


def test_the_schema_refuses_a_blackjack_result_with_a_card_or_a_bad_outcome() -> None:
    import jsonschema

    for broken in ({"dealer": {"total": "20", "blackjack": False, "bust": False}},
                   {"seats": {"1": [dict(BLACKJACK_RESULT["seats"]["1"][0], outcome="won")]}},
                   {"seats": {"1": []}}):
        state = copy.deepcopy(BLACKJACK_STATE)
        state["last_result"].update(broken)
        try:
            SCHEMAS["state"].validate(state)
        except jsonschema.ValidationError:
            continue
        raise AssertionError(f"accepted {broken}")


RESULT_LIKE = st.one_of(
    JSON,
    st.fixed_dictionaries({"outcome": st.text(max_size=8)}, optional={
        k: JSON for k in ("round", "player_total", "banker_total")}),
    st.fixed_dictionaries({"dealer": st.dictionaries(
        st.sampled_from(["total", "blackjack", "bust"]), JSON)}, optional={
        "round": JSON, "seats": JSON | st.dictionaries(st.text(max_size=3), JSON | st.lists(
            st.dictionaries(st.sampled_from(["outcome", "total"]), JSON) | JSON, max_size=3),
            max_size=4)}),
)


@settings(max_examples=300, deadline=None)
@given(RESULT_LIKE)
def test_any_last_result_gives_a_tile(last_result: Any) -> None:
    """Whatever a broker delivers as last_result: refused with a reason, or a tile whose text
    is a bounded line."""
    floor = Floor("shoe")
    document = {**STATE, "last_result": last_result}
    if floor.apply(f"{T}/state", raw(document), 1.0) is None:
        assert "last_result" in floor.reasons[-1]
        return
    text = floor.summary("t-1")["last_result_text"]
    assert isinstance(text, str) and len(text) <= 200 and "\n" not in text
