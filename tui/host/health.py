"""Health's probes and repairs: gather the facts, let core judge them, remove only reversible drift.

`check_health` is what `factory-schedule health` prints and what the dashboard's
Health view draws. This module only looks (the journal's chain check and state,
the leases with whether each holder's process lives on this host, the nights'
states, the installed LaunchAgent, the host's zone) and hands the facts to
`core.health.judge`, where every rule lives as a pure function.

`repair_stale_leases` removes only leases that guard nothing any more: a stale
segment lease whose segment the schedule no longer shows running, or a worker
lease (stale, or with a heartbeat from the future) whose tick is gone from this
host. A lease is a claim, not a decision, so removing one changes no schedule,
commission or occurrence. A stale lease over a segment still running is left
for a person.
"""

from __future__ import annotations

import plistlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from factory_schedule.core.health import (
    COULD_NOT_CHECK,
    DEFAULT_GRACE_MINUTES,
    FINDINGS,
    HEALTHY,
    Finding,
    HealthFacts,
    HealthReport,
    LaunchAgentFact,
    LeaseFact,
    Repair,
    judge,
    lease_evidence,
    nights_to_check,
    reconcile_confirmation,
    segment_still_running,
)
from factory_schedule.store import Checkpoint, Journal, leases
from factory_schedule.tui.host.clock import host_zone
from factory_schedule.tui.host.segments import parse_segment_scope, process_alive

if TYPE_CHECKING:
    from factory_schedule.core import LifecycleSchedule

__all__ = [
    "COULD_NOT_CHECK", "DEFAULT_GRACE_MINUTES", "FINDINGS", "HEALTHY", "Finding", "HealthReport", "LeaseFreshness",
    "Repair", "check_health", "host_zone", "lease_freshness", "reconcile_confirmation", "repair_stale_leases",
]  # fmt: skip


def lease_fact(lease: leases.Lease, host: str, alive: Callable[[object], bool] = process_alive) -> LeaseFact:
    """A stored lease with what this host can see of its holder (only a process on this host can be probed)."""
    return LeaseFact(
        scope=lease.scope,
        owner=lease.owner,
        ttl_seconds=lease.ttl_seconds,
        heartbeat_at=lease.heartbeat_at,
        info=lease.info,
        segment=parse_segment_scope(lease.scope),
        worker=lease.scope == leases.WORKER_SCOPE,
        process_alive=alive(lease.info.get("pid")) if lease.info.get("host") == host else None,
    )


def _launch_agent(path: str) -> LaunchAgentFact:
    try:
        with open(path, "rb") as handle:
            installed = plistlib.load(handle)
    except (OSError, plistlib.InvalidFileException, ValueError) as error:
        return LaunchAgentFact(path, None, str(error))
    have = installed.get("StartCalendarInterval", []) if isinstance(installed, dict) else []
    have = [have] if isinstance(have, dict) else list(have)
    return LaunchAgentFact(path, tuple(item for item in have if isinstance(item, dict)))


def gather_facts(
    journal: Journal,
    schedule: LifecycleSchedule,
    now: datetime,
    host: str,
    plist_path: str | None = None,
    grace_minutes: float = DEFAULT_GRACE_MINUTES,
    alive: Callable[[object], bool] = process_alive,
    zone: str | None = None,
    since: Checkpoint | None = None,
) -> tuple[HealthFacts, Checkpoint | None]:
    """Everything health's rules look at, and how far the chain verified; a probe that fails is noted, not fatal."""
    from factory_schedule.core import SCHEDULE_AGGREGATE, ScheduleError

    could_not: list[str] = []
    chain_problem = state_problem = view = verified = None
    try:
        verified = journal.verify(SCHEDULE_AGGREGATE, since=since)
    except Exception as error:
        chain_problem = str(error)
    try:
        view = schedule.read()
    except ScheduleError as error:
        state_problem = (error.code, error.message)
    except Exception as error:
        could_not.append(f"reading the schedule: {error}")
    lease_facts: tuple[LeaseFact, ...] = ()
    try:
        lease_facts = tuple(lease_fact(lease, host, alive) for lease in leases.list_leases(journal))
    except Exception as error:
        could_not.append(f"leases: {type(error).__name__}: {error}")
    grace = timedelta(minutes=grace_minutes)
    night_states: dict[str, str] = {}
    if view is not None:
        try:
            ids = [night.occurrence_id for night in nights_to_check(view, now, grace)]
            night_states = {status.id: status.state for status in schedule.statuses(ids)} if ids else {}
        except Exception as error:
            could_not.append(f"lanes: {type(error).__name__}: {error}")
    facts = HealthFacts(
        now=now, host=host, chain_problem=chain_problem, view=view, state_problem=state_problem,
        leases=lease_facts, night_states=night_states,
        launch_agent=_launch_agent(plist_path) if plist_path else None,
        host_zone=zone or (host_zone() if plist_path else None), grace=grace, could_not_check=tuple(could_not),
    )
    return facts, verified


