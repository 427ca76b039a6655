"""The staged lanes' claims: a run takes its lane's next task (activating new work when the lane may start
some), a resumed segment takes over its occurrence's task, and a supervisor hands back a task whose run is gone."""

from __future__ import annotations

from typing import Any

from pendulum import DateTime

from ..pipeline_settings import PipelineSettings
from ..schedule_document import at
from .errors import PipelineError
from .model import (
    MAX_CONSUMED,
    MAX_PARTIAL,
    Escalation,
    LaneRecord,
    PipelineState,
    Task,
    Work,
)
from .rules import (
    Idle,
    PipelineChange,
    copy_with,
    current_work,
    eligible,
    go_backlog_idle,
    instant_after,
    producers,
    work_instant,
)
from .transitions import Next, apply_transition, escalate


def _kind_of_run(settings: PipelineSettings, lane: str, run: str) -> str:
    if run == settings.scheduler(lane):
        return "work"
    if run == settings.reviewer(lane):
        return "review"
    raise PipelineError("WRONG_RUN", f"run {run!r} is neither {lane}'s scheduler ({settings.scheduler(lane)}) nor "
                                     f"its reviewer ({settings.reviewer(lane)})")


def claim(state: PipelineState, lane_name: str, run: str, runner: str, now: DateTime) -> PipelineChange | Idle:
    kind = _kind_of_run(state.settings, lane_name, run)
    lane = state.lane(lane_name)
    pending = [task for task in lane.tasks if task.kind == kind and task.claimed_by is None]
    if kind == "review":
        own = [task for task in pending if runner in producers(lane.work_of(task.candidate))]  # type: ignore[arg-type]
        pending = [task for task in pending if task not in own]
        if not pending:
            reason = "self-review" if own else "nothing-to-review"
            return Idle(lane_name, reason, "only artifacts this runner produced wait for review" if own
                        else "no review task is pending")
    if pending:
        task = pending[0]
        if task.stage == "decide":  # a decide that finds no room for its GO waits, idle, never refused LIMIT
            full = go_backlog_idle(state, 1)
            if full is not None:
                return full
        stamp = work_instant(lane, task.candidate, now)
        claimed = copy_with(task, claimed_by=runner, claimed_run=run, claimed_at=stamp)
        tasks = tuple(claimed if t.n == task.n else t for t in lane.tasks)
        new = copy_with(state, **{lane_name: copy_with(lane, tasks=tasks)}, updated_at=stamp)
        return PipelineChange("task-claimed", {"lane": lane_name, "task": task.n, "runner": runner, "run": run,
                                       "done": [], "enqueued": []}, new,
                      _claim_result(claimed, current_work(lane, task.candidate), False))
    return _activate(state, lane, run, runner, now)


def hand_over(state: PipelineState, lane_name: str, n: int, run: str, runner: str, occurrence: str,
              earlier: frozenset[str], now: DateTime) -> PipelineChange | Idle:
    """A resumed segment of a scheduled run takes over the task an earlier segment of the same occurrence
    claimed. The schedule has ended that segment (only the running segment's token may claim with the
    occurrence), so the earlier token can no longer report, and without this the task would stay claimed by
    a run that is gone. Nothing moves to done and nothing is enqueued; a task no longer claimed by one of the
    occurrence's `earlier` segment tokens is answered idle, saying whether one of them reported it or a
    supervisor handed it back. A review task is never handed to one of its producers."""
    lane = state.lane(lane_name)
    task = lane.task(n)
    if task is None or task.claimed_by not in earlier or task.claimed_run != run or task.claimed_by == runner:
        return _no_longer_claimed(lane, n, occurrence, earlier)
    work = lane.work_of(task.candidate)
    if task.kind == "review" and work is not None and runner in producers(work):
        return Idle(lane_name, "self-review", f"task {n} reviews artifacts this runner produced")
    stamp = work_instant(lane, task.candidate, now)
    claimed = copy_with(task, claimed_by=runner, claimed_at=stamp)
    new_lane = copy_with(lane, tasks=tuple(claimed if t.n == n else t for t in lane.tasks))
    new = copy_with(state, **{lane_name: new_lane}, updated_at=stamp)
    data = {"lane": lane_name, "task": n, "runner": runner, "run": run, "from": task.claimed_by,
            "occurrence": occurrence, "done": [], "enqueued": []}
    return PipelineChange("task-handed-over", data, new,
                  {**_claim_result(claimed, current_work(lane, task.candidate), False), "resumedFrom": task.claimed_by})


