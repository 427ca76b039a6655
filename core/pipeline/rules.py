"""The staged lanes' pure rules: (state, request, clock reading) -> one change, or a refusal.

The reducer rule holds by construction and the stored state checks it again: a transition
(a runner's report, a reviewer's review, the owner's escalation decision) moves exactly one
task to done and enqueues at most one next task; a claim moves none to done and enqueues at
most the lane's one activation task (promotion's portfolio-level select, maturation's GO
intake), which it claims in the same command. Selection is deterministic: the oldest
unconsumed gate decision, then the normalized candidate ID.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pendulum import DateTime

from ..pipeline_settings import PipelineSettings
from ..schedule_document import at, instant_text
from .contracts import parse_report
from .errors import PipelineError
from .model import (
    LANES,
    MAX_APPROVALS,
    MAX_CONSUMED,
    MAX_DECISIONS,
    MAX_DONE_KEPT,
    MAX_HISTORY_KEPT,
    MAX_PARTIAL,
    REVIEW_STAGES,
    Approval,
    ArtifactRef,
    CandidateRecord,
    DoneTask,
    Escalation,
    GateDecision,
    HistoryEntry,
    LaneRecord,
    PipelineState,
    Revision,
    Task,
    TopN,
    Work,
)

# Where each stage's completion goes (the reviewer's and owner's choices aside): the allowed transitions. A task
# whose run is confirmed gone once more than `maxRetries` allows escalates from any stage, and the owner's revise
# sends that stage again (`_with_abandons`).
_COMPLETIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "promotion": {
        "select": ("evidence",),
        "evidence": ("brief",),
        "brief": ("review",),
        "review": ("prototype", "brief", "escalation"),
        "prototype": ("verify", "prototype", "escalation"),
        "verify": ("decide",),
        "decide": ("complete:go", "complete:pivot", "complete:park"),
        "escalation": ("brief", "prototype", "complete:park"),
    },
    "maturation": {
        "intake": ("boundary",),
        "boundary": ("slice",),
        "slice": ("verify",),
        "iterate": ("verify",),
        "verify": ("review",),
        "review": ("release", "slice", "iterate", "escalation", "complete:pivot", "complete:park"),
        "release": ("complete:release-ready", "iterate", "escalation"),
        "escalation": ("iterate", "complete:park"),
    },
}


def _with_abandons(lane: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    stages = [stage for stage in lane if stage != "escalation"]
    allowed = {stage: tuple(dict.fromkeys((*targets, "escalation"))) for stage, targets in lane.items()
               if stage != "escalation"}
    ends = tuple(t for t in lane["escalation"] if t.startswith("complete:"))
    allowed["escalation"] = (*dict.fromkeys((*(t for t in lane["escalation"] if not t.startswith("complete:")),
                                             *stages)), *ends)
    return allowed


ALLOWED_TRANSITIONS: dict[str, dict[str, tuple[str, ...]]] = {
    lane: _with_abandons(completions) for lane, completions in _COMPLETIONS.items()}


@dataclass(frozen=True)
class Change:
    """One command's effect: one event, the new state, the receipt's result."""

    event_type: str
    event_data: dict[str, Any]
    state: PipelineState
    result: dict[str, Any]


@dataclass(frozen=True)
class Idle:
    """A claim with nothing to claim: an answer, not a command (nothing is written); why, in a word and a
    sentence. `kind` marks it in the command line's JSON."""

    lane: str
    reason: str
    detail: str
    kind: str = "idle"


def _put(model: Any, **changes: Any) -> Any:
    return model.model_copy(update=changes)


def _stamp(now: DateTime) -> str:
    """The instant of a write that changes no record with a timeline of its own (settings and Top-Ns are
    ordered by their revision and week, a new approval request starts its own)."""
    return instant_text(now)


def _stamp_after(record: str, instants: Iterable[str | None], now: DateTime) -> str:
    """The instant of a write to one record (a candidate's work, an approval): refused INVALID when the clock
    reads earlier than the latest instant that record carries. The rule is per record, as the schedule's is
    per occurrence, so a record written by a clock that was ahead waits for the clock alone, and every other
    record goes on (health reports the record from the future)."""
    latest = max((instant for instant in instants if instant is not None), key=at, default=None)
    if latest is not None and now < at(latest):
        raise PipelineError("INVALID", f"the clock reads {instant_text(now)}, earlier than {record}'s last "
                                       f"transition at {latest}; nothing was written")
    return instant_text(now)


