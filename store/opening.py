"""`open_journal`: turn a URL into a ready journal, or refuse it in words a person understands."""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, inspect, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlmodel import SQLModel

from . import tables
from .errors import JournalError, JournalOpenError
from .journal import Journal
from .urls import shown_url

BUSY_TIMEOUT_MS = 30_000
# A command reads whether the head moved from `UPDATE ... RETURNING`, which SQLite has had since 3.35 (2021).
MIN_SQLITE = (3, 35, 0)


def _sqlite_engine(path: str, read_only: str | None = None, immutable: bool = False) -> Engine:
    target = f"sqlite:///{path}"
    if read_only is not None:
        # SQLite opens the file for reading only; an immutable file (a read-only folder or mount, where its
        # -shm cannot be made) is read without locks, since nothing can write it either.
        target = f"sqlite:///file:{urllib.parse.quote(path)}?mode=ro{'&immutable=1' if immutable else ''}&uri=true"
    engine = create_engine(
        target,
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
        if read_only is not None:
            cursor.execute("PRAGMA query_only=ON")
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


PRIVATE_MODE = 0o600
SIDE_FILES = ("-wal", "-shm", "-journal")


def _read_only_reason(path: str) -> str | None:
    """Why a journal file can only be read, or None when it can be written.

    The file's own mode is taken at its word even for root, whom the kernel lets write anyway:
    an owner who made the journal read-only (chmod a-w) asked for it to be read, not written.
    """
    try:
        if os.statvfs(path).f_flag & os.ST_RDONLY:
            return "it is on a read-only file system"
        if os.stat(path).st_mode & 0o222 == 0 or not os.access(path, os.W_OK):
            return "the file is read-only"
        if _folder_read_only(path):  # where SQLite cannot make the journal's side files, nothing can be written
            return f"its folder {os.path.dirname(path)} is read-only"
    except OSError as error:
        return f"it cannot be checked for writing: {error.strerror}"
    return None


def _folder_read_only(path: str) -> bool:
    directory = os.path.dirname(path)
    try:
        return bool(os.statvfs(directory).f_flag & os.ST_RDONLY) or os.stat(directory).st_mode & 0o222 == 0 or (
            not os.access(directory, os.W_OK)
        )
    except OSError:
        return True


def _keep_private(path: str) -> None:
    """A new journal and any side files it already has, readable by their owner alone (0600), before
    SQLite writes to it (SQLite gives the -wal and -shm it makes the journal's own mode).

    For a file that exists but is empty (made by `touch`, or by another tool at a symlink's target); a
    journal already written keeps the mode its owner chose for it. A file this process may not change is
    left as it is.
    """
    for name in (path, *(path + suffix for suffix in SIDE_FILES)):
        try:
            mode = os.stat(name).st_mode & 0o777
            if mode & 0o077:
                os.chmod(name, mode & 0o700)
        except OSError:
            continue


def _check_sqlite_file(path: str) -> bool:
    """True when the file must be initialised; refuses a file that is not a journal.

    `path` is the real path (symlinks resolved), so that a new journal reached through a dangling
    symlink is created 0600 at its target, and SQLite's side files sit beside the real file.
    """
    if not os.path.exists(path):
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise JournalOpenError(f"cannot create the journal {path}: the folder {directory} does not exist")
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, PRIVATE_MODE)
            os.close(fd)
        except FileExistsError:
            pass
        except OSError as error:
            raise JournalOpenError(f"cannot create the journal {path}: {error.strerror}") from None
        return True
    if os.path.isdir(path):
        raise JournalOpenError(f"{path} is a folder, not a journal file")
    if os.path.getsize(path) == 0:  # an empty file becomes a new journal: private before SQLite writes a byte
        _keep_private(path)
        return True
    # Ask SQLite, never open() the file ourselves: closing any descriptor of a file drops every
    # POSIX lock this process holds on it, SQLite's included, and another journal open in the
    # same process would then write without its lock (SQLite's "how to corrupt", 2.2).
    # Immutable: a journal on a read-only mount has no -shm and cannot make one, yet is a journal.
    probe = None
    immutable = "&immutable=1" if _folder_read_only(path) else ""
    try:
        probe = sqlite3.connect(f"file:{urllib.parse.quote(path)}?mode=ro{immutable}", uri=True)
        probe.execute("PRAGMA schema_version").fetchone()
    except sqlite3.DatabaseError as error:
        if "not a database" in str(error) or "malformed" in str(error):
            raise JournalOpenError(
                f"{path} is not a factory-schedule journal (it is not an SQLite database)"
            ) from None
        raise JournalOpenError(f"cannot read the journal {path}: {error}") from None
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


