"""The command journal: append-only, hash-chained, with command receipts.

Knows nothing about schedules; `core` records its decisions here.

Importing this package loads no database library. What the engine needs (canonical JSON,
the records a journal exchanges, the `CommandJournal` protocol and the errors) is plain
Python in `canonical`, `records` and `errors`; the SQL parts (`open_journal`, `Journal`,
`leases`, `shown_url`) are imported the first time one of them is asked for. Those run their
statements (`statements`) on the driver's own connection (`sqlite`, `postgres`, `pool`);
SQLAlchemy and SQLModel are loaded only to create or upgrade a journal's schema (`schema`,
from the declaration in `tables`).

Errors, all `JournalError` with a one-line message for a person (`errors.py`):

- `JournalOpenError`: the URL names nothing this build can open as a journal (any failure at open).
- `JournalReadOnlyError`: a write to a journal that can only be read (a read-only file, folder or
  mount); the journal itself opens and reads.
- `JournalFullError`: the disk or the database's size limit is full; the command wrote nothing.
- `JournalLockedError`: the write lock stayed taken by another writer past every retry (2 minutes).
- `JournalUnavailableError`: the database went away (a lost or refused server connection).
- `JournalCorruptError`: an event, the state, a receipt or the head is not what the chain sealed.
- `CommandConflictError`, `VersionConflictError`: a recorded command ID with another payload; a stale version.
- `JournalError` itself: any other database failure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .canonical import CanonicalJsonError, CanonicalText, canonical_digest, canonical_json, canonical_text
from .errors import (
    CommandConflictError,
    JournalCorruptError,
    JournalError,
    JournalFullError,
    JournalLockedError,
    JournalOpenError,
    JournalReadOnlyError,
    JournalUnavailableError,
    VersionConflictError,
)
from .records import (
    HISTORY_PAGE,
    Checkpoint,
    CommandJournal,
    Decision,
    Event,
    NewEvent,
    Outcome,
    Receipt,
    Snapshot,
)
from .state_parts import PartedText, parted, parted_members

if TYPE_CHECKING:
    from . import leases as leases
    from .journal import Journal as Journal
    from .opening import open_journal as open_journal
    from .urls import shown_url as shown_url

# Loaded on first use, so that `import factory_schedule.core` loads no database driver.
_DATABASE_PARTS = {
    "open_journal": ("opening", "open_journal"),
    "Journal": ("journal", "Journal"),
    "shown_url": ("urls", "shown_url"),
    "leases": ("leases", None),
}


def __getattr__(name: str) -> Any:
    if name not in _DATABASE_PARTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    module_name, attribute = _DATABASE_PARTS[name]
    module = importlib.import_module(f"{__name__}.{module_name}")
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


__all__ = [
    "HISTORY_PAGE",
    "CanonicalJsonError",
    "CanonicalText",
    "Checkpoint",
    "CommandConflictError",
    "CommandJournal",
    "Decision",
    "Event",
    "Journal",
    "JournalCorruptError",
    "JournalError",
    "JournalFullError",
    "JournalLockedError",
    "JournalOpenError",
    "JournalReadOnlyError",
    "JournalUnavailableError",
    "NewEvent",
    "Outcome",
    "PartedText",
    "Receipt",
    "Snapshot",
    "VersionConflictError",
    "canonical_digest",
    "canonical_json",
    "canonical_text",
    "leases",
    "open_journal",
    "parted",
    "parted_members",
    "shown_url",
]
