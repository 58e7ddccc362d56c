import pytest

from shoe_controller.config import load_run_config
from shoe_controller.errors import JournalError
from shoe_controller.journal import Journal
from shoe_controller.table.runtime import journal_lock, running_table


def test_a_journal_serves_one_controller_at_a_time(tmp_path) -> None:
    journal = tmp_path / "table.sqlite"
    # A second lock taken while the first is held fails.
    with journal_lock(journal), pytest.raises(JournalError, match="in use by another shoe"), \
            journal_lock(journal):
        pass
    with journal_lock(journal):  # released again
        pass


def test_a_second_controller_on_the_same_journal_is_refused_before_it_writes(tmp_path) -> None:
    """Regression (review): ``running_table`` never took the lock, so two controllers
    started on one journal (an overlapping service restart) interleaved their inputs."""
    config = load_run_config(None, {"device": "socket://127.0.0.1:9",
                                    "profile": "punto-banco-1d",
                                    "journal": tmp_path / "table.sqlite"})
    with running_table(config) as first:
        records = first.journal.count()
        with pytest.raises(JournalError, match="in use by another shoe controller"), \
                running_table(config):
            pass
        assert first.journal.count() == records  # the second one appended nothing
    with Journal(config.journal, readonly=True) as journal:
        assert journal.verify().ok
    with running_table(config):  # the lock is released with the first controller
        pass
