"""Prometheus metrics (issue 19): a real table dealt by the software shoe, scraped over
loopback HTTP from the dealer display's ``/metrics`` and from the standalone metrics port,
parsed with prometheus-client's text parser, checked against docs/metrics.md and against what
was dealt (read back from the journal)."""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from shoe_controller.cards import new_shoe
from shoe_controller.config import load_run_config
from shoe_controller.errors import ConfigError
from shoe_controller.metrics import MetricsServerError, TableMetrics, backlog_of, check_metrics_port
from shoe_controller.table.history import replay_journal
from shoe_controller.table.runtime import check_services

from .rig import PIN, SUPERVISOR, TABLE_ID, MetricsTable, metrics_table

DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


def documented_metrics() -> dict[str, str]:
    """name -> type, from the table between the metrics-table markers of docs/metrics.md."""
    text = DOC.read_text(encoding="utf-8")
    table = text.split("<!-- metrics-table", 1)[1].split("<!-- /metrics-table -->", 1)[0]
    rows = re.findall(r"^\| `([a-z_:][a-z0-9_:]*)` \| (counter|gauge|histogram) \|", table,
                      re.MULTILINE)
    assert len(rows) > 30, "the metrics table of docs/metrics.md was not found"
    return dict(rows)


def family_name(name: str, kind: str) -> str:
    """The family name the text parser gives a documented metric (counters lose _total)."""
    return name.removesuffix("_total") if kind == "counter" else name


def parse(text: str) -> tuple[dict[str, str], list[Sample]]:
    """(family name -> type, every sample) of a scrape."""
    families: dict[str, str] = {}
    samples: list[Sample] = []
    for family in text_string_to_metric_families(text):
        families[family.name] = family.type
        samples.extend(family.samples)
    return families, samples


def value(samples: list[Sample], name: str, **labels: str) -> float:
    found = [s.value for s in samples
             if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())]
    assert found, f"no sample {name}{labels}"
    return sum(found)


@pytest.fixture(scope="module")
def dealt(tmp_path_factory: pytest.TempPathFactory):
    """Two rounds and the burn dealt; a misread entered by a supervisor; frames from the shoe
    damaged on the wire; the cable cut and mended between rounds (link lost and back within
    the grace). The controller is stopped before the scrapes, so nothing changes under them;
    both servers stay up."""
    with metrics_table(tmp_path_factory.mktemp("metrics"), new_shoe(1, 3)) as table:
        table.wait(lambda: table.controller.view.due == "burn", "the burn to be due")
        while table.controller.view.due == "burn":
            table.pull()
        table.damage.damage_next(3)  # the next frames from the shoe: CRC (or COBS) errors
        table.deal_round()
        # Round 2: its first card is not read; the supervisor enters it.
        table.wait(lambda: table.controller.view.due == "player", "round 2's first card")
        misread = table.sim.model.counter + 1
        table.sim.model.misread_at.add(misread)
        out = table.pull()
        table.wait(lambda: table.controller.table.latched != [], "the misread to latch")
        ticket = table.controller.supervisor("enter_card", SUPERVISOR, PIN,
                                             card=out.card.code)  # type: ignore[attr-defined]
        assert ticket.wait(5) and ticket.accepted, ticket.message
        while table.controller.view.due is not None:
            table.pull()
        table.wait(lambda: table.controller.table.state.endswith("result_shown"), "result")
        table.sim.press_button(time.monotonic())
        table.wait(lambda: not table.controller.table.state.endswith("result_shown"),
                   "round 2 confirmed")
        # The cable is pulled, the link is lost, the cable goes back in within the grace.
        table.wire_end.wire.break_connection()
        table.wait(lambda: not table.controller._shoe_link_up, "the link to be lost")
        table.wire_end.wire.restore()
        table.wait(lambda: table.controller._shoe_link_up, "the link to be back", timeout=15)
        assert table.damage.damaged >= 1
        table.stop_controller()
        yield table


