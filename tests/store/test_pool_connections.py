"""Every SQLite connection the journal's pool hands out is set up alike, and a read sees what was committed.

The pool invalidates, disposes and overflows connections; each new one must get the journal's pragmas.
A decision may read the journal inside its command (the schedule's decisions do), which takes a second
pooled connection outside the write transaction. Real SQLite files in `tmp_path`, real threads.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from factory_schedule.store import Decision, NewEvent, open_journal


def _temp_store(pooled: Any) -> int:
    return pooled.driver_connection.execute("PRAGMA temp_store").fetchone()[0]


def test_every_sqlite_connection_keeps_temporary_storage_in_memory_after_invalidate_dispose_and_overflow(tmp_path):
    journal = open_journal(f"sqlite:///{tmp_path / 'journal.db'}")
    try:
        first = journal.pool.checkout()
        assert _temp_store(first) == 2
        first.invalidate()  # what the journal does with a connection whose driver failed
        first.close()
        again = journal.pool.checkout()
        assert _temp_store(again) == 2
        again.close()
        journal.pool.dispose()  # every pooled connection closed; the next are new
        held = [journal.pool.checkout() for _ in range(12)]  # past the 5 kept idle: connections beyond them too
        try:
            assert [_temp_store(raw) for raw in held] == [2] * 12
        finally:
            for raw in held:
                raw.close()
    finally:
        journal.close()


def test_a_read_inside_a_decision_sees_the_state_before_the_command_and_a_read_after_sees_its_commit(
    tmp_path: Path
) -> None:
    journal = open_journal(f"sqlite:///{tmp_path / 'journal.db'}")
    seen: list[int] = []

    def decide(state: Any, version: int) -> Decision:
        seen.append(journal.head("test/a"))  # a second pooled connection, outside the write transaction
        return Decision(events=[NewEvent("bumped", {"n": version + 1})], state={"n": version + 1}, result={})

    try:
        for version in range(4):
            journal.execute("test/a", f"bump/{version}", {"n": version}, version, decide)
            assert journal.head("test/a") == version + 1  # the connection handed out last sees the commit
        assert seen == [0, 1, 2, 3]
    finally:
        journal.close()


def test_threads_sharing_one_journal_with_reads_inside_decisions_record_every_command_once(tmp_path: Path) -> None:
    journal = open_journal(f"sqlite:///{tmp_path / 'journal.db'}")
    errors: list[BaseException] = []

    def work(thread: int) -> None:
        aggregate = f"test/thread-{thread}"

        def decide(state: Any, version: int) -> Decision:
            journal.head("test/thread-0")  # a nested read on another pooled connection
            journal.load_text(aggregate)
            return Decision(events=[NewEvent("bumped", {"v": version})], state={"v": version + 1}, result={})

        try:
            for version in range(15):
                journal.execute(aggregate, f"{aggregate}/{version}", {"v": version}, version, decide)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert not errors, errors
        for n in range(6):
            assert journal.head(f"test/thread-{n}") == 15
            journal.verify(f"test/thread-{n}")
        assert journal.pool.checked_out() == 0  # every connection went back, none leaked by the nested reads
    finally:
        journal.close()