def work_instants(lane: LaneRecord, work: Work) -> list[str]:
    """Every instant recorded on a candidate's current work: its start, its escalation, its open task's."""
    instants = [work.started_at, *([work.escalation.at] if work.escalation else [])]
    for task in lane.tasks:
        if task.candidate == work.candidate:
            instants += [task.enqueued_at, *([task.claimed_at] if task.claimed_at else [])]
    return instants


def _stamp_work(lane: LaneRecord, candidate: str, now: DateTime) -> str:
    return _stamp_after(f"{lane.lane}'s {candidate}", work_instants(lane, _work_of(lane, candidate)), now)


def approval_instants(approval: Approval) -> list[str]:
    return [i for i in (approval.requested_at, approval.decided_at, approval.used_at) if i is not None]


def configured(state: PipelineState | None) -> PipelineState:
    if state is None:
        raise PipelineError("NOT_CONFIGURED", "no pipeline settings are recorded (a commission with `pipeline`)")
    return state


# -- settings and Top-N -------------------------------------------------------------------------


def record_settings(state: PipelineState | None, settings: PipelineSettings, revision: int,
                    now: DateTime) -> Change:
    if state is None:
        stamp = instant_text(now)
        new = PipelineState(protocol="sf-pipeline/1", settings=settings, settings_revision=revision,
                            updated_at=stamp, promotion=LaneRecord(lane="promotion"),
                            maturation=LaneRecord(lane="maturation"))
    else:
        if revision <= state.settings_revision:
            raise PipelineError("REVISION", f"revision {revision} is not after the recorded {state.settings_revision}")
        stamp = _stamp(now)
        for lane in LANES:
            held = len(state.lane(lane).wip)
            if settings.wip(lane) < held:
                raise PipelineError("INVALID", f"pipeline.{lane}Wip: {settings.wip(lane)} is below the {held} "
                                               f"candidates {lane} holds now; lower it once they end")
        new = _put(state, settings=settings, settings_revision=revision, updated_at=stamp)
    data = {"revision": revision, "settings": settings.model_dump(mode="json", by_alias=True)}
    return Change("pipeline-settings-recorded", data, new, {"revision": revision})


def eligible(state: PipelineState) -> list[CandidateRecord]:
    """Candidates promotion may select, in its deterministic order: oldest gate, then candidate ID."""
    held = state.held()
    consumed = set(state.consumed)
    pool = [c for c in state.candidates if c.listed and c.id not in consumed and c.id not in held]
    return sorted(pool, key=lambda c: (c.listed_since, c.id))


def record_top_n(state: PipelineState, week: str, entries: list[dict[str, Any]], now: DateTime) -> Change:
    if state.top_n is not None and week <= state.top_n.week:
        raise PipelineError("REVISION", f"Top-N {week} is not after the recorded {state.top_n.week}")
    if len(entries) > state.settings.top_n:
        raise PipelineError("INVALID", f"candidates: {len(entries)} entries, above topN {state.settings.top_n}")
    stamp = _stamp(now)
    sequence = state.top_n.sequence + 1 if state.top_n is not None else 1
    before = {c.id: c for c in state.candidates}
    held = {work.candidate for work in state.promotion.wip}
    listed_ids = [entry["candidate"] for entry in entries]
    records: list[CandidateRecord] = []
    for entry in entries:
        earlier = before.get(entry["candidate"])
        since = earlier.listed_since if earlier is not None and earlier.listed else sequence
        records.append(CandidateRecord(id=entry["candidate"], product=entry["product"], rank=entry["rank"],
                                       evidence=tuple(entry["evidence"]), listed_since=since))
    # Protect currentWip: a candidate a lane holds keeps its record, whatever this Top-N says of it.
    for candidate_id in sorted(held - set(listed_ids)):
        records.append(_put(before[candidate_id], listed=False))
    records.sort(key=lambda c: c.id)
    top = TopN(week=week, sequence=sequence, recorded_at=stamp, candidates=tuple(listed_ids))
    new = _put(state, top_n=top, candidates=tuple(records), updated_at=stamp)
    data = {"week": week, "sequence": sequence, "candidates": entries,
            "kept": sorted(held - set(listed_ids))}
    return Change("top-n-recorded", data, new,
                  {"week": week, "sequence": sequence, "eligible": [c.id for c in eligible(new)]})


