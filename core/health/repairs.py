"""The reconciler's part of the verdict: which leases the shell may act on.

A dead runner is reconciled only on conclusive evidence (its process is provably gone from this host, its
lease had no heartbeat for 2 x TTL, and the schedule still shows its segment running); a lease is removed
only once it is stale (or from the future), its process is provably gone, and what it guarded is no longer
running (or is reconciled in the same pass). A staged lane's run is confirmed gone on the same evidence over
all of its locks and a pipeline state that reads: each task it still claims is abandoned as the supervisor
first (an interrupted revision is then a failed start of its round), and its locks are removed after.
Anything on another host, with a live process, or of another scope stays the owner's finding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from factory_schedule.core.pipeline.lock_scopes import task_scope

from .evidence import lease_evidence, reconcile_confirmation
from .facts import HealthFacts
from .lane_runs import dead_lane_runs
from .leases import health_manages

RepairAction = Literal["reconcile", "abandon-task", "remove-lease"]


@dataclass(frozen=True)
class PlannedRepair:
    """One repair the evidence licenses: reconcile a dead runner's segment (its lease goes after it), or
    remove a lease that guards nothing. `confirmation` is what the engine's `reconcile` records."""

    action: RepairAction
    scope: str
    owner: str
    reason: str
    evidence: dict[str, Any]  # JSON
    from_future: bool = False
    occurrence: str | None = None
    confirmation: dict[str, Any] | None = None  # JSON
    lane: str | None = None  # abandon-task: the staged lane and its task
    task: int | None = None
    after: str | None = None  # a removal that waits for this runner's abandon (dropped if that is refused)


def plan_repairs(facts: HealthFacts, confirmed_by: str | None = None) -> tuple[PlannedRepair, ...]:
    """The repairs conclusive evidence allows, in order: each reconcile before any lease removal.

    Never a lease whose process lives or cannot be seen (another host); never from TTL alone (it must be
    stale past 2 x TTL, or carry a heartbeat from the future); a segment lease only once its segment is no
    longer running, or is reconciled first (a heartbeat from the future is no evidence of 2 x TTL without
    one, so such a segment stays the owner's)."""
    view = facts.view
    reconciles: list[PlannedRepair] = []
    removals: list[PlannedRepair] = []
    by = confirmed_by or f"health-reconciler@{facts.host}"
    for lease in facts.leases:
        if lease.process_alive is not False or not health_manages(lease):
            continue
        future = lease.from_future(facts.now)
        if not (future or lease.stale(facts.now)):
            continue
        evidence = lease_evidence(lease, facts.now)
        gone = "its process is gone" + (" (its pid was recycled)" if lease.pid_recycled else "")
        if future:
            gone += " and its heartbeat is in the future"
        if lease.segment is not None:
            occurrence_id, segment = lease.segment
            if view is None:
                continue
            if view.segment_running(occurrence_id, segment, lease.owner):
                if future:
                    continue
                # The segment runs under the lease's owner, whatever the lease's info says of its runner.
                confirmation = {**reconcile_confirmation(evidence, by), "runner": lease.owner}
                reconciles.append(PlannedRepair(
                    "reconcile", lease.scope, lease.owner, f"{gone}, its lease stale since "
                    f"{evidence['stale_since']} and its segment still running", evidence, future, occurrence_id,
                    confirmation))
                removals.append(PlannedRepair(
                    "remove-lease", lease.scope, lease.owner, f"{gone} and its segment was reconciled", evidence,
                    future, occurrence_id))
                continue
            removals.append(PlannedRepair("remove-lease", lease.scope, lease.owner,
                                          f"{gone} and its segment is no longer running", evidence, future,
                                          occurrence_id))
            continue
        removals.append(PlannedRepair("remove-lease", lease.scope, lease.owner, gone, evidence, future))
    for run in dead_lane_runs(facts.leases, facts.pipeline, facts.now):
        evidence = lease_evidence(run.locks[0], facts.now)
        for lane, n, stage in run.claimed:
            confirmation = {**reconcile_confirmation(evidence, by), "runner": run.runner}
            reconciles.append(PlannedRepair(
                "abandon-task", task_scope(lane, n), run.runner,
                f"its process is gone and its locks are stale since {evidence['stale_since']} while it claims "
                f"{lane} task {n} ({stage})", evidence, confirmation=confirmation, lane=lane, task=n))
        for lock in run.locks:
            removals.append(PlannedRepair(
                "remove-lease", lock.scope, lock.owner,
                "its run's process is gone" + (" and its claim was reconciled" if run.claimed else
                                               " and it claims no task"),
                lease_evidence(lock, facts.now), after=run.runner if run.claimed else None))
    return (*reconciles, *removals)


