"""The one way health appends its own records: once per command ID, retried past other writers.

Each record's command ID names the thing recorded (a lease's removal, a night's firing, a run), so a second
append of it replays instead of doubling, and a conflicting one leaves the first record standing. What each
append decides is core's (`core.health.records`); this only carries it to the journal.
"""

from __future__ import annotations

from typing import Any

from factory_schedule.store import CommandConflictError, Journal, VersionConflictError
from factory_schedule.store.records import Decide

RECORD_ATTEMPTS = 5


def append_once(journal: Journal, aggregate: str, command_id: str, payload: dict[str, Any], decide: Decide,
                expected: int | None = None) -> bool:
    """Append `decide`'s event under `command_id`: True when this call recorded it, False when that ID was
    recorded already (a replay, or a conflicting earlier record: the first record of a thing stands).

    With `expected`, only at that version of the aggregate (the caller decided over what it read there, so
    another writer first raises VersionConflictError and the caller reads again); else at the head,
    retried RECORD_ATTEMPTS times while other writers append, then VersionConflictError is raised."""
    attempts = 1 if expected is not None else RECORD_ATTEMPTS
    for attempt in range(attempts):
        try:
            at = expected if expected is not None else journal.head(aggregate)
            return not journal.execute(aggregate, command_id, payload, at, decide).replayed
        except CommandConflictError:
            return False
        except VersionConflictError:
            if attempt == attempts - 1:
                raise
    return False  # pragma: no cover
