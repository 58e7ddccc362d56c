"""Numbers that cannot change across versions: the outbox in the journal's file.

A message's seq and id are stored before it is sent and read back ever after; only records
after the outbox's coverage are numbered anew. These tests change the code between runs,
crash between the journal and the outbox, resend from seq 1 after 20 000 events, and carry
held events over restarts.
"""

from __future__ import annotations

import dataclasses
import sqlite3
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

from shoe_controller.cards import new_shoe
from shoe_controller.errors import ConfigError, JournalError
from shoe_controller.games.registry import create_game
from shoe_controller.journal import Journal
from shoe_controller.reporting import protocol as p
from shoe_controller.reporting.client import TableSystemReporter
from shoe_controller.reporting.stream import EventStream
from shoe_controller.table.controller import TableController
from shoe_controller.table.inputs import LinkChanged, TableInput, input_from_record
from shoe_controller.table.machine import Table
from simulators.table_system import TableRecord, TableSystem, TableSystemOptions
from tests.reporting.helpers import KEY, TOKEN, card_event, reporter_for
from tests.table.driver import Driver

pytestmark = pytest.mark.timeout(120)

PROFILE = "punto-banco-8d"


# ------------------------------------------------------------------ helpers
def shoe_journal(path: Path, cards: int = 40) -> None:
    """A journal of a dealt shoe's inputs (the tests/table driver plays them)."""
    driver = Driver(PROFILE)
    driver.play(new_shoe(8, seed=5)[:cards])
    with Journal(path, durability="normal") as journal:
        for item in driver.inputs:
            data = item.to_data()
            if getattr(item, "card", None) is not None:
                data["card"] = item.card.code  # type: ignore[attr-defined]
            journal.append(item.KIND, data)


def replay(journal: Journal, reporter: TableSystemReporter) -> Table:
    """What ``TableController.start`` does with the reporter: every record, live=False."""
    table = Table(create_game(PROFILE))
    for record in journal.records():
        events = table.handle(input_from_record(record.kind, record.data))
        reporter.add(record.seq, record.wall_time, events, live=False)
    return table


def live(journal: Journal, reporter: TableSystemReporter, table: Table,
         items: Iterable[TableInput]) -> None:
    for item in items:
        record = journal.append(item.KIND, item.to_data())
        reporter.add(record.seq, record.wall_time, table.handle(item))


def run(path: Path, port: int, more: Sequence[TableInput] = ()) -> list[tuple[int, str, str]]:
    """One controller run on the journal: attach, replay, report ``more`` live, drain."""
    with Journal(path, durability="normal") as journal:
        reporter = reporter_for(port)
        with reporter.attach_journal(journal):
            table = replay(journal, reporter)
            reporter.start()
            live(journal, reporter, table, more)
            assert reporter.wait_acked(30), reporter.stats
            reporter.close()
            return [(o.seq, o.id, o.type) for o in reporter.stream.since(1)]


def synthetic_journal(path: Path, records: Sequence[list[dict[str, Any]]]) -> None:
    """A journal whose records simply carry the table events they cause."""
    with Journal(path, durability="normal") as journal:
        for events in records:
            journal.append("test", {"events": events}, wall_time=1_700_000_000.5)


def synthetic_replay(journal: Journal, reporter: TableSystemReporter) -> None:
    for record in journal.records():
        reporter.add(record.seq, record.wall_time, record.data["events"], live=False)


def numbered(reporter: TableSystemReporter) -> list[tuple[int, str]]:
    return [(o.seq, o.id) for o in reporter.stream.since(1)]


def burn_cards_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """A newer release: it reports each burn card too (version 1 skipped them)."""
    original = EventStream._translate

    def newer(self: EventStream, event: Any) -> Any:
        if event.get("type") == "burn_card":
            return "device_health", {"component": "burn_counter", "status": "up", "reason": ""}
        return original(self, event)

    monkeypatch.setattr(EventStream, "_translate", newer)