# -- claims ---------------------------------------------------------------------------------------


def _kind_of_run(settings: PipelineSettings, lane: str, run: str) -> str:
    if run == settings.scheduler(lane):
        return "work"
    if run == settings.reviewer(lane):
        return "review"
    raise PipelineError("WRONG_RUN", f"run {run!r} is neither {lane}'s scheduler ({settings.scheduler(lane)}) nor "
                                     f"its reviewer ({settings.reviewer(lane)})")


def producers(work: Work) -> set[str]:
    return {artifact.runner for artifact in work.artifacts}


def claim(state: PipelineState, lane_name: str, run: str, runner: str, now: DateTime) -> Change | Idle:
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
        stamp = _stamp_work(lane, task.candidate, now)
        claimed = _put(task, claimed_by=runner, claimed_run=run, claimed_at=stamp)
        tasks = tuple(claimed if t.n == task.n else t for t in lane.tasks)
        new = _put(state, **{lane_name: _put(lane, tasks=tasks)}, updated_at=stamp)
        return Change("task-claimed", {"lane": lane_name, "task": task.n, "runner": runner, "run": run,
                                       "done": [], "enqueued": []}, new,
                      _claim_result(claimed, _work_of(lane, task.candidate), False))
    return _activate(state, lane, run, runner, now)


def hand_over(state: PipelineState, lane_name: str, n: int, run: str, runner: str, occurrence: str,
              earlier: frozenset[str], now: DateTime) -> Change | Idle:
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
    stamp = _stamp_work(lane, task.candidate, now)
    claimed = _put(task, claimed_by=runner, claimed_at=stamp)
    new_lane = _put(lane, tasks=tuple(claimed if t.n == n else t for t in lane.tasks))
    new = _put(state, **{lane_name: new_lane}, updated_at=stamp)
    data = {"lane": lane_name, "task": n, "runner": runner, "run": run, "from": task.claimed_by,
            "occurrence": occurrence, "done": [], "enqueued": []}
    return Change("task-handed-over", data, new,
                  {**_claim_result(claimed, _work_of(lane, task.candidate), False), "resumedFrom": task.claimed_by})


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


def _work_of(lane: LaneRecord, candidate: str) -> Work:
    work = lane.work_of(candidate)
    assert work is not None  # the state's validator ties every task to current work
    return work


def _claim_result(task: Task, work: Work, activated: bool) -> dict[str, Any]:
    """What a run needs to do its task without tracking the lane itself: the task, its stage and candidate, what
    a review reviews, and for maturation the GO decision the work started from and its current slice (what an
    intake, slice, verify or review report names)."""
    result = {"kind": "claimed", "lane": task.lane, "task": task.n, "stage": task.stage, "candidate": task.candidate,
              "activated": activated, "subject": task.subject.doc() if task.subject else None}
    if task.lane == "maturation":
        result.update(decision=work.decision, slice=work.slices or None)
    return result


def go_backlog(state: PipelineState) -> int:
    """The gate decisions maturation still needs: GOs it has not taken in, and the ones its work holds. The
    lanes keep at most MAX_DECISIONS - 1 of them beside a new one (`_kept_decisions`)."""
    held = {work.decision for work in state.maturation.wip}
    return len([d for d in state.decisions if (d.verdict == "GO" and not d.consumed) or d.n in held])


def go_backlog_idle(state: PipelineState, starting: int) -> Idle | None:
    """`go-backlog` when `starting` more promotion decisions (each could be a GO) would not fit beside the GO
    decisions maturation still needs: promotion then waits, idle, until maturation ends a work, so a decide is
    never refused for want of room."""
    backlog = go_backlog(state)
    if backlog + starting <= MAX_DECISIONS - 1:
        return None
    return Idle("promotion", "go-backlog", f"{backlog} GO decisions wait for maturation (the lanes keep "
                                           f"{MAX_DECISIONS - 1}); maturation ending a work makes room")


