"""The journal on an SQLite file, through the standard library's `sqlite3`.

Connections run in autocommit mode, and the journal says when a transaction starts: `BEGIN
IMMEDIATE` for a writer, so that it holds the file's write lock before it reads anything (writers
queue, they do not race), a plain `BEGIN` for a reader. Each connection gets the journal's settings
when it is opened (`connect`).
"""

from __future__ import annotations

import sqlite3
import urllib.parse
from typing import Any

from .journal import Journal
from .pool import Pool

BUSY_TIMEOUT_MS = 30_000
PARAMSTYLE = "named"  # sqlite3 reads :name parameters in every style


def connector(path: str, read_only: bool = False, immutable: bool = False) -> Any:
    """A function that opens one connection to the journal file with the journal's settings."""
    target, uri = path, False
    if read_only:
        # SQLite opens the file for reading only; an immutable file (a read-only folder or mount, where its
        # -shm cannot be made) is read without locks, since nothing can write it either.
        target, uri = f"file:{urllib.parse.quote(path)}?mode=ro{'&immutable=1' if immutable else ''}", True

    def connect() -> sqlite3.Connection:
        connection = sqlite3.connect(target, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                     check_same_thread=False, uri=uri)
        try:
            connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            if read_only:
                connection.execute("PRAGMA query_only=ON")
            connection.execute("PRAGMA synchronous=FULL")
            connection.execute("PRAGMA foreign_keys=ON")
            # A statement inside a transaction keeps a journal of the pages it changes, and SQLite moves that
            # journal to a temporary file past 64 KiB: with a state that large, every command's head update
            # made, wrote and deleted a file in /var/tmp. Kept in memory, it costs the state's size once.
            connection.execute("PRAGMA temp_store=MEMORY")
        except BaseException:
            connection.close()
            raise
        return connection

    return connect


def _reset(connection: sqlite3.Connection) -> None:
    if connection.in_transaction:
        connection.rollback()


def table_names(connection: Any) -> set[str]:
    return {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def column_names(connection: Any, table: str) -> set[str]:
    return {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}


class SqliteJournal(Journal):
    """A journal on one SQLite file; writers serialise on SQLite's own write lock."""

    dialect = "sqlite"
    # `BEGIN IMMEDIATE` takes the file's write lock before anything is read, and a transaction reads one snapshot:
    # no connection, in this process or another, can commit a change until the writer's transaction ends.
    snapshot_held = True

    def __init__(self, path: str, url: str, read_only: str | None = None, immutable: bool = False) -> None:
        pool = Pool(connector(path, read_only is not None, immutable), _reset)
        super().__init__(pool, url, paramstyle=PARAMSTYLE, driver=sqlite3, read_only=read_only)

    def _begin(self, driver: Any, write: bool) -> None:
        driver.execute("BEGIN IMMEDIATE" if write else "BEGIN")

    def table_names(self, driver: Any) -> set[str]:
        return table_names(driver)

    def column_names(self, driver: Any, table: str) -> set[str]:
        return column_names(driver, table)
