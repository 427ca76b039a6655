"""One process's journal work runs on the connection it used last, so that connection's cache stays warm.

SQLite drops a connection's whole page cache when it finds that another connection has
written since it last looked. A decision that reads the journal inside its command (the
schedule's decisions do) puts a second connection in the pool. Handed out in turn, the two
connections each found the other's writes, and every command of the year bench read the
~60 KB state and its B-tree pages from the OS again: 14 to 17 page-cache misses a command,
against none when the connection returned last is handed out first.
"""

from __future__ import annotations

from typing import Any

import pytest

from factory_schedule.store import Decision, NewEvent, open_journal
from tests.store.support import AGGREGATE


@pytest.fixture
def journal(journal_url: str) -> Any:
    opened = open_journal(journal_url)
    yield opened
    opened.close()


def _connections_used(journal: Any) -> list[int]:
    """Record which driver connection each transaction of `journal` begins on."""
    used: list[int] = []
    begin = journal._begin

    def recording(driver: Any, write: bool) -> None:
        used.append(id(driver))
        begin(driver, write)

    journal._begin = recording
    return used


def _reading_decision(journal: Any, count: int) -> Any:
    def decide(state: Any, version: int) -> Decision:
        journal.head("another/aggregate")  # a read inside the command: a second pooled connection
        return Decision(events=[NewEvent("bumped", {"count": count})], state={"count": count}, result={})

    return decide


def test_sequential_commands_and_reads_run_on_the_connection_used_last(journal):
    used = _connections_used(journal)
    for count in range(1, 6):
        journal.execute(AGGREGATE, f"bump/{count}", {"count": count}, count - 1, _reading_decision(journal, count))
        journal.load_text(AGGREGATE)
    commands = used[0::3]  # each round: the command, the read inside it, the load after it
    loads = used[2::3]
    assert len(set(used)) == 2, "a read inside a command needs a second connection, and only that"
    assert len(set(commands) | set(loads)) == 1, "every command and every later read reuse one connection"
