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


def _rechain(path, aggregate):
    """A forger's whole rewrite: every event's hash and link recomputed from its rows as they now are."""
    from factory_schedule.store.records import GENESIS_HASH, chain_hash

    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT version, command_id, type, data, state_sha256, receipt_sha256 FROM events "
                          "WHERE aggregate = ? ORDER BY version", (aggregate,)).fetchall()
        prev = GENESIS_HASH
        for version, command_id, type_, data, state_sha, receipt_sha in rows:
            seal = (state_sha, receipt_sha) if state_sha is not None and receipt_sha is not None else None
            forged = chain_hash(prev, aggregate, version, command_id, type_, data, seal)
            db.execute("UPDATE events SET prev_hash = ?, hash = ? WHERE aggregate = ? AND version = ?",
                       (prev, forged, aggregate, version))
            prev = forged
        db.execute("UPDATE aggregates SET hash = ? WHERE aggregate = ?", (prev, aggregate))


@pytest.mark.parametrize("appended_after", [0, 2])
def test_a_history_rechained_at_or_before_the_checkpoint_fails_the_check_from_it(sqlite_url, appended_after):
    journal = open_journal(sqlite_url)
    _append(journal, 4)
    checkpoint = journal.verify("agg")
    _append(journal, appended_after)
    path = sqlite_url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as db:
        db.execute("UPDATE events SET data = '{\"v\":99}' WHERE aggregate = 'agg' AND version = 2")
    _rechain(path, "agg")
    journal.verify("agg")  # a whole rewrite is a consistent chain from the first event
    with pytest.raises(JournalCorruptError, match="event 4 is not the one verified before"):
        journal.verify("agg", since=checkpoint)
