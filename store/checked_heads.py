"""A memo of the head rows a journal has already checked against their seals: the store's one cache.

Why it exists: every read of the state (each command, each `load_text`, so the engine's every read)
checks the head's seal, the hash of the event the head names and the SHA-256 of the state text. For
the schedule's state of about 60 KB that is a hash of the whole state every time, a good part of a
commit's cost. Why it is safe: the check is a pure function of the row read (the same bytes always
pass or always fail), so a row equal column for column to one already checked passes again without
hashing; comparing 60 KB of text takes microseconds. Any edit of any column, the state's included,
makes the row unequal, and it is checked in full. A command remembers the head row it wrote, whose
hashes it has just computed, so the next command finds its head already checked. `verify` never
uses the memo: it recomputes everything.

One entry per aggregate (its last head checked), per `Journal` object, so it holds at most one
state text per aggregate.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

H = TypeVar("H")


class CheckedHeads(Generic[H]):
    """The last head row checked for each aggregate, with what the check made of it."""

    def __init__(self) -> None:
        self._rows: dict[str, tuple[tuple[Any, ...], H]] = {}

    def get(self, aggregate: str, row: tuple[Any, ...]) -> H | None:
        """What the check made of `row`, when this very row (every column equal) was checked; else None."""
        entry = self._rows.get(aggregate)
        if entry is not None and entry[0] == row:
            return entry[1]
        return None

    def remember(self, aggregate: str, row: tuple[Any, ...], head: H) -> None:
        self._rows[aggregate] = (tuple(row), head)
