"""The staged lanes' transitions: a runner's report, a reviewer's review or the owner's escalation decision
moves exactly one task to done and enqueues at most one next task, or ends the work."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pendulum import DateTime

from ..schedule_document import at, instant_text
from .approvals import use_approvals
from .contracts import parse_report
from .errors import PipelineError
from .model import (
    MAX_DECISIONS,
    MAX_DONE_KEPT,
    MAX_HISTORY_KEPT,
    REVIEW_STAGES,
    ArtifactRef,
    DoneTask,
    Escalation,
    GateDecision,
    HistoryEntry,
    LaneRecord,
    PipelineState,
    Revision,
    Task,
    Work,
)
from .rules import PipelineChange, copy_with, producers, work_instant


@dataclass(frozen=True)
class Next:
    """Where a completed task leads: the next stage's task (one), or the end of the work."""

    work: Work
    stage: str | None = None  # the next task's stage; None when the work ends
    subject: ArtifactRef | None = None
    outcome: str | None = None  # go / pivot / park / release-ready when the work ends
    decision: GateDecision | None = None
    revision: Revision | None = None  # the next task is a revision: what it repairs
    abandons: int = 0  # the next task's abandons so far (an abandoned task the owner sends once more)


def _ref(task: Task, runner: str, report: Any) -> ArtifactRef:
    return ArtifactRef(stage=task.stage, task=task.n, artifact=report.artifact, sha256=report.sha256, runner=runner)


def _with_artifact(work: Work, ref: ArtifactRef) -> Work:
    kept = tuple(a for a in work.artifacts if a.stage != ref.stage)
    updated: Work = copy_with(work, artifacts=(*kept, ref)[-8:])
    return updated


def escalate(work: Work, redo: str, reason: str, stamp: str, revision: Revision | None = None) -> Next:
    escalation = Escalation(stage=redo, reason=reason, at=stamp, revision=revision)  # type: ignore[arg-type]
    return Next(copy_with(work, stage="escalation", escalation=escalation),
                 "escalation")


def _revision(work: Work, task: Task, report: Any, ref: ArtifactRef) -> Revision:
    """What a reviewer's reject asks to have revised: its parent is the review task, its input the rejected
    artifact (promotion: the brief reviewed; maturation: the current slice's latest artifact), its critic
    log the review's own artifact and findings."""
    rejected = task.subject.sha256 if task.subject is not None else ref.sha256
    if task.lane == "maturation":
        slices = [a for a in work.artifacts if a.stage in ("slice", "iterate")]
        if slices:
            rejected = max(slices, key=lambda a: a.task).sha256
    return Revision(parent=task.n, input_sha256=rejected, critic_artifact=ref.artifact, critic_sha256=ref.sha256,
                    findings=tuple(getattr(report, "findings", ())))


