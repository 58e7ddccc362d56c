"""Hostile input at a wheel table: any bytes on the line, any journal record body.

Whatever the wheel's line carries (garbage, truncated or overlong lines, statuses with any
field values, at any times), the table never raises, every line survives its journal record
byte for byte, and a replay of the records says the same. A journal record of a wheel table
that is damaged or not a wheel's is refused with ``ValueError`` naming it, never anything else.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_controller.journal.records import encode_data
from shoe_controller.wheel_table.inputs import (
    WheelLine,
    WheelTick,
    wheel_input_from_record,
)
from shoe_controller.wheel_table.machine import WheelTable
from wheel_protocol import LineSplitter, TrackerConfig

status = st.builds(
    lambda state, spin, number, flags, rpm, direction: (
        f"*X;{state};{spin:03d};{number:>2};{flags:X};{rpm:03d};{direction}".encode()),
    st.integers(0, 9), st.integers(0, 999), st.integers(0, 40), st.integers(0, 15),
    st.integers(0, 999), st.integers(0, 2))
result = st.integers(0, 40).map(lambda n: f"{n:>2}".encode())
chunk = st.one_of(status, result, st.binary(max_size=40),
                  st.sampled_from([b"*K CAM", b"*F 000", b"*F 120", b"*P OK", b"*T OK",
                                   b"*o BUSY", b"*X;5;", b"*", b"\x00\xff*X"]))
stream = st.lists(st.tuples(chunk, st.sampled_from([b"\r\n", b"\n", b"\r", b""]),
                            st.floats(0, 2.0)), max_size=60)


@settings(max_examples=150, deadline=None)
@given(stream=stream, host_starts=st.booleans())
def test_any_line_is_taken_and_replays_the_same(stream: list[tuple[bytes, bytes, float]],
                                                host_starts: bool) -> None:
    from shoe_controller.wheel_table.machine import WheelSettings

    settings_ = WheelSettings(tracker=TrackerConfig(host_starts=host_starts,
                                                    confirm_window=0.3, status_timeout=1.0))
    table, splitter = WheelTable(settings_), LineSplitter()
    records: list[tuple[str, str, float]] = []
    events: list[dict[str, Any]] = []
    now = 1_700_000_000.0
    for data, end, pause in stream:
        now += pause
        items: list[Any] = []
        for line in splitter.feed(data + end):
            items.append(WheelLine.of(line) if isinstance(line, bytes)
                         else WheelLine(line.raw.decode("latin-1"), line.reason or "noise"))
        deadline = table.next_deadline()
        if deadline is not None and now >= deadline:
            items.append(WheelTick())
        for item in items:
            body = encode_data(item.to_data())  # what the journal stores
            records.append((item.KIND, body, now))
            events += table.handle(item, now).events
            table.view()  # the display's view of any state is buildable
    for kind, body, _ in records:
        if kind == "wheel_line":
            line = wheel_input_from_record(kind, json.loads(body))
            assert isinstance(line, WheelLine)
            assert line.raw.decode("latin-1") == line.line  # byte for byte
    rebuilt = WheelTable(settings_)
    replayed: list[dict[str, Any]] = []
    for kind, body, at in records:
        replayed += rebuilt.handle(wheel_input_from_record(kind, json.loads(body)), at).events
    assert replayed == events
    assert rebuilt.view() == table.view()


json_value = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                          lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                          max_leaves=6)


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(["wheel_line", "wheel_tick", "session", "link", "betting",
                             "supervisor", "card", "device", "nonsense"]),
       data=st.dictionaries(st.sampled_from(["line", "noise", "up", "reason", "action",
                                             "supervisor", "card", "profile", "origin",
                                             "seats", "x"]), json_value, max_size=4))
def test_a_damaged_record_is_refused_by_name(kind: str, data: dict[str, Any]) -> None:
    try:
        item = wheel_input_from_record(kind, data)
    except ValueError as exc:
        assert kind in str(exc) or "record" in str(exc)
        return
    assert item.to_data() | data == item.to_data()  # nothing taken but what it said
    WheelTable().handle(item, 1_700_000_000.0)  # an accepted record is one the table takes


def test_a_journal_with_damaged_session_settings_is_refused_by_record(tmp_path: Any) -> None:
    import pytest

    from shoe_controller.errors import JournalReplayError
    from shoe_controller.journal import Journal
    from shoe_controller.wheel_table.connection import WheelConnection
    from shoe_controller.wheel_table.controller import WheelController

    path = tmp_path / "j.db"
    with Journal(path) as journal:
        journal.append("session", {"profile": "roulette-single-zero", "game": "roulette",
                                   "settings": {"tracker": {"confirmations": 9}}})
        controller = WheelController(journal=journal, table=WheelTable(), profile="r",
                                     connection=WheelConnection("loop://"))
        with pytest.raises(JournalReplayError, match="journal record 1 .session.: session "
                           "settings"):
            controller.start(begin_session=False)
