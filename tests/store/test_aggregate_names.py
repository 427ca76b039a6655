"""The journal lists the aggregates it holds anything of (heads, events, receipts) by seeking each name in the
indexes, so the list costs the same with a year of history as with a day: health lists them on every check.
A real SQLite file (its own query plan) and, when a server is named, PostgreSQL."""

from __future__ import annotations

import sqlite3

from factory_schedule.store import Decision, NewEvent, open_journal
from factory_schedule.store.statements import STATEMENTS


def _append(journal, aggregate: str, count: int) -> None:
    for _ in range(count):
        version = journal.head(aggregate)
        journal.execute(aggregate, f"{aggregate}-{version}", {}, version,
                        lambda _state, v: Decision([NewEvent("x", {"v": v})], {"v": v + 1}, {}))


def test_every_aggregate_with_a_head_an_event_or_a_receipt_is_listed(journal_url: str) -> None:
    journal = open_journal(journal_url)
    for aggregate, count in (("b/two", 3), ("a/one", 2), ("c/three", 1)):
        _append(journal, aggregate, count)
    assert journal.aggregates() == ["a/one", "b/two", "c/three"]


def test_an_aggregate_whose_head_row_is_gone_is_still_listed_from_its_events(sqlite_url: str) -> None:
    journal = open_journal(sqlite_url)
    _append(journal, "a/one", 2)
    _append(journal, "b/two", 1)
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as db:
        db.execute("DELETE FROM aggregates WHERE aggregate = 'a/one'")
    assert journal.aggregates() == ["a/one", "b/two"]


def test_listing_the_aggregates_seeks_the_indexes_instead_of_scanning_every_event(sqlite_url: str) -> None:
    journal = open_journal(sqlite_url)
    _append(journal, "a/one", 3)
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as db:
        plan = [row[-1] for row in db.execute("EXPLAIN QUERY PLAN " + STATEMENTS["aggregate_names"])]
    scans = [step for step in plan if step.startswith("SCAN") and ("events" in step or "receipts" in step)]
    assert scans == [], plan
