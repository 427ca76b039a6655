"""A journal of format 2, whose head holds the schedule's whole state, is upgraded in place where it can be
written: it reads and verifies as it was, and its next command stores the state in parts.

`format_2_journal.sql` is a journal made by the build before parts existed (its `one_call_night`: three
lanes, alpha's night admitted under r1 with one call of 900 tokens performed and ended), dumped as SQL.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from factory_schedule.core import SCHEDULE_AGGREGATE
from factory_schedule.store import open_journal
from factory_schedule.store.statements import JOURNAL_FORMAT
from tests.core.schedule.support import ALPHA, open_harness, result_report
from tests.store.forgery import stored_state

FIXTURE = Path(__file__).with_name("format_2_journal.sql")
OCCURRENCE = "discovery/alpha/basic/2026-12-07"


def _format_2_journal(tmp_path: Path) -> Path:
    path = tmp_path / "journal.db"
    with sqlite3.connect(path) as db:
        db.executescript(FIXTURE.read_text())
        assert db.execute("SELECT value FROM journal_meta").fetchone() == ("factory-schedule-journal/2",)
    return path


def test_a_format_2_journal_reads_verifies_and_writes_its_state_in_parts_once_upgraded(tmp_path):
    path = _format_2_journal(tmp_path)
    with sqlite3.connect(path) as db:
        (whole,) = db.execute("SELECT state FROM aggregates WHERE aggregate = ?", (SCHEDULE_AGGREGATE,)).fetchone()
    h = open_harness(path, "2026-12-07T02:10:00Z")
    assert h.schedule.journal.verify(SCHEDULE_AGGREGATE).version == 5
    assert h.schedule.journal.load_text(SCHEDULE_AGGREGATE) == (5, whole)
    admitted = h.call(OCCURRENCE, runner="r1", work="w2")
    h.schedule.end_call(occurrence_id=OCCURRENCE, runner="r1", call=admitted.call, report=result_report(400))
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM journal_meta").fetchone() == (JOURNAL_FORMAT,)
        (manifest,) = db.execute("SELECT state FROM aggregates WHERE aggregate = ?", (SCHEDULE_AGGREGATE,)).fetchone()
        stored = stored_state(db, SCHEDULE_AGGREGATE)
    assert [name for name, _digest in json.loads(manifest)].count(f"lanes/{ALPHA}") == 1
    assert json.loads(stored)["lanes"][0]["open"]["calls"][1]["work"] == "w2"
    fresh = open_journal(h.url)
    assert fresh.verify(SCHEDULE_AGGREGATE).version == 7
    assert fresh.load_text(SCHEDULE_AGGREGATE) == (7, stored)
    h.assert_what_the_engine_remembers_is_what_is_stored()