def check_health(
    journal: Journal,
    schedule: LifecycleSchedule,
    now: datetime,
    host: str,
    plist_path: str | None = None,
    grace_minutes: float = DEFAULT_GRACE_MINUTES,
    alive: Callable[[object], bool] = process_alive,
    zone: str | None = None,
    since: Checkpoint | None = None,
) -> HealthReport:
    """Every check over what this host can see.

    `since` (an earlier report's `verified`) checks only the events appended after it: the live
    dashboard re-checks as the journal grows without re-reading a year of history each time;
    the `health` command always checks the whole chain."""
    facts, verified = gather_facts(journal, schedule, now, host, plist_path, grace_minutes, alive, zone, since)
    report = judge(facts)
    return HealthReport(report.checked_at, report.host, report.findings, report.repairs, report.could_not_check,
                        verified)


@dataclass(frozen=True)
class LeaseFreshness:
    """What the dashboard shows beside a running occurrence: is its runner's lease alive, or stale since when."""

    occurrence: str
    segment: int
    scope: str
    runner: str
    pid: int | None
    host: str | None
    last_heartbeat: datetime
    stale: bool
    stale_since: datetime
    process_alive: bool | None  # None when the lease was taken on another host

    @property
    def words(self) -> str:
        if not self.stale:
            return "alive"
        return f"stale since {self.stale_since.isoformat()}"


def lease_freshness(
    journal: Journal, now: datetime, host: str, alive: Callable[[object], bool] = process_alive
) -> dict[str, LeaseFreshness]:
    """Each segment lease by occurrence ID (the latest segment wins), for the running-occurrence view."""
    found: dict[str, LeaseFreshness] = {}
    for lease in leases.list_leases(journal):
        fact = lease_fact(lease, host, alive)
        if fact.segment is None:
            continue
        occurrence_id, segment = fact.segment
        if occurrence_id in found and found[occurrence_id].segment > segment:
            continue
        pid = lease.info.get("pid")
        found[occurrence_id] = LeaseFreshness(
            occurrence=occurrence_id, segment=segment, scope=lease.scope, runner=lease.owner,
            pid=pid if isinstance(pid, int) else None, host=lease.info.get("host"),
            last_heartbeat=lease.heartbeat_at, stale=fact.stale(now) or fact.from_future(now),
            stale_since=fact.stale_at, process_alive=fact.process_alive,
        )
    return found


def repair_stale_leases(
    journal: Journal, schedule: LifecycleSchedule, now: datetime, host: str,
    alive: Callable[[object], bool] = process_alive,
) -> list[Repair]:
    """Remove each lease that guards nothing any more; return one Repair per removal.

    A stale segment lease goes only when `schedule.read()` no longer shows its segment running
    under its owner; the worker lease only when its tick is gone from this host. A stale lease's
    delete re-checks staleness, so a late heartbeat keeps its lease; a lease from the future is
    released under its owner's name, so a tick that took the scope meanwhile keeps it.
    """
    view = schedule.read()
    repairs = []
    for lease in leases.list_leases(journal):
        fact = lease_fact(lease, host, alive)
        from_future = fact.from_future(now)
        if not (fact.stale(now) or from_future):
            continue
        if fact.segment is not None and not from_future:
            if segment_still_running(view, fact.segment[0], fact.segment[1], lease.owner):
                continue
            why = "its segment is no longer running"
        elif (fact.worker or from_future) and fact.process_alive is False:
            why = "its process is gone" + (" and its heartbeat is in the future" if from_future else "")
        else:
            continue
        removed = _remove(journal, lease, now, from_future)
        if removed is None:
            continue
        repairs.append(Repair(
            "removed-stale-lease", removed.scope,
            f"removed {removed.scope} held by {removed.owner}: stale since {removed.stale_at.isoformat()} and {why}",
            lease_evidence(lease_fact(removed, host, alive), now)))
    return repairs


def _remove(journal: Journal, lease: leases.Lease, now: datetime, from_future: bool) -> leases.Lease | None:
    if not from_future:
        return leases.remove_stale(journal, lease.scope, now)
    try:
        leases.release(journal, lease.scope, lease.owner)
    except leases.LeaseOwnerError:
        return None
    return lease
