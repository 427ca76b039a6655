"""verify(since=...) checks only what was appended after an earlier verify, and still breaks on it."""

import sqlite3

import pytest

from factory_schedule.store import Decision, JournalCorruptError, NewEvent, open_journal


def _append(journal, count):
    for _ in range(count):
        version = journal.head("agg")
        journal.execute("agg", f"c{version}", {}, version,
                        lambda state, v: Decision([NewEvent("x", {"v": v})], {"v": v + 1}, {}))


def test_a_verify_from_a_checkpoint_checks_the_events_appended_after_it(sqlite_url):
    journal = open_journal(sqlite_url)
    _append(journal, 5)
    checkpoint = journal.verify("agg")
    assert checkpoint.version == 5
    _append(journal, 3)
    assert journal.verify("agg", since=checkpoint).version == 8
    path = sqlite_url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as db:
        db.execute("UPDATE events SET data = '{\"v\":99}' WHERE aggregate = 'agg' AND version = 7")
    with pytest.raises(JournalCorruptError):
        journal.verify("agg", since=checkpoint)


def test_a_checkpoint_whose_hash_is_not_the_chain_s_is_refused(sqlite_url):
    journal = open_journal(sqlite_url)
    _append(journal, 4)
    checkpoint = journal.verify("agg")
    _append(journal, 1)
    forged = type(checkpoint)(version=checkpoint.version, hash="f" * 64)
    with pytest.raises(JournalCorruptError):
        journal.verify("agg", since=forged)
