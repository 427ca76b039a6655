"""Lease freshness of a running segment, in words: is its runner still heartbeating?"""

from __future__ import annotations

from factory_schedule.core import Occurrence
from factory_schedule.store import leases
from factory_schedule.tui.dashboard.reading import Reading
from factory_schedule.tui.dashboard.words import ago, clock_time
from factory_schedule.tui.host.tokens import segment_scope


def lease_of(reading: Reading, occurrence: Occurrence | None) -> leases.Lease | None:
    """The lease held for the occurrence's running segment, if leases are kept and one is held."""
    if reading.leases is None or occurrence is None or occurrence.state != "running":
        return None
    n = occurrence.segments[-1].n
    scope = segment_scope(occurrence.id, n)
    for lease in reading.leases:
        info = lease.info
        if lease.scope == scope or (info.get("occurrence") == occurrence.id and info.get("segment") == n):
            return lease
    return None


def is_stale(lease: leases.Lease, reading: Reading) -> bool:
    return bool(leases.stale(lease, reading.now))


def freshness_words(reading: Reading, occurrence: Occurrence | None, zone: str) -> str:
    """"lease alive, heartbeat 2 min ago", "lease stale since 02:41", "no lease", or "" when not running."""
    if occurrence is None or occurrence.state != "running":
        return ""
    if reading.leases is None:
        return "—"
    lease = lease_of(reading, occurrence)
    if lease is None:
        return "no lease held"
    if is_stale(lease, reading):
        return f"lease stale since {clock_time(lease.stale_at, zone)}"
    return f"lease alive, heartbeat {ago(lease.heartbeat_at, reading.now)}"


def lease_evidence(reading: Reading, occurrence: Occurrence | None, zone: str) -> str | None:
    """What a supervisor can quote when confirming the runner is gone: the lease's own record."""
    lease = lease_of(reading, occurrence)
    if lease is None:
        return None
    info = lease.info
    where = ", ".join(f"{key} {info[key]}" for key in ("host", "pid") if key in info)
    stale = is_stale(lease, reading)
    state = f"stale since {clock_time(lease.stale_at, zone)}" if stale else "still heartbeating"
    return (
        f"lease {lease.scope} held by {lease.owner}"
        + (f" ({where})" if where else "")
        + f": last heartbeat {clock_time(lease.heartbeat_at, zone)}, {state}"
    )
