"""The three lane-lock scopes a staged run holds on the journal's leases, taken and given back together.

A worker singleton per lane (`pipeline/<lane>/worker`) is taken before the claim selects a task and
held until the run's report; each exclusive resource the commission names for the lane
(`resource/<name>`) likewise; the task lock (`pipeline/<lane>/task/<n>`) from the claim to the report.
All are create-new, heartbeated by `lanes heartbeat`, stale only after 2 x TTL, released with an owner
check by `lanes report`, and removed after a supervisor's `lanes abandon` only once stale.
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any

from factory_schedule.core.pipeline import ClaimIdle, PipelineLanes, PipelineResult, text
from factory_schedule.core.pipeline.lock_scopes import resource_scope, task_scope, worker_scope
from factory_schedule.store import Journal, leases
from factory_schedule.tui.host.clock import SystemClock
from factory_schedule.tui.host.environment import DEFAULT_LEASE_TTL_SECONDS
from factory_schedule.tui.host.process_identity import process_start_time, this_host, this_machine


def resource_scopes(lanes: PipelineLanes, lane: str) -> list[str]:
    state = lanes.state()
    return [resource_scope(name) for name in state.settings.resources(lane)] if state is not None else []


def journal_of(lanes: PipelineLanes) -> Journal:
    """The store's journal under the lanes: the one that holds the leases."""
    if not isinstance(lanes.journal, Journal):
        raise TypeError(f"lane locks are leases of the store's journal, not of a {type(lanes.journal).__name__}")
    return lanes.journal


def _now() -> datetime:
    return SystemClock().now()


def take(journal: Journal, scope: str, runner: str, ttl: float, info: dict[str, Any]) -> None:
    """Take `scope` for `runner`; a lease the same runner already holds (a retried claim) is heartbeated."""
    now = _now()
    try:
        leases.acquire(journal, scope, runner, ttl, now, {**info, "scope": scope})
    except leases.LeaseHeldError as error:
        if error.holder.owner != runner:
            raise
        leases.heartbeat(journal, scope, runner, now)


def release_own(journal: Journal, scopes: list[str], runner: str) -> dict[str, str]:
    """Release each scope the runner holds, checked; what happened to each."""
    released: dict[str, str] = {}
    for scope in scopes:
        holder = leases.get_lease(journal, scope)
        if holder is None:
            released[scope] = "not-held"
        elif holder.owner != runner:
            released[scope] = f"held-by:{holder.owner}"
        else:
            leases.release(journal, scope, runner)
            released[scope] = "released"
    return released


def _session_of(pid: int) -> int | None:
    """The session of the run's process (None when it cannot be read: nothing then keeps the run alive)."""
    try:
        return os.getsid(pid)
    except OSError:
        return None


def claim_with_locks(lanes: PipelineLanes, lane: str, runner: str, *, run: str | None = None,
                     occurrence: str | None = None, ttl: float = DEFAULT_LEASE_TTL_SECONDS, pid: int | None = None,
                     command: str = "lanes claim") -> tuple[PipelineResult | ClaimIdle, list[str]]:
    """Take the lane's worker singleton and resources, claim, then the claimed task's lock: (the answer, the
    locks held). An idle or refused claim gives back what it took (an idle answer holds none)."""
    runner = text("runner", runner)  # before any lock: a lock needs an owner, and a bad token is INVALID
    journal = journal_of(lanes)
    named_run = run
    if named_run is None and occurrence is not None:  # a scheduled run is its occurrence's rhythm
        parts = str(occurrence).split("/")
        named_run = parts[2] if len(parts) == 4 else str(occurrence)
    holder = os.getppid() if pid is None else pid
    # The holder's identity as a segment lease records it (machine, the pid's start time, its session), so
    # health probes the pid only on the machine that took the lock, tells a recycled pid from the run, and
    # counts work the run left running in its session as the run's.
    info = {"runner": runner, "run": named_run, "lane": lane, "pid": holder, "pid_started": process_start_time(holder),
            "session": _session_of(holder), "host": this_host(), "machine": this_machine(), "command": command}
    held: list[str] = []
    try:
        for scope in [worker_scope(lane), *resource_scopes(lanes, lane)]:
            take(journal, scope, runner, ttl, info)
            held.append(scope)
        answer = lanes.claim(lane=lane, run=run, runner=runner, occurrence=occurrence)
        if isinstance(answer, ClaimIdle):
            release_own(journal, held, runner)
            return answer, []
        task = task_scope(lane, answer.result["task"])
        take(journal, task, runner, ttl, {**info, "task": answer.result["task"]})
        held.append(task)
    except BaseException:
        release_own(journal, held, runner)  # an idle or refused claim gives back what it took
        raise
    return answer, held


def report_and_release(lanes: PipelineLanes, lane: str, task: int, runner: str, report: object
                       ) -> tuple[PipelineResult, dict[str, str]]:
    """Report the task, then release the run's locks on the lane with an owner check: (answer, what happened
    to each lock)."""
    answer = lanes.report(lane=lane, task=task, runner=runner, report=report)
    scopes = [task_scope(lane, task), *resource_scopes(lanes, lane), worker_scope(lane)]
    return answer, release_own(journal_of(lanes), scopes, runner)


def release_locks(lanes: PipelineLanes, lane: str, runner: str, task: int | None = None) -> dict[str, str]:
    """Give back the run's locks on the lane (a run that stops without reporting: its task stays claimed)."""
    scopes = [*([task_scope(lane, task)] if task is not None else []), *resource_scopes(lanes, lane),
              worker_scope(lane)]
    return release_own(journal_of(lanes), scopes, runner)