def _promotion_step(state: PipelineState, work: Work, task: Task, report: Any, ref: ArtifactRef,
                    stamp: str) -> Next:
    settings = state.settings
    stage = task.stage
    if stage == "select":
        return Next(work, "evidence")
    if stage == "evidence":
        return Next(work, "brief")
    if stage == "brief":
        if work.criteria_frozen and (report.criteria_sha256, report.verifier) != (work.criteria, work.verifier):
            raise PipelineError("CRITERIA_CHANGED", "the exit criteria and verifier were frozen at the gate; "
                                                    f"this brief names {report.criteria_sha256}")
        return Next(copy_with(work, criteria=report.criteria_sha256, verifier=report.verifier), "review", ref)
    if stage == "review":
        if report.criteria_sha256 != work.criteria:
            raise PipelineError("CRITERIA_CHANGED", f"the review read criteria {report.criteria_sha256}, not the "
                                                    f"brief's {work.criteria}")
        if report.verdict == "pass":
            # The grants were the brief's: the prototype starts with none.
            return Next(copy_with(work, criteria_frozen=True, revisions=0, grants=0), "prototype")
        revision = _revision(work, task, report, ref)
        if work.revisions < settings.max_revisions + work.grants:
            return Next(copy_with(work, revisions=work.revisions + 1), "brief", revision=revision)
        return escalate(work, "brief", f"the brief was rejected {work.revisions + 1} times", stamp, revision)
    if stage == "prototype":
        if report.build == "success":
            return Next(work, "verify")
        if work.retries < settings.max_retries + work.grants:
            return Next(copy_with(work, retries=work.retries + 1), "prototype")
        return escalate(work, "prototype", f"the prototype build failed {work.retries + 1} times", stamp)
    if stage == "verify":
        if report.verifier != work.verifier or report.criteria_sha256 != work.criteria:
            raise PipelineError("CRITERIA_CHANGED", f"verify ran {report.verifier} against {report.criteria_sha256}; "
                                                    f"frozen are {work.verifier} against {work.criteria}")
        return Next(copy_with(work, verified=ref, verified_passed=report.passed), "decide", ref)
    # decide: the reviewer's GO / PIVOT / PARK, only on the frozen exit verifier's artifact
    if report.criteria_sha256 != work.criteria:
        raise PipelineError("CRITERIA_CHANGED", f"decide names criteria {report.criteria_sha256}, not the frozen "
                                                f"{work.criteria}")
    if work.verified is None or report.verifier_artifact_sha256 != work.verified.sha256:
        raise PipelineError("VERIFIER_REQUIRED", "a decision cites the frozen exit verifier's artifact "
                                                 f"{work.verified.sha256 if work.verified else '(none)'}")
    if report.verdict == "GO" and work.verified_passed is not True:
        raise PipelineError("VERIFIER_REQUIRED", "GO needs the frozen exit verifier's passing artifact; "
                                                 "build success alone is not GO")
    decision = GateDecision(n=state.next_decision, candidate=work.candidate, product=work.product,
                            verdict=report.verdict, at=stamp, criteria=work.criteria or "",
                            verifier_artifact=work.verified.sha256)
    return Next(work, None, outcome=report.verdict.lower(), decision=decision)


def _maturation_step(state: PipelineState, work: Work, task: Task, report: Any, ref: ArtifactRef,
                     stamp: str) -> Next:
    settings = state.settings
    stage = task.stage
    if stage == "intake":
        if report.decision != work.decision:
            raise PipelineError("CONTRACT", f"intake report: decision {report.decision} is not the GO decision "
                                            f"{work.decision} this work started from")
        return Next(work, "boundary")
    if stage == "boundary":
        frozen = copy_with(work, boundary=report.boundary_sha256, metrics=tuple(report.success_metrics), slices=1)
        return Next(frozen, "slice")
    if stage in ("slice", "iterate"):
        if report.slice != work.slices:
            raise PipelineError("STALE", f"{stage} report: slice {report.slice} is not the current slice "
                                         f"{work.slices}")
        names = [metric.name for metric in report.success_metrics]
        unknown = sorted(set(names) - set(work.metrics))
        if unknown or len(set(names)) != len(names):
            raise PipelineError("CONTRACT", f"{stage} report: successMetrics must be distinct metrics the frozen MVP "
                                            f"boundary names; not {unknown or names}")
        return Next(copy_with(work, slice_metrics=tuple(names)), "verify")
    if stage == "verify":
        if report.slice != work.slices:
            raise PipelineError("STALE", f"verify report: slice {report.slice} is not the current slice {work.slices}")
        if sorted(metric.name for metric in report.metrics) != sorted(work.slice_metrics):
            raise PipelineError("CONTRACT", "verify report: metrics must be exactly the slice's success metrics "
                                            f"{sorted(work.slice_metrics)}")
        return Next(copy_with(work, verified=ref, verified_passed=report.passed), "review", ref)
    if report.boundary_sha256 != work.boundary:
        raise PipelineError("CRITERIA_CHANGED", f"the MVP boundary was frozen as {work.boundary}; "
                                                f"this {stage} names {report.boundary_sha256}")
    if stage == "release":
        if report.ready:
            return Next(work, None, outcome="release-ready")
        # Not ready is a reviewer's reject: bounded revise and re-review first, the owner only past the cap.
        revision = _revision(work, task, report, ref)
        if work.revisions < settings.max_revisions + work.grants:
            return Next(copy_with(work, revisions=work.revisions + 1), "iterate", revision=revision)
        return escalate(work, "iterate", f"the reviewer found the product not release-ready after "
                                          f"{work.revisions} revisions", stamp, revision)
    # review: the reviewer decides complete / continue / revise / pivot / park
    if report.slice != work.slices:
        raise PipelineError("STALE", f"review: slice {report.slice} is not the current slice {work.slices}")
    decision = report.decision
    if decision in ("complete", "continue") and work.verified_passed is not True:
        raise PipelineError("VERIFIER_REQUIRED", f"{decision} needs the slice's passing verification")
    if decision == "complete":
        return Next(work, "release", work.verified)
    if decision == "continue":
        if work.slices >= settings.max_slices:
            raise PipelineError("CAP_REACHED", f"slice {work.slices} is the cap ({settings.max_slices}); "
                                               "decide complete, pivot or park")
        return Next(copy_with(work, slices=work.slices + 1, revisions=0, grants=0, slice_metrics=(), verified=None,
                          verified_passed=None), "slice")
    if decision == "revise":
        revision = _revision(work, task, report, ref)
        if work.revisions < settings.max_revisions + work.grants:
            return Next(copy_with(work, revisions=work.revisions + 1), "iterate", revision=revision)
        return escalate(work, "iterate", f"slice {work.slices} was sent back {work.revisions + 1} times", stamp,
                         revision)
    return Next(work, None, outcome=decision)


