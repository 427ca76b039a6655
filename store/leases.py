"""Leases: who is working on what right now, kept beside the journal but not in it.

A lease is a row keyed by its scope (`worker`, `segment/<occurrence>/<n>`). It is
taken create-new, by an INSERT on that unique key, so two processes racing for a
scope cannot both win: the database, not a read followed by a write, decides.
Only its owner may heartbeat or release it; a release whose owner check fails is
an error, because a release that silently removes nothing is worse than none.

A lease is never stale before twice its TTL has passed without a heartbeat, and
even then nothing here reaps it by itself: `remove_stale` is for a supervisor
that has reconciled what the lease was guarding. Leases are not events: they say
what is running, not what was decided, so they may be removed without a trace in
the hash chain. Times are passed in, so the store reads no clock.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from .errors import JournalError
from .journal import Journal

WORKER_SCOPE = "worker"
STALE_AFTER_TTLS = 2  # a lease is stale once 2 x TTL passed since its heartbeat
FUTURE_AFTER_TTLS = 1  # a heartbeat more than one TTL ahead of now is from a clock that was wrong


def stale_since(heartbeat_at: datetime, ttl_seconds: float) -> datetime:
    """The first instant after which a lease heartbeated at `heartbeat_at` counts as stale (2 x TTL after it)."""
    return heartbeat_at + timedelta(seconds=STALE_AFTER_TTLS * ttl_seconds)


def heartbeat_from_future(heartbeat_at: datetime, ttl_seconds: float, now: datetime) -> bool:
    """A heartbeat more than one TTL ahead of `now` was written by a wrong clock: it proves no live holder."""
    return heartbeat_at - now > timedelta(seconds=FUTURE_AFTER_TTLS * ttl_seconds)


@dataclass(frozen=True)
class Lease:
    scope: str
    owner: str
    ttl_seconds: float
    acquired_at: datetime
    heartbeat_at: datetime
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def stale_at(self) -> datetime:
        """The first instant after which the lease counts as stale (2 x TTL after its last heartbeat)."""
        return stale_since(self.heartbeat_at, self.ttl_seconds)

    def age_seconds(self, now: datetime) -> float:
        """Seconds since the last heartbeat."""
        return (_utc(now) - self.heartbeat_at).total_seconds()


class LeaseError(JournalError):
    """Base of the lease errors."""


class LeaseHeldError(LeaseError):
    """Someone else holds the scope."""

    def __init__(self, holder: Lease, now: datetime) -> None:
        self.holder = holder
        self.age_seconds = holder.age_seconds(now)
        state = "stale" if stale(holder, now) else "live"
        super().__init__(
            f"{holder.scope} is held by {holder.owner} ({state}; last heartbeat {self.age_seconds:.1f}s ago, "
            f"TTL {holder.ttl_seconds:g}s)"
        )


class LeaseOwnerError(LeaseError):
    """A heartbeat or release by someone who does not hold the lease (or of a lease that is gone)."""

    def __init__(self, scope: str, owner: str, holder: Lease | None) -> None:
        self.scope = scope
        self.owner = owner
        self.holder = holder
        held = f"held by {holder.owner}" if holder is not None else "not held by anyone"
        super().__init__(f"{owner} does not hold {scope}: it is {held}")


def _utc(instant: datetime) -> datetime:
    if instant.tzinfo is None:
        raise ValueError("a lease instant needs a zone")
    return instant.astimezone(UTC)


def _ms(instant: datetime) -> int:
    return round(_utc(instant).timestamp() * 1000)


def _instant(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def _lease(row: Any) -> Lease:
    """A lease from its row: (scope, owner, ttl_ms, acquired_ms, heartbeat_ms, info), as `statements` reads it."""
    scope, owner, ttl_ms, acquired_ms, heartbeat_ms, text = row
    try:
        info = json.loads(text)
    except ValueError:
        info = {"unreadable": text}
    return Lease(
        scope=scope,
        owner=owner,
        ttl_seconds=int(ttl_ms) / 1000,
        acquired_at=_instant(int(acquired_ms)),
        heartbeat_at=_instant(int(heartbeat_ms)),
        info=info if isinstance(info, dict) else {"info": info},
    )


def _written(journal: Journal, key: str, values: dict[str, Any]) -> int:
    """Run one lease write in its own write transaction (under the journal's write lock); the rows it changed."""

    def write() -> int:
        with journal._transaction(write=True) as conn:
            return len(journal._statement(conn, key, values).fetchall())

    return journal._retrying(write)


def stale(lease: Lease, now: datetime) -> bool:
    """True only once more than 2 x TTL has passed since the last heartbeat."""
    return _utc(now) > lease.stale_at


def get_lease(journal: Journal, scope: str) -> Lease | None:
    def read() -> Lease | None:
        with journal._transaction(write=False) as conn:
            row = journal._statement(conn, "lease", {"scope": scope}).fetchone()
        return _lease(row) if row is not None else None

    return journal._retrying(read)


def list_leases(journal: Journal) -> list[Lease]:
    def read() -> list[Lease]:
        with journal._transaction(write=False) as conn:
            rows = journal._statement(conn, "leases", {}).fetchall()
        return [_lease(row) for row in rows]

    return journal._retrying(read)


def acquire(
    journal: Journal, scope: str, owner: str, ttl_seconds: float, now: datetime, info: dict[str, Any] | None = None
) -> Lease:
    """Take `scope` for `owner`, or raise LeaseHeldError naming whoever has it.

    The INSERT on the scope's unique key is the whole test: there is no read first,
    so of any number of racers exactly one gets the row. A stale holder is still a
    holder; only `remove_stale` (after reconciling) makes room.
    """
    if not scope or not owner:
        raise ValueError("a lease needs a scope and an owner")
    if not ttl_seconds > 0 or round(ttl_seconds * 1000) == 0:
        raise ValueError("a lease's TTL must be at least one millisecond")
    now_ms = _ms(now)
    row = {
        "scope": scope,
        "owner": owner,
        "ttl_ms": round(ttl_seconds * 1000),
        "acquired_ms": now_ms,
        "heartbeat_ms": now_ms,
        "info": json.dumps(info or {}, sort_keys=True),
    }
    for _ in range(3):
        try:
            _written(journal, "insert_lease", row)
            return _lease(tuple(row.values()))
        except journal._integrity_error:
            pass
        holder = get_lease(journal, scope)
        if holder is not None:
            raise LeaseHeldError(holder, now)
        # The holder released between our INSERT and our read: try again.
    holder = get_lease(journal, scope)
    raise LeaseHeldError(holder, now) if holder else LeaseError(f"could not take {scope}: it keeps changing hands")


def heartbeat(
    journal: Journal, scope: str, owner: str, now: datetime, info: dict[str, Any] | None = None
) -> Lease:
    """Extend `owner`'s lease to `now` (and replace its info when given); LeaseOwnerError for anyone else."""
    values: dict[str, Any] = {"scope": scope, "owner": owner, "heartbeat_ms": _ms(now)}
    if info is not None:
        values["info"] = json.dumps(info, sort_keys=True)
    if _written(journal, "heartbeat_lease" if info is None else "heartbeat_lease_info", values) != 1:
        raise LeaseOwnerError(scope, owner, get_lease(journal, scope))
    lease = get_lease(journal, scope)
    if lease is None or lease.owner != owner:
        raise LeaseOwnerError(scope, owner, lease)
    return lease


def release(journal: Journal, scope: str, owner: str) -> None:
    """Remove `owner`'s lease. Raises LeaseOwnerError when nothing of theirs was removed."""
    if _written(journal, "release_lease", {"scope": scope, "owner": owner}) != 1:
        raise LeaseOwnerError(scope, owner, get_lease(journal, scope))


def remove_stale(journal: Journal, scope: str, now: datetime, expected: Lease | None = None) -> Lease | None:
    """Delete the lease on `scope` only if it is still stale at the moment of deletion.

    The DELETE carries the staleness test and the holder's identity as its condition,
    so a heartbeat or a new holder that lands first keeps the row. With `expected`
    (the lease a caller already recorded removing), only that exact holder and
    heartbeat is removed. Returns the lease removed, or None when there was nothing
    stale to remove.
    """
    now_ms = _ms(now)

    def delete() -> Lease | None:
        with journal._transaction(write=True) as conn:
            row = journal._statement(conn, "lease", {"scope": scope}).fetchone()
            if row is None:
                return None
            lease = _lease(row)
            if expected is not None and (lease.owner != expected.owner
                                         or int(row[4]) != _ms(expected.heartbeat_at)):
                return None
            removed = journal._statement(conn, "remove_stale_lease", {
                "scope": scope, "owner": lease.owner, "heartbeat_ms": int(row[4]), "ttls": STALE_AFTER_TTLS,
                "now_ms": now_ms,
            }).fetchall()
            return lease if len(removed) == 1 else None

    return journal._retrying(delete)
