"""The blackjack messages of the table-system protocol: every event a whole shoe reports is
valid under its JSON Schema (docs/table-protocol) and the run-time check, and the new
commands are refused when malformed, with the field named."""

from __future__ import annotations

import jsonschema
import pytest

from shoe_controller.reporting import protocol as p
from shoe_controller.reporting.stream import EventStream

from .test_whole_shoe import play_shoe

SCHEMAS = p.load_schemas()
KEY = b"k" * 32


def test_every_message_of_a_blackjack_shoe_is_valid() -> None:
    driver, _cards = play_shoe(23)
    stream = EventStream("t1")
    types = set()
    for seq, events in enumerate(driver.events, start=1):
        for out in stream.add(seq, 1_700_000_000.5, events):
            message = p.sign(out.to_message("t1", "s.1"), KEY)
            jsonschema.validate(message, SCHEMAS[message["type"]])
            p.check_message(message)
            types.add(message["type"])
    assert {"decision_due", "decision_made", "card", "round_result", "betting_closed",
            "insurance_closed", "dealer_check"} <= types


def command(type_: str, **fields: object) -> dict:
    return p.sign(p.message(type_, session="s.1", seq=1, shoe=1, round=2, **fields), KEY)


GOOD = {
    "decision": {"seat": 3, "hand": 1, "action": "hit", "key": "2.7.3.1"},
    "insurance": {"seats": [1, 4], "key": "2.6.insurance"},
    "close_betting": {"seats": [1, 2, 7]},
}


@pytest.mark.parametrize("type_", sorted(GOOD))
def test_good_commands_pass_both_checks(type_: str) -> None:
    message = command(type_, **GOOD[type_])
    jsonschema.validate(message, SCHEMAS[type_])
    p.check_message(message)
    assert p.decode(p.encode(message, KEY), KEY, sender="table_system")["type"] == type_


@pytest.mark.parametrize("type_,change,named", [
    ("decision", {"seat": -1}, "seat"),
    ("decision", {"seat": True}, "seat"),
    ("decision", {"action": ""}, "action"),
    ("decision", {"key": None}, "key"),
    ("insurance", {"seats": [0]}, "seats"),
    ("insurance", {"seats": [8]}, "seats"),
    ("insurance", {"seats": [2, 2]}, "seats"),
    ("insurance", {"seats": "1"}, "seats"),
    ("close_betting", {"seats": [1, "2"]}, "seats"),
])
def test_malformed_commands_are_refused_naming_the_field(type_: str, change: dict,
                                                         named: str) -> None:
    message = command(type_, **{**GOOD[type_], **change})
    with pytest.raises(p.ProtocolViolation) as refused:
        p.check_message(message)
    assert refused.value.code == p.MALFORMED and named in refused.value.detail
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(message, SCHEMAS[type_])


def test_a_baccarat_close_betting_needs_no_seats() -> None:
    message = command("close_betting")
    jsonschema.validate(message, SCHEMAS["close_betting"])
    p.check_message(message)
