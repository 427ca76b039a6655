"""Writers queue on the journal's write lock instead of losing to each other.

The engine reads, plans and decides inside `Journal.writing()`, so a command is never planned at a
version another writer has moved past: 32 processes writing flat out get no CONTENDED and no
version conflict, on either backend.
"""

from __future__ import annotations

import contextlib
from collections import Counter

from factory_schedule.core import SCHEDULE_AGGREGATE, LifecycleSchedule, ManualClock
from factory_schedule.store import open_journal
from tests.core.engine_helpers import RECORDED, commission
from tests.store import support
from tests.store.test_races import _assert_no_errors, _run

WRITERS = 32
COMMANDS_EACH = 6


def test_thirty_two_engine_processes_writing_at_once_all_queue_and_none_is_contended(journal_url):
    LifecycleSchedule(open_journal(journal_url), ManualClock(RECORDED)).record_commission(commission())

    reports = _run(support.record_accounts,
                   lambda index: (journal_url, index, COMMANDS_EACH, RECORDED), count=WRITERS)

    _assert_no_errors(reports)
    answers = Counter(answer for report in reports for answer in report["answers"])
    assert set(answers) <= {"recorded", "replayed"}, answers
    assert answers["recorded"] >= COMMANDS_EACH * 2  # each account's writers moved it on at least this far
    journal = open_journal(journal_url)
    journal.verify(SCHEDULE_AGGREGATE)
    recorded = [event for event in journal.iter_history(SCHEDULE_AGGREGATE) if event.type == "account-recorded"]
    assert len(recorded) == answers["recorded"]
    for account in ("claude", "chatgpt"):
        sequences = [event.data["sequence"] for event in recorded if event.data["account"] == account]
        assert sequences == list(range(1, len(sequences) + 1)), "each record once, in order"


def test_a_writing_block_holds_reads_and_a_command_in_one_transaction_so_nothing_commits_between(journal_url):
    journal = open_journal(journal_url)
    other = open_journal(journal_url)
    journal.execute(support.AGGREGATE, "c1", {}, 0, support.bump("c1"))
    with journal.writing():
        version = journal.head(support.AGGREGATE)
        outcome = journal.execute(support.AGGREGATE, "c2", {}, version, support.bump("c2"))
        assert other.head(support.AGGREGATE) == 1, "not committed until the block ends"
    assert outcome.version == 2 and other.head(support.AGGREGATE) == 2


def test_a_command_that_fails_inside_a_writing_block_rolls_the_block_back(journal_url):
    journal = open_journal(journal_url)

    def refuse(state, version):
        raise ValueError("no")

    with journal.writing():
        journal.execute(support.AGGREGATE, "c1", {}, 0, support.bump("c1"))
        with contextlib.suppress(ValueError):
            journal.execute(support.AGGREGATE, "c2", {}, 1, refuse)
    assert journal.head(support.AGGREGATE) == 0, "a block in which a command failed commits nothing"
