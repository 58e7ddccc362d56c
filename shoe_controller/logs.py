"""Logging set-up for ``shoe run``: human-readable lines, or one JSON object a line.

JSON lines (``--log-json``) are for the casino's log collector: every record carries ``ts``
(ISO 8601, UTC, milliseconds), ``level``, ``logger``, ``msg``, every field passed with
``extra={...}`` (so ``log.info("card drawn", extra={"card": "AS", "counter": 41})`` is
searchable by card), and ``exc`` with the traceback when an exception is logged.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import sys
from typing import Any, TextIO

LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}
HUMAN_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"

# Attributes every LogRecord has; anything else on a record came from ``extra=``.
_STANDARD_ATTRS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
}
_MARK = "_shoe_controller_handler"  # tags our handler so a second set-up replaces it


class JsonLinesFormatter(logging.Formatter):
    """One JSON object per record, on one line (newlines inside strings are escaped)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": _dt.datetime.fromtimestamp(record.created, _dt.UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD_ATTRS and not key.startswith("_") and key not in entry:
                entry[key] = value
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exc"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False, default=repr)


class HumanFormatter(logging.Formatter):
    """``2024-05-01 12:00:00.123Z INFO    shoe.table: message  key=value ...`` (UTC)."""

    converter = staticmethod(lambda secs: _dt.datetime.fromtimestamp(secs, _dt.UTC).timetuple())
    default_msec_format = "%s.%03dZ"

    def __init__(self) -> None:
        super().__init__(HUMAN_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        extras = [
            f"{key}={value!r}" if isinstance(value, str) and " " in value else f"{key}={value}"
            for key, value in vars(record).items()
            if key not in _STANDARD_ATTRS and not key.startswith("_")
        ]
        if not extras:
            return text
        first, newline, rest = text.partition("\n")  # keep extras beside the message
        return f"{first}  {' '.join(extras)}{newline}{rest}"


def setup_logging(json_lines: bool, level: str, stream: TextIO | None = None) -> logging.Handler:
    """Send the root logger to ``stream`` (default: standard error) at ``level``.

    Idempotent: a second call replaces the handler the first one installed instead of
    adding another, so records are never printed twice. Returns the handler.
    """
    try:
        numeric = LEVELS[level.lower()]
    except (KeyError, AttributeError):
        from shoe_controller.errors import ConfigError

        raise ConfigError(f"log level must be one of {', '.join(LEVELS)}, got {level!r}") from None
    handler = logging.StreamHandler(sys.stderr if stream is None else stream)
    handler.setFormatter(JsonLinesFormatter() if json_lines else HumanFormatter())
    setattr(handler, _MARK, True)
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, _MARK, False)]:
        root.removeHandler(old)
        old.close()
    root.addHandler(handler)
    root.setLevel(numeric)
    # ``transitions`` logs every callback at INFO: thousands of lines a shoe. Its warnings
    # still come through; at debug level everything does.
    logging.getLogger("transitions").setLevel(max(numeric, logging.WARNING))
    return handler


def log_fatal_as_json(message: str) -> bool:
    """Log ``message`` as an ERROR JSON line if the command set up JSON logging (True), so a
    log collector gets a fatal error like every other line; False: print it as text."""
    handlers = [h for h in logging.getLogger().handlers if getattr(h, _MARK, False)]
    if not handlers or not isinstance(handlers[0].formatter, JsonLinesFormatter):
        return False
    logging.getLogger("shoe_controller.cli").error(message)
    return True