def _activate(state: PipelineState, lane: LaneRecord, run: str, runner: str, now: DateTime) -> Change | Idle:
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
        stamp = _stamp_after(f"the Top-N of {state.top_n.week}", [state.top_n.recorded_at], now)
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
        stamp = _stamp_after(f"GO decision {decision.n}", [decision.at], now)
        work = Work(candidate=decision.candidate, product=decision.product, stage="intake", started_at=stamp,
                    decision=decision.n)
        extra = {"decisions": tuple(_put(d, consumed=True) if d.n == decision.n else d for d in state.decisions)}
        task = Task(n=n, lane="maturation", stage="intake", kind="work", candidate=decision.candidate,
                    enqueued_at=stamp, claimed_by=runner, claimed_run=run, claimed_at=stamp)
    new_lane = _put(lane, wip=(*lane.wip, work), tasks=(*lane.tasks, task))
    new = _put(state, **{lane.lane: new_lane}, next_task=n + 1, updated_at=stamp, **extra)
    data = {"lane": lane.lane, "task": n, "runner": runner, "run": run, "candidate": task.candidate,
            "done": [], "enqueued": [n]}
    return Change("task-claimed", data, new, _claim_result(task, work, True))


def abandon(state: PipelineState, lane_name: str, n: int, runner: str, confirmed_by: str, evidence: str,
            now: DateTime, partial: tuple[str, ...] = ()) -> Change:
    """A supervisor confirms a claimed task's run is gone. A revision (repair) task's interrupted start is
    `repair_start_failed`; any other task returns to pending, as itself (nothing of it was validated), within
    its retry cap (`_abandoned`)."""
    lane = state.lane(lane_name)
    task = lane.task(n)
    if task is None:
        raise PipelineError("UNKNOWN_TASK", f"{lane_name} has no open task {n}")
    if task.claimed_by != runner:
        raise PipelineError("NOT_OWNER", f"task {n} is not claimed by {runner}")
    stamp = _stamp_work(lane, task.candidate, now)
    if task.revision is not None:
        return repair_start_failed(state, lane, task, runner, confirmed_by, evidence, partial, stamp)
    if partial:
        raise PipelineError("INVALID", f"task {n} ({task.stage}) is not a revision: partial output is kept only "
                                       "for an interrupted revision")
    return _abandoned(state, lane, task, runner, confirmed_by, evidence, stamp)


def _abandoned(state: PipelineState, lane: LaneRecord, task: Task, runner: str, confirmed_by: str, evidence: str,
               stamp: str) -> Change:
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
        released = _put(task, claimed_by=None, claimed_run=None, claimed_at=None, abandons=abandons)
        new_lane = _put(lane, tasks=tuple(released if t.n == task.n else t for t in lane.tasks))
        new = _put(state, **{lane.lane: new_lane}, updated_at=stamp)
        data = {"lane": lane.lane, "task": task.n, **details, "outcome": "requeued", "done": [], "enqueued": []}
        return Change("task-abandoned", data, new,
                      {"lane": lane.lane, "task": task.n, "state": "pending", "abandons": abandons, "cap": cap})
    reason = (f"the run of task {task.n} ({task.stage}) of {task.candidate} was confirmed gone {abandons} times; "
              f"its retry cap {cap} is spent")
    escalation = Escalation(stage=task.stage, reason=reason, at=stamp, abandons=abandons, subject=task.subject)
    step = _Next(_put(work, stage="escalation", escalation=escalation), "escalation")
    change = _transition(state, lane, task, step, confirmed_by, stamp, details)
    return Change("task-abandoned", {**change.event_data, "outcome": "escalated"}, change.state,
                  {**change.result, "state": "escalated", "abandons": abandons, "cap": cap})


