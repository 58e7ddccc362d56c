"""Fixtures of the wheel table's process tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reporting.test_end_to_end import Procs


@pytest.fixture
def procs(tmp_path: Path) -> Iterator[Procs]:
    """Started processes, output in files; every survivor is killed at the end."""
    keeper = Procs(tmp_path)
    try:
        yield keeper
    finally:
        keeper.close()
