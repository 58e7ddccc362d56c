"""Durable, hash-chained journal of every input to the table (SQLite, WAL).

Every input (card, shoe event, button, command, supervisor action) is appended with
:meth:`Journal.append` and is durable when that returns, before it takes effect; the table
state is rebuilt at start by replaying :meth:`Journal.records`. :func:`verify_journal` names
every record that was edited, deleted, inserted or reordered.
"""

from shoe_controller.journal.records import GENESIS_HASH, Record
from shoe_controller.journal.store import FORMAT_VERSION, Durability, Journal
from shoe_controller.journal.verify import Problem, ProblemKind, VerifyReport, verify_journal

__all__ = [
    "FORMAT_VERSION",
    "GENESIS_HASH",
    "Durability",
    "Journal",
    "Problem",
    "ProblemKind",
    "Record",
    "VerifyReport",
    "verify_journal",
]