def repair_start_failed(state: PipelineState, lane: LaneRecord, task: Task, runner: str, confirmed_by: str,
                        evidence: str, partial: tuple[str, ...], stamp: str) -> Change:
    """An interrupted revision claim without a validated report: a failed start of the round already reserved
    for it (the reviewer's reject reserved it), never a fresh pending repair. Its failure and the partial
    output its supervisor names are kept on the task. It is requeued, as the same task with the same parent,
    input and critic log, only while the repair cap (`maxRevisions` plus the owner's grants) has a round left,
    which the requeue takes; otherwise it escalates to the owner as a reject past the cap does."""
    assert task.revision is not None
    work = lane.work_of(task.candidate)
    assert work is not None  # the state's validator ties every task to current work
    revision = _put(task.revision, failed_starts=task.revision.failed_starts + 1,
                    partial=(*task.revision.partial, *partial)[-MAX_PARTIAL:])
    cap = state.settings.max_revisions + work.grants
    details = {"runner": runner, "confirmedBy": confirmed_by, "evidence": evidence, "parent": revision.parent,
               "inputSha256": revision.input_sha256, "criticSha256": revision.critic_sha256,
               "failedStarts": revision.failed_starts, "partial": list(partial), "revisions": work.revisions,
               "cap": cap}
    if work.revisions < cap:
        requeued = _put(task, claimed_by=None, claimed_run=None, claimed_at=None, revision=revision)
        again = _put(work, revisions=work.revisions + 1)
        new_lane = _put(lane, tasks=tuple(requeued if t.n == task.n else t for t in lane.tasks),
                        wip=tuple(again if w.candidate == work.candidate else w for w in lane.wip))
        new = _put(state, **{lane.lane: new_lane}, updated_at=stamp)
        data = {"lane": lane.lane, "task": task.n, "stage": task.stage, "candidate": task.candidate, **details,
                "outcome": "requeued", "done": [], "enqueued": []}
        return Change("repair-start-failed", data, new,
                      {"lane": lane.lane, "task": task.n, "state": "pending", "failedStarts": revision.failed_starts,
                       "revisions": work.revisions + 1, "cap": cap})
    reason = (f"the revision (task {task.n}) of {task.candidate} failed to start {revision.failed_starts} time(s) "
              f"and its repair cap {cap} is spent")
    step = _escalate(work, task.stage, reason, stamp, revision)
    change = _transition(state, lane, task, step, confirmed_by, stamp, details)
    return Change("repair-start-failed", {**change.event_data, "outcome": "escalated"}, change.state,
                  {**change.result, "state": "escalated", "failedStarts": revision.failed_starts, "cap": cap})


# -- transitions --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Next:
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
    updated: Work = _put(work, artifacts=(*kept, ref)[-8:])
    return updated


def _escalate(work: Work, redo: str, reason: str, stamp: str, revision: Revision | None = None) -> _Next:
    escalation = Escalation(stage=redo, reason=reason, at=stamp, revision=revision)  # type: ignore[arg-type]
    return _Next(_put(work, stage="escalation", escalation=escalation),
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
                    stamp: str) -> _Next:
    settings = state.settings
    stage = task.stage
    if stage == "select":
        return _Next(work, "evidence")
    if stage == "evidence":
        return _Next(work, "brief")
    if stage == "brief":
        if work.criteria_frozen and (report.criteria_sha256, report.verifier) != (work.criteria, work.verifier):
            raise PipelineError("CRITERIA_CHANGED", "the exit criteria and verifier were frozen at the gate; "
                                                    f"this brief names {report.criteria_sha256}")
        return _Next(_put(work, criteria=report.criteria_sha256, verifier=report.verifier), "review", ref)
    if stage == "review":
        if report.criteria_sha256 != work.criteria:
            raise PipelineError("CRITERIA_CHANGED", f"the review read criteria {report.criteria_sha256}, not the "
                                                    f"brief's {work.criteria}")
        if report.verdict == "pass":
            return _Next(_put(work, criteria_frozen=True, revisions=0, grants=0), "prototype")  # grants: the brief's
        revision = _revision(work, task, report, ref)
        if work.revisions < settings.max_revisions + work.grants:
            return _Next(_put(work, revisions=work.revisions + 1), "brief", revision=revision)
        return _escalate(work, "brief", f"the brief was rejected {work.revisions + 1} times", stamp, revision)
    if stage == "prototype":
        if report.build == "success":
            return _Next(work, "verify")
        if work.retries < settings.max_retries + work.grants:
            return _Next(_put(work, retries=work.retries + 1), "prototype")
        return _escalate(work, "prototype", f"the prototype build failed {work.retries + 1} times", stamp)
    if stage == "verify":
        if report.verifier != work.verifier or report.criteria_sha256 != work.criteria:
            raise PipelineError("CRITERIA_CHANGED", f"verify ran {report.verifier} against {report.criteria_sha256}; "
                                                    f"frozen are {work.verifier} against {work.criteria}")
        return _Next(_put(work, verified=ref, verified_passed=report.passed), "decide", ref)
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
    return _Next(work, None, outcome=report.verdict.lower(), decision=decision)


