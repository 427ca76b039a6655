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
from tests.core.schedule.support import RECORDED, basic_lane, commission
from tests.store import support
from tests.store.test_races import _assert_no_errors, _run

WRITERS = 32
NIGHT = "2026-12-07T02:05:00Z"  # every lane open, its deadline 40 minutes away


def test_thirty_two_engine_processes_writing_at_once_all_queue_and_none_is_contended(journal_url):
    # Nine runners on nine lanes (admit, then admit and end calls) and 23 owners' account records, all fresh
    # commands at once: before the engine planned under the write lock, PostgreSQL lost about a third of such
    # commands to CONTENDED.
    lanes = [basic_lane(f"p{index}", tasks=[{"task": "scan", "account": "claude", "maxCalls": 16, "callBound": 1000}])
             for index in range(support.LANE_RUNNERS)]
    schedule = LifecycleSchedule(open_journal(journal_url), ManualClock(RECORDED))
    schedule.record_commission(commission(lanes))
    schedule.record_account(account="claude", sequence=1, sign_in="owner@example.com", overage=False,
                            recorded_by="the owner")

    reports = _run(support.run_lane_or_record, lambda index: (journal_url, index, NIGHT), count=WRITERS)

    _assert_no_errors(reports)
    answers = Counter(answer for report in reports for answer in report["answers"])
    assert set(answers) <= {"admitted", "ended", "recorded", "replayed"}, answers
    assert answers["admitted"] == support.LANE_RUNNERS * (1 + support.CALLS_EACH)
    assert answers["ended"] == support.LANE_RUNNERS * support.CALLS_EACH
    journal = open_journal(journal_url)
    journal.verify(SCHEDULE_AGGREGATE)
    recorded = [event for event in journal.iter_history(SCHEDULE_AGGREGATE) if event.type == "account-recorded"]
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
