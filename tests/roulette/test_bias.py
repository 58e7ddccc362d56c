"""Wheel bias monitor: flags a biased arc soon enough, stays quiet on fair wheels.

The operating figures (false-alarm rate over many fair wheels, games to detection) come from
bench/bench_wheel_bias.py; these tests hold seeded examples of both and check the statistics
against textbook values computed here by hand.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from shoe_controller.games.roulette.bias import (
    REPORT_SCHEMA,
    BiasConfig,
    BiasMonitor,
    Spin,
    biased_weights,
    evidence,
    first_alert,
)
from shoe_controller.games.roulette.layout import WHEEL_ORDER

HOT_ARC = WHEEL_ORDER[10:19]  # 6 27 13 36 11 30 8 23 10
DETECTION_LIMIT = 2500
"""docs/roulette.md: a 9-pocket arc 1.5x as likely is flagged within 2,500 games (bench, seed 18,
1,000 wheels: all of them; median 578 games, 95th percentile 1,148)."""


def test_chi_square_on_numbers_is_pearsons() -> None:
    counts = [10] * 37
    counts[17] = 46  # 370 + 36 games
    games = sum(counts)
    expected = games / 37
    by_hand = sum((c - expected) ** 2 / expected for c in counts)
    result = evidence(counts)
    assert result.games == games
    assert result.numbers_chi2 == pytest.approx(by_hand)
    assert result.numbers_p == pytest.approx(stats.chisquare(counts).pvalue)


def test_a_perfectly_even_wheel_shows_no_evidence() -> None:
    result = evidence([100] * 37)
    assert result.numbers_chi2 == 0 and result.p == 1.0


def test_seeded_fair_wheel_is_not_flagged_over_10000_games() -> None:
    rng = np.random.default_rng(18)
    for _ in range(5):
        assert first_alert(rng.integers(0, 37, 10_000)) is None


def test_seeded_biased_arc_is_flagged_within_the_documented_games() -> None:
    rng = np.random.default_rng(18)
    weights = biased_weights(HOT_ARC, 1.5)
    for _ in range(5):
        found = first_alert(rng.choice(37, DETECTION_LIMIT, p=weights))
        assert found is not None and 370 <= found <= DETECTION_LIMIT


def test_incremental_monitor_agrees_with_the_vectorised_search() -> None:
    rng = np.random.default_rng(7)
    for factor in (1.0, 1.3, 1.5):
        numbers = rng.choice(37, 3000, p=biased_weights(HOT_ARC, factor))
        monitor = BiasMonitor("W")
        alerts = [i + 1 for i, n in enumerate(numbers) if monitor.add(int(n))]
        expected = first_alert(numbers)
        assert (alerts[0] if alerts else None) == expected
        if alerts:
            assert monitor.evidence().games == 3000


def test_alert_names_the_hot_arc_and_is_raised_once() -> None:
    rng = np.random.default_rng(3)
    monitor = BiasMonitor("W7")
    alerts = [monitor.add(int(n)) for n in rng.choice(37, 3000, p=biased_weights(HOT_ARC, 1.6))]
    raised = [a for a in alerts if a is not None]
    assert len(raised) == 1 and monitor.alerting
    alert = raised[0]
    assert alert.evidence.p < 1e-4 and alert.evidence.games >= 370
    assert len(set(alert.hottest_sector) & set(HOT_ARC)) >= 7
    assert "wheel W7" in alert.message and "inspected" in alert.message
    monitor.reset()
    assert monitor.games == 0 and not monitor.alerting


def test_no_alert_before_the_minimum_games() -> None:
    monitor = BiasMonitor("W", BiasConfig(min_games=370))
    assert all(monitor.add(17) is None for _ in range(369))
    assert monitor.add(17) is not None


def test_report_breaks_down_by_dealer_and_direction_and_is_json() -> None:
    rng = np.random.default_rng(5)
    spins = []
    for i, n in enumerate(rng.integers(0, 37, 740)):
        spins.append(Spin(int(n), dealer=f"D{i % 2}",
                          direction="clockwise" if i % 3 else "anticlockwise"))
    report = BiasMonitor.from_spins("W1", spins).report()
    assert report["schema"] == REPORT_SCHEMA and report["games"] == 740
    assert sum(report["numbers"].values()) == 740
    assert sum(s["games"] for s in report["sectors"]) == 740
    assert sorted(p for s in report["sectors"] for p in s["pockets"]) == list(range(37))
    assert {k: v["games"] for k, v in report["by_dealer"].items()} == {"D0": 370, "D1": 370}
    assert sum(v["games"] for v in report["by_direction"].values()) == 740
    json.dumps(report, allow_nan=False)


@pytest.mark.parametrize("bad", [{"alert_p": 0.0}, {"alert_p": 1}, {"min_games": 10},
                                 {"sector_size": 1}])
def test_config_refuses_bad_values(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        BiasConfig(**bad)  # type: ignore[arg-type]


def test_monitor_refuses_a_number_that_is_no_pocket() -> None:
    with pytest.raises(ValueError, match="not a pocket"):
        BiasMonitor("W").add(37)


def test_report_matches_its_published_schema() -> None:
    from pathlib import Path

    import jsonschema

    schema_path = Path(__file__).resolve().parents[2] / "docs/roulette/bias-report.schema.json"
    schema = json.loads(schema_path.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    rng = np.random.default_rng(9)
    monitor = BiasMonitor("W2")
    for i, n in enumerate(rng.choice(37, 1200, p=biased_weights(HOT_ARC, 1.6))):
        monitor.add(Spin(int(n), dealer=f"D{i % 3}", direction="clockwise"))
    report = json.loads(json.dumps(monitor.report()))
    jsonschema.validate(report, schema)
    assert report["alerting"] is True
    jsonschema.validate(json.loads(json.dumps(BiasMonitor("empty").report())), schema)
