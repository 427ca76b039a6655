"""The health reconciler's hands: carry out the repairs `core.health.plan_repairs` licenses, and journal each.

The repairs, each reversible local drift and none a decision:

- a dead runner's segment (its process provably gone from this host, its lease
  without a heartbeat for 2 x TTL) is reconciled through the engine's own
  `reconcile`, as the supervisor's confirmation with the evidence
  (`confirmedBy` "health-reconciler@<host>"). The engine's rules apply as for a
  person's confirmation: a call in flight ends `lost` and is never sent again,
  and the occurrence goes `interrupted`, so the lane's next tick resumes it;
- a staged lane's run provably gone (every lock it holds stale past 2 x TTL,
  its process gone from this host) is confirmed gone through the lanes' own
  `abandon`, as the supervisor with the evidence, for each task it still
  claims: an interrupted revision is recorded as a failed start of its
  reserved round (requeued within the repair cap, else escalated to the
  owner), any other task returns to pending (at most maxRetries times, then
  it escalates to the owner too); its locks are removed after;
- a lease that guards nothing any more (stale or from the future, its process
  gone, its segment ended or just reconciled) is removed, and the removal is
  recorded as a `lease-removed` event on the journal's `health/repairs`
  aggregate (hash-chained like every event, beside the schedule's own);
- a lane's scheduled firing that left no record in the schedule (a night past
  its slot and grace, neither admitted nor coalesced) gets a compact
  `firing-recorded` event there: `no-op` when the lane still held an earlier
  occurrence, `error` when nothing was admitted though it was free. One per
  night (the command ID is the night's occurrence ID), so every firing has one.

Everything is re-checked at the moment it happens: the removal's record is
written first and its DELETE after, carrying the staleness test and the recorded
holder's identity (so no removal is ever missing from the journal), and a
reconcile the engine refuses (the runner ended its segment meanwhile, another
supervisor was first) removes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import pendulum

from factory_schedule.core import LifecycleSchedule, ManualClock, ScheduleError
from factory_schedule.core.health import (
    FIRING_RECORDED,
    HEALTH_AGGREGATE,
    LEASE_REMOVED,
    FiringRecord,
    PlannedRepair,
    Repair,
    counted_record,
    plan_repairs,
)
from factory_schedule.core.pipeline import PipelineError, PipelineLanes
from factory_schedule.store import Journal, JournalError, leases
from factory_schedule.tui.host.health_records import append_once


def carry_out(journal: Journal, schedule: LifecycleSchedule, plans: tuple[PlannedRepair, ...], now: datetime,
              by: str) -> list[Repair]:
    """Each planned repair in order; a reconcile the engine refuses drops the removal that depended on it."""
    repairs: list[Repair] = []
    refused: set[str] = set()
    for plan in plans:
        if plan.action == "abandon-task":
            repairs.append(_abandon_task(journal, plan, now, by, refused))
            continue
        if plan.action == "reconcile":
            try:
                result = schedule.reconcile(occurrence_id=plan.occurrence, confirmation=plan.confirmation)
            except ScheduleError as error:
                refused.add(plan.scope)
                repairs.append(Repair("reconcile-refused", plan.scope,
                                      f"did not reconcile {plan.occurrence}: {error.code}: {error.message}",
                                      plan.evidence))
                continue
            if getattr(result, "replayed", False):
                # Another repairer (or an earlier pass) recorded this very reconcile first: the engine
                # replayed its answer, and nothing more was reconciled by this pass.
                repairs.append(Repair(
                    "already-reconciled", plan.scope,
                    f"{plan.occurrence} (runner {plan.owner}) was already reconciled as {result.command_id}; "
                    "nothing more was done", {**plan.evidence, "command_id": result.command_id}))
                continue
            calls = result.occurrence.calls if result.occurrence is not None else []
            lost = [call.k for call in calls if call.outcome == "lost" and call.segment == plan.evidence.get("segment")]
            repairs.append(Repair(
                "reconciled-dead-runner", plan.scope,
                f"reconciled {plan.occurrence} (runner {plan.owner}): {plan.reason}; recorded as "
                f"{result.command_id} confirmed by {by}" + (f"; calls ended lost: {lost}" if lost else ""),
                {**plan.evidence, "command_id": result.command_id, "confirmation": plan.confirmation}))
            continue
        if plan.scope in refused or (plan.after is not None and plan.after in refused):
            continue
        intended = _intended_removal(journal, plan, now)
        if intended is None:
            continue
        # The record first, the DELETE after: the two are separate transactions, and a removal without its
        # record would be lost from the journal, while a record whose DELETE then finds the lease changed
        # (a heartbeat landed, it was released) is a harmless note of an intent that did not happen.
        record = record_lease_removal(journal, intended, plan.reason, by, now)
        removed = _remove(journal, plan, intended, now)
        if removed is None:
            continue
        repairs.append(Repair(
            "removed-stale-lease", plan.scope,
            f"removed {plan.scope} held by {plan.owner}: stale since {removed.stale_at.isoformat()} and "
            f"{plan.reason}; recorded as {record}", {**plan.evidence, "command_id": record}))
    return repairs


def _abandon_task(journal: Journal, plan: PlannedRepair, now: datetime, by: str, refused: set[str]) -> Repair:
    """Confirm a dead staged-lane run gone through the lanes' own `abandon`, as the supervisor: a revision's
    interrupted start becomes a failed start of its round (requeued within the cap, else escalated), any other
    task returns to pending within its retry cap, else escalates. A refusal (the run reported meanwhile, another
    supervisor was first with another answer) keeps the run's locks."""

    assert plan.lane is not None and plan.task is not None and plan.confirmation is not None
    lanes = PipelineLanes(journal, ManualClock(pendulum.instance(now)))
    try:
        result = lanes.abandon(lane=plan.lane, task=plan.task, runner=plan.owner,
                               confirmed_by=plan.confirmation["confirmedBy"], evidence=plan.confirmation["evidence"])
    except PipelineError as error:
        refused.add(plan.owner)
        return Repair("abandon-refused", plan.scope,
                      f"did not confirm {plan.lane} task {plan.task} of run {plan.owner} gone: {error.code}: "
                      f"{error.message}", plan.evidence)
    if result.replayed:
        return Repair("already-reconciled", plan.scope,
                      f"{plan.lane} task {plan.task} (run {plan.owner}) was already confirmed gone as "
                      f"{result.command_id}; nothing more was done", {**plan.evidence, "command_id": result.command_id})
    answer = result.result
    what = {"pending": "returned to pending", "escalated": "escalated to the owner (its cap is spent)"}.get(
        str(answer.get("state")), str(answer.get("state")))
    if "failedStarts" in answer:
        what = f"recorded as failed start {answer['failedStarts']} of its revision round, {what}"
    elif "abandons" in answer:
        what = f"abandoned {answer['abandons']} time(s) of its retry cap {answer.get('cap')}, {what}"
    return Repair("reconciled-dead-lane-run", plan.scope,
                  f"confirmed run {plan.owner} of {plan.lane} task {plan.task} gone: {plan.reason}; the task was "
                  f"{what}; recorded as {result.command_id} confirmed by {by}",
                  {**plan.evidence, "command_id": result.command_id, "confirmation": plan.confirmation,
                   "result": answer})