# ------------------------------------------------------------------ across versions
def test_a_release_reporting_one_more_event_type_renumbers_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "journal.db"
    shoe_journal(path)
    options = TableSystemOptions(token=TOKEN, key=KEY, record=tmp_path / "ts.jsonl",
                                 drives_betting=False)
    with TableSystem("127.0.0.1", 0, options) as system:
        first = run(path, system.port)
        sent = [(e["seq"], e["id"]) for e in system.accepted]
        assert sent == [(seq, id_) for seq, id_, _ in first] and len(sent) > 30

        burn_cards_reported(monkeypatch)
        # Without the outbox this release would number the same journal differently ...
        stream = EventStream("t1")
        with Journal(path, readonly=True) as journal:
            table = Table(create_game(PROFILE))
            rederived = [(o.seq, o.id) for r in journal.records()
                         for o in stream.add(r.seq, r.wall_time,
                                             table.handle(input_from_record(r.kind, r.data)))]
        assert rederived[:len(sent)] != sent  # (the table system would answer "conflict")

        # ... with it, what was given stays; only new records are numbered, from the head on.
        second = run(path, system.port, [LinkChanged(False, "cable"), LinkChanged(True)])
        assert [(seq, id_) for seq, id_, _ in second[:len(sent)]] == sent
        assert [seq for seq, _, _ in second] == list(range(1, len(second) + 1))
        assert [t for _, _, t in second[len(sent):]] == ["device_health", "device_health"]
        assert system.wait_for(lambda s: s.tables["t1"].last_seq == len(second), 5)
        assert [(e["seq"], e["id"]) for e in system.accepted] == [
            (seq, id_) for seq, id_, _ in second]
        assert system.errors_sent == [] and system.errors_received == []
        assert not any(e["data"].get("component") == "burn_counter" for e in system.accepted)


