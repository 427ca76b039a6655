"""`open_journal`: turn a URL into a ready journal, or refuse it in words a person understands."""

from __future__ import annotations

import os
import sqlite3
import urllib.parse

from .errors import JournalError, JournalOpenError
from .journal import Journal
from .statements import JOURNAL_FORMAT, LEGACY_FORMATS, TABLES
from .urls import UrlError, parse_url, shown_url

# A command reads whether the head moved from `UPDATE ... RETURNING`, which SQLite has had since 3.35 (2021).
MIN_SQLITE = (3, 35, 0)


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
        pooled = journal.pool.checkout()
        try:
            mode = pooled.driver_connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        finally:
            pooled.close()
        if str(mode).lower() != "wal":
            raise JournalOpenError(f"{where} cannot use write-ahead logging (journal mode {mode!r})")

    journal._retrying(work)


def _ensure_schema(journal: Journal, where: str) -> None:
    """Check that the database is a journal of this build's format; create or upgrade it where that is needed.

    The everyday case, a journal of this format with every table, is one read of the table names and
    the format row, with no lock taken and no SQLAlchemy or SQLModel loaded. Anything else (a new
    database, a missing table, a format 1 journal) goes to `schema.create_or_upgrade`, under the
    write lock. A journal that can only be read must already be of this format: nothing can be made
    or upgraded.
    """

    def look() -> tuple[set[str], str | None]:
        with journal._transaction(write=False) as driver:
            names = journal.table_names(driver)
            row = journal._statement(driver, "format", {}).fetchone() if "journal_meta" in names else None
        return names, None if row is None else str(row[0])

    names, found = journal._retrying(look)
    if names and "journal_meta" not in names:
        raise JournalOpenError(
            f"{where} is a database but not a factory-schedule journal (it has no journal_meta table)"
        )
    if found == JOURNAL_FORMAT and names >= set(TABLES):
        return
    if found is not None and found != JOURNAL_FORMAT and found not in LEGACY_FORMATS:
        raise JournalOpenError(f"{where} is a journal of format {found!r}; this build reads {JOURNAL_FORMAT!r}")
    if journal.read_only is not None:
        if "journal_meta" not in names:
            raise JournalOpenError(
                f"{where} is a database but not a factory-schedule journal (it has no journal_meta table)"
            )
        if found in LEGACY_FORMATS:
            raise JournalOpenError(
                f"{where} is a journal of format {found!r} and read-only: open it once where it can be written "
                "to upgrade it"
            )
        if found != JOURNAL_FORMAT:
            raise JournalOpenError(f"{where} is a journal of format {found!r}; this build reads {JOURNAL_FORMAT!r}")
        return  # of this format, but a table short: what reads it does not need that table
    from .schema import create_or_upgrade

    create_or_upgrade(journal, where)


def open_journal(url: str) -> Journal:
    """Open (creating when new) the journal a URL names.

    `sqlite:///path/to/journal.db` is a file created with mode 0600;
    `postgresql+psycopg://user@host/db` a PostgreSQL database. Anything else is refused.
    """
    try:
        parsed = parse_url(url)
    except UrlError:
        raise JournalOpenError(
            f"{shown_url(url)!r} is not a journal URL; use sqlite:///path/to/journal.db or "
            "postgresql+psycopg://user@host/db"
        ) from None
    backend = parsed.backend
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
            from .sqlite import SqliteJournal

            journal = SqliteJournal(path, url, read_only, immutable)
            try:
                _ensure_schema(journal, path)
                if read_only is None:
                    _enable_wal(journal, path)
            except BaseException:
                journal.close()
                raise
            return journal
        if backend == "postgresql":
            from .postgres import open_postgres

            return open_postgres(url, parsed, _ensure_schema)
    except JournalOpenError:
        raise
    except JournalError as error:  # a database failure while opening (unreachable, locked, full): still an open error
        cause = error.__cause__ or error
        reason = " ".join(str(cause).split())
        raise JournalOpenError(f"cannot open the journal {shown_url(url)}: {reason}") from None
    except sqlite3.Error as error:
        reason = " ".join(str(error).split())
        raise JournalOpenError(f"cannot open the journal {shown_url(url)}: {reason}") from None
    raise JournalOpenError(
        f"unknown journal URL scheme {parsed.drivername!r}; "
        "use sqlite:///path/to/journal.db or postgresql+psycopg://user@host/db"
    )
