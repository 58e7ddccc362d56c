"""Fixtures of the live blackjack tests: ``procs`` is the end-to-end tests' own."""

from __future__ import annotations

from tests.reporting.test_end_to_end import procs

__all__ = ["procs"]
