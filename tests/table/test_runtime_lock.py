import pytest

from shoe_controller.errors import JournalError
from shoe_controller.table.runtime import journal_lock


def test_a_journal_serves_one_controller_at_a_time(tmp_path) -> None:
    journal = tmp_path / "table.sqlite"
    with journal_lock(journal):
        with pytest.raises(JournalError, match="in use by another shoe controller"):
            with journal_lock(journal):
                pass
    with journal_lock(journal):  # released again
        pass
