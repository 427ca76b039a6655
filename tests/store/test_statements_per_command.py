"""Inside a write transaction whose snapshot is held, a command sends each of its statements once.

On SQLite a `writing()` block holds the file's write lock from its first statement and reads one
snapshot, so what its transaction has read is what a second read would find: a receipt found
missing is not looked up again by the command that records it, and the data version its first head
read carried is the one its write leaves (another connection cannot commit in between, and a
connection's own commits leave it as it is). What the transaction itself writes is read again.

A head that a connection read or committed is not read again on that connection while its data
version stays (no other connection has committed since): the data version alone is read. A head
written by a transaction that did not commit is never taken for the stored one.
"""

from __future__ import annotations

import sqlite3

import pytest

from factory_schedule.store import CommandConflictError, JournalError, open_journal
from factory_schedule.store.journal import Journal

from .support import AGGREGATE, bump, sent_statements


def test_a_planned_command_under_the_write_lock_reads_its_receipt_and_the_data_version_once(sqlite_url):
    journal = open_journal(sqlite_url)
    journal.execute(AGGREGATE, "c1", {}, 0, bump("c1"))
    sent = sent_statements(journal)
    with journal.writing():
        version, _state = journal.load_text(AGGREGATE)
        assert journal.receipt("c2") is None  # the plan's replay check
        outcome = journal.execute(AGGREGATE, "c2", {}, version, bump("c2"))

    assert not outcome.replayed and outcome.version == 2
    assert [key for key, _values in sent] == ["data_version", "receipt", "insert_event", "insert_receipt",
                                              "update_head"]
    assert open_journal(sqlite_url).load(AGGREGATE).state == {"count": 2, "last": "c2"}


def test_a_receipt_found_missing_is_read_again_once_its_command_has_recorded_it(journal_url):
    journal = open_journal(journal_url)
    with journal.writing():
        assert journal.receipt("c1") is None
        first = journal.execute(AGGREGATE, "c1", {}, 0, bump("c1"))
        recorded = journal.receipt("c1")
        again = journal.execute(AGGREGATE, "c1", {}, 0, bump("c1"))
    with pytest.raises(CommandConflictError), journal.writing():  # a refusal rolls its transaction back
        assert journal.receipt("c2") is None
        journal.execute(AGGREGATE, "c2", {}, 1, bump("c2"))
        journal.execute(AGGREGATE, "c2", {"other": 1}, 2, bump("c2"))

    assert recorded is not None and (recorded.first_version, recorded.last_version) == (1, 1)
    assert again.replayed and (again.version, again.result) == (first.version, first.result)
    assert open_journal(journal_url).head(AGGREGATE) == 1


def test_the_next_read_after_a_command_reads_only_the_data_version_and_one_after_another_writer_reads_the_head(
        sqlite_url):
    journal = open_journal(sqlite_url)
    journal.execute(AGGREGATE, "c1", {}, 0, bump("c1"))
    with journal.writing():
        journal.execute(AGGREGATE, "c2", {}, 1, bump("c2"))
    sent = sent_statements(journal)
    assert journal.load(AGGREGATE).state == {"count": 2, "last": "c2"}
    # the data version the command's transaction read is the one it left
    assert [key for key, _values in sent] == ["data_version"]

    open_journal(sqlite_url).execute(AGGREGATE, "c3", {}, 2, bump("c3"))
    assert journal.load(AGGREGATE).state == {"count": 3, "last": "c3"}
    assert [key for key, _values in sent] == ["data_version", "data_version", "head_row", "parts"]


class _Undone(Exception):
    pass


def test_a_head_written_by_a_transaction_rolled_back_is_not_taken_for_the_stored_one(sqlite_url):
    journal = open_journal(sqlite_url)
    journal.execute(AGGREGATE, "c1", {}, 0, bump("c1"))
    with pytest.raises(_Undone), journal.writing():
        journal.execute(AGGREGATE, "c2", {}, 1, bump("c2"))
        raise _Undone
    sent = sent_statements(journal)

    assert journal.load(AGGREGATE).state == {"count": 1, "last": "c1"}
    assert [key for key, _values in sent] == ["data_version"]  # the head c1 committed, known since
    assert journal.execute(AGGREGATE, "c2", {}, 1, bump("c2")).version == 2
    assert open_journal(sqlite_url).load(AGGREGATE).state == {"count": 2, "last": "c2"}


def test_a_head_written_by_a_command_whose_commit_failed_is_not_taken_for_the_stored_one(sqlite_url):
    journal = open_journal(sqlite_url)
    journal.execute(AGGREGATE, "c1", {}, 0, bump("c1"))
    commit = journal._commit

    def failing(driver):
        driver.rollback()
        raise sqlite3.OperationalError("disk I/O error")

    journal._commit = failing
    with pytest.raises(JournalError):
        journal.execute(AGGREGATE, "c2", {}, 1, bump("c2"))
    journal._commit = commit
    sent = sent_statements(journal)

    assert journal.load(AGGREGATE).state == {"count": 1, "last": "c1"}
    assert [key for key, _values in sent] == ["data_version"]  # the head c1 committed, known since


def test_a_command_interrupted_right_after_its_commit_leaves_no_head_the_next_read_trusts(sqlite_url, monkeypatch):
    journal = open_journal(sqlite_url)
    journal.execute(AGGREGATE, "c1", {}, 0, bump("c1"))
    assert journal.load(AGGREGATE).version == 1  # the head c1 committed, known on this connection
    commit = Journal._commit

    def commit_then_interrupted(self, driver):
        commit(self, driver)  # durable: a signal lands on the next bytecode
        raise KeyboardInterrupt

    monkeypatch.setattr(Journal, "_commit", commit_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        journal.execute(AGGREGATE, "c2", {}, 1, bump("c2"))
    monkeypatch.setattr(Journal, "_commit", commit)

    assert journal.load(AGGREGATE).state == {"count": 2, "last": "c2"}
    assert journal.execute(AGGREGATE, "c3", {}, 2, bump("c3")).version == 3