def _no_longer_claimed(lane: LaneRecord, n: int, occurrence: str, earlier: frozenset[str]) -> Idle:
    """Why a resumed segment has no task to take over. `occurrence-reported`: an earlier segment reported it, so
    the occurrence's work is done. `occurrence-handed-back`: a supervisor confirmed an earlier segment's run gone
    and returned the task (pending again, or escalated to the owner at its cap): the occurrence did not do its
    work, and its calls' effect stays on its record, so it never settles `completed`."""
    done = next((d for d in lane.done if d.n == n), None)
    if done is not None and done.by in earlier:
        return Idle(lane.lane, "occurrence-reported", f"{occurrence} reported task {n} ({done.stage}) in an "
                                                      "earlier segment")
    task = lane.task(n)
    if task is not None and task.claimed_by is None:
        where = "it is pending again, for the lane's next run"
    elif task is not None:
        where = f"it is claimed by {task.claimed_by}"
    elif done is not None:
        where = f"{done.by} closed it" + (f" and enqueued task {done.enqueued}" if done.enqueued else "")
    else:
        where = "it is no longer open"
    return Idle(lane.lane, "occurrence-handed-back", f"{occurrence} claimed task {n} in an earlier segment, "
                                                     f"whose run a supervisor confirmed gone: {where}")


def _claim_result(task: Task, work: Work, activated: bool) -> dict[str, Any]:
    """What a run needs to do its task without tracking the lane itself: the task, its stage and candidate, what
    a review reviews, and for maturation the GO decision the work started from and its current slice (what an
    intake, slice, verify or review report names)."""
    result = {"kind": "claimed", "lane": task.lane, "task": task.n, "stage": task.stage, "candidate": task.candidate,
              "activated": activated, "subject": task.subject.doc() if task.subject else None}
    if task.lane == "maturation":
        result.update(decision=work.decision, slice=work.slices or None)
    return result