def _maturation_step(state: PipelineState, work: Work, task: Task, report: Any, ref: ArtifactRef,
                     stamp: str) -> _Next:
    settings = state.settings
    stage = task.stage
    if stage == "intake":
        if report.decision != work.decision:
            raise PipelineError("CONTRACT", f"intake report: decision {report.decision} is not the GO decision "
                                            f"{work.decision} this work started from")
        return _Next(work, "boundary")
    if stage == "boundary":
        frozen = _put(work, boundary=report.boundary_sha256, metrics=tuple(report.success_metrics), slices=1)
        return _Next(frozen, "slice")
    if stage in ("slice", "iterate"):
        if report.slice != work.slices:
            raise PipelineError("STALE", f"{stage} report: slice {report.slice} is not the current slice "
                                         f"{work.slices}")
        names = [metric.name for metric in report.success_metrics]
        unknown = sorted(set(names) - set(work.metrics))
        if unknown or len(set(names)) != len(names):
            raise PipelineError("CONTRACT", f"{stage} report: successMetrics must be distinct metrics the frozen MVP "
                                            f"boundary names; not {unknown or names}")
        return _Next(_put(work, slice_metrics=tuple(names)), "verify")
    if stage == "verify":
        if report.slice != work.slices:
            raise PipelineError("STALE", f"verify report: slice {report.slice} is not the current slice {work.slices}")
        if sorted(metric.name for metric in report.metrics) != sorted(work.slice_metrics):
            raise PipelineError("CONTRACT", "verify report: metrics must be exactly the slice's success metrics "
                                            f"{sorted(work.slice_metrics)}")
        return _Next(_put(work, verified=ref, verified_passed=report.passed), "review", ref)
    if report.boundary_sha256 != work.boundary:
        raise PipelineError("CRITERIA_CHANGED", f"the MVP boundary was frozen as {work.boundary}; "
                                                f"this {stage} names {report.boundary_sha256}")
    if stage == "release":
        if report.ready:
            return _Next(work, None, outcome="release-ready")
        # Not ready is a reviewer's reject: bounded revise and re-review first, the owner only past the cap.
        revision = _revision(work, task, report, ref)
        if work.revisions < settings.max_revisions + work.grants:
            return _Next(_put(work, revisions=work.revisions + 1), "iterate", revision=revision)
        return _escalate(work, "iterate", f"the reviewer found the product not release-ready after "
                                          f"{work.revisions} revisions", stamp, revision)
    # review: the reviewer decides complete / continue / revise / pivot / park
    if report.slice != work.slices:
        raise PipelineError("STALE", f"review: slice {report.slice} is not the current slice {work.slices}")
    decision = report.decision
    if decision in ("complete", "continue") and work.verified_passed is not True:
        raise PipelineError("VERIFIER_REQUIRED", f"{decision} needs the slice's passing verification")
    if decision == "complete":
        return _Next(work, "release", work.verified)
    if decision == "continue":
        if work.slices >= settings.max_slices:
            raise PipelineError("CAP_REACHED", f"slice {work.slices} is the cap ({settings.max_slices}); "
                                               "decide complete, pivot or park")
        return _Next(_put(work, slices=work.slices + 1, revisions=0, grants=0, slice_metrics=(), verified=None,
                          verified_passed=None), "slice")
    if decision == "revise":
        revision = _revision(work, task, report, ref)
        if work.revisions < settings.max_revisions + work.grants:
            return _Next(_put(work, revisions=work.revisions + 1), "iterate", revision=revision)
        return _escalate(work, "iterate", f"slice {work.slices} was sent back {work.revisions + 1} times", stamp,
                         revision)
    return _Next(work, None, outcome=decision)


