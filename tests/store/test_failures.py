"""Every database failure reaches a caller as a named JournalError with a one-line message, and the
journal's files stay private.

The tests run as root in CI, and root writes any file whatever its mode, so a read-only journal is
made with the file's mode (chmod a-w) or its folder's: the journal takes the mode at its word and
opens the file read-only (SQLite's `mode=ro`, `immutable` where no side file can be made). A full
disk is SQLite's `max_page_count` reached; a held lock is another connection's `BEGIN IMMEDIATE`.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.store import (
    Decision,
    NewEvent,
    leases,
    open_journal,
)
from factory_schedule.store import journal as journal_module
from factory_schedule.store.errors import (
    JournalFullError,
    JournalLockedError,
    JournalReadOnlyError,
    JournalUnavailableError,
)

from .support import AGGREGATE, bump, pooled_driver


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _written(path: Path, commands: int = 3) -> str:
    url = f"sqlite:///{path}"
    journal = open_journal(url)
    for version in range(commands):
        journal.execute(AGGREGATE, f"c{version}", {}, version, bump(f"c{version}"))
    journal.close()
    return url


def _one_line(error: BaseException) -> str:
    message = str(error)
    assert "\n" not in message and message
    return message


# -- read-only ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("made_read_only", ["file", "folder"])
def test_a_read_only_journal_opens_for_reading_and_refuses_writing_saying_it_is_read_only(tmp_path, made_read_only):
    folder = tmp_path / "journals"
    folder.mkdir()
    path = folder / "journal.db"
    url = _written(path)
    for side in folder.glob("journal.db-*"):  # a copied or unmounted journal has only its file
        side.unlink()
    if made_read_only == "file":
        path.chmod(0o444)
    else:
        folder.chmod(0o555)
    try:
        journal = open_journal(url)
        assert journal.head(AGGREGATE) == 3
        assert [event.command_id for event in journal.history(AGGREGATE)] == ["c0", "c1", "c2"]
        assert journal.verify(AGGREGATE).version == 3
        assert journal.load(AGGREGATE).state == {"count": 3, "last": "c2"}
        assert journal.receipt("c1") is not None
        assert leases.list_leases(journal) == []
        with pytest.raises(JournalReadOnlyError, match="is read-only") as caught:
            journal.execute(AGGREGATE, "c3", {}, 3, bump("c3"))
        assert "not a factory-schedule journal" not in _one_line(caught.value)
        with pytest.raises(JournalReadOnlyError), journal.writing():
            pass
        with pytest.raises(JournalReadOnlyError):
            leases.acquire(journal, "worker", "me", 60, datetime.now(UTC))
        journal.close()
        assert open_journal(url).head(AGGREGATE) == 3  # nothing was written, and it opens again
    finally:
        folder.chmod(0o755)
        path.chmod(0o600)


# -- a full disk ---------------------------------------------------------------------------------------------------


def _pragma_on_connect(journal: Any, pragma: str) -> None:
    """Every connection the journal opens from now on runs `pragma` first (the pool is emptied)."""
    journal.pool.dispose()
    connect = journal.pool.connect

    def connect_with_pragma() -> Any:
        connection = connect()
        connection.execute(pragma)
        return connection

    journal.pool.connect = connect_with_pragma


def test_a_full_disk_is_a_journal_full_error_and_the_command_writes_nothing(tmp_path):
    path = tmp_path / "journal.db"
    url = _written(path, 1)
    journal = open_journal(url)
    with pooled_driver(journal) as conn:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
    _pragma_on_connect(journal, f"PRAGMA max_page_count={pages + 1}")

    def large(state: Any, version: int) -> Decision:
        return Decision([NewEvent("big", {"blob": "x" * 200_000})], {"blob": "y" * 200_000})

    with pytest.raises(JournalFullError, match="is full") as caught:
        journal.execute(AGGREGATE, "too-big", {}, 1, large)
    _one_line(caught.value)
    assert open_journal(url).head(AGGREGATE) == 1
    assert open_journal(url).receipt("too-big") is None


# -- a held lock ---------------------------------------------------------------------------------------------------


def test_a_lock_held_past_every_retry_is_a_journal_locked_error(tmp_path, monkeypatch):
    path = tmp_path / "journal.db"
    url = _written(path, 1)
    journal = open_journal(url)
    _pragma_on_connect(journal, "PRAGMA busy_timeout=50")
    monkeypatch.setattr(journal_module, "_LOCK_RETRY_SECONDS", 0.3)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(JournalLockedError, match="stayed locked by another writer") as caught:
            journal.execute(AGGREGATE, "c1", {}, 1, bump("c1"))
        _one_line(caught.value)
        with pytest.raises(JournalLockedError), journal.writing():
            pass
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert journal.execute(AGGREGATE, "c1", {}, 1, bump("c1")).version == 2


# -- a lost connection ---------------------------------------------------------------------------------------------


@pytest.mark.postgres
def test_a_lost_postgres_connection_is_a_journal_unavailable_error(postgres_url):
    journal = open_journal(postgres_url)
    journal.execute(AGGREGATE, "c0", {}, 0, bump("c0"))
    admin = open_journal(postgres_url)
    with pytest.raises(JournalUnavailableError, match="cannot be reached") as caught, journal.writing():
        journal.head(AGGREGATE)
        with pooled_driver(admin) as conn:
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                         "WHERE pid <> pg_backend_pid() AND datname = current_database() "
                         "AND application_name = 'factory-schedule'")
            conn.commit()
        journal.execute(AGGREGATE, "c1", {}, 1, bump("c1"))
    _one_line(caught.value)
    assert open_journal(postgres_url).head(AGGREGATE) == 1  # nothing of c1, and the server is fine


# -- private files -------------------------------------------------------------------------------------------------


def _private(path: Path) -> None:
    assert _mode(path) == 0o600, f"{path} is {oct(_mode(path))}"
    for side in path.parent.glob(path.name + "-*"):
        assert _mode(side) == 0o600, f"{side} is {oct(_mode(side))}"


def test_a_new_journal_reached_through_a_dangling_symlink_is_created_private_at_its_target(tmp_path):
    target = tmp_path / "real" / "journal.db"
    target.parent.mkdir()
    link = tmp_path / "journal.db"
    link.symlink_to(target)
    os.umask(0o022)
    journal = open_journal(f"sqlite:///{link}")
    journal.execute(AGGREGATE, "c0", {}, 0, bump("c0"))
    assert link.is_symlink() and target.exists()
    _private(target)
    assert sorted(p.name for p in target.parent.iterdir()) == ["journal.db", "journal.db-shm", "journal.db-wal"]


def test_an_existing_empty_file_becomes_a_private_journal(tmp_path):
    path = tmp_path / "journal.db"
    path.touch()
    path.chmod(0o644)
    journal = open_journal(f"sqlite:///{path}")
    journal.execute(AGGREGATE, "c0", {}, 0, bump("c0"))
    _private(path)


def test_a_journal_reached_through_a_symlink_keeps_its_side_files_beside_the_real_file(tmp_path):
    target = tmp_path / "real" / "journal.db"
    target.parent.mkdir()
    _written(target, 1)
    link = tmp_path / "link.db"
    link.symlink_to(target)
    journal = open_journal(f"sqlite:///{link}")
    journal.execute(AGGREGATE, "c1", {}, 1, bump("c1"))
    assert not list(tmp_path.glob("link.db-*"))
    _private(target)
