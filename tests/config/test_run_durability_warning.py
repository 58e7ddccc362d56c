"""`shoe run` warns at start when the journal does not fsync every record (durability normal)."""

from __future__ import annotations

import json
import logging
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from shoe_controller.cli import main
from shoe_controller.config import durability_warning, load_run_config


@pytest.fixture(autouse=True)
def _restore_logging_and_signals() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    saved = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    yield
    for handler in root.handlers[:]:
        if handler not in handlers:
            root.removeHandler(handler)
            handler.close()
    root.setLevel(level)
    for signum, handler in saved.items():
        signal.signal(signum, handler)


def start(tmp_path: Path, capsys: pytest.CaptureFixture[str], durability: str) -> list[dict]:
    """Run ``shoe run`` up to the table's start, which fails at once on an unknown profile
    (before any device is opened), and return the JSON log lines it wrote."""
    config = tmp_path / "table.toml"
    config.write_text(
        'device = "socket://127.0.0.1:1"\nprofile = "no-such-profile"\njournal = "j.db"\n'
        f'durability = "{durability}"\nlog_json = true\n',
        encoding="utf-8",
    )
    assert main(["run", "--config", str(config), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "no such profile" in err  # it got past the warning to the table's start
    return [json.loads(line) for line in err.splitlines() if line.startswith("{")]


def test_run_warns_when_durability_is_normal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = start(tmp_path, capsys, "normal")
    warnings = [entry for entry in logs if entry["level"] == "warning"]
    assert len(warnings) == 1, logs
    (entry,) = warnings
    config = load_run_config(tmp_path / "table.toml", {})
    assert entry["msg"] == durability_warning(config)
    assert entry["durability"] == "normal" and entry["logger"] == "shoe_controller.run"
    assert "power cut can lose a card the shoe has already deleted" in entry["msg"]


def test_run_does_not_warn_when_durability_is_full(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = start(tmp_path, capsys, "full")
    assert not [entry for entry in logs if entry["level"] == "warning"], logs
