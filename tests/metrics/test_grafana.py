"""The Grafana dashboards in docs/grafana/ (issue 19): valid JSON for a Prometheus data source,
and every expression names only metrics documented in docs/metrics.md."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from .test_metrics import documented_metrics

GRAFANA = Path(__file__).resolve().parents[2] / "docs" / "grafana"
DASHBOARDS = sorted(GRAFANA.glob("*.json"))
KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left",
            "group_right", "bool", "offset",
            # aggregation operators, which may be followed by "by (...)" rather than "("
            "sum", "avg", "min", "max", "count", "group", "stddev", "stdvar", "topk", "bottomk",
            "quantile", "count_values"}
HISTOGRAM_SUFFIXES = ("_bucket", "_count", "_sum")


def expressions(dashboard: dict[str, Any]) -> list[str]:
    found = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    for variable in dashboard.get("templating", {}).get("list", []):
        query = variable.get("query")
        found.append(query["query"] if isinstance(query, dict) else str(query))
    return found


def metric_names(expr: str) -> set[str]:
    """The metric names an expression (PromQL, or Grafana's label_values()) refers to."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # strings
    text = re.sub(r"\{[^{}]*\}", "", text)  # label matchers
    text = re.sub(r"\[[^\]]*\]", "", text)  # ranges
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", r"\1",
                  text)  # label lists
    text = re.sub(r"label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,[^)]*\)", r"\1", text)
    names = set()
    for match in re.finditer(r"(?<![\w$.])([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()", text):
        name = match.group(1)
        if name not in KEYWORDS:
            names.add(name)
    return names


def test_there_is_a_table_and_a_floor_dashboard() -> None:
    assert {path.name for path in DASHBOARDS} >= {"shoe-table.json", "shoe-floor.json"}


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda path: path.name)
def test_every_expression_uses_documented_metrics(path: Path) -> None:
    dashboard = json.loads(path.read_text(encoding="utf-8"))
    documented = documented_metrics()
    histograms = {name for name, kind in documented.items() if kind == "histogram"}
    exprs = expressions(dashboard)
    assert len(exprs) >= 10
    used: set[str] = set()
    for expr in exprs:
        for name in metric_names(expr):
            base = name
            for suffix in HISTOGRAM_SUFFIXES:
                if name.endswith(suffix) and name.removesuffix(suffix) in histograms:
                    base = name.removesuffix(suffix)
            assert base in documented, f"{path.name}: {expr!r} uses {name}, not documented"
            if base in histograms:
                assert name != base, f"{path.name}: {expr!r}: a histogram is read by _bucket"
            used.add(base)
    assert used, path.name
    for panel in dashboard["panels"]:
        assert panel["datasource"]["uid"] == "${DS_PROMETHEUS}", panel["title"]


def test_the_expression_parser_finds_names() -> None:
    assert metric_names('histogram_quantile(0.99, sum by (table_id, le) '
                        '(rate(shoe_journal_append_seconds_bucket{table_id="t"}[5m])))') == {
        "shoe_journal_append_seconds_bucket"}
    assert metric_names("rate(process_cpu_seconds_total[5m]) and on(instance) "
                        'shoe_controller_info{table_id="$table_id"}') == {
        "process_cpu_seconds_total", "shoe_controller_info"}
    assert metric_names("count(shoe_link_up == 0) or vector(0)") == {"shoe_link_up"}
    assert metric_names("label_values(shoe_controller_info, table_id)") == {
        "shoe_controller_info"}
