"""The staged lanes' runs over all of their locks (worker singleton, task lock, exclusive resources): a run
confirmed gone (each lock stale past 2 x TTL, none from the future, its process provably gone from this host),
and a run alive whose locks went stale (stopped or hung)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from .evidence import lease_evidence
from .facts import LeaseFact
from .report import Finding

if TYPE_CHECKING:
    from factory_schedule.core.pipeline.model import PipelineState


@dataclass(frozen=True)
class DeadLaneRun:
    """A staged lane's run whose death is conclusive: every lock it holds is stale past 2 x TTL (none from the
    future) and its recorded process is provably gone from this host; `claimed` are the open tasks the
    stored lanes still show it claiming, as (lane, task, stage)."""

    runner: str
    locks: tuple[LeaseFact, ...]
    claimed: tuple[tuple[str, int, str], ...]


def dead_lane_runs(leases: Sequence[LeaseFact], pipeline: PipelineState | None,
                   now: datetime) -> list[DeadLaneRun]:
    """The staged lanes' runs the reconciler may confirm gone. Only over a state that reads (else what the run
    claimed cannot be told), and only when all of the run's locks agree: one fresh or unseen lock, or a live
    process, keeps the run the owner's."""
    if pipeline is None:
        return []
    locks_by_owner: dict[str, list[LeaseFact]] = {}
    for lease in leases:
        if lease.lane_lock:
            locks_by_owner.setdefault(lease.owner, []).append(lease)
    runs = []
    for runner, locks in sorted(locks_by_owner.items()):
        if not all(lock.process_alive is False and lock.stale(now) and not lock.from_future(now) for lock in locks):
            continue
        claimed = tuple((lane.lane, task.n, task.stage) for lane in (pipeline.promotion, pipeline.maturation)
                        for task in lane.tasks if task.claimed_by == runner)
        runs.append(DeadLaneRun(runner, tuple(locks), claimed))
    return runs


def dead_lane_run_finding(run: DeadLaneRun, now: datetime, host: str) -> Finding:
    first = run.locks[0]
    evidence = {**lease_evidence(first, now), "locks": [lock.scope for lock in run.locks],
                "claimed": [{"lane": lane, "task": n, "stage": stage} for lane, n, stage in run.claimed]}
    if not run.claimed:
        return Finding(
            "stale-lease", "warning",
            f"the staged lanes' run {run.runner} holds {', '.join(evidence['locks'])} with no heartbeat since "
            f"{evidence['last_heartbeat']}, its process is gone from {host} and it claims no task: its locks "
            "guard nothing (--repair removes them)", evidence, repairable=True)
    tasks = ", ".join(f"{lane} task {n} ({stage})" for lane, n, stage in run.claimed)
    return Finding(
        "dead-lane-run", "error",
        f"the staged lanes' run {run.runner} is gone (pid {evidence['pid']} on {host}) and its locks are stale "
        f"past 2 x TTL while it claims {tasks}: `health --repair` (or the next tick) confirms it as the "
        "supervisor; an interrupted revision counts as a failed start of its round, any other task returns to "
        "pending", evidence, repairable=True)


def hung_lane_runs(leases: Sequence[LeaseFact], now: datetime) -> dict[str, list[LeaseFact]]:
    """The staged lanes' runs whose process lives on this host while one of their locks has had no heartbeat for
    2 x TTL: a run heartbeats its locks through its call, so a live one that stopped is stopped or hung."""
    locks_by_owner: dict[str, list[LeaseFact]] = {}
    for lease in leases:
        if lease.lane_lock:
            locks_by_owner.setdefault(lease.owner, []).append(lease)
    return {runner: locks for runner, locks in locks_by_owner.items()
            if any(lock.process_alive is True for lock in locks)
            and any(lock.stale(now) and not lock.from_future(now) for lock in locks)}


def hung_lane_run_finding(runner: str, locks: list[LeaseFact], now: datetime, host: str) -> Finding:
    stale = min((lock for lock in locks if lock.stale(now)), key=lambda lock: lock.heartbeat_at)
    evidence = {**lease_evidence(stale, now), "locks": sorted(lock.scope for lock in locks)}
    return Finding(
        "run-hung", "error",
        f"the staged lanes' run {runner} (pid {evidence['pid']} on {host}) is alive but has not heartbeated "
        f"{stale.scope} since {evidence['last_heartbeat']}: it is stopped or hung and its lane waits for it; "
        "stop it (`kill` its pid) and health confirms it gone once its locks are stale", evidence)