def complete(state: PipelineState, lane_name: str, n: int, runner: str, report: Any, now: DateTime) -> Change:
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
    stamp = _stamp_work(lane, task.candidate, now)
    approvals = _use_approvals(state, task.candidate, tuple(parsed.external_actions), runner, stamp)
    ref = _ref(task, runner, parsed)
    work = _with_artifact(work, ref)
    step = (_promotion_step if lane_name == "promotion" else _maturation_step)(state, work, task, parsed, ref, stamp)
    return _transition(_put(state, approvals=approvals), lane, task, step, runner, stamp,
                       {"report": parsed.model_dump(mode="json", by_alias=True, exclude_defaults=True)})


def decide_escalation(state: PipelineState, lane_name: str, n: int, decided_by: str, decision: str, reason: str,
                      now: DateTime) -> Change:
    """The owner's answer to an escalation: one more revise round (granted), or park."""
    lane = state.lane(lane_name)
    task = lane.task(n)
    if task is None:
        raise PipelineError("UNKNOWN_TASK", f"{lane_name} has no open task {n}")
    if task.kind != "owner":
        raise PipelineError("WRONG_RUN", f"task {n} is a {task.stage} task, not an escalation")
    work = lane.work_of(task.candidate)
    assert work is not None and work.escalation is not None
    stamp = _stamp_work(lane, task.candidate, now)
    if decision == "park":
        step = _Next(_put(work, escalation=None), None, outcome="park")
    elif work.escalation.abandons:  # an abandoned task past its cap: sent once more, as it was
        redo = work.escalation.stage
        step = _Next(_put(work, escalation=None, stage=redo), redo, subject=work.escalation.subject,
                     abandons=state.settings.max_retries)
    else:
        redo = work.escalation.stage
        counter = "retries" if redo == "prototype" else "revisions"
        granted = _put(work, grants=work.grants + 1, escalation=None, stage=redo)
        granted = _put(granted, **{counter: getattr(granted, counter) + 1})
        step = _Next(granted, redo, revision=work.escalation.revision)
    return _transition(state, lane, task, step, decided_by, stamp, {"ownerDecision": decision, "reason": reason})


def _transition(state: PipelineState, lane: LaneRecord, task: Task, step: _Next, by: str, stamp: str,
                details: dict[str, Any]) -> Change:
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
        work = _put(work, stage=step.stage)
        new_lane = _put(lane, wip=tuple(work if w.candidate == work.candidate else w for w in lane.wip),
                        tasks=(*remaining, next_task))
        extra["next_task"] = n_next + 1
        enqueued.append(n_next)
    else:
        outcome = step.outcome or "park"
        entry = HistoryEntry(candidate=work.candidate, outcome=outcome, at=stamp,  # type: ignore[arg-type]
                             decision=step.decision.n if step.decision else work.decision)
        ended = {"completed": lane.completed + 1} if outcome != "park" else {"parked": lane.parked + 1}
        cooldown = instant_text(at(stamp).add(hours=state.settings.cooldown_hours))
        new_lane = _put(lane, wip=wip, tasks=remaining, history=(*lane.history, entry)[-MAX_HISTORY_KEPT:],
                        cooldown_until=cooldown, **ended)
        if step.decision is not None:
            extra["decisions"] = _kept_decisions(state, step.decision)
            extra["next_decision"] = state.next_decision + 1
        if lane.lane == "promotion":  # a candidate no Top-N lists any more leaves with its work
            extra["candidates"] = tuple(c for c in state.candidates if c.listed or c.id != work.candidate)
    done = DoneTask(n=task.n, stage=task.stage, candidate=task.candidate, by=by, done_at=stamp,
                    enqueued=enqueued[0] if enqueued else None)
    new_lane = _put(new_lane, done=(*new_lane.done, done)[-MAX_DONE_KEPT:], tasks_done=lane.tasks_done + 1)
    new = _put(state, **{lane.lane: new_lane}, updated_at=stamp, **extra)
    result = {"lane": lane.lane, "task": task.n, "stage": task.stage, "candidate": task.candidate,
              "next": {"task": n_next, "stage": step.stage} if step.stage else None,
              "outcome": step.outcome, "decision": step.decision.n if step.decision else None}
    data = {"lane": lane.lane, "task": task.n, "stage": task.stage, "candidate": task.candidate, "by": by,
            "done": [task.n], "enqueued": enqueued, "outcome": step.outcome,
            "decision": step.decision.doc() if step.decision else None, **details}
    return Change("task-done", data, new, result)


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


