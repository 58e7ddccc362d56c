"""Fixtures of the wheel table's process tests: ``procs`` is the end-to-end tests' own."""

from __future__ import annotations

from tests.reporting.test_end_to_end import procs

__all__ = ["procs"]
