from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from journal_helpers import fill


@pytest.fixture(scope="session")
def _template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "journal.db"
    fill(path, 12)
    return path


@pytest.fixture
def journal12(_template: Path, tmp_path: Path) -> Path:
    """A fresh copy of a valid 12-record journal (records 1..12)."""
    path = tmp_path / "journal.db"
    shutil.copyfile(_template, path)
    return path
