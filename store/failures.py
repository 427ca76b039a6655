"""A database failure named as the JournalError a person can act on, and lock contention told apart.

The journal waits out contention (another writer holds the lock) and raises everything else at once,
named by what the driver's message says: no caller ever sees a driver's own error class.
"""

from __future__ import annotations

from .errors import (
    JournalError,
    JournalFullError,
    JournalLockedError,
    JournalReadOnlyError,
    JournalUnavailableError,
)

_LOCK_ERRORS = (
    "database is locked",  # SQLite, after the busy timeout
    "database is busy",
    "deadlock detected",  # PostgreSQL
    "lock timeout",  # PostgreSQL, after lock_timeout
    "could not serialize access",  # PostgreSQL, should a caller raise the isolation level
)


_READ_ONLY_ERRORS = ("readonly database", "read-only", "read only")
_FULL_ERRORS = ("database or disk is full", "no space left", "disk full", "could not extend file")
_LOST_ERRORS = (
    "server closed the connection",
    "terminating connection",
    "connection refused",
    "could not connect",
    "connection failed",
    "connection is closed",
    "connection is lost",
    "consuming input failed",
    "ssl syscall error",
    "could not receive data",
    "could not send data",
    "connection not open",
    "unable to open database file",
)


def is_lock_error(error: BaseException) -> bool:
    """Whether the driver's error says another writer holds the lock (worth waiting out)."""
    text = str(error).lower()
    return any(words in text for words in _LOCK_ERRORS)


def named_failure(where: str, error: BaseException) -> JournalError:
    """The named JournalError for a database failure of the journal at `where`, in one line a person can act on."""
    reason = " ".join(str(error).split())
    text = reason.lower()
    if any(words in text for words in _READ_ONLY_ERRORS):
        return JournalReadOnlyError(f"the journal {where} is read-only: it can be read but not written")
    if any(words in text for words in _FULL_ERRORS):
        return JournalFullError(f"the journal {where} is full (its disk or its size limit); the command wrote nothing")
    if is_lock_error(error):
        return JournalLockedError(
            f"the journal {where} stayed locked by another writer; nothing was written (try again)"
        )
    if any(words in text for words in _LOST_ERRORS):
        return JournalUnavailableError(f"the journal {where} cannot be reached: {reason}")
    return JournalError(f"the journal {where} failed: {reason}")