# -- the security-approve boundary ---------------------------------------------------------------


def _use_approvals(state: PipelineState, candidate: str, actions: tuple[str, ...], runner: str,
                   stamp: str) -> tuple[Approval, ...]:
    approvals = list(state.approvals)
    for action in actions:
        index = next((i for i, a in enumerate(approvals) if a.candidate == candidate and a.action == action
                      and a.approved is True and a.used_at is None), None)
        if index is None:
            raise PipelineError("APPROVAL_REQUIRED", f"{action} for {candidate} needs the owner's approval record "
                                                     "(security-approve); nothing was written")
        _stamp_after(f"approval {approvals[index].id}", approval_instants(approvals[index]), at(stamp))
        approvals[index] = _put(approvals[index], used_at=stamp, used_by=runner)
    return tuple(approvals)


def request_approval(state: PipelineState, approval_id: str, candidate: str, action: str, requested_by: str,
                     reason: str, now: DateTime) -> Change:
    if any(a.id == approval_id for a in state.approvals):
        raise PipelineError("STALE", f"approval {approval_id} was already requested (under another request)")
    stamp = _stamp(now)
    approval = Approval(id=approval_id, candidate=candidate, action=action,  # type: ignore[arg-type]
                        requested_by=requested_by, requested_at=stamp, reason=reason)
    approvals = [*state.approvals, approval]
    while len(approvals) > MAX_APPROVALS:  # the oldest settled record (used or refused) leaves first
        gone = next((a for a in approvals if a.used_at is not None or a.approved is False), None)
        if gone is None:
            raise PipelineError("LIMIT", f"{MAX_APPROVALS} approval requests are open")
        approvals.remove(gone)
    new = _put(state, approvals=tuple(approvals), updated_at=stamp)
    return Change("approval-requested", approval.doc(), new, {"approval": approval.doc()})


def decide_approval(state: PipelineState, approval_id: str, decided_by: str, approved: bool,
                    now: DateTime) -> Change:
    approval = next((a for a in state.approvals if a.id == approval_id), None)
    if approval is None:
        raise PipelineError("UNKNOWN_TASK", f"no approval request {approval_id}")
    if approval.approved is not None:
        raise PipelineError("STALE", f"approval {approval_id} was already decided")
    if decided_by == approval.requested_by:
        raise PipelineError("SELF_DECIDED", f"approval {approval_id} was requested by {decided_by}, who may not "
                                            f"decide it; nothing was written")
    stamp = _stamp_after(f"approval {approval_id}", approval_instants(approval), now)
    decided = _put(approval, decided_by=decided_by, decided_at=stamp, approved=approved)
    new = _put(state, approvals=tuple(decided if a.id == approval_id else a for a in state.approvals),
               updated_at=stamp)
    return Change("approval-decided", decided.doc(), new, {"approval": decided.doc()})


def record_external_action(state: PipelineState, approval_id: str, candidate: str, action: str, runner: str,
                           now: DateTime) -> Change:
    approval = next((a for a in state.approvals if a.id == approval_id), None)
    if (approval is None or approval.candidate != candidate or approval.action != action
            or approval.approved is not True or approval.used_at is not None):
        raise PipelineError("APPROVAL_REQUIRED", f"{action} for {candidate} needs an unused owner approval record "
                                                 f"({approval_id} is not one); nothing was written")
    stamp = _stamp_after(f"approval {approval_id}", approval_instants(approval), now)
    used = _put(approval, used_at=stamp, used_by=runner)
    new = _put(state, approvals=tuple(used if a.id == approval_id else a for a in state.approvals),
               updated_at=stamp)
    return Change("external-action-recorded", used.doc(), new, {"approval": used.doc()})
