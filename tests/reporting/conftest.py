from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from simulators.table_system import TableSystem, TableSystemOptions
from tests.reporting.helpers import KEY, TOKEN


@pytest.fixture
def table_system(tmp_path: Path) -> Iterator[TableSystem]:
    system = TableSystem("127.0.0.1", 0, TableSystemOptions(
        token=TOKEN, key=KEY, record=tmp_path / "record.jsonl", drives_betting=False))
    system.start()
    try:
        yield system
    finally:
        system.close()
