"""The memo of checked head rows (`store/checked_heads.py`) spares the hashing, never the check.

A journal that has read or written a head finds the same row again without hashing the state; a row
edited behind its back in any column is checked in full and refused, exactly as a fresh journal
refuses it. On SQLite and PostgreSQL.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from sqlalchemy import text

from factory_schedule.store import JournalCorruptError, open_journal, sealed_rows
from factory_schedule.store import journal as journal_module

from .support import AGGREGATE, bump, database, sent_statements

EDITS = {
    "state": "UPDATE aggregates SET state = :forged_state WHERE aggregate = :a",
    "head hash": "UPDATE aggregates SET hash = 'x' || substr(hash, 2) WHERE aggregate = :a",
    "event data": "UPDATE events SET data = :forged_data WHERE aggregate = :a AND version = 2",
    "event type": "UPDATE events SET type = 'forged' WHERE aggregate = :a AND version = 2",
    "state seal": "UPDATE events SET state_sha256 = 'x' || substr(state_sha256, 2) WHERE aggregate = :a "
    "AND version = 2",
    "event beyond the head": "UPDATE aggregates SET version = 1 WHERE aggregate = :a",
}


def _hashes_of_the_state(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    hashed: list[str] = []
    real = vars(journal_module)["sha256_text"]

    def counting(value: str) -> str:
        hashed.append(value)
        return real(value)

    for module in (journal_module, sealed_rows):  # where a command seals a state, and where a read checks it
        monkeypatch.setattr(module, "sha256_text", counting)
    return hashed


def test_a_head_the_journal_wrote_or_read_is_not_hashed_again_while_its_row_is_unchanged(journal_url, monkeypatch):
    journal = open_journal(journal_url)
    for version in range(2):
        journal.execute(AGGREGATE, f"c{version + 1}", {}, version, bump(f"c{version + 1}"))
    hashed = _hashes_of_the_state(monkeypatch)
    version, state = journal.load_text(AGGREGATE)
    assert version == 2 and state not in hashed  # the head it wrote, remembered
    fresh = open_journal(journal_url)
    fresh.load_text(AGGREGATE)
    assert hashed.count(state) == 1  # a journal that never saw the row checks it in full, once
    fresh.load_text(AGGREGATE)
    assert hashed.count(state) == 1


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_checked_head_edited_behind_the_journal_in_any_column_is_refused_as_a_fresh_journal_refuses_it(
    journal_url: str, edit: str
) -> None:
    journal = open_journal(journal_url)
    for version in range(2):
        journal.execute(AGGREGATE, f"c{version + 1}", {}, version, bump(f"c{version + 1}"))
    journal.load_text(AGGREGATE)  # remembered as checked
    with database(journal_url) as conn:
        values = {"a": AGGREGATE, "forged_state": '{"count":9,"last":"c2"}', "forged_data": '{"by":"c2","count":9}'}
        assert conn.execute(text(EDITS[edit]), values).rowcount == 1
    with pytest.raises(JournalCorruptError) as fresh_refusal:
        open_journal(journal_url).load_text(AGGREGATE)
    reads: list[Any] = [lambda: journal.load_text(AGGREGATE), lambda: journal.load(AGGREGATE),
                        lambda: journal.execute(AGGREGATE, "c3", {}, 2, bump("c3"))]
    for read in reads:
        with pytest.raises(JournalCorruptError) as refusal:
            read()
        assert str(refusal.value) == str(fresh_refusal.value)


def test_inside_a_writing_block_a_head_read_once_is_not_read_again_where_its_snapshot_is_held(journal_url):
    journal = open_journal(journal_url)
    journal.execute(AGGREGATE, "c1", {}, 0, bump("c1"))
    sent = sent_statements(journal)
    with journal.writing():
        version, _state = journal.load_text(AGGREGATE)
        journal.execute(AGGREGATE, "c2", {}, version, bump("c2"))
        after = journal.load(AGGREGATE)

    assert after.version == 2 and after.state == {"count": 2, "last": "c2"}
    assert open_journal(journal_url).load(AGGREGATE) == after
    # SQLite: the write lock is taken before the first read and the transaction reads one snapshot. PostgreSQL
    # reads each statement at READ COMMITTED, which another connection's edit can move: every read reads.
    # (On SQLite the head c1 committed on this connection is known: the one read is its data version alone.)
    head_reads = [key for key, _values in sent if key in ("head", "head_row", "data_version")]
    assert head_reads == (["data_version"] if journal.snapshot_held else ["head"] * 3)
    assert journal.snapshot_held == journal_url.startswith("sqlite")


_EDIT_STATE = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], timeout=0, isolation_level=None)
try:
    connection.execute("UPDATE aggregates SET state = '{\\"count\\":9,\\"last\\":\\"c2\\"}' WHERE aggregate = ?",
                       (sys.argv[2],))
except sqlite3.OperationalError as error:
    print(error)
    sys.exit(3)
"""


def _edit_from_another_process(path: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _EDIT_STATE, path, AGGREGATE], capture_output=True, text=True,
                          timeout=120)


def test_no_other_process_can_edit_a_head_between_a_writing_blocks_reads_and_an_edit_after_it_is_refused(sqlite_url):
    path = sqlite_url.removeprefix("sqlite:///")
    journal = open_journal(sqlite_url)
    journal.execute(AGGREGATE, "c1", {}, 0, bump("c1"))
    with journal.writing():
        version, _state = journal.load_text(AGGREGATE)
        blocked = _edit_from_another_process(path)
        assert blocked.returncode == 3 and "locked" in blocked.stdout, blocked
        journal.execute(AGGREGATE, "c2", {}, version, bump("c2"))
        assert journal.load(AGGREGATE).state == {"count": 2, "last": "c2"}

    edited = _edit_from_another_process(path)
    assert edited.returncode == 0, edited
    with pytest.raises(JournalCorruptError, match="not the state event 2 sealed"):
        journal.load_text(AGGREGATE)
    with pytest.raises(JournalCorruptError, match="not the state event 2 sealed"), journal.writing():
        journal.load_text(AGGREGATE)