def test_every_documented_metric_is_served_on_both_ports(dealt: MetricsTable) -> None:
    documented = documented_metrics()
    for content_type, text in (dealt.display_metrics(), dealt.standalone_metrics()):
        assert content_type.startswith("text/plain; version=")
        families, samples = parse(text)
        for name, kind in documented.items():
            family = family_name(name, kind)
            assert family in families, f"{name} is documented but not served"
            assert families[family] == kind, f"{name}: served as {families[family]}"
        # ... and every table metric served is documented.
        served = {name for name in families if name.startswith("shoe_")}
        undocumented = {name for name in served
                        if name not in {family_name(n, k) for n, k in documented.items()}
                        and not name.endswith("_created")}
        assert not undocumented, f"served but not in docs/metrics.md: {sorted(undocumented)}"
        for sample in samples:
            if sample.name.startswith("shoe_"):
                assert sample.labels.get("table_id") == TABLE_ID, sample


def test_the_values_follow_from_what_was_dealt(dealt: MetricsTable) -> None:
    _, samples = parse(dealt.standalone_metrics()[1])
    replayed = replay_journal(dealt.journal)
    events = replayed.events
    sources = Counter(e["source"] for e in events if e["type"] in ("card", "burn_card"))
    assert sources["supervisor"] == 1 and sources["scanner"] > 6
    for source in ("scanner", "camera", "supervisor"):
        assert value(samples, "shoe_cards_total", source=source) == sources[source], source
    assert value(samples, "shoe_misreads_total") == 1
    kinds = Counter(e["kind"] for e in events if e["type"] == "irregularity")
    assert kinds == {"misread": 1}
    assert value(samples, "shoe_irregularities_total", kind="misread") == 1
    assert value(samples, "shoe_irregularities_total", kind="link_lost") == 0
    assert value(samples, "shoe_irregularities_cleared_total", kind="misread",
                 by="supervisor") == 1
    assert value(samples, "shoe_irregularity_clearance_seconds_count", kind="misread") == 1
    assert value(samples, "shoe_irregularities_latched") == 0
    assert value(samples, "shoe_irregularity_latched_age_seconds") == 0
    # Every journal record appended by this process (the journal was new) was timed.
    assert value(samples, "shoe_journal_append_seconds_count") == replayed.records
    results = [e for e in events if e["type"] == "round_result"]
    assert len(results) == 2
    outcomes = Counter(e["outcome"] for e in results)
    for outcome in ("player", "banker", "tie"):
        assert value(samples, "shoe_rounds_total", outcome=outcome) == outcomes[outcome]
    assert value(samples, "shoe_round_duration_seconds_count") == 2
    drawn = sum(1 for e in events if e["type"] in ("card", "burn_card"))
    assert value(samples, "shoe_decision_seconds_count") == drawn  # every card in, one misread
    # The wire: damaged frames thrown away, the link lost once and the port reopened.
    decoder = dealt.controller.connection.link.decoder_stats
    assert value(samples, "shoe_link_frame_errors_total") == sum(
        decoder[r] for r in ("bad_crc", "bad_cobs", "too_short", "oversize",
                             "unsupported_version", "bad_length", "unknown_type",
                             "bad_payload")) >= 1
    assert value(samples, "shoe_link_crc_errors_total") == decoder["bad_crc"]
    assert value(samples, "shoe_link_losses_total") == 1
    assert value(samples, "shoe_transport_reconnections_total") >= 1
    assert value(samples, "shoe_link_up") == 1
    assert value(samples, "shoe_link_frames_received_total") > 20
    assert value(samples, "shoe_link_frames_sent_total") > 20
    # Both ends speak link revision 1.3: lone frames go with a copy (SPEC 8.9).
    stats = dealt.controller.connection.link.stats
    assert value(samples, "shoe_link_frame_copies_total", direction="sent") \
        == stats.copies_sent > 0
    assert value(samples, "shoe_link_frame_copies_total", direction="used") == stats.copies_used
    opened = sum(1 for e in events if e["type"] == "round_opened")  # round 3's betting too
    assert value(samples, "shoe_table_round_number") == opened == 3
    assert value(samples, "shoe_table_system_enabled") == 0
    assert value(samples, "shoe_table_system_backlog_events") == 0
    assert value(samples, "process_cpu_seconds_total") > 0