def test_a_crash_before_the_outbox_is_written_derives_the_same_numbers(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    shoe_journal(path, cards=30)
    with Journal(path, durability="normal") as journal:
        reporter = reporter_for(1)  # never started: nothing can be sent
        reporter.attach_journal(journal)
        table = replay(journal, reporter)
        reporter._persist()  # the replayed ones are stored ...
        stored = reporter.stream.persisted
        live(journal, reporter, table, [LinkChanged(False, "cable"), LinkChanged(True)])
        before = numbered(reporter)
        assert stored < len(before) == reporter.stream.head
        assert reporter._outbox is not None
        reporter._outbox.close()  # ... the process dies before the last ones are
    with Journal(path, durability="normal") as journal:
        reporter = reporter_for(1)
        with reporter.attach_journal(journal):
            assert reporter.stream.head == stored
            replay(journal, reporter)
            assert numbered(reporter) == before
            assert reporter.stream.unpersisted()[0].seq == stored + 1


def test_nothing_is_sent_before_it_is_in_the_outbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "journal.db"
    shoe_journal(path, cards=20)
    late: list[int] = []
    original = TableRecord.accept

    def checking(self: TableRecord, event: dict[str, Any], now: float) -> None:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            if not db.execute("SELECT 1 FROM outbox WHERE seq = ? AND id = ?",
                              (event["seq"], event["id"])).fetchone():
                late.append(event["seq"])
        original(self, event, now)

    monkeypatch.setattr(TableRecord, "accept", checking)
    with TableSystem("127.0.0.1", 0, TableSystemOptions(token=TOKEN, key=KEY,
                                                        drives_betting=False)) as system:
        result = run(path, system.port, [LinkChanged(False, "x"), LinkChanged(True)] * 5)
        assert len(system.accepted) == len(result) > 20
    assert late == []


def test_the_controller_replays_its_journal_into_the_attached_reporter(tmp_path: Path) -> None:
    class Quiet:  # the shoe: silent
        def get(self, timeout: float | None = None) -> object:
            from shoe_controller.errors import ShoeTimeoutError

            raise ShoeTimeoutError("nothing")

        def send(self, message: object) -> None:
            pass

        def commit(self) -> None:
            pass

    path = tmp_path / "journal.db"
    shoe_journal(path, cards=12)
    heads = []
    for _ in range(2):
        with Journal(path, durability="normal") as journal:
            reporter = reporter_for(1)
            with reporter.attach_journal(journal):
                controller = TableController(journal=journal, table=Table(create_game(PROFILE)),
                                             profile=PROFILE, connection=Quiet(),
                                             reporter=reporter)
                controller.start()  # replay (live=False) and the session record (live)
                heads.append((reporter.stream.covered, reporter.stream.head))
    assert heads[0][0] == 0 and heads[1][0] > 0  # the second run found the first's numbers
    assert heads[1][1] >= heads[0][1]


def test_an_upgraded_version_1_journal_is_numbered_as_version_1_did(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    shoe_journal(path, cards=25)
    with sqlite3.connect(path) as db:  # as a version-1 controller left it
        db.execute("DROP TABLE outbox")
        db.execute("UPDATE meta SET value = '1' WHERE key = 'format_version'")
        db.execute("PRAGMA user_version = 1")
    stream = EventStream("t1")
    with Journal(path, readonly=True) as journal:
        assert journal.meta["format_version"] == "1"
        with pytest.raises(JournalError, match="no outbox"):
            reporter_for(1).attach_journal(journal)
        table = Table(create_game(PROFILE))
        version_1 = [(o.seq, o.id) for r in journal.records()
                     for o in stream.add(r.seq, r.wall_time,
                                         table.handle(input_from_record(r.kind, r.data)))]
    with Journal(path, durability="normal") as journal:  # upgraded on open
        reporter = reporter_for(1)
        with reporter.attach_journal(journal):
            replay(journal, reporter)
            assert numbered(reporter) == version_1


def test_the_outbox_belongs_to_one_table_id(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    synthetic_journal(path, [[card_event(1, 1)]])
    with Journal(path) as journal:
        reporter = reporter_for(1)
        with reporter.attach_journal(journal):
            synthetic_replay(journal, reporter)
        other = TableSystemReporter(dataclasses.replace(reporter.config, table_id="t2"))
        with pytest.raises(ConfigError, match="reported as table 't1'"):
            other.attach_journal(journal)


# ------------------------------------------------------------------ resend
@pytest.mark.slow
def test_resend_from_seq_1_after_20000_events(tmp_path: Path) -> None:
    count = 20_000
    path = tmp_path / "journal.db"
    with Journal(path, durability="normal") as journal:
        for i in range(count):
            journal.append("test", {"events": [{"type": "round_opened", "round": i + 1}]},
                           wall_time=1_700_000_000.0 + i)
    options = TableSystemOptions(token=TOKEN, key=KEY, record=tmp_path / "a.jsonl",
                                 drives_betting=False)
    system = TableSystem("127.0.0.1", 0, options)
    port = system.start()[1]
    with Journal(path, durability="normal") as journal:
        reporter = reporter_for(port)
        with reporter.attach_journal(journal):
            reporter.stream.retain = 50
            synthetic_replay(journal, reporter)
            reporter.start()
            assert reporter.wait_acked(60)
            assert reporter.stream.first_kept > count - 100  # memory let the old ones go
            # The table system asks for everything again on the live session ... A request
            # is its session's: if the session is lost first (a busy machine misses the 4 s
            # keepalive under such a flood), or the request reached a session that was
            # ending, nothing more comes, and the table system asks again, as a real one
            # would.
            asked_on, sent = -1, 0
            last_sent, moved_at = -1, 0.0
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                now_sent = reporter.stats.sent
                if now_sent != last_sent:
                    last_sent, moved_at = now_sent, time.monotonic()
                if asked_on == reporter.stats.connects and now_sent >= sent + count:
                    break
                if reporter.connected and (reporter.stats.connects != asked_on
                                           or time.monotonic() - moved_at > 5):
                    asked_on, sent, moved_at = reporter.stats.connects, now_sent, time.monotonic()
                    system.send_command("resend", from_seq=1)
                time.sleep(0.05)
            assert reporter.stats.sent >= sent + count, reporter.stats
            # ... and one that lost its record entirely gets all of them, in order.
            system.close()
            fresh = TableSystem("127.0.0.1", port, TableSystemOptions(
                token=TOKEN, key=KEY, record=tmp_path / "b.jsonl", drives_betting=False))
            fresh.start()
            try:
                assert fresh.wait_for(lambda s: "t1" in s.tables
                                      and s.tables["t1"].last_seq == count, 60)
                assert [e["id"] for e in fresh.accepted] == [
                    f"t1:{i}:0" for i in range(1, count + 1)]
                assert fresh.errors_sent == [] and fresh.errors_received == []
            finally:
                reporter.close()
                fresh.close()


def test_without_an_outbox_a_resend_from_too_far_back_is_an_error_not_a_skip() -> None:
    stream = EventStream("t1", retain=2)
    for i in range(1, 11):
        stream.add(i, 0.0, [{"type": "round_opened", "round": i}])
    stream.ack(10)
    assert stream.first_kept == 9 and [o.seq for o in stream.since(9)] == [9, 10]
    with pytest.raises(p.ProtocolViolation) as info:
        stream.since(3)
    assert info.value.code == p.UNAVAILABLE and "3..8" in info.value.detail


def test_the_table_system_is_told_when_a_resend_cannot_be_served(
    table_system: TableSystem
) -> None:
    reporter = reporter_for(table_system.port)  # no journal attached: memory only
    reporter.stream.retain = 2
    for i in range(1, 11):
        reporter.add(i, float(i), [card_event(1, i)])
    reporter.start()
    try:
        assert reporter.wait_acked(5)
        table_system.send_command("resend", from_seq=1)
        assert table_system.wait_for(
            lambda s: any(e["code"] == p.UNAVAILABLE for e in s.errors_received), 5)
        reporter.check()
        assert reporter.connected
    finally:
        reporter.close()


# ------------------------------------------------------------------ held events
HOLE = card_event(1, 2, "KS") | {"hold": "hole-1"}


def test_an_event_still_held_at_a_crash_is_rebuilt_and_released_at_its_reveal(
    tmp_path: Path
) -> None:
    path = tmp_path / "journal.db"
    synthetic_journal(path, [[card_event(1, 1, "2H")], [HOLE], [card_event(1, 3, "5D")]])
    with Journal(path) as journal:
        reporter = reporter_for(1)
        with reporter.attach_journal(journal):
            synthetic_replay(journal, reporter)
            assert numbered(reporter) == [(1, "t1:1:0"), (2, "t1:3:0")]
            assert reporter.stream.held == 1
    with Journal(path) as journal:  # restart: the hole card is held again, unnumbered
        reporter = reporter_for(1)
        with reporter.attach_journal(journal):
            synthetic_replay(journal, reporter)
            assert reporter.stream.head == 2 and reporter.stream.held == 1
            record = journal.append("test", {}, wall_time=1.0)
            released = reporter.stream.add(record.seq, 1.0, [
                {"type": "reveal", "reveal": "hole-1"}, {"type": "round_opened", "round": 2}])
            assert [(o.seq, o.id, o.type) for o in released] == [
                (3, "t1:2:0", "card"), (4, "t1:4:1", "round_opened")]


def test_an_event_released_before_a_restart_comes_from_the_outbox(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    reveal = [{"type": "reveal", "reveal": "hole-1"}, {"type": "round_opened", "round": 2}]
    synthetic_journal(path, [[card_event(1, 1, "2H")], [HOLE], reveal])
    with Journal(path) as journal:
        reporter = reporter_for(1)
        with reporter.attach_journal(journal):
            synthetic_replay(journal, reporter)
            first = numbered(reporter)
            assert first == [(1, "t1:1:0"), (2, "t1:2:0"), (3, "t1:3:1")]
    with Journal(path) as journal:
        reporter = reporter_for(1)
        with reporter.attach_journal(journal):
            synthetic_replay(journal, reporter)
            assert reporter.stream.held == 0 and reporter.stream.unpersisted() == []
            assert numbered(reporter) == first
            out = reporter.stream.since(2, limit=1)[0]
            assert (out.record_seq, out.released_by, out.data["card"]) == (2, 3, "KS")


def test_a_newer_release_holding_what_an_older_one_sent_does_not_send_it_twice(
    tmp_path: Path
) -> None:
    path = tmp_path / "journal.db"
    synthetic_journal(path, [[card_event(1, 1, "2H")], [card_event(1, 2, "KS")]])
    with Journal(path) as journal:
        reporter = reporter_for(1)
        with reporter.attach_journal(journal):
            synthetic_replay(journal, reporter)
    with Journal(path) as journal:  # the newer release holds the second card back
        reporter = reporter_for(1)
        with reporter.attach_journal(journal):
            for record in journal.records():
                events = [e | {"hold": "hole-1"} if e.get("card") == "KS" else e
                          for e in record.data["events"]]
                reporter.add(record.seq, record.wall_time, events, live=False)
            assert reporter.stream.held == 1
            released = reporter.stream.add(3, 1.0, [{"type": "round_opened", "round": 2,
                                                     "reveal": "hole-1"}])
            assert [(o.seq, o.id) for o in released] == [(3, "t1:3:0")]