def complete(state: PipelineState, lane_name: str, n: int, runner: str, report: Any, now: DateTime) -> PipelineChange:
    """A runner's report or a reviewer's review: its task done, at most one next task enqueued."""
    lane = state.lane(lane_name)
    task = lane.task(n)
    if task is None:
        raise PipelineError("UNKNOWN_TASK", f"{lane_name} has no open task {n}")
    if task.kind == "owner":
        raise PipelineError("WRONG_RUN", f"task {n} is an escalation: only the owner's decision completes it")
    if task.claimed_by is None:
        raise PipelineError("NOT_OWNER", f"task {n} is not claimed; claim it first")
    if task.claimed_by != runner:
        raise PipelineError("NOT_OWNER", f"task {n} is claimed by another runner")
    parsed = parse_report(lane_name, task.stage, report)
    work = lane.work_of(task.candidate)
    assert work is not None  # the state's validator ties every task to current work
    if task.kind == "review" and runner in producers(work):
        raise PipelineError("SELF_REVIEW", f"{runner} produced an artifact of {task.candidate}; "
                                           "it may not review it")
    stamp = work_instant(lane, task.candidate, now)
    approvals = use_approvals(state, task.candidate, tuple(parsed.external_actions), runner, stamp)
    ref = _ref(task, runner, parsed)
    work = _with_artifact(work, ref)
    step = (_promotion_step if lane_name == "promotion" else _maturation_step)(state, work, task, parsed, ref, stamp)
    return apply_transition(copy_with(state, approvals=approvals), lane, task, step, runner, stamp,
                       {"report": parsed.model_dump(mode="json", by_alias=True, exclude_defaults=True)})


def decide_escalation(state: PipelineState, lane_name: str, n: int, decided_by: str, decision: str, reason: str,
                      now: DateTime) -> PipelineChange:
    """The owner's answer to an escalation: one more revise round (granted), or park."""
    lane = state.lane(lane_name)
    task = lane.task(n)
    if task is None:
        raise PipelineError("UNKNOWN_TASK", f"{lane_name} has no open task {n}")
    if task.kind != "owner":
        raise PipelineError("WRONG_RUN", f"task {n} is a {task.stage} task, not an escalation")
    work = lane.work_of(task.candidate)
    assert work is not None and work.escalation is not None
    stamp = work_instant(lane, task.candidate, now)
    if decision == "park":
        step = Next(copy_with(work, escalation=None), None, outcome="park")
    elif work.escalation.abandons:  # an abandoned task past its cap: sent once more, as it was
        redo = work.escalation.stage
        step = Next(copy_with(work, escalation=None, stage=redo), redo, subject=work.escalation.subject,
                     abandons=state.settings.max_retries)
    else:
        redo = work.escalation.stage
        counter = "retries" if redo == "prototype" else "revisions"
        granted = copy_with(work, grants=work.grants + 1, escalation=None, stage=redo)
        granted = copy_with(granted, **{counter: getattr(granted, counter) + 1})
        step = Next(granted, redo, revision=work.escalation.revision)
    return apply_transition(state, lane, task, step, decided_by, stamp, {"ownerDecision": decision, "reason": reason})


