"""The health reconciler's hands: carry out the repairs `core.health.plan_repairs` licenses, and journal each.

Two repairs, both reversible local drift and neither a decision:

- a dead runner's segment (its process provably gone from this host, its lease
  without a heartbeat for 2 x TTL) is reconciled through the engine's own
  `reconcile`, as the supervisor's confirmation with the evidence
  (`confirmedBy` "health-reconciler@<host>"). The engine's rules apply as for a
  person's confirmation: a call in flight ends `lost` and is never sent again,
  and the occurrence goes `interrupted`, so the lane's next tick resumes it;
- a lease that guards nothing any more (stale or from the future, its process
  gone, its segment ended or just reconciled) is removed, and the removal is
  recorded as a `lease-removed` event on the journal's `health/repairs`
  aggregate (hash-chained like every event, beside the schedule's own).

Everything is re-checked at the moment it happens: the removal's DELETE carries
the staleness test, and a reconcile the engine refuses (the runner ended its
segment meanwhile, another supervisor was first) removes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from factory_schedule.core.health import PlannedRepair, Repair, plan_repairs
from factory_schedule.store import Decision, Journal, NewEvent, VersionConflictError, leases

HEALTH_AGGREGATE = "health/repairs"
LEASE_REMOVED = "lease-removed"
RECORD_ATTEMPTS = 5


def carry_out(journal: Journal, schedule: Any, plans: tuple[PlannedRepair, ...], now: datetime,
              by: str) -> list[Repair]:
    """Each planned repair in order; a reconcile the engine refuses drops the removal that depended on it."""
    from factory_schedule.core import ScheduleError

    repairs: list[Repair] = []
    refused: set[str] = set()
    for plan in plans:
        if plan.action == "reconcile":
            try:
                result = schedule.reconcile(occurrence_id=plan.occurrence, confirmation=plan.confirmation)
            except ScheduleError as error:
                refused.add(plan.scope)
                repairs.append(Repair("reconcile-refused", plan.scope,
                                      f"did not reconcile {plan.occurrence}: {error.code}: {error.message}",
                                      plan.evidence))
                continue
            calls = result.occurrence.calls if result.occurrence is not None else []
            lost = [call.k for call in calls if call.outcome == "lost" and call.segment == plan.evidence.get("segment")]
            repairs.append(Repair(
                "reconciled-dead-runner", plan.scope,
                f"reconciled {plan.occurrence} (runner {plan.owner}): {plan.reason}; recorded as "
                f"{result.command_id} confirmed by {by}" + (f"; calls ended lost: {lost}" if lost else ""),
                {**plan.evidence, "command_id": result.command_id, "confirmation": plan.confirmation}))
            continue
        if plan.scope in refused:
            continue
        removed = _remove(journal, plan, now)
        if removed is None:
            continue
        record = record_lease_removal(journal, removed, plan.reason, by, now)
        repairs.append(Repair(
            "removed-stale-lease", plan.scope,
            f"removed {plan.scope} held by {plan.owner}: stale since {removed.stale_at.isoformat()} and "
            f"{plan.reason}; recorded as {record}", {**plan.evidence, "command_id": record}))
    return repairs


def _remove(journal: Journal, plan: PlannedRepair, now: datetime) -> leases.Lease | None:
    if not plan.from_future:
        return leases.remove_stale(journal, plan.scope, now)  # its DELETE re-checks staleness
    holder = leases.get_lease(journal, plan.scope)
    try:  # owner-conditioned: a holder that took the scope meanwhile keeps it
        leases.release(journal, plan.scope, plan.owner)
    except leases.LeaseOwnerError:
        return None
    return holder


def _removal_record(lease: leases.Lease, reason: str, by: str, now: datetime) -> dict[str, Any]:
    """The event's data: canonical JSON (no floats), so instants as text and the TTL in milliseconds."""
    info = lease.info
    return {
        "scope": lease.scope,
        "owner": lease.owner,
        "ttlMs": round(lease.ttl_seconds * 1000),
        "acquiredAt": lease.acquired_at.isoformat(),
        "heartbeatAt": lease.heartbeat_at.isoformat(),
        "staleSince": lease.stale_at.isoformat(),
        "pid": info.get("pid") if isinstance(info.get("pid"), int) else None,
        "pidStarted": info.get("pid_started") if isinstance(info.get("pid_started"), str) else None,
        "host": info.get("host") if isinstance(info.get("host"), str) else None,
        "reason": reason[:300],
        "removedBy": by,
        "removedAt": now.isoformat(),
    }


def record_lease_removal(journal: Journal, lease: leases.Lease, reason: str, by: str, now: datetime) -> str:
    """Append one `lease-removed` event to the health aggregate; its command ID names the lease exactly
    (scope, owner, last heartbeat), so recording the same removal twice replays instead of doubling."""
    data = _removal_record(lease, reason, by, now)
    heartbeat_ms = round(lease.heartbeat_at.timestamp() * 1000)
    command_id = f"health/lease-removed/{lease.scope}/{lease.owner}/{heartbeat_ms}"

    def decide(state: Any, _version: int) -> Decision:
        count = int(state.get("leasesRemoved", 0)) if isinstance(state, dict) else 0
        return Decision(events=[NewEvent(LEASE_REMOVED, data)],
                        state={"leasesRemoved": count + 1, "last": command_id}, result={"recorded": command_id})

    for attempt in range(RECORD_ATTEMPTS):
        try:
            journal.execute(HEALTH_AGGREGATE, command_id, data, journal.head(HEALTH_AGGREGATE), decide)
            return command_id
        except VersionConflictError:
            if attempt == RECORD_ATTEMPTS - 1:
                raise
    return command_id  # pragma: no cover


def removal_records(journal: Journal) -> list[dict[str, Any]]:
    """Every lease removal the reconciler recorded, oldest first."""
    return [event.data for event in journal.iter_history(HEALTH_AGGREGATE) if event.type == LEASE_REMOVED]


def repair(journal: Journal, schedule: Any, now: datetime, host: str, gather: Callable[[], Any],
           confirmed_by: str | None = None) -> list[Repair]:
    """Plan over freshly gathered facts, then carry the plan out."""
    by = confirmed_by or f"health-reconciler@{host}"
    return carry_out(journal, schedule, plan_repairs(gather(), by), now, by)