def _upgrade(conn: Connection) -> None:
    """Format 1 to 2, in the schema check's transaction: the seal columns and the receipts' index.

    Nothing already written changes: format 1 events hash as they did, and `verify` reports the
    commands they record as unsealed (`Checkpoint.unsealed_through`). The next command seals the state.
    """
    columns = {column["name"] for column in inspect(conn).get_columns(tables.EventRow.__tablename__)}
    for column in ("state_sha256", "receipt_sha256"):
        if column not in columns:
            conn.exec_driver_sql(f"ALTER TABLE events ADD COLUMN {column} TEXT")
    conn.exec_driver_sql(
        f"CREATE INDEX IF NOT EXISTS {tables.RECEIPTS_BY_AGGREGATE} ON receipts (aggregate, last_version)"
    )


def _check_schema_read_only(journal: Journal, where: str) -> None:
    """A journal that can only be read must already be a journal of this format: nothing can be made or upgraded."""

    def work() -> None:
        with journal.engine.connect() as conn:
            names = set(inspect(conn).get_table_names())
            if tables.JournalMeta.__tablename__ not in names:
                raise JournalOpenError(
                    f"{where} is a database but not a factory-schedule journal (it has no journal_meta table)"
                )
            meta = SQLModel.metadata.tables["journal_meta"]
            row = conn.execute(select(meta.c.value).where(meta.c.key == "format")).first()
        if row is not None and row[0] in tables.LEGACY_FORMATS:
            raise JournalOpenError(
                f"{where} is a journal of format {row[0]!r} and read-only: open it once where it can be written "
                "to upgrade it"
            )
        if row is None or row[0] != tables.JOURNAL_FORMAT:
            raise JournalOpenError(f"{where} is a journal of format {row and row[0]!r}; this build reads "
                                   f"{tables.JOURNAL_FORMAT!r}")

    journal._retrying(work)


def _ensure_schema(journal: Journal, where: str) -> None:
    """Create the tables in a new database; refuse a database that holds something else."""

    if journal.read_only is not None:
        _check_schema_read_only(journal, where)
        return

    from . import leases  # noqa: F401  (its table is part of every journal, whichever command opens it first)

    def work() -> None:
        with journal.write_transaction() as conn:
            names = set(inspect(conn).get_table_names())
            if names and tables.JournalMeta.__tablename__ not in names:
                raise JournalOpenError(
                    f"{where} is a database but not a factory-schedule journal (it has no journal_meta table)"
                )
            SQLModel.metadata.create_all(conn, checkfirst=True)
            meta = SQLModel.metadata.tables["journal_meta"]
            row = conn.execute(select(meta.c.value).where(meta.c.key == "format")).first()
            if row is None:
                conn.execute(meta.insert().values(key="format", value=tables.JOURNAL_FORMAT))
            elif row[0] in tables.LEGACY_FORMATS:
                _upgrade(conn)
                conn.execute(meta.update().where(meta.c.key == "format").values(value=tables.JOURNAL_FORMAT))
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
            path = os.path.realpath(path)
            new = _check_sqlite_file(path)
            read_only = None if new else _read_only_reason(path)
            # A reader of a WAL file needs its -shm; where the folder cannot hold one, read it as immutable.
            immutable = read_only is not None and _folder_read_only(path)
            engine = _sqlite_engine(path, read_only, immutable)
            journal = Journal(engine, url, write_options={"factory_write": True}, read_only=read_only)
            try:
                _ensure_schema(journal, path)
                if read_only is None:
                    _enable_wal(journal, path)
            except BaseException:
                engine.dispose()
                raise
            return journal
        if backend == "postgresql":
            from .postgres import open_postgres

            return open_postgres(url, parsed, _ensure_schema)
    except JournalOpenError:
        raise
    except JournalError as error:  # a database failure while opening (unreachable, locked, full): still an open error
        cause = error.__cause__ or error
        reason = " ".join(str(getattr(cause, "orig", None) or cause).split())
        raise JournalOpenError(f"cannot open the journal {shown_url(url)}: {reason}") from None
    except (SQLAlchemyError, sqlite3.Error) as error:
        reason = " ".join(str(getattr(error, "orig", None) or error).split())
        where = shown_url(url)
        raise JournalOpenError(f"cannot open the journal {where}: {reason}") from None
    raise JournalOpenError(
        f"unknown journal URL scheme {parsed.drivername!r}; "
        "use sqlite:///path/to/journal.db or postgresql+psycopg://user@host/db"
    )
