"""The command journal: append-only, hash-chained, with command receipts.

Knows nothing about schedules; `core` records its decisions here.
"""

from . import leases as leases  # the leases table and its API: store.leases.acquire, ...
from .canonical import CanonicalJsonError, CanonicalText, canonical_digest, canonical_json, canonical_text
from .errors import (
    CommandConflictError,
    JournalCorruptError,
    JournalError,
    JournalOpenError,
    VersionConflictError,
)
from .journal import HISTORY_PAGE, Checkpoint, Decision, Event, Journal, NewEvent, Outcome, Receipt, Snapshot
from .opening import open_journal
from .urls import shown_url

__all__ = [
    "HISTORY_PAGE",
    "CanonicalJsonError",
    "CanonicalText",
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
    "canonical_text",
    "open_journal",
    "shown_url",
]
