"""The journal on PostgreSQL: the same commands, receipts and hash chain as the file journal.

Isolation and locking. Every transaction runs at READ COMMITTED. A write transaction
(every `execute`, the schema check at open, and the lease writes that share the
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
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from sqlalchemy import Connection, create_engine

from .errors import JournalOpenError
from .journal import Journal

# "fsjournl" read as a big-endian 64-bit integer: the one advisory lock key this journal uses.
WRITE_LOCK_KEY = int.from_bytes(b"fsjournl", "big")
LOCK_TIMEOUT_MS = 30_000
CONNECT_TIMEOUT_S = 10
_TAKE_WRITE_LOCK = "SELECT pg_advisory_xact_lock(%(key)s)"


class PostgresJournal(Journal):
    """A journal whose writers serialise on one advisory lock instead of SQLite's file lock."""

    @contextmanager
    def write_transaction(self) -> Iterator[Connection]:
        with super().write_transaction() as conn:
            conn.exec_driver_sql(_TAKE_WRITE_LOCK, {"key": WRITE_LOCK_KEY})
            yield conn

    def _batched(self, driver: Any, write: bool) -> AbstractContextManager[Any]:
        # In psycopg's pipeline mode the write lock goes out with the receipt and head reads, and the three
        # writes together, instead of each statement waiting for the last one's answer.
        return driver.pipeline() if write else nullcontext()

    def _begin(self, driver: Any, write: bool) -> None:
        # psycopg opens the transaction at the first statement (the connection is not in autocommit).
        if write:
            driver.execute(_TAKE_WRITE_LOCK, {"key": WRITE_LOCK_KEY})


def open_postgres(url: str, parsed: Any, ensure_schema: Callable[[Journal, str], None]) -> Journal:
    """Connect with psycopg 3, check (or create) the schema, and return the journal."""
    if parsed.get_driver_name() != "psycopg":
        raise JournalOpenError(
            f"PostgreSQL journals are opened with psycopg 3: write postgresql+psycopg://... "
            f"(got {parsed.drivername!r})"
        )
    try:
        import psycopg  # noqa: F401  (fail here, in words, rather than deep inside SQLAlchemy)
    except ImportError:
        raise JournalOpenError(
            "PostgreSQL journals need psycopg 3: pip install 'factory-schedule[postgres]'"
        ) from None
    connect_args: dict[str, Any] = {
        "application_name": "factory-schedule",
        "options": f"-c lock_timeout={LOCK_TIMEOUT_MS}",
    }
    if "connect_timeout" not in parsed.query:
        connect_args["connect_timeout"] = CONNECT_TIMEOUT_S
    engine = create_engine(
        parsed,
        isolation_level="READ COMMITTED",
        pool_pre_ping=True,
        pool_use_lifo=True,  # as for SQLite: one warm connection (its prepared statements) does the work
        connect_args=connect_args,
    )
    journal = PostgresJournal(engine, url, write_options={})
    try:
        ensure_schema(journal, journal.where)
    except BaseException:
        engine.dispose()
        raise
    return journal