def apply_transition(state: PipelineState, lane: LaneRecord, task: Task, step: Next, by: str, stamp: str,
                details: dict[str, Any]) -> PipelineChange:
    """Apply one transition: `task` done, at most one next task enqueued, or the work ended."""
    n_next = state.next_task
    work = step.work
    remaining = tuple(t for t in lane.tasks if t.n != task.n)
    wip = tuple(w for w in lane.wip if w.candidate != work.candidate)
    extra: dict[str, Any] = {}
    enqueued: list[int] = []
    if step.stage is not None:
        kind = "owner" if step.stage == "escalation" else (
            "review" if step.stage in REVIEW_STAGES[lane.lane] else "work")
        next_task = Task(n=n_next, lane=lane.lane, stage=step.stage, kind=kind,  # type: ignore[arg-type]
                         candidate=work.candidate, enqueued_at=stamp, subject=step.subject, revision=step.revision,
                         abandons=step.abandons)
        work = copy_with(work, stage=step.stage)
        new_lane = copy_with(lane, wip=tuple(work if w.candidate == work.candidate else w for w in lane.wip),
                        tasks=(*remaining, next_task))
        extra["next_task"] = n_next + 1
        enqueued.append(n_next)
    else:
        outcome = step.outcome or "park"
        entry = HistoryEntry(candidate=work.candidate, outcome=outcome, at=stamp,  # type: ignore[arg-type]
                             decision=step.decision.n if step.decision else work.decision)
        ended = {"completed": lane.completed + 1} if outcome != "park" else {"parked": lane.parked + 1}
        cooldown = instant_text(at(stamp).add(hours=state.settings.cooldown_hours))
        new_lane = copy_with(lane, wip=wip, tasks=remaining, history=(*lane.history, entry)[-MAX_HISTORY_KEPT:],
                        cooldown_until=cooldown, **ended)
        if step.decision is not None:
            extra["decisions"] = _kept_decisions(state, step.decision)
            extra["next_decision"] = state.next_decision + 1
        if lane.lane == "promotion":  # a candidate no Top-N lists any more leaves with its work
            extra["candidates"] = tuple(c for c in state.candidates if c.listed or c.id != work.candidate)
    done = DoneTask(n=task.n, stage=task.stage, candidate=task.candidate, by=by, done_at=stamp,
                    enqueued=enqueued[0] if enqueued else None)
    new_lane = copy_with(new_lane, done=(*new_lane.done, done)[-MAX_DONE_KEPT:], tasks_done=lane.tasks_done + 1)
    new = copy_with(state, **{lane.lane: new_lane}, updated_at=stamp, **extra)
    result = {"lane": lane.lane, "task": task.n, "stage": task.stage, "candidate": task.candidate,
              "next": {"task": n_next, "stage": step.stage} if step.stage else None,
              "outcome": step.outcome, "decision": step.decision.n if step.decision else None}
    data = {"lane": lane.lane, "task": task.n, "stage": task.stage, "candidate": task.candidate, "by": by,
            "done": [task.n], "enqueued": enqueued, "outcome": step.outcome,
            "decision": step.decision.doc() if step.decision else None, **details}
    return PipelineChange("task-done", data, new, result)


def _kept_decisions(state: PipelineState, decision: GateDecision) -> tuple[GateDecision, ...]:
    """The decisions kept: every unconsumed GO and every one maturation holds, then the newest others."""
    held = {work.decision for work in state.maturation.wip}
    decisions = [*state.decisions, decision]
    needed = [d for d in decisions if (d.verdict == "GO" and not d.consumed) or d.n in held]
    if len(needed) >= MAX_DECISIONS:
        raise PipelineError("LIMIT", f"{len(needed)} GO decisions wait for maturation; the pipeline keeps "
                                     f"{MAX_DECISIONS - 1}")
    others = [d for d in decisions if d not in needed][-(MAX_DECISIONS - len(needed)):]
    return tuple(sorted((*needed, *others), key=lambda d: d.n))