def test_a_scrape_never_waits_for_the_table(tmp_path: Path) -> None:
    """Scrapes in a loop while the table deals: every one answers, quickly, and the table's
    cards are counted as they come."""
    with metrics_table(tmp_path, new_shoe(1, 5)) as table:
        table.wait(lambda: table.controller.view.due == "burn", "the burn to be due")
        stop = threading.Event()
        times: list[float] = []
        failures: list[BaseException] = []

        def scrape() -> None:
            while not stop.is_set():
                started = time.perf_counter()
                try:
                    table.standalone_metrics()
                    table.display_metrics()
                except BaseException as exc:  # noqa: BLE001 - reported below
                    failures.append(exc)
                    return
                times.append(time.perf_counter() - started)
                stop.wait(0.02)  # as often as a busy Prometheus, not a CPU hog beside other tests

        scraper = threading.Thread(target=scrape, daemon=True)
        scraper.start()
        try:
            while table.controller.view.due == "burn":
                table.pull()
            table.deal_round()
        finally:
            stop.set()
            scraper.join(timeout=10)
        assert not failures, failures
        assert len(times) >= 3 and max(times) < 2.0, times
        _, samples = parse(table.standalone_metrics()[1])
        assert value(samples, "shoe_cards_total", source="scanner") >= 5


def test_backlog_and_its_age_come_from_the_reporters_stream() -> None:
    """The table system's backlog: events numbered and not acknowledged, and how old the
    oldest one is (the reporter is never started: no table system answers)."""
    from shoe_controller.reporting.client import TableSystemConfig, TableSystemReporter

    reporter = TableSystemReporter(TableSystemConfig(
        url="ws://127.0.0.1:9/t", token="t-12345678", key=b"k" * 32, table_id="t1"))
    assert backlog_of(reporter) == (0.0, 0.0)
    now = time.time()
    reporter.add(1, now - 30, [{"type": "shoe_loaded", "shoe": 1}])
    reporter.add(2, now - 10, [{"type": "round_opened", "round": 1}])
    backlog, age = backlog_of(reporter)
    assert backlog == 2 and 29 < age < 40
    with reporter._lock:
        reporter.stream.ack(1)
    backlog, age = backlog_of(reporter)
    assert backlog == 1 and 9 < age < 20
    with reporter._lock:
        reporter.stream.ack(2)
    assert backlog_of(reporter) == (0.0, 0.0)


def test_clearance_and_latched_age_span_a_restart() -> None:
    """An irregularity latched before a restart (replayed) and cleared after it is timed from
    its journal record; one left latched shows its age."""
    metrics = TableMetrics("t1", process=False)
    metrics.on_replayed(1000.0, [{"type": "irregularity", "kind": "lid_opened"}],
                        ["lid_opened"])
    assert metrics._oldest_latch == 1000.0
    metrics.on_record("supervisor", 1100.0, [
        {"type": "irregularity_cleared", "kind": "lid_opened", "supervisor": "alice"}], [])
    _, samples = parse(metrics.exposition().decode())
    assert value(samples, "shoe_irregularity_clearance_seconds_sum", kind="lid_opened") == 100
    assert value(samples, "shoe_irregularities_cleared_total", by="supervisor") == 1
    assert value(samples, "shoe_irregularities_total", kind="lid_opened") == 0  # not recounted
    assert metrics._oldest_latch is None


def test_metrics_option_is_checked_before_the_journal(tmp_path: Path) -> None:
    import socket

    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        with pytest.raises(MetricsServerError, match=f"metrics: cannot listen on 127.0.0.1:"
                                                     f"{port}: "):
            check_services(metrics=("127.0.0.1", port))
        with pytest.raises(MetricsServerError):
            check_metrics_port("127.0.0.1", port)
    base = {"device": "loop://", "profile": "p", "journal": tmp_path / "j.db"}
    assert load_run_config(None, {**base, "metrics": "9108"}).metrics_address() == (
        "127.0.0.1", 9108)
    assert load_run_config(None, {**base, "metrics": 9108}).metrics == "127.0.0.1:9108"
    assert load_run_config(None, {**base, "metrics": "0.0.0.0:9108"}).metrics_address() == (
        "0.0.0.0", 9108)
    with pytest.raises(ConfigError, match="metrics: 'nine': expected PORT"):
        load_run_config(None, {**base, "metrics": "nine"})
