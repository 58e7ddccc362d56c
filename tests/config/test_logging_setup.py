"""shoe_controller.logs: JSON lines or human lines, idempotent set-up."""

from __future__ import annotations

import datetime as dt
import io
import json
import logging
from collections.abc import Iterator

import pytest

from shoe_controller.errors import ConfigError
from shoe_controller.logs import setup_logging


@pytest.fixture(autouse=True)
def _restore_root_logger() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    for handler in root.handlers[:]:
        if handler not in handlers:
            root.removeHandler(handler)
            handler.close()
    root.setLevel(level)


def test_json_lines_carry_the_fields_and_extras() -> None:
    stream = io.StringIO()
    setup_logging(True, "info", stream)
    log = logging.getLogger("shoe.table")
    log.info("card %s drawn\nsecond line", "AS", extra={"card": "AS", "counter": 41})
    log.debug("not shown at info")
    (line,) = stream.getvalue().splitlines()
    entry = json.loads(line)
    assert entry["level"] == "info" and entry["logger"] == "shoe.table"
    assert entry["msg"] == "card AS drawn\nsecond line"
    assert entry["card"] == "AS" and entry["counter"] == 41
    assert entry["ts"].endswith("Z")
    stamp = dt.datetime.fromisoformat(entry["ts"])
    assert abs((dt.datetime.now(dt.UTC) - stamp).total_seconds()) < 60
    assert set(entry) == {"ts", "level", "logger", "msg", "card", "counter"}


def test_json_lines_include_the_exception_and_survive_odd_values() -> None:
    stream = io.StringIO()
    setup_logging(True, "debug", stream)
    try:
        raise RuntimeError("jam at exit sensor")
    except RuntimeError:
        logging.getLogger("shoe.device").exception("reader failed", extra={"obj": object()})
    (line,) = stream.getvalue().splitlines()
    entry = json.loads(line)
    assert entry["level"] == "error"
    assert "RuntimeError: jam at exit sensor" in entry["exc"]
    assert entry["obj"].startswith("<object object")


def test_human_format_is_readable_and_shows_extras() -> None:
    stream = io.StringIO()
    setup_logging(False, "warning", stream)
    logging.getLogger("shoe.link").warning("link lost", extra={"reason": "no heartbeat"})
    logging.getLogger("shoe.link").info("hidden")
    (line,) = stream.getvalue().splitlines()
    assert "WARNING shoe.link: link lost  reason='no heartbeat'" in line
    assert line[:4].isdigit() and "Z " in line


def test_setup_twice_does_not_duplicate_records() -> None:
    first, second = io.StringIO(), io.StringIO()
    setup_logging(True, "info", first)
    setup_logging(True, "info", second)
    setup_logging(True, "info", second)
    logging.getLogger("x").info("once")
    assert first.getvalue() == ""
    assert len(second.getvalue().splitlines()) == 1


def test_foreign_handlers_are_left_alone() -> None:
    foreign = logging.StreamHandler(io.StringIO())
    logging.getLogger().addHandler(foreign)
    setup_logging(False, "info", io.StringIO())
    setup_logging(True, "info", io.StringIO())
    assert foreign in logging.getLogger().handlers


def test_unknown_level_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="log level must be one of debug, info"):
        setup_logging(True, "loud")
