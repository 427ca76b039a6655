"""History in pages, and a hash chain that notices any edit to a stored event."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import text

from factory_schedule.store import HISTORY_PAGE, JournalCorruptError, open_journal
from tests.store.support import AGGREGATE, bump, burst, database, pooled_driver

EVENTS = 2_500
PER_COMMAND = 250


@pytest.fixture
def long_journal(journal_url: str) -> Any:
    """A journal whose aggregate holds 2,500 events: two full pages and a half."""
    journal = open_journal(journal_url)
    for index in range(EVENTS // PER_COMMAND):
        journal.execute(AGGREGATE, f"burst-{index}", {"i": index}, index * PER_COMMAND, burst(f"b{index}", PER_COMMAND))
    yield journal
    journal.close()


def test_history_pages_hold_at_most_a_thousand_events_and_meet_without_gap_or_overlap(long_journal):
    assert HISTORY_PAGE == 1000
    pages, after = [], 0
    while page := long_journal.history(AGGREGATE, after=after):
        pages.append([event.version for event in page])
        after = page[-1].version

    assert [len(page) for page in pages] == [1000, 1000, 500]
    assert [version for page in pages for version in page] == list(range(1, EVENTS + 1))


def test_history_caps_a_larger_limit_at_one_page_and_honours_a_smaller_one(long_journal):
    assert len(long_journal.history(AGGREGATE, limit=5000)) == HISTORY_PAGE
    assert [event.version for event in long_journal.history(AGGREGATE, after=998, limit=4)] == [999, 1000, 1001, 1002]
    assert long_journal.history(AGGREGATE, after=EVENTS) == []
    with pytest.raises(ValueError):
        long_journal.history(AGGREGATE, limit=0)


def test_newest_first_history_pages_walk_back_across_page_boundaries(long_journal):
    versions, before = [], None
    while page := long_journal.history_desc(AGGREGATE, before=before):
        assert len(page) <= HISTORY_PAGE
        versions.extend(event.version for event in page)
        before = page[-1].version

    assert versions == list(range(EVENTS, 0, -1))


def test_iter_history_reads_every_event_across_pages_and_stops_at_until(long_journal):
    assert [event.version for event in long_journal.iter_history(AGGREGATE)] == list(range(1, EVENTS + 1))
    assert [event.version for event in long_journal.iter_history(AGGREGATE, after=990, until=1010)] == list(
        range(991, 1011)
    )


def test_verify_accepts_a_chain_longer_than_a_page(long_journal):
    long_journal.verify(AGGREGATE)


def test_an_empty_aggregate_verifies_and_has_no_history(journal_url):
    journal = open_journal(journal_url)
    journal.verify("test/nothing")
    assert journal.history("test/nothing") == []
    assert journal.history_desc("test/nothing") == []


TAMPERS = {
    "data edited": "UPDATE events SET data = :forged WHERE version = 2",
    "type edited": "UPDATE events SET type = 'forged' WHERE version = 2",
    "command edited": "UPDATE events SET command_id = 'c9' WHERE version = 2",
    "hash rewritten": "UPDATE events SET hash = '" + "a" * 64 + "' WHERE version = 2",
    "prev hash rewritten": "UPDATE events SET prev_hash = '" + "b" * 64 + "' WHERE version = 3",
    "event deleted": "DELETE FROM events WHERE version = 2",
    "last event deleted": "DELETE FROM events WHERE version = 3",
    "head moved back": "UPDATE aggregates SET version = 2",
}


@pytest.mark.parametrize("tamper", list(TAMPERS), ids=list(TAMPERS))
def test_a_tampered_event_row_makes_verify_fail(journal_url, tamper):
    journal = open_journal(journal_url)
    for version, command_id in enumerate(["c1", "c2", "c3"]):
        journal.execute(AGGREGATE, command_id, {}, version, bump(command_id))
    journal.verify(AGGREGATE)

    with database(journal.url) as conn:
        forged = {"forged": '{"by":"c2","count":99}'} if ":forged" in TAMPERS[tamper] else {}
        conn.execute(text(TAMPERS[tamper]), forged)

    with pytest.raises(JournalCorruptError):
        journal.verify(AGGREGATE)


def test_verify_of_one_aggregate_ignores_tampering_in_another(journal_url):
    journal = open_journal(journal_url)
    journal.execute("test/a", "a1", {}, 0, bump("a1"))
    journal.execute("test/b", "b1", {}, 0, bump("b1"))
    with database(journal.url) as conn:
        conn.execute(text("UPDATE events SET type = 'forged' WHERE aggregate = 'test/b'"))

    journal.verify("test/a")
    with pytest.raises(JournalCorruptError):
        journal.verify("test/b")


CONSTANT_ROW = {"SCAN CONSTANT ROW", "SCAN Q"}
ONE_ROW_PRAGMA = "SCAN PRAGMA_DATA_VERSION VIRTUAL TABLE"  # the connection's data version: one row, no table


def test_every_journal_query_is_an_index_search_so_its_cost_does_not_grow_with_history(sqlite_url: str) -> None:
    journal = open_journal(sqlite_url)
    for version in range(3):
        journal.execute(AGGREGATE, f"c{version}", {}, version, bump(f"c{version}"))
    statements: list[tuple[str, Any]] = []
    send = journal._statement

    def capture(conn: Any, key: str, values: Any) -> Any:  # every statement the journal sends passes here
        statement = journal._sql[key]
        if statement.lstrip().upper().startswith("SELECT") and not isinstance(values, list):
            statements.append((statement, values))
        return send(conn, key, values)

    journal._statement = capture  # type: ignore[method-assign]
    journal.head(AGGREGATE)
    journal.load(AGGREGATE)
    journal.load_text(AGGREGATE)
    journal.receipt("c1")
    journal.history(AGGREGATE, after=1)
    journal.history_desc(AGGREGATE, before=3)
    journal.history_desc(AGGREGATE)
    journal.verify(AGGREGATE)
    journal.execute(AGGREGATE, "c3", {}, 3, bump("c3"))
    journal.execute(AGGREGATE, "c3", {}, 3, bump("c3"))
    del journal._statement

    assert len(statements) >= 8
    with pooled_driver(journal) as conn:
        for statement, parameters in statements:
            plan = [row[-1].upper() for row in conn.execute("EXPLAIN QUERY PLAN " + statement, parameters)]
            # The one-row `q` a read starts from (the key asked for) and the one-row data version are the only things
            # scanned; every table is searched.
            tables = [step for step in plan if step.startswith(("SEARCH", "SCAN")) and step not in CONSTANT_ROW
                      and not step.startswith(ONE_ROW_PRAGMA)]
            assert tables and all(step.startswith("SEARCH") for step in tables), f"{statement!r} scans: {plan}"


def test_events_of_reads_each_commands_events_in_one_index_search(journal_url):
    journal = open_journal(journal_url)
    journal.execute(AGGREGATE, "c1", {}, 0, bump("c1"))
    journal.execute(AGGREGATE, "c2", {}, 1, burst("c2", 3))
    journal.execute("test/other", "c3", {}, 0, bump("c3"))

    found = journal.events_of(AGGREGATE, ["c2", "c1", "c3", "never", "c1"])

    assert {command: [event.version for event in events] for command, events in found.items()} == {
        "c2": [2, 3, 4], "c1": [1], "c3": [], "never": []}
    assert journal.events_of(AGGREGATE, []) == {}
    with pytest.raises(ValueError, match="at most"):
        journal.events_of(AGGREGATE, [f"c{n}" for n in range(HISTORY_PAGE + 1)])


def test_events_of_is_an_index_search(sqlite_url: str) -> None:
    journal = open_journal(sqlite_url)
    journal.execute(AGGREGATE, "c1", {}, 0, bump("c1"))
    sent: list[tuple[str, Any]] = []
    send = journal._send

    def capture(conn: Any, statement: str, values: Any) -> Any:
        sent.append((statement, values))
        return send(conn, statement, values)

    journal._send = capture  # type: ignore[method-assign]
    journal.events_of(AGGREGATE, ["c1", "c2"])
    del journal._send

    [(statement, values)] = [(s, v) for s, v in sent if "command_id IN" in s]
    with pooled_driver(journal) as conn:
        plan = [row[-1].upper() for row in conn.execute("EXPLAIN QUERY PLAN " + statement, values)]
    searches = [step for step in plan if step.startswith("SEARCH")]
    assert searches and all("(COMMAND_ID=?)" in step for step in searches), plan