def _activate(state: PipelineState, lane: LaneRecord, run: str, runner: str, now: DateTime) -> PipelineChange | Idle:
    """Enqueue and claim the lane's activation task, when the lane may start new work."""
    settings = state.settings
    if lane.tasks:
        waiting = lane.tasks[0]
        reason = {"review": "awaiting-review", "owner": "awaiting-owner"}.get(waiting.kind, "claimed")
        if len(lane.wip) >= settings.wip(lane.lane):
            return Idle(lane.lane, reason, f"task {waiting.n} ({waiting.stage}) is {reason.replace('-', ' ')}")
    if len(lane.wip) >= settings.wip(lane.lane):
        return Idle(lane.lane, "wip-full", f"{lane.lane} holds {len(lane.wip)} of WIP {settings.wip(lane.lane)}")
    if lane.cooldown_until is not None and now < at(lane.cooldown_until):
        return Idle(lane.lane, "cooldown", f"the next selection waits until {lane.cooldown_until}")
    n = state.next_task
    if lane.lane == "promotion":
        pool = eligible(state)
        if len(pool) < settings.threshold:
            return Idle(lane.lane, "below-threshold",
                        f"{len(pool)} eligible candidates, below the portfolio threshold {settings.threshold}")
        full = go_backlog_idle(state, len(lane.wip) + 1)  # every work promotion holds, and this one, may GO
        if full is not None:
            return full
        chosen = pool[0]
        assert state.top_n is not None  # an eligible candidate is listed by the latest Top-N
        # A work starts no earlier than the evidence it starts from: the Top-N that lists it.
        stamp = instant_after(f"the Top-N of {state.top_n.week}", [state.top_n.recorded_at], now)
        work = Work(candidate=chosen.id, product=chosen.product, stage="select", started_at=stamp)
        consumed = (*state.consumed, chosen.id)[-MAX_CONSUMED:]
        extra: dict[str, Any] = {"consumed": consumed}
        task = Task(n=n, lane="promotion", stage="select", kind="work", candidate=chosen.id, enqueued_at=stamp,
                    claimed_by=runner, claimed_run=run, claimed_at=stamp)
    else:
        held = {work.candidate for work in lane.wip}
        gos = [d for d in state.decisions if d.verdict == "GO" and not d.consumed and d.candidate not in held]
        if not gos:
            return Idle(lane.lane, "no-go", "no durable GO decision waits for maturation")
        decision = min(gos, key=lambda d: (d.n, d.candidate))  # oldest unconsumed gate decision, then ID
        stamp = instant_after(f"GO decision {decision.n}", [decision.at], now)
        work = Work(candidate=decision.candidate, product=decision.product, stage="intake", started_at=stamp,
                    decision=decision.n)
        extra = {"decisions": tuple(copy_with(d, consumed=True) if d.n == decision.n else d for d in state.decisions)}
        task = Task(n=n, lane="maturation", stage="intake", kind="work", candidate=decision.candidate,
                    enqueued_at=stamp, claimed_by=runner, claimed_run=run, claimed_at=stamp)
    new_lane = copy_with(lane, wip=(*lane.wip, work), tasks=(*lane.tasks, task))
    new = copy_with(state, **{lane.lane: new_lane}, next_task=n + 1, updated_at=stamp, **extra)
    data = {"lane": lane.lane, "task": n, "runner": runner, "run": run, "candidate": task.candidate,
            "done": [], "enqueued": [n]}
    return PipelineChange("task-claimed", data, new, _claim_result(task, work, True))


def abandon(state: PipelineState, lane_name: str, n: int, runner: str, confirmed_by: str, evidence: str,
            now: DateTime, partial: tuple[str, ...] = ()) -> PipelineChange:
    """A supervisor confirms a claimed task's run is gone. A revision (repair) task's interrupted start is
    `repair_start_failed`; any other task returns to pending, as itself (nothing of it was validated), within
    its retry cap (`_abandoned`)."""
    lane = state.lane(lane_name)
    task = lane.task(n)
    if task is None:
        raise PipelineError("UNKNOWN_TASK", f"{lane_name} has no open task {n}")
    if task.claimed_by != runner:
        raise PipelineError("NOT_OWNER", f"task {n} is not claimed by {runner}")
    stamp = work_instant(lane, task.candidate, now)
    if task.revision is not None:
        return repair_start_failed(state, lane, task, runner, confirmed_by, evidence, partial, stamp)
    if partial:
        raise PipelineError("INVALID", f"task {n} ({task.stage}) is not a revision: partial output is kept only "
                                       "for an interrupted revision")
    return _abandoned(state, lane, task, runner, confirmed_by, evidence, stamp)


