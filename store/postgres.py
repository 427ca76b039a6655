"""The journal on PostgreSQL, through psycopg 3: the same commands, receipts and hash chain as the file journal.

Isolation and locking. Every transaction runs at READ COMMITTED. A write transaction
(every `execute`, the schema's creation or upgrade at open, and the lease writes that share the
database) takes one transaction-scoped advisory lock, `pg_advisory_xact_lock(WRITE_LOCK_KEY)`,
as its first statement, so writers queue one at a time exactly as SQLite's
`BEGIN IMMEDIATE` makes them do; because the lock is taken before anything is read,
every statement after it sees every earlier writer's commit, so the receipt lookup and
the head check cannot act on a stale read. A command's statements go out in psycopg's
pipeline mode (the reads are sent with the lock, the writes together), but the server
runs a pipeline's statements in order, so the reads still run once the lock is held.
The lock is released by COMMIT or ROLLBACK,
and by the server when the client's connection dies (a killed runner leaves nothing
held). Readers take no lock and never wait. A writer that waits longer than the
`lock_timeout` (30 s) retries, like a SQLite writer after its busy timeout, for up to
two minutes in all before it gives up with JournalLockedError.

A pooled connection is pinged (`SELECT 1`, outside any transaction) before it is handed out
again, so a connection the server closed while it sat idle is replaced instead of failing a command.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from .errors import JournalOpenError
from .journal import Journal
from .pool import Pool
from .urls import JournalUrl

# "fsjournl" read as a big-endian 64-bit integer: the one advisory lock key this journal uses.
WRITE_LOCK_KEY = int.from_bytes(b"fsjournl", "big")
LOCK_TIMEOUT_MS = 30_000
CONNECT_TIMEOUT_S = 10
PARAMSTYLE = "pyformat"
_TAKE_WRITE_LOCK = "SELECT pg_advisory_xact_lock(%(key)s)"


def connect_arguments(parsed: JournalUrl) -> dict[str, Any]:
    """psycopg's keyword arguments for a URL, as SQLAlchemy's psycopg dialect builds them, with the journal's own."""
    arguments: dict[str, Any] = {
        "application_name": "factory-schedule",
        "options": f"-c lock_timeout={LOCK_TIMEOUT_MS}",
        "connect_timeout": CONNECT_TIMEOUT_S,
    }
    named = {"host": parsed.host, "port": parsed.port, "user": parsed.username, "password": parsed.password,
             "dbname": parsed.database}
    arguments.update({key: value for key, value in named.items() if value not in (None, "")})
    arguments.update(parsed.query)  # the URL's parameters (connect_timeout, sslmode, password, ...) win
    return arguments


def _connector(arguments: dict[str, Any]) -> Callable[[], Any]:
    import psycopg

    def connect() -> Any:
        connection = psycopg.connect(**arguments, autocommit=False)
        connection.isolation_level = psycopg.IsolationLevel.READ_COMMITTED
        return connection

    return connect


def _reset(connection: Any) -> None:
    if connection.broken or connection.closed:
        raise ConnectionError("the connection is lost")
    connection.rollback()


def _ping(connection: Any) -> None:
    """What SQLAlchemy's pre-ping did: one `SELECT 1` in autocommit, so it opens no transaction."""
    connection.autocommit = True
    try:
        connection.execute("SELECT 1")
    finally:
        if not connection.closed:
            connection.autocommit = False


def table_names(connection: Any) -> set[str]:
    rows = connection.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
    ).fetchall()
    return {row[0] for row in rows}


def column_names(connection: Any, table: str) -> set[str]:
    rows = connection.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
        "AND table_name = %(table)s", {"table": table}
    ).fetchall()
    return {row[0] for row in rows}


class PostgresJournal(Journal):
    """A journal whose writers serialise on one advisory lock instead of SQLite's file lock."""

    dialect = "postgresql"

    def __init__(self, url: str, parsed: JournalUrl) -> None:
        import psycopg

        pool = Pool(_connector(connect_arguments(parsed)), _reset, _ping)
        super().__init__(pool, url, paramstyle=PARAMSTYLE, driver=psycopg)

    def _batched(self, driver: Any, write: bool) -> AbstractContextManager[Any]:
        # In psycopg's pipeline mode the write lock goes out with the receipt and head reads, and the three
        # writes together, instead of each statement waiting for the last one's answer.
        return driver.pipeline() if write else nullcontext()

    def _begin(self, driver: Any, write: bool) -> None:
        # psycopg opens the transaction at the first statement (the connection is not in autocommit).
        if write:
            driver.execute(_TAKE_WRITE_LOCK, {"key": WRITE_LOCK_KEY})

    def table_names(self, driver: Any) -> set[str]:
        return table_names(driver)

    def column_names(self, driver: Any, table: str) -> set[str]:
        return column_names(driver, table)


def open_postgres(url: str, parsed: JournalUrl, ensure_schema: Callable[[Journal, str], None]) -> Journal:
    """Connect with psycopg 3, check (or create) the schema, and return the journal."""
    if parsed.driver != "psycopg":
        raise JournalOpenError(
            f"PostgreSQL journals are opened with psycopg 3: write postgresql+psycopg://... "
            f"(got {parsed.drivername!r})"
        )
    try:
        import psycopg  # noqa: F401  (fail here, in words, rather than at the first connection)
    except ImportError:
        raise JournalOpenError(
            "PostgreSQL journals need psycopg 3: pip install 'factory-schedule[postgres]'"
        ) from None
    journal = PostgresJournal(url, parsed)
    try:
        ensure_schema(journal, journal.where)
    except BaseException:
        journal.close()
        raise
    return journal
