"""A wheel table's /metrics: scraped from a controller that followed real games on a real
line, parsed with prometheus-client's text parser, checked against docs/metrics.md's wheel
table and against what happened."""

from __future__ import annotations

import re
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from simulators.wheel import SimulatedWheel, WheelTimings

from .test_controller import SPEED, controller, run_until, served_wheel

DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


def documented() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    table = text.split("<!-- wheel-metrics-table", 1)[1].split("<!-- /wheel-metrics-table", 1)[0]
    rows = re.findall(r"^\| `([a-z_:][a-z0-9_:]*)` \| (counter|gauge|histogram) \|", table,
                      re.MULTILINE)
    assert len(rows) > 15
    return dict(rows)


def test_every_documented_metric_is_served_and_counts_what_happened(tmp_path: Path) -> None:
    wheel = SimulatedWheel(seed=9, timings=WheelTimings().scaled(SPEED), faults={2: "misspin"})
    with served_wheel(wheel) as url, controller(tmp_path / "j.db", url) as ctl:
        run_until(ctl, lambda: ctl.table.rounds_finished >= 4)
        text = ctl.metrics.exposition().decode()
        records = sum(1 for _ in ctl.journal.records())
        finished = ctl.table.rounds_finished
        voids = ctl.table.voids
    families = {f.name: f for f in text_string_to_metric_families(text)}
    for name, kind in documented().items():
        family = name.removesuffix("_total") if kind == "counter" else name
        assert family in families, f"{name} documented, not served"
        assert families[family].type == kind
    samples = [s for f in families.values() for s in f.samples]

    def value(name: str, **labels: str) -> float:
        return sum(s.value for s in samples if s.name == name
                   and all(s.labels.get(k) == v for k, v in labels.items()))

    assert value("shoe_rounds_total") == finished
    assert value("shoe_rounds_total", outcome="void") == voids >= 1  # the misspin
    assert value("shoe_wheel_warnings_total", kind="misspin") >= 1
    assert value("shoe_wheel_lines_total", kind="status") > 10
    assert value("shoe_journal_append_seconds_count") == records  # every record this run
    assert value("shoe_wheel_connected") == 1
