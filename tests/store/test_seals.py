"""Every row a decision depends on is sealed by the chain: an edited state, receipt or head is refused.

Each case edits the database by hand (as an owner with a text editor or a damaged disk would),
then holds two things: `verify` names what is wrong, and the reads a decision makes (`load_text`,
`load`, `receipt`, `execute`) refuse with JournalCorruptError instead of acting on the edited row.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from sqlalchemy import text

from factory_schedule.store import JournalCorruptError, open_journal
from factory_schedule.store.journal import Journal
from factory_schedule.store.records import GENESIS_HASH, chain_hash
from factory_schedule.store.statements import JOURNAL_FORMAT

from .support import AGGREGATE, bump, burst, database


def _journal_with_commands(url: str) -> Journal:
    journal = open_journal(url)
    journal.execute(AGGREGATE, "c1", {"n": 1}, 0, bump("c1"))
    journal.execute(AGGREGATE, "c2", {"n": 2}, 1, burst("c2", 3))
    journal.execute(AGGREGATE, "c3", {"n": 3}, 4, bump("c3"))
    assert journal.verify(AGGREGATE).version == 5
    return journal


def _edit(journal: Journal, statement: str, **values: Any) -> None:
    with database(journal.url) as conn:
        changed = conn.execute(text(statement), values).rowcount
    assert changed == 1, statement


def _refused_everywhere(journal: Journal, says: str) -> None:
    with pytest.raises(JournalCorruptError, match=says):
        journal.verify(AGGREGATE)
    for read in (lambda: journal.load_text(AGGREGATE), lambda: journal.load(AGGREGATE),
                 lambda: journal.execute(AGGREGATE, "c4", {}, 5, bump("c4"))):
        with pytest.raises(JournalCorruptError):
            read()


def test_a_journal_written_by_commands_verifies_with_every_command_sealed(journal_url):
    journal = _journal_with_commands(journal_url)
    checkpoint = journal.verify(AGGREGATE)
    assert (checkpoint.version, checkpoint.unsealed_through) == (5, 0)
    events = list(journal.iter_history(AGGREGATE))
    assert [event.seal is not None for event in events] == [True, False, False, True, True]


def test_an_edited_state_row_is_refused_by_verify_and_every_read(journal_url):
    journal = _journal_with_commands(journal_url)
    _edit(journal, "UPDATE aggregates SET state = :state WHERE aggregate = :a", state='{"count":99,"last":"c3"}',
          a=AGGREGATE)
    _refused_everywhere(journal, "the stored state is not the state event 5 sealed")


def test_an_edited_head_hash_is_named_as_such(journal_url):
    journal = _journal_with_commands(journal_url)
    _edit(journal, "UPDATE aggregates SET hash = :h WHERE aggregate = :a", h="f" * 64, a=AGGREGATE)
    _refused_everywhere(journal, "the head's hash is not the hash of event 5")


def test_a_head_set_back_to_an_earlier_command_is_refused(journal_url):
    journal = _journal_with_commands(journal_url)
    with database(journal.url) as conn:
        event = conn.execute(text("SELECT hash FROM events WHERE aggregate = :a AND version = 4"),
                             {"a": AGGREGATE}).one()
    _edit(journal, "UPDATE aggregates SET version = 4, hash = :h, state = :s WHERE aggregate = :a",
          h=event.hash, s='{"count":4}', a=AGGREGATE)
    _refused_everywhere(journal, "event 5 lies beyond the head version 4")


def test_a_head_ahead_of_the_chain_is_refused(journal_url):
    journal = _journal_with_commands(journal_url)
    _edit(journal, "UPDATE aggregates SET version = 6 WHERE aggregate = :a", a=AGGREGATE)
    _refused_everywhere(journal, "the head says version 6, but no event 6 exists")


def test_a_deleted_head_row_is_refused_not_read_as_an_empty_journal(journal_url):
    journal = _journal_with_commands(journal_url)
    _edit(journal, "DELETE FROM aggregates WHERE aggregate = :a", a=AGGREGATE)
    with pytest.raises(JournalCorruptError, match="event 1 lies beyond the head version 0"):
        journal.load_text(AGGREGATE)
    with pytest.raises(JournalCorruptError):
        journal.verify(AGGREGATE)
    with pytest.raises(JournalCorruptError):
        journal.execute(AGGREGATE, "c4", {}, 0, bump("c4"))


def test_an_edited_event_is_refused_by_verify(journal_url):
    journal = _journal_with_commands(journal_url)
    _edit(journal, "UPDATE events SET data = :d WHERE aggregate = :a AND version = 2", d='{"by":"x","n":2}',
          a=AGGREGATE)
    with pytest.raises(JournalCorruptError, match="event 2 does not match its hash"):
        journal.verify(AGGREGATE)


def test_an_edited_seal_on_the_head_event_is_refused_by_every_read(journal_url):
    journal = _journal_with_commands(journal_url)
    _edit(journal, "UPDATE events SET state_sha256 = :s WHERE aggregate = :a AND version = 5", s="0" * 64,
          a=AGGREGATE)
    _refused_everywhere(journal, "event 5 does not match its hash")


@pytest.mark.parametrize(
    ("statement", "says"),
    [
        ("UPDATE receipts SET result = '[7]' WHERE command_id = 'c2'",
         "receipt 'c2' is not the receipt event 4 sealed"),
        ("UPDATE receipts SET digest = 'x' WHERE command_id = 'c1'", "receipt 'c1' is not the receipt event 1 sealed"),
        ("DELETE FROM receipts WHERE command_id = 'c2'", r"command 'c2' \(events 2-4\) has no receipt"),
    ],
    ids=["result", "digest", "deleted"],
)
def test_an_edited_or_deleted_receipt_is_refused_by_verify_and_by_its_lookup(journal_url, statement, says):
    journal = _journal_with_commands(journal_url)
    command_id = statement.split("'")[-2]
    _edit(journal, statement)
    with pytest.raises(JournalCorruptError, match=says):
        journal.verify(AGGREGATE)
    with pytest.raises(JournalCorruptError):
        journal.receipt(command_id)
    # A retry of the command must not run it again, nor replay the edited result.
    decide = bump(command_id) if command_id == "c1" else burst(command_id, 3)
    with pytest.raises(JournalCorruptError):
        journal.execute(AGGREGATE, command_id, {"n": int(command_id[1])}, 5, decide)
    assert journal.head(AGGREGATE) == 5


def test_a_receipt_added_by_hand_is_refused(journal_url):
    journal = _journal_with_commands(journal_url)
    _edit(journal, "INSERT INTO receipts (command_id, aggregate, digest, first_version, last_version, result) "
                   "VALUES ('forged', :a, 'd', 5, 5, '{}')", a=AGGREGATE)
    with pytest.raises(JournalCorruptError, match="receipt 'forged' names event 5, which ends no command of that ID"):
        journal.verify(AGGREGATE)
    with pytest.raises(JournalCorruptError, match="which that command did not record"):
        journal.receipt("forged")


def test_a_verify_from_a_checkpoint_checks_the_seals_appended_after_it(journal_url):
    journal = _journal_with_commands(journal_url)
    checkpoint = journal.verify(AGGREGATE)
    journal.execute(AGGREGATE, "c4", {}, 5, bump("c4"))
    _edit(journal, "DELETE FROM receipts WHERE command_id = 'c4'")
    with pytest.raises(JournalCorruptError, match="'c4'"):
        journal.verify(AGGREGATE, since=checkpoint)


def test_a_command_of_more_than_a_page_of_events_is_sealed_and_verified(sqlite_url):
    journal = open_journal(sqlite_url)
    journal.execute(AGGREGATE, "big", {}, 0, burst("big", 1500))
    journal.execute(AGGREGATE, "small", {}, 1500, bump("small"))
    assert journal.verify(AGGREGATE).version == 1501
    _edit(journal, "DELETE FROM receipts WHERE command_id = 'big'")
    with pytest.raises(JournalCorruptError, match=r"command 'big' \(events 1-1500\) has no receipt"):
        journal.verify(AGGREGATE)


# -- journals written before seals (format 1) ------------------------------------------------------------------


def _format_1_journal(path: str, commands: int) -> None:
    """A journal as a format 1 build wrote it: its own schema, unsealed events, the format 1 marker."""
    with sqlite3.connect(path) as db:
        db.executescript(
            "CREATE TABLE journal_meta (key VARCHAR NOT NULL PRIMARY KEY, value VARCHAR NOT NULL);"
            "CREATE TABLE events (id INTEGER PRIMARY KEY, aggregate VARCHAR NOT NULL, version INTEGER NOT NULL, "
            "command_id VARCHAR NOT NULL, type VARCHAR NOT NULL, data TEXT NOT NULL, prev_hash VARCHAR NOT NULL, "
            "hash VARCHAR NOT NULL, CONSTRAINT events_aggregate_version UNIQUE (aggregate, version));"
            "CREATE INDEX ix_events_command_id ON events (command_id);"
            "CREATE TABLE receipts (command_id VARCHAR NOT NULL PRIMARY KEY, aggregate VARCHAR NOT NULL, "
            "digest VARCHAR NOT NULL, first_version INTEGER NOT NULL, last_version INTEGER NOT NULL, "
            "result TEXT NOT NULL);"
            "CREATE TABLE aggregates (aggregate VARCHAR NOT NULL PRIMARY KEY, version INTEGER NOT NULL, "
            "state TEXT NOT NULL, hash VARCHAR NOT NULL);"
            "INSERT INTO journal_meta VALUES ('format', 'factory-schedule-journal/1');"
        )
        prev = GENESIS_HASH
        for version in range(1, commands + 1):
            data = f'{{"count":{version}}}'
            sealed = chain_hash(prev, AGGREGATE, version, f"old{version}", "bumped", data)
            db.execute("INSERT INTO events (aggregate, version, command_id, type, data, prev_hash, hash) "
                       "VALUES (?, ?, ?, 'bumped', ?, ?, ?)", (AGGREGATE, version, f"old{version}", data, prev, sealed))
            db.execute("INSERT INTO receipts VALUES (?, ?, 'd', ?, ?, '{}')", (f"old{version}", AGGREGATE, version,
                                                                                version))
            prev = sealed
        db.execute("INSERT INTO aggregates VALUES (?, ?, ?, ?)", (AGGREGATE, commands, f'{{"count":{commands}}}', prev))


def test_a_format_1_journal_is_upgraded_and_verify_reports_its_commands_as_unsealed(tmp_path):
    path = str(tmp_path / "old.db")
    _format_1_journal(path, 3)
    journal = open_journal(f"sqlite:///{path}")
    checkpoint = journal.verify(AGGREGATE)
    assert (checkpoint.version, checkpoint.unsealed_through) == (3, 3)
    assert journal.load(AGGREGATE).state == {"count": 3}
    journal.execute(AGGREGATE, "new1", {}, 3, bump("new1"))
    checkpoint = journal.verify(AGGREGATE)
    assert (checkpoint.version, checkpoint.unsealed_through) == (4, 3)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM journal_meta WHERE key = 'format'").fetchone() == (JOURNAL_FORMAT,)


def test_a_format_1_journal_s_deleted_receipt_is_still_found(tmp_path):
    path = str(tmp_path / "old.db")
    _format_1_journal(path, 3)
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM receipts WHERE command_id = 'old2'")
    journal = open_journal(f"sqlite:///{path}")
    with pytest.raises(JournalCorruptError, match=r"command 'old2' \(events 2-2\) has no receipt"):
        journal.verify(AGGREGATE)
    with pytest.raises(JournalCorruptError, match="its receipt is missing"):
        journal.receipt("old2")


def test_after_the_first_sealed_command_an_unsealed_one_is_refused(tmp_path):
    """An unsealed command cannot be slipped in after sealing began without recomputing the chain's hashes."""
    path = str(tmp_path / "old.db")
    _format_1_journal(path, 1)
    journal = open_journal(f"sqlite:///{path}")
    journal.execute(AGGREGATE, "new1", {}, 1, bump("new1"))
    head = journal.history(AGGREGATE)[-1]
    data = '{"count":3}'
    forged = chain_hash(head.hash, AGGREGATE, 3, "forged", "bumped", data)
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO events (aggregate, version, command_id, type, data, prev_hash, hash) "
                   "VALUES (?, 3, 'forged', 'bumped', ?, ?, ?)", (AGGREGATE, data, head.hash, forged))
        db.execute("INSERT INTO receipts VALUES ('forged', ?, 'd', 3, 3, '{}')", (AGGREGATE,))
        db.execute("UPDATE aggregates SET version = 3, hash = ?, state = ?", (forged, data))
    with pytest.raises(JournalCorruptError, match="the head's event 3 is not sealed"):
        journal.verify(AGGREGATE)