def _intended_removal(journal: Journal, plan: PlannedRepair, now: datetime) -> leases.Lease | None:
    """The lease as it stands, if it is still the planned owner's and still removable (stale, or from the
    future when so planned)."""
    holder = leases.get_lease(journal, plan.scope)
    if holder is None or holder.owner != plan.owner:
        return None
    if not plan.from_future and not leases.stale(holder, now):
        return None
    return holder


def _remove(journal: Journal, plan: PlannedRepair, intended: leases.Lease, now: datetime) -> leases.Lease | None:
    if not plan.from_future:
        return leases.remove_stale(journal, plan.scope, now, expected=intended)  # its DELETE re-checks staleness
    try:  # owner-conditioned: a holder that took the scope meanwhile keeps it
        leases.release(journal, plan.scope, plan.owner)
    except leases.LeaseOwnerError:
        return None
    return intended


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
    """Append one `lease-removed` event to the health aggregate, before the removal itself; its command ID
    names the lease exactly (scope, owner, last heartbeat), so recording the same removal twice replays
    instead of doubling. When it returns, a record of this exact lease's removal is in the journal (this
    one, or an earlier repairer's, whose first record stands); a record that cannot be written raises, so
    the caller never removes the lease."""
    heartbeat_ms = round(lease.heartbeat_at.timestamp() * 1000)
    command_id = f"health/lease-removed/{lease.scope}/{lease.owner}/{heartbeat_ms}"
    record = _removal_record(lease, reason, by, now)
    decide = counted_record(LEASE_REMOVED, record, command_id)
    if not append_once(journal, HEALTH_AGGREGATE, command_id, record, decide) and journal.receipt(command_id) is None:
        raise JournalError(f"the removal of {lease.scope} could not be recorded as {command_id}")
    return command_id


def record_missing_firings(journal: Journal, records: list[FiringRecord], by: str, now: datetime) -> list[Repair]:
    """Write the compact no-op/error record of each scheduled firing that has none, once per night."""
    repairs = []
    for record in records:
        command_id = f"health/firing/{record.occurrence}"
        if journal.receipt(command_id) is not None:
            continue
        data = {**record.doc(), "recordedBy": by, "recordedAt": now.isoformat()}
        if append_once(journal, HEALTH_AGGREGATE, command_id, record.doc(),
                       counted_record(FIRING_RECORDED, data, command_id)):
            repairs.append(Repair(
                "recorded-firing", record.occurrence,
                f"recorded the {record.kind} firing of {record.occurrence} at {record.slot}: {record.reason}",
                {**record.doc(), "command_id": command_id}))
    return repairs


def firing_records_written(journal: Journal) -> list[dict[str, Any]]:
    """Every compact firing record health wrote, oldest first."""
    return [event.data for event in journal.iter_history(HEALTH_AGGREGATE) if event.type == FIRING_RECORDED]


def removal_records(journal: Journal) -> list[dict[str, Any]]:
    """Every lease removal the reconciler recorded, oldest first."""
    return [event.data for event in journal.iter_history(HEALTH_AGGREGATE) if event.type == LEASE_REMOVED]


def repair(journal: Journal, schedule: LifecycleSchedule, now: datetime, host: str, gather: Callable[[], Any],
           confirmed_by: str | None = None,
           firings: Callable[[], list[FiringRecord]] | None = None) -> list[Repair]:
    """Plan over freshly gathered facts, carry the plan out, then write the missing firing records (after
    the reconciles, which may let a lane admit again)."""
    by = confirmed_by or f"health-reconciler@{host}"
    repairs = carry_out(journal, schedule, plan_repairs(gather(), by), now, by)
    if firings is not None:
        repairs += record_missing_firings(journal, firings(), by, now)
    return repairs
