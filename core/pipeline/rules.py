"""The staged lanes' pure rules: (state, request, clock reading) -> one change, or a refusal.

This module holds what every rule shares (the allowed transitions, a change, an idle answer, the
instant a write is stamped with) and the settings and Top-N records; `claims`, `transitions` and
`approvals` hold the rest.

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
from .errors import PipelineError
from .model import (
    LANES,
    MAX_DECISIONS,
    Approval,
    CandidateRecord,
    LaneRecord,
    PipelineState,
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
class PipelineChange:
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


def copy_with(model: Any, **changes: Any) -> Any:
    return model.model_copy(update=changes)


def write_instant(now: DateTime) -> str:
    """The instant of a write that changes no record with a timeline of its own (settings and Top-Ns are
    ordered by their revision and week, a new approval request starts its own)."""
    return instant_text(now)


def instant_after(record: str, instants: Iterable[str | None], now: DateTime) -> str:
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


def work_instant(lane: LaneRecord, candidate: str, now: DateTime) -> str:
    return instant_after(f"{lane.lane}'s {candidate}", work_instants(lane, current_work(lane, candidate)), now)


def approval_instants(approval: Approval) -> list[str]:
    return [i for i in (approval.requested_at, approval.decided_at, approval.used_at) if i is not None]


def configured(state: PipelineState | None) -> PipelineState:
    if state is None:
        raise PipelineError("NOT_CONFIGURED", "no pipeline settings are recorded (a commission with `pipeline`)")
    return state


def record_settings(state: PipelineState | None, settings: PipelineSettings, revision: int,
                    now: DateTime) -> PipelineChange:
    if state is None:
        stamp = instant_text(now)
        new = PipelineState(protocol="sf-pipeline/1", settings=settings, settings_revision=revision,
                            updated_at=stamp, promotion=LaneRecord(lane="promotion"),
                            maturation=LaneRecord(lane="maturation"))
    else:
        if revision <= state.settings_revision:
            raise PipelineError("REVISION", f"revision {revision} is not after the recorded {state.settings_revision}")
        stamp = write_instant(now)
        for lane in LANES:
            held = len(state.lane(lane).wip)
            if settings.wip(lane) < held:
                raise PipelineError("INVALID", f"pipeline.{lane}Wip: {settings.wip(lane)} is below the {held} "
                                               f"candidates {lane} holds now; lower it once they end")
        new = copy_with(state, settings=settings, settings_revision=revision, updated_at=stamp)
    data = {"revision": revision, "settings": settings.model_dump(mode="json", by_alias=True)}
    return PipelineChange("pipeline-settings-recorded", data, new, {"revision": revision})


def eligible(state: PipelineState) -> list[CandidateRecord]:
    """Candidates promotion may select, in its deterministic order: oldest gate, then candidate ID."""
    held = state.held()
    consumed = set(state.consumed)
    pool = [c for c in state.candidates if c.listed and c.id not in consumed and c.id not in held]
    return sorted(pool, key=lambda c: (c.listed_since, c.id))


def record_top_n(state: PipelineState, week: str, entries: list[dict[str, Any]], now: DateTime) -> PipelineChange:
    if state.top_n is not None and week <= state.top_n.week:
        raise PipelineError("REVISION", f"Top-N {week} is not after the recorded {state.top_n.week}")
    if len(entries) > state.settings.top_n:
        raise PipelineError("INVALID", f"candidates: {len(entries)} entries, above topN {state.settings.top_n}")
    stamp = write_instant(now)
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
        records.append(copy_with(before[candidate_id], listed=False))
    records.sort(key=lambda c: c.id)
    top = TopN(week=week, sequence=sequence, recorded_at=stamp, candidates=tuple(listed_ids))
    new = copy_with(state, top_n=top, candidates=tuple(records), updated_at=stamp)
    data = {"week": week, "sequence": sequence, "candidates": entries,
            "kept": sorted(held - set(listed_ids))}
    return PipelineChange("top-n-recorded", data, new,
                  {"week": week, "sequence": sequence, "eligible": [c.id for c in eligible(new)]})


def producers(work: Work) -> set[str]:
    return {artifact.runner for artifact in work.artifacts}


def current_work(lane: LaneRecord, candidate: str) -> Work:
    work = lane.work_of(candidate)
    assert work is not None  # the state's validator ties every task to current work
    return work


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
