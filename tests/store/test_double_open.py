"""Opening a journal twice in one process must not strip SQLite's locks from the first.

Closing any descriptor of a file drops every POSIX lock the process holds on it; a header
check done with open()/close() once let a second open_journal corrupt a busy journal.

Its writers start with `spawn`, not from the fork server (`tests.processes`): the corruption needs a
writer's own exit, whose last connection's checkpoint deletes the WAL while the others still write, and a
fork-server child ends with `os._exit`, closing nothing.
"""

import multiprocessing
import sqlite3

from factory_schedule.store import Decision, NewEvent, VersionConflictError, open_journal


def _append(url: str, count: int, tag: str, reopen: bool) -> None:
    for index in range(count):
        journal = open_journal(url)
        if reopen:
            open_journal(url)  # a second handle on the same file, in the same process
        while True:
            try:
                version = journal.head("agg")
                journal.execute("agg", f"{tag}-{index}", {}, version,
                                lambda state, v: Decision([NewEvent("x", {"v": v})], {"v": v + 1}, {}))
                break
            except VersionConflictError:
                continue


def test_opening_a_journal_twice_in_one_process_keeps_a_busy_journal_intact(tmp_path):
    path = tmp_path / "journal.db"
    url = f"sqlite:///{path}"
    open_journal(url)
    context = multiprocessing.get_context("spawn")  # a real exit: see the module's docstring
    workers = [context.Process(target=_append, args=(url, 60, f"w{k}", False)) for k in range(2)]
    workers.append(context.Process(target=_append, args=(url, 40, "twice", True)))
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=300)
        assert worker.exitcode == 0
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone() == ("ok",)
    journal = open_journal(url)
    journal.verify("agg")
    assert journal.head("agg") == 160
