"""The journal on an SQLite file, through the standard library's `sqlite3`.

Connections run in autocommit mode, and the journal says when a transaction starts: `BEGIN
IMMEDIATE` for a writer, so that it holds the file's write lock before it reads anything (writers
queue, they do not race), a plain `BEGIN` for a reader. Each connection gets the journal's settings
when it is opened (`connect`).
"""

from __future__ import annotations

import sqlite3
import urllib.parse
from collections.abc import Callable
from typing import Any

from .journal import Journal
from .pool import Pool
from .sealed_rows import HEAD_COLUMNS, Head

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


# A head a connection knows: the connection, its data version then, the head's row, the head checked.
_KnownHead = tuple[sqlite3.Connection, int, tuple[Any, ...], Head]


class SqliteJournal(Journal):
    """A journal on one SQLite file; writers serialise on SQLite's own write lock."""

    dialect = "sqlite"
    # `BEGIN IMMEDIATE` takes the file's write lock before anything is read, and a transaction reads one snapshot:
    # no connection, in this process or another, can commit a change until the writer's transaction ends.
    snapshot_held = True

    def __init__(self, path: str, url: str, read_only: str | None = None, immutable: bool = False) -> None:
        pool = Pool(connector(path, read_only is not None, immutable), _reset)
        super().__init__(pool, url, paramstyle=PARAMSTYLE, driver=sqlite3, read_only=read_only)
        # Per aggregate, the head (and so its parts) last read or committed on a connection: the connection itself
        # (held, so that no other connection can take its identity), its data version then, the head's row.
        self._parts_read: dict[str, _KnownHead] = {}
        # Per connection, the heads its open transaction wrote: they join `_parts_read` only once it commits.
        self._written: dict[int, dict[str, _KnownHead]] = {}

    def _send_head_read(self, driver: Any, aggregate: str) -> Callable[[], Head]:
        """The head as this connection last read or committed it while no other connection has committed since,
        else its row, and its parts (about 60 KB for the schedule) only when they may have changed.

        SQLite's data version of a connection moves whenever any other connection, in this process or another,
        commits to the file, and stays when only the connection itself commits. So on the connection that last
        read a head or committed it, at the same data version, the head's rows are the ones read or written then,
        already checked: only the data version is read. Otherwise the head's row is read, and on that connection
        at that data version a row equal column for column to the one known has the same parts (the journal
        changes parts only together with the head's row, in one transaction, `_wrote_head`). Any other commit,
        any edit by any other connection, or another connection reads the row and the parts again, and they are
        checked in full (tests/store/test_checked_heads.py edits them from a second process). A head a
        transaction wrote counts only once that transaction has committed (`_commit`)."""
        held = self._held()
        seen = self._parts_read.get(aggregate)
        if seen is not None and seen[0] is driver:
            (data_version,) = self._statement(driver, "data_version", {}).fetchone()
            if held is not None and held.driver is driver:
                held.data_version = data_version
            if data_version == seen[1]:
                known = seen[3]
                return lambda: known
        row = self._statement(driver, "head_row", {"aggregate": aggregate}).fetchone()
        columns, data_version = tuple(row[:HEAD_COLUMNS]), row[HEAD_COLUMNS]
        if held is not None and held.driver is driver:
            held.data_version = data_version
        if seen is not None and seen[0] is driver and seen[1] == data_version and seen[2] == columns:
            head = seen[3]
        else:
            parts = self._statement(driver, "parts", {"aggregate": aggregate}).fetchall()
            head = self._checked_head(aggregate, (columns, tuple(sorted((name, text) for name, text in parts))))
            self._parts_read[aggregate] = (driver, data_version, columns, head)
        return lambda: head

    def _wrote_head(self, driver: Any, aggregate: str, key: tuple[Any, ...], head: Head) -> None:
        """Remembered with the connection's data version, which the connection's own commit leaves as it is: the
        one the `writing()` block's head read carried, when it held the write lock on this connection since
        (no other connection can commit meanwhile), else read now. Kept apart until the transaction commits:
        rolled back, it is not the stored head."""
        super()._wrote_head(driver, aggregate, key, head)
        held = self._held()
        if held is not None and held.driver is driver and held.data_version is not None:
            data_version = held.data_version
        else:
            (data_version,) = self._statement(driver, "data_version", {}).fetchone()
        self._written.setdefault(id(driver), {})[aggregate] = (driver, data_version, key[0], head)

    def _commit(self, driver: Any) -> None:
        """The heads this transaction wrote are known from its commit on; until the commit has returned, no
        head of theirs is: an exception raised between the two (a signal's handler) leaves them to be read."""
        written = self._written.pop(id(driver), None)
        for aggregate in written or ():
            self._parts_read.pop(aggregate, None)
        super()._commit(driver)
        if written:
            self._parts_read.update(written)

    def _begin(self, driver: Any, write: bool) -> None:
        self._written.pop(id(driver), None)  # what an earlier transaction on it wrote and did not commit
        driver.execute("BEGIN IMMEDIATE" if write else "BEGIN")

    def table_names(self, driver: Any) -> set[str]:
        return table_names(driver)

    def column_names(self, driver: Any, table: str) -> set[str]:
        return column_names(driver, table)
