"""The journal's errors. Each message is meant to be read by a person, not parsed."""

from __future__ import annotations


class JournalError(Exception):
    """Base of every error the journal raises on purpose."""


class JournalOpenError(JournalError):
    """The URL names no journal this build can open (unknown scheme, not a journal file, ...)."""


class JournalCorruptError(JournalError):
    """The stored events do not form an unbroken hash chain, or a stored row does not parse."""


class JournalSetBackError(JournalCorruptError):
    """The journal no longer holds the history an earlier check verified: its head lies behind that check's
    checkpoint, or the event the checkpoint names is another one. A chain set back whole (a restored copy)
    or rewritten whole is consistent in itself; only the checkpoint tells."""


class CommandConflictError(JournalError):
    """A recorded command ID was sent again with a different payload."""

    def __init__(self, command_id: str, message: str | None = None) -> None:
        self.command_id = command_id
        super().__init__(message or f"command {command_id!r} was already recorded with a different payload")


class VersionConflictError(JournalError):
    """Another writer committed to the aggregate since the version the caller read."""

    def __init__(self, aggregate: str, expected: int, actual: int) -> None:
        self.aggregate = aggregate
        self.expected = expected
        self.actual = actual
        super().__init__(f"{aggregate}: expected version {expected}, found {actual}")


class JournalReadOnlyError(JournalError):
    """A write to a journal that can only be read (a read-only file, folder or mount, or a read-only database).

    The journal still opens for reading: history, verify, head and the engine's reads work."""


class JournalFullError(JournalError):
    """The disk, or the database's size limit, is full; the command was rolled back and wrote nothing."""


class JournalLockedError(JournalError):
    """The journal's write lock stayed taken by another writer past every retry (about two minutes)."""


class JournalUnavailableError(JournalError):
    """The database went away: a lost or refused server connection, or a journal file that cannot be opened."""
