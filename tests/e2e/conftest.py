"""Fixtures for the process-level end-to-end tests (see ``processes.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .processes import ProcessKeeper


@pytest.fixture
def procs(tmp_path: Path) -> Iterator[ProcessKeeper]:
    """Starts ``shoe`` processes (output in ``tmp_path/logs``); kills survivors at teardown."""
    logs = tmp_path / "logs"
    logs.mkdir()
    with ProcessKeeper(logs) as keeper:
        yield keeper
