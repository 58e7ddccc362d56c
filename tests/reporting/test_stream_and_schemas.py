"""The event stream (pure), hold/reveal secrecy, signing, and the JSON Schemas in the docs."""

from __future__ import annotations

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from shoe_controller.cards import new_shoe
from shoe_controller.games.baccarat.profile import load_profile
from shoe_controller.games.baccarat.replay import replay_shoe
from shoe_controller.reporting import protocol as p
from shoe_controller.reporting.stream import EventStream
from tests.reporting.helpers import KEY, card_event

SCHEMAS = p.load_schemas()


def validate(message: dict) -> None:
    jsonschema.validate(message, SCHEMAS[message["type"]])
    p.check_message(message)


def test_every_message_type_has_a_schema() -> None:
    assert set(SCHEMAS) == set(p.FIELDS)
    for schema in SCHEMAS.values():
        jsonschema.Draft202012Validator.check_schema(schema)


def _table_events() -> list[list[dict]]:
    """Plausible table events for a shoe (one list per journal record)."""
    records = [[{"type": "device", "link_up": True, "reason": ""}],
               [{"type": "shoe_loaded", "shoe": 1}, {"type": "shoe_event", "event": "shoe_loaded"}]]
    lines = list(replay_shoe(new_shoe(8, 3), load_profile("punto-banco-8d")))
    records.append([{"type": "burn", "cards": lines[0]["cards"]},
                    {"type": "round_opened", "round": 1}])
    for line in lines[1:6]:
        n = line["round"]
        if n > 1:
            records.append([{"type": "round_opened", "round": n}])
        records.append([{"type": "betting_closed", "round": n, "origin": "table-system"}])
        cards = [c for pair in zip(line["player"], line["banker"]) for c in pair]
        cards += line["player"][2:] + line["banker"][2:]
        for i, code in enumerate(cards):
            records.append([card_event(n, i + 1, code)])
        result = {k: v for k, v in line.items() if k != "type"}
        result.update(player_natural=False, banker_natural=False, banker_three_card_7=False,
                      player_three_card_8=False, banker_wins_with_6=False)
        records[-1].append({"type": "round_result", **result})
        records.append([{"type": "result_confirmed", "round": n}])
    records.append([{"type": "irregularity", "kind": "misread", "prompt": "p", "remedy": "r",
                     "detail": "", "card": None, "counter": 9, "round": 5},
                    {"type": "shoe_event", "event": "lid_opened"}])
    records.append([{"type": "irregularity_cleared", "kind": "misread", "supervisor": "alice",
                     "round": 5, "card": "QS", "source": "supervisor"},
                    {"type": "clear_refused", "supervisor": "a", "reason": "x"}])
    records.append([{"type": "round_void", "round": 6, "supervisor": "table-system",
                     "reason": "x"}, {"type": "cut_card", "round": 6, "during_round": False},
                    {"type": "shoe_finished", "shoe": 1, "rounds": 6, "cards_used": 40,
                     "early": True, "supervisor": "alice"}])
    return records


def test_events_become_schema_valid_gap_free_messages() -> None:
    stream = EventStream("t1")
    out = []
    for seq, events in enumerate(_table_events(), start=1):
        out += stream.add(seq, 1000.0 + seq, events)
    assert [o.seq for o in out] == list(range(1, len(out) + 1))
    assert len({o.id for o in out}) == len(out)
    kinds = {o.type for o in out}
    # every type a baccarat table reports, no skipped one (blackjack's: tests/blackjack_live)
    assert kinds == (set(p.EVENT_TYPES) - set(p.BLACKJACK_EVENT_TYPES)
                     - set(p.ROULETTE_EVENT_TYPES))  # roulette's: tests/wheel_table
    for o in out:
        validate(p.sign(o.to_message("t1", "a.b"), KEY))
    cards = [o.data for o in out if o.type == "card"]
    assert cards[0]["hand"] == "player" and cards[0]["hand_position"] == 1


def test_the_stream_is_a_function_of_the_journal() -> None:
    records = _table_events()
    a, b = EventStream("t1"), EventStream("t1")
    first = [o for i, ev in enumerate(records, 1) for o in a.add(i, float(i), ev)]
    second = [o for i, ev in enumerate(records, 1) for o in b.add(i, float(i), ev)]
    assert first == second


def test_acks_and_resend() -> None:
    stream = EventStream("t1", retain=2)
    for i in range(1, 11):
        stream.add(i, 0.0, [{"type": "round_opened", "round": i}])
    assert stream.unacked == 10 and [o.seq for o in stream.since(8)] == [8, 9, 10]
    assert stream.ack(6) == 6 and stream.ack(3) == 0 and stream.unacked == 4
    assert stream.first_kept == 5  # acknowledged ones beyond ``retain`` are let go
    with pytest.raises(p.ProtocolViolation) as exc:
        stream.ack(11)
    assert exc.value.code == "ahead"


def test_held_events_wait_for_their_reveal() -> None:
    """A blackjack-like hole card: held, later cards go out, released at the reveal."""
    stream = EventStream("t1")
    hole = card_event(1, 2, "KS") | {"hold": "hole-1"}
    assert stream.add(1, 0.0, [card_event(1, 1, "2H")])[0].seq == 1
    assert stream.add(2, 0.0, [hole]) == [] and stream.held == 1
    assert [o.data["card"] for o in stream.add(3, 0.0, [card_event(1, 3, "5D")])] == ["5D"]
    released = stream.add(4, 0.0, [{"type": "reveal", "reveal": "hole-1"},
                                   {"type": "round_opened", "round": 2, "reveal": ["other"]}])
    assert [(o.seq, o.type, o.id) for o in released] == [
        (3, "card", "t1:2:0"), (4, "round_opened", "t1:4:1")]
    assert "hold" not in released[0].data and stream.held == 0


json_values = st.recursive(  # what has a canonical (RFC 8785) form: safe integers, finite floats
    st.none() | st.booleans() | st.integers(-p.SAFE_INTEGER, p.SAFE_INTEGER)
    | st.floats(-1e15, 1e15, allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                 max_size=3), max_leaves=10)


@given(st.dictionaries(st.text(max_size=6), json_values, max_size=6))
def test_signing_round_trips_and_any_change_breaks_it(body: dict) -> None:
    signed = p.sign(body, KEY)
    assert signed["sig"] == p.signature(signed, KEY)
    tampered = dict(signed) | {"extra-key-x": 1}
    assert tampered["sig"] != p.signature(tampered, KEY)


@given(st.text(max_size=300) | st.binary(max_size=300))
def test_decode_of_junk_only_ever_raises_protocol_violation(raw: str | bytes) -> None:
    with pytest.raises(p.ProtocolViolation):
        p.decode(raw, KEY, sender="table_system")


def test_the_schemas_refuse_what_check_message_refuses() -> None:
    good = p.sign(p.message("ack", session="a.b", seq=1, upto=3), KEY)
    validate(good)
    for bad in ({**good, "upto": -1}, {**good, "extra": 1},
                {k: v for k, v in good.items() if k != "seq"}, {**good, "seq": True}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, SCHEMAS["ack"])
        with pytest.raises(p.ProtocolViolation):
            p.check_message(bad)
