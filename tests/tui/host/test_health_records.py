"""Health appends each of its records once, through one function, on a real SQLite journal: a second append
under the same command ID replays, a conflicting one leaves the first record standing, and an append decided
over a version another writer has passed raises so its caller reads again."""

from __future__ import annotations

import pytest

from factory_schedule.core.health.records import HEALTH_AGGREGATE, LEASE_REMOVED, counted_record
from factory_schedule.store import Journal, VersionConflictError, open_journal
from factory_schedule.tui.host.health_records import append_once


def _append(journal: Journal, command_id: str, data: dict[str, str], expected: int | None = None) -> bool:
    return append_once(journal, HEALTH_AGGREGATE, command_id, data, counted_record(LEASE_REMOVED, data, command_id),
                       expected=expected)


def _events(journal: Journal) -> list[tuple[str, dict[str, str]]]:
    return [(event.type, event.data) for event in journal.iter_history(HEALTH_AGGREGATE)]


def test_a_record_appended_twice_under_one_command_id_is_recorded_once(sqlite_url: str) -> None:
    journal = open_journal(sqlite_url)
    assert _append(journal, "health/lease-removed/a", {"scope": "a"})
    assert not _append(journal, "health/lease-removed/a", {"scope": "a"})
    assert _events(journal) == [(LEASE_REMOVED, {"scope": "a"})]


def test_a_conflicting_record_under_a_recorded_command_id_leaves_the_first_standing(sqlite_url: str) -> None:
    journal = open_journal(sqlite_url)
    assert _append(journal, "health/lease-removed/a", {"scope": "a"})
    assert not _append(journal, "health/lease-removed/a", {"scope": "b"})
    assert _events(journal) == [(LEASE_REMOVED, {"scope": "a"})]


def test_an_append_at_the_head_goes_after_what_other_writers_appended(sqlite_url: str) -> None:
    journal, other = open_journal(sqlite_url), open_journal(sqlite_url)
    assert _append(other, "health/lease-removed/a", {"scope": "a"})
    assert _append(journal, "health/lease-removed/b", {"scope": "b"})
    assert [data["scope"] for _type, data in _events(journal)] == ["a", "b"]


def test_an_append_at_a_version_another_writer_passed_raises_and_writes_nothing(sqlite_url: str) -> None:
    journal, other = open_journal(sqlite_url), open_journal(sqlite_url)
    read_at = journal.head(HEALTH_AGGREGATE)
    assert _append(other, "health/lease-removed/a", {"scope": "a"})
    with pytest.raises(VersionConflictError):
        _append(journal, "health/binding/b/1", {"scope": "b"}, expected=read_at)
    assert [data["scope"] for _type, data in _events(journal)] == ["a"]
    assert journal.receipt("health/binding/b/1") is None
