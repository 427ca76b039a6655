"""Real OS processes writing one journal at once: exactly once, no lost update, no lock error."""

from __future__ import annotations

import sqlite3
import time
from collections import Counter
from pathlib import Path
from queue import Empty
from typing import Any

from factory_schedule.store import open_journal
from tests.processes import PROCESSES
from tests.store import support

RACERS = 6


def _run(target: Any, args_for: Any, count: int = RACERS, meanwhile: Any = None) -> list[dict[str, Any]]:
    """Start `count` racers behind one barrier; call `meanwhile()` over and over until they all report."""
    barrier = PROCESSES.Barrier(count)
    queue = PROCESSES.Queue()
    processes = [
        PROCESSES.Process(target=target, args=(*args_for(index), barrier, queue), daemon=True) for index in range(count)
    ]
    for process in processes:
        process.start()
    reports: list[dict[str, Any]] = []
    deadline = time.monotonic() + 180
    while len(reports) < count:
        assert time.monotonic() < deadline, "the racers did not all report"
        try:
            reports.append(queue.get(timeout=0.05 if meanwhile is None else 0.001))
        except Empty:
            if meanwhile is not None:
                meanwhile()
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    return reports


def _assert_no_errors(reports: list[dict[str, Any]]) -> None:
    errors = [report["error"] for report in reports if not report["ok"]]
    assert errors == [], "\n".join(errors)
    assert not any("database is locked" in str(report) for report in reports)


def test_six_processes_racing_one_command_record_it_once_and_all_get_the_same_answer(journal_url):
    open_journal(journal_url).close()

    reports = _run(support.race_same_command, lambda index: (journal_url, "the-command"))

    _assert_no_errors(reports)
    assert Counter(report["replayed"] for report in reports) == {False: 1, True: RACERS - 1}
    assert {report["version"] for report in reports} == {1}
    assert all(report["result"] == {"count": 1} for report in reports)
    journal = open_journal(journal_url)
    assert journal.head(support.AGGREGATE) == 1
    assert [event.command_id for event in journal.history(support.AGGREGATE)] == ["the-command"]
    journal.verify(support.AGGREGATE)


def test_six_processes_racing_distinct_commands_get_one_winner_per_version_and_lose_no_update(journal_url):
    commands = 25  # enough that the racers are still writing while the parent verifies
    reader = open_journal(journal_url)
    verified = []

    def verify_while_they_write() -> None:
        reader.verify(support.AGGREGATE)
        verified.append(reader.head(support.AGGREGATE))

    reports = _run(
        support.race_distinct_commands, lambda index: (journal_url, index, commands), meanwhile=verify_while_they_write
    )

    _assert_no_errors(reports)
    total = RACERS * commands
    won = sorted(version for report in reports for version in report["versions"])
    assert won == list(range(1, total + 1)), "each version has exactly one winner"
    journal = open_journal(journal_url)
    assert journal.head(support.AGGREGATE) == total
    assert journal.load(support.AGGREGATE).state["count"] == total, "no update was lost"
    events = list(journal.iter_history(support.AGGREGATE))
    assert [event.data["count"] for event in events] == list(range(1, total + 1))
    assert Counter(event.command_id for event in events) == {
        f"w{worker}-c{index}": 1 for worker in range(RACERS) for index in range(commands)
    }
    journal.verify(support.AGGREGATE)
    assert any(0 < head < total for head in verified), "verify ran while the racers wrote"


def test_six_processes_opening_a_new_journal_at_once_all_succeed(journal_url):
    reports = _run(support.open_only, lambda index: (journal_url,))

    _assert_no_errors(reports)
    assert {report["head"] for report in reports} == {0}


def test_lock_contention_the_driver_raises_itself_is_waited_out_like_sqlalchemys(
    sqlite_url: str, tmp_path: Path
) -> None:
    """Work the journal runs on a raw driver connection (the WAL switch at open) can meet "database is
    locked" as the driver's own exception; it is retried like any lock error, not surfaced."""
    journal = open_journal(sqlite_url)
    path = tmp_path / "contended.db"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    attempts: list[int] = []

    def write_without_waiting() -> int:
        attempts.append(1)
        if len(attempts) == 2:
            holder.execute("ROLLBACK")  # the other writer lets go after the first refusal
        conn = sqlite3.connect(path, timeout=0, isolation_level=None)
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("COMMIT")
        finally:
            conn.close()
        return len(attempts)

    assert journal._retrying(write_without_waiting) == 2
    holder.close()
