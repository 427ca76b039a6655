"""The command journal: append-only, hash-chained, with command receipts.

Knows nothing about schedules; `core` records its decisions here.
"""

from . import leases as leases  # the leases table and its API: store.leases.acquire, ...
from .canonical import CanonicalJsonError, canonical_digest, canonical_json
from .errors import (
    CommandConflictError,
    JournalCorruptError,
    JournalError,
    JournalOpenError,
    VersionConflictError,
)
from .journal import HISTORY_PAGE, Checkpoint, Decision, Event, Journal, NewEvent, Outcome, Receipt, Snapshot
from .opening import open_journal

__all__ = [
    "HISTORY_PAGE",
    "CanonicalJsonError",
    "Checkpoint",
    "CommandConflictError",
    "Decision",
    "Event",
    "Journal",
    "JournalCorruptError",
    "JournalError",
    "JournalOpenError",
    "NewEvent",
    "Outcome",
    "Receipt",
    "Snapshot",
    "VersionConflictError",
    "canonical_digest",
    "canonical_json",
    "open_journal",
]
