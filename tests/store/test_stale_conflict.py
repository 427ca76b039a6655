"""A stale reader that reuses a taken command ID is told to re-read, not that it conflicts."""

import pytest

from factory_schedule.store import CommandConflictError, Decision, NewEvent, VersionConflictError, open_journal


def _decide(state, version):
    return Decision(events=[NewEvent("took", {"at": version})], state={"v": version + 1}, result={})


def test_a_stale_writer_reusing_a_taken_command_id_gets_a_version_conflict(sqlite_url):
    journal = open_journal(sqlite_url)
    journal.execute("agg", "night/admit", {"runner": "a"}, 0, _decide)
    with pytest.raises(VersionConflictError):
        journal.execute("agg", "night/admit", {"runner": "b"}, 0, _decide)
    with pytest.raises(CommandConflictError):
        journal.execute("agg", "night/admit", {"runner": "b"}, 1, _decide)
    assert journal.head("agg") == 1


def test_an_identical_retry_replays_whatever_version_the_caller_read(sqlite_url):
    journal = open_journal(sqlite_url)
    journal.execute("agg", "night/admit", {"runner": "a"}, 0, _decide)
    journal.execute("agg", "other", {}, 1, _decide)
    outcome = journal.execute("agg", "night/admit", {"runner": "a"}, 0, _decide)
    assert outcome.replayed and outcome.version == 1
    assert journal.head("agg") == 2
