"""Leases and dead runners: leases stale past 2 x TTL, or with a heartbeat from the future (a clock that was
wrong: no evidence of a live holder), each with the evidence a `reconcile` confirmation needs; a segment
running well past its deadline under a fresh lease; a running segment with no lease (past its deadline: the
owner's to settle)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from factory_schedule.core.results import ScheduleView
from factory_schedule.core.schedule_document import at

from .evidence import lease_evidence, reconcile_confirmation
from .facts import LeaseFact
from .lane_runs import dead_lane_run_finding, dead_lane_runs, hung_lane_run_finding, hung_lane_runs
from .report import Finding

if TYPE_CHECKING:
    from factory_schedule.core.pipeline.model import PipelineState

# A runner sends no call past its segment's deadline and retries its last report for a few minutes: a segment
# still running this long after its deadline, its lease heartbeated, is a run that makes no progress.
HUNG_PAST_DEADLINE = timedelta(minutes=15)


def health_manages(lease: LeaseFact) -> bool:
    """Whether the reconciler acts on this lease by the lease rules: the tick's own worker lease and a segment's
    lease. A staged lane run's locks have their own rule over all of a run's locks (`dead_lane_runs`); any
    other scope guards work health cannot judge."""
    return lease.worker or lease.segment is not None


def lease_findings(leases: Sequence[LeaseFact], view: ScheduleView | None, now: datetime,
                   host: str, pipeline: PipelineState | None = None) -> list[Finding]:
    findings: list[Finding] = []
    dead = {run.runner: run for run in dead_lane_runs(leases, pipeline, now)}
    hung = hung_lane_runs(leases, now)
    for lease in leases:
        if lease.lane_lock and (lease.owner in dead or lease.owner in hung):
            continue  # its run's one finding says it all
        findings.extend(_lease_finding(lease, view, now, host))
    findings.extend(dead_lane_run_finding(run, now, host) for run in dead.values())
    findings.extend(hung_lane_run_finding(runner, locks, now, host) for runner, locks in sorted(hung.items()))
    findings.extend(hung_segment_findings(leases, view, now))
    held = {lease.segment for lease in leases if lease.segment is not None}
    findings.extend(_running_without_lease(view, held, now))
    return findings


def hung_segment_findings(leases: Sequence[LeaseFact], view: ScheduleView | None, now: datetime) -> list[Finding]:
    """Each running segment still running HUNG_PAST_DEADLINE after its deadline while its lease is kept fresh (its
    keeper heartbeats it): the runner makes no progress. Its evidence holds nothing that changes with each
    heartbeat, so the owner is told once."""
    held = {lease.segment: lease for lease in leases if lease.segment is not None}
    findings = []
    for occurrence in view.occurrences if view is not None else []:
        running = occurrence.running_segment
        if running is None:
            continue
        n, runner = running.n, running.runner
        deadline = at(running.deadline)
        lease = held.get((occurrence.id, n))
        if (now <= deadline + HUNG_PAST_DEADLINE or lease is None or lease.owner != runner
                or lease.stale(now) or lease.from_future(now)):
            continue  # a stale or missing lease has its own finding
        evidence = {"occurrence": occurrence.id, "segment": n, "runner": runner, "deadline": deadline.isoformat(),
                    "scope": lease.scope, "pid": lease.info.get("pid"), "tick_pid": lease.info.get("tick_pid"),
                    "host": lease.info.get("host"), "process_alive": lease.process_alive}
        findings.append(Finding(
            "run-hung", "error",
            f"runner {runner} of {occurrence.id} segment {n} (pid {evidence['pid']}) still runs "
            f"{int((now - deadline).total_seconds() // 60)} minutes past its deadline {deadline.isoformat()} while "
            "its lease is heartbeated: it makes no progress; stop it (`kill` its pid) and the next tick "
            "reconciles it", evidence))
    return findings


def _lease_finding(lease: LeaseFact, view: ScheduleView | None, now: datetime, host: str) -> list[Finding]:
    evidence = lease_evidence(lease, now)
    process_gone = lease.process_alive is False
    gone_words = "; its process is gone" + (" (its pid was recycled)" if lease.pid_recycled else "")
    guarding = lease.segment is not None and (
        view is None or view.segment_running(lease.segment[0], lease.segment[1], lease.owner))
    if not health_manages(lease):
        if not (lease.stale(now) or lease.from_future(now)):
            return []
        return [Finding(
            "stale-lease", "warning",
            f"{lease.scope} held by {lease.owner} has had no heartbeat since {evidence['last_heartbeat']}"
            + (gone_words if process_gone else "") + (
                ": its run's death is not conclusive (another of its locks fresh, its process alive or unseen, or "
                "the lanes' state unreadable), so the owner decides (`lanes abandon` after checking its artifacts)"
                if lease.lane_lock else ": health does not manage this scope, so the owner decides"), evidence)]
    if lease.from_future(now):
        return [Finding(
            "lease-heartbeat-in-future", "warning",
            f"{lease.scope} held by {lease.owner} has a heartbeat in the future ({evidence['last_heartbeat']}): "
            "a clock was wrong, so it proves no live holder" + (gone_words if process_gone else "")
            + ("; its segment still runs, so the owner decides" if guarding else ""),
            evidence, repairable=process_gone and not guarding)]
    if not lease.stale(now):
        return []
    if lease.segment is None:
        return [Finding(
            "stale-worker-lease" if lease.worker else "stale-lease", "warning",
            f"{lease.scope} held by {lease.owner} has had no heartbeat since {evidence['last_heartbeat']}"
            + (gone_words if process_gone else ""),
            evidence, repairable=process_gone)]
    occurrence_id, segment = lease.segment
    if process_gone and not guarding:
        return [Finding(
            "stale-lease-segment-ended", "warning",
            f"{lease.scope} is stale, its process is gone and its segment is no longer running: safe to remove "
            "(--repair)", evidence, repairable=True)]
    if process_gone:
        evidence["confirmation"] = reconcile_confirmation(evidence, "<supervisor>")
        return [Finding(
            "dead-runner", "error",
            f"runner {evidence['runner']} of {occurrence_id} segment {segment} is gone (pid {evidence['pid']} on "
            f"{host}{', recycled' if lease.pid_recycled else ''}) and its lease is stale past 2 x TTL: "
            "`health --repair` (or the next tick) reconciles it as the supervisor; its call in flight, if "
            "any, ends as lost and is never sent again", evidence, repairable=True)]
    if lease.process_alive:
        still = "" if guarding else " (its segment has ended)"
        left = [pid for pid in lease.living_pids if pid != evidence["pid"]]
        who = (f"runner {evidence['runner']} (pid {evidence['pid']}) is alive" if not left
               or evidence["pid"] in lease.living_pids else
               f"runner {evidence['runner']} (pid {evidence['pid']}) is gone but processes of its run live "
               f"(pids {', '.join(map(str, left))}: its call or the tools it started)")
        return [Finding(
            "stale-lease-live-process", "warning",
            f"{who} and {lease.scope} has had no heartbeat since {evidence['last_heartbeat']}{still}: hung, or "
            "its tick died; it is not reconciled while any of them lives; the owner decides", evidence)]
    return [Finding(
        "stale-lease-other-host", "warning",
        f"{lease.scope} is stale and held from {evidence['host']}; this host cannot see its process, so the "
        "owner decides", evidence)]


def _running_without_lease(view: ScheduleView | None, held: set[tuple[str, int]], now: datetime) -> list[Finding]:
    """Each running segment with no lease. Health cannot tell whether its runner lives, so it never reconciles
    it; until HUNG_PAST_DEADLINE after its deadline that is information (a runner started by hand), after it the
    segment holds its lane up and only the owner can settle it: an error told once (its evidence never
    changes)."""
    findings = []
    for occurrence in view.occurrences if view is not None else []:
        running = occurrence.running_segment
        if running is None or (occurrence.id, running.n) in held:
            continue
        deadline = at(running.deadline)
        evidence = {"occurrence": occurrence.id, "segment": running.n, "runner": running.runner}
        if now > deadline + HUNG_PAST_DEADLINE:
            findings.append(Finding(
                "run-unleased-past-deadline", "error",
                f"{occurrence.id} segment {running.n} still runs under {running.runner} with no lease "
                f"{int((now - deadline).total_seconds() // 60)} minutes past its deadline {deadline.isoformat()}: "
                "health cannot tell whether its runner lives, so it never reconciles it and the lane waits; if "
                "its runner is gone, `factory-schedule reconcile` it, else stop it",
                {**evidence, "deadline": deadline.isoformat()}))
            continue
        findings.append(Finding(
            "running-without-lease", "info",
            f"{occurrence.id} segment {running.n} runs under {running.runner} with no lease (not started by "
            "`tick`, or its lease was removed): health cannot tell whether its runner lives", evidence))
    return findings
