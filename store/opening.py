"""`open_journal`: turn a URL into a ready journal, or refuse it in words a person understands."""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
from typing import Any

from sqlalchemy import Engine, Table, create_engine, event, inspect, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlmodel import SQLModel

from . import tables
from .errors import JournalOpenError
from .journal import Journal
from .urls import shown_url

BUSY_TIMEOUT_MS = 30_000
# A command reads whether the head moved from `UPDATE ... RETURNING`, which SQLite has had since 3.35 (2021).
MIN_SQLITE = (3, 35, 0)


def _sqlite_engine(path: str) -> Engine:
    engine = create_engine(
        f"sqlite:///{path}",
        connect_args={"timeout": BUSY_TIMEOUT_MS / 1000, "check_same_thread": False},
        # Hand out the connection returned last. SQLite drops a connection's page cache whenever another
        # connection has written since; handed out in turn, the writer's and a nested reader's connections
        # each found the other's commit, and every command read the state's pages from the OS again.
        pool_use_lifo=True,
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy's begin event, not pysqlite, decide how a transaction starts.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.execute("PRAGMA foreign_keys=ON")
        # A statement inside a transaction keeps a journal of the pages it changes, and SQLite moves that
        # journal to a temporary file past 64 KiB: with a state that large, every command's head update
        # made, wrote and deleted a file in /var/tmp. Kept in memory, it costs the state's size once.
        cursor.execute("PRAGMA temp_store=MEMORY")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        immediate = conn.get_execution_options().get("factory_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


def _check_sqlite_file(path: str) -> bool:
    """True when the file must be initialised; refuses a file that is not a journal."""
    if not os.path.exists(path):
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise JournalOpenError(f"cannot create the journal {path}: the folder {directory} does not exist")
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            os.close(fd)
        except FileExistsError:
            pass
        except OSError as error:
            raise JournalOpenError(f"cannot create the journal {path}: {error.strerror}") from None
        return True
    if os.path.isdir(path):
        raise JournalOpenError(f"{path} is a folder, not a journal file")
    if os.path.getsize(path) == 0:
        return True
    # Ask SQLite, never open() the file ourselves: closing any descriptor of a file drops every
    # POSIX lock this process holds on it, SQLite's included, and another journal open in the
    # same process would then write without its lock (SQLite's "how to corrupt", 2.2).
    probe = None
    try:
        probe = sqlite3.connect(f"file:{urllib.parse.quote(os.path.abspath(path))}?mode=ro", uri=True)
        probe.execute("PRAGMA schema_version").fetchone()
    except sqlite3.DatabaseError:
        raise JournalOpenError(f"{path} is not a factory-schedule journal (it is not an SQLite database)") from None
    finally:
        if probe is not None:
            probe.close()
    return False


def _enable_wal(journal: Journal, where: str) -> None:
    """Switch a file journal to WAL (a setting the file keeps), once it is known to be a journal.

    Done after the schema check, not on connect, so that opening a database that turns
    out not to be a journal leaves its bytes exactly as they were.
    """

    def work() -> None:
        raw = journal.engine.raw_connection()
        try:
            mode = raw.cursor().execute("PRAGMA journal_mode=WAL").fetchone()[0]
        finally:
            raw.close()
        if str(mode).lower() != "wal":
            raise JournalOpenError(f"{where} cannot use write-ahead logging (journal mode {mode!r})")

    journal._retrying(work)


def _ensure_schema(journal: Journal, where: str) -> None:
    """Create the tables in a new database; refuse a database that holds something else."""

    def work() -> None:
        with journal.write_transaction() as conn:
            names = set(inspect(conn).get_table_names())
            if names and tables.JournalMeta.__tablename__ not in names:
                raise JournalOpenError(
                    f"{where} is a database but not a factory-schedule journal (it has no journal_meta table)"
                )
            SQLModel.metadata.create_all(conn, checkfirst=True)
            meta: Table = tables.JournalMeta.__table__  # type: ignore[attr-defined]  # SQLModel sets it, unstubbed
            row = conn.execute(select(meta.c.value).where(meta.c.key == "format")).first()
            if row is None:
                conn.execute(meta.insert().values(key="format", value=tables.JOURNAL_FORMAT))
            elif row[0] != tables.JOURNAL_FORMAT:
                raise JournalOpenError(
                    f"{where} is a journal of format {row[0]!r}; this build reads {tables.JOURNAL_FORMAT!r}"
                )

    journal._retrying(work)


def open_journal(url: str) -> Journal:
    """Open (creating when new) the journal a URL names.

    `sqlite:///path/to/journal.db` is a file created with mode 0600;
    `postgresql+psycopg://user@host/db` a PostgreSQL database. Anything else is refused.
    """
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        raise JournalOpenError(
            f"{shown_url(url)!r} is not a journal URL; use sqlite:///path/to/journal.db or "
            "postgresql+psycopg://user@host/db"
        ) from None
    backend = parsed.get_backend_name()
    try:
        if backend == "sqlite":
            path = parsed.database or None
            if path is None or path == ":memory:":
                # An in-memory database is one connection that every thread and every nested read would share:
                # one transaction's rollback undoes another's writes, and a decision cannot read its own journal.
                raise JournalOpenError(
                    f"{shown_url(url)!r} names no journal file; a journal is a file: sqlite:///path/to/journal.db"
                )
            if sqlite3.sqlite_version_info < MIN_SQLITE:
                raise JournalOpenError(
                    f"this Python's sqlite3 uses SQLite {sqlite3.sqlite_version}; a journal needs "
                    f"{'.'.join(map(str, MIN_SQLITE))} or newer (a newer Python, or a PostgreSQL journal)"
                )
            _check_sqlite_file(path)
            journal = Journal(_sqlite_engine(path), url, write_options={"factory_write": True})
            _ensure_schema(journal, path)
            _enable_wal(journal, path)
            return journal
        if backend == "postgresql":
            from .postgres import open_postgres

            return open_postgres(url, parsed, _ensure_schema)
    except JournalOpenError:
        raise
    except (SQLAlchemyError, sqlite3.Error) as error:
        reason = " ".join(str(getattr(error, "orig", None) or error).split())
        where = shown_url(url)
        raise JournalOpenError(f"cannot open the journal {where}: {reason}") from None
    raise JournalOpenError(
        f"unknown journal URL scheme {parsed.drivername!r}; "
        "use sqlite:///path/to/journal.db or postgresql+psycopg://user@host/db"
    )