def _abandoned(state: PipelineState, lane: LaneRecord, task: Task, runner: str, confirmed_by: str, evidence: str,
               stamp: str) -> PipelineChange:
    """An ordinary task whose run is confirmed gone is retried as a failed build is: back to pending, as itself,
    at most `maxRetries` times, so a run killed every night does not re-send (and pay for) its task every
    night. The abandon past that cap escalates the task to the owner, whose `revise` sends it once more."""
    work = lane.work_of(task.candidate)
    assert work is not None  # the state's validator ties every task to current work
    abandons = task.abandons + 1
    cap = state.settings.max_retries
    details = {"runner": runner, "confirmedBy": confirmed_by, "evidence": evidence, "abandons": abandons,
               "cap": cap}
    if task.abandons < cap:
        released = copy_with(task, claimed_by=None, claimed_run=None, claimed_at=None, abandons=abandons)
        new_lane = copy_with(lane, tasks=tuple(released if t.n == task.n else t for t in lane.tasks))
        new = copy_with(state, **{lane.lane: new_lane}, updated_at=stamp)
        data = {"lane": lane.lane, "task": task.n, **details, "outcome": "requeued", "done": [], "enqueued": []}
        return PipelineChange("task-abandoned", data, new,
                      {"lane": lane.lane, "task": task.n, "state": "pending", "abandons": abandons, "cap": cap})
    reason = (f"the run of task {task.n} ({task.stage}) of {task.candidate} was confirmed gone {abandons} times; "
              f"its retry cap {cap} is spent")
    escalation = Escalation(stage=task.stage, reason=reason, at=stamp, abandons=abandons, subject=task.subject)
    step = Next(copy_with(work, stage="escalation", escalation=escalation), "escalation")
    change = apply_transition(state, lane, task, step, confirmed_by, stamp, details)
    return PipelineChange("task-abandoned", {**change.event_data, "outcome": "escalated"}, change.state,
                  {**change.result, "state": "escalated", "abandons": abandons, "cap": cap})


def repair_start_failed(state: PipelineState, lane: LaneRecord, task: Task, runner: str, confirmed_by: str,
                        evidence: str, partial: tuple[str, ...], stamp: str) -> PipelineChange:
    """An interrupted revision claim without a validated report: a failed start of the round already reserved
    for it (the reviewer's reject reserved it), never a fresh pending repair. Its failure and the partial
    output its supervisor names are kept on the task. It is requeued, as the same task with the same parent,
    input and critic log, only while the repair cap (`maxRevisions` plus the owner's grants) has a round left,
    which the requeue takes; otherwise it escalates to the owner as a reject past the cap does."""
    assert task.revision is not None
    work = lane.work_of(task.candidate)
    assert work is not None  # the state's validator ties every task to current work
    revision = copy_with(task.revision, failed_starts=task.revision.failed_starts + 1,
                    partial=(*task.revision.partial, *partial)[-MAX_PARTIAL:])
    cap = state.settings.max_revisions + work.grants
    details = {"runner": runner, "confirmedBy": confirmed_by, "evidence": evidence, "parent": revision.parent,
               "inputSha256": revision.input_sha256, "criticSha256": revision.critic_sha256,
               "failedStarts": revision.failed_starts, "partial": list(partial), "revisions": work.revisions,
               "cap": cap}
    if work.revisions < cap:
        requeued = copy_with(task, claimed_by=None, claimed_run=None, claimed_at=None, revision=revision)
        again = copy_with(work, revisions=work.revisions + 1)
        new_lane = copy_with(lane, tasks=tuple(requeued if t.n == task.n else t for t in lane.tasks),
                        wip=tuple(again if w.candidate == work.candidate else w for w in lane.wip))
        new = copy_with(state, **{lane.lane: new_lane}, updated_at=stamp)
        data = {"lane": lane.lane, "task": task.n, "stage": task.stage, "candidate": task.candidate, **details,
                "outcome": "requeued", "done": [], "enqueued": []}
        return PipelineChange("repair-start-failed", data, new,
                      {"lane": lane.lane, "task": task.n, "state": "pending", "failedStarts": revision.failed_starts,
                       "revisions": work.revisions + 1, "cap": cap})
    reason = (f"the revision (task {task.n}) of {task.candidate} failed to start {revision.failed_starts} time(s) "
              f"and its repair cap {cap} is spent")
    step = escalate(work, task.stage, reason, stamp, revision)
    change = apply_transition(state, lane, task, step, confirmed_by, stamp, details)
    return PipelineChange("repair-start-failed", {**change.event_data, "outcome": "escalated"}, change.state,
                  {**change.result, "state": "escalated", "failedStarts": revision.failed_starts, "cap": cap})
