"""The stored pipeline document, as frozen pydantic models, and every rule one document can check.

One aggregate, `pipeline/lanes`, holds the latest Top-N, the candidates it keeps, both staged
lanes (their current work, open tasks, recent done tasks, counters, history and cooldown), the
durable gate decisions and the owner's approval records. Every read and every decision parses it
through these models with unknown keys forbidden and integers strict; the cross-field rules are
model validators, so any defect is CORRUPT before a rule runs, and a decision refuses to store a
document its own reader would refuse.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, model_validator
from pydantic.alias_generators import to_camel

from ..pipeline_settings import PipelineSettings
from ..schedule_document import Instant

PIPELINE_PROTOCOL = "sf-pipeline/1"
PIPELINE_AGGREGATE = "pipeline/lanes"

CANDIDATE_PATTERN = r"^[a-z0-9][a-z0-9-]{0,63}$"
SHA256_PATTERN = r"^[0-9a-f]{64}$"
WEEK_PATTERN = r"^[0-9]{4}-W[0-9]{2}$"

LaneName = Literal["promotion", "maturation"]
LANES: tuple[LaneName, ...] = ("promotion", "maturation")
PromotionStage = Literal["select", "evidence", "brief", "review", "prototype", "verify", "decide"]
MaturationStage = Literal["intake", "boundary", "slice", "verify", "review", "iterate", "release"]
Stage = Literal[
    "select", "evidence", "brief", "review", "prototype", "verify", "decide",
    "intake", "boundary", "slice", "iterate", "release", "escalation",
]  # fmt: skip
STAGES: dict[str, tuple[str, ...]] = {
    "promotion": PromotionStage.__args__,  # type: ignore[attr-defined]
    "maturation": MaturationStage.__args__,  # type: ignore[attr-defined]
}
# Stages whose task only the lane's reviewer run may claim and complete: each is a blocking PASS or a decision
# on artifacts another run produced. `escalation` belongs to the owner alone.
REVIEW_STAGES: dict[str, frozenset[str]] = {
    "promotion": frozenset({"review", "decide"}),
    "maturation": frozenset({"review", "release"}),
}
TaskKind = Literal["work", "review", "owner"]
Verdict = Literal["GO", "PIVOT", "PARK"]
Outcome = Literal["go", "pivot", "park", "release-ready"]
ExternalAction = Literal["public-publish", "payment-account", "external-write", "legal-risk"]
EXTERNAL_ACTIONS: tuple[str, ...] = ExternalAction.__args__  # type: ignore[attr-defined]

MAX_CANDIDATES = 64
MAX_CONSUMED = 256
MAX_DONE_KEPT = 16
MAX_HISTORY_KEPT = 16
MAX_DECISIONS = 32
MAX_APPROVALS = 64
MAX_STATE_BYTES = 262_144
MAX_FINDINGS = 16
MAX_PARTIAL = 8
# The revision (repair) task of each lane: promotion's brief after a rejected review, maturation's iterate after
# a `revise` (or a release found not ready).
REVISION_STAGES: dict[str, str] = {"promotion": "brief", "maturation": "iterate"}

Candidate = Annotated[StrictStr, Field(pattern=CANDIDATE_PATTERN)]
Sha256 = Annotated[StrictStr, Field(pattern=SHA256_PATTERN)]
Ref = Annotated[StrictStr, Field(min_length=1, max_length=300)]
Token = Annotated[StrictStr, Field(min_length=1, max_length=200)]
Count = Annotated[StrictInt, Field(ge=0)]
MetricName = Annotated[StrictStr, Field(min_length=1, max_length=100)]
Positive = Annotated[StrictInt, Field(ge=1)]


class Doc(BaseModel):
    """A stored sub-document: frozen, camelCase on disk, nothing unknown allowed."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, alias_generator=to_camel,
                              strict=True)

    def doc(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, mode="json", exclude_defaults=True)


class CandidateRecord(Doc):
    """A candidate the latest Top-N lists (or a lane holds): its Product, rank and evidence references."""

    id: Candidate
    product: Annotated[StrictStr, Field(pattern=r"^[a-z0-9][a-z0-9-]{0,31}$")]
    rank: Positive
    evidence: Annotated[tuple[Ref, ...], Field(max_length=8)] = ()
    listed_since: Positive  # the Top-N sequence that first listed it without a gap: its gate order
    listed: StrictBool = True  # in the latest Top-N


class TopN(Doc):
    week: Annotated[StrictStr, Field(pattern=WEEK_PATTERN)]
    sequence: Positive
    recorded_at: Instant
    candidates: Annotated[tuple[Candidate, ...], Field(max_length=20)]


class ArtifactRef(Doc):
    stage: Stage
    task: Positive
    artifact: Ref
    sha256: Sha256
    runner: Token


class Revision(Doc):
    """What a revision (repair) task repairs, so an interrupted one is reconciled against it, never reset.

    `parent` is the review task whose reject asked for the revision, `input_sha256` the rejected artifact's
    SHA-256, and the critic log the reviewer's artifact (reference and SHA-256) with its findings. Each start
    that ended without a validated report (a supervisor's confirmation that its run is gone) is counted in
    `failed_starts` against the round already reserved for it, and the partial output its supervisor named
    is kept as evidence references."""

    parent: Positive
    input_sha256: Sha256
    critic_artifact: Ref
    critic_sha256: Sha256
    findings: Annotated[tuple[Annotated[StrictStr, Field(min_length=1, max_length=500)], ...],
                        Field(max_length=MAX_FINDINGS)] = ()
    failed_starts: Count = 0
    partial: Annotated[tuple[Ref, ...], Field(max_length=MAX_PARTIAL)] = ()


class Task(Doc):
    """An open task: pending until a run claims it, claimed until its one completion."""

    n: Positive
    lane: LaneName
    stage: Stage
    kind: TaskKind
    candidate: Candidate
    enqueued_at: Instant
    claimed_by: Token | None = None
    claimed_run: Token | None = None
    claimed_at: Instant | None = None
    subject: ArtifactRef | None = None  # what a review task reviews (produced by another runner)
    revision: Revision | None = None  # a revision (repair) task's parent, input and critic log
    abandons: Count = 0  # times a supervisor confirmed its claiming run gone and it went back to pending

    @model_validator(mode="after")
    def _consistent(self) -> Task:
        if self.stage == "escalation":
            if self.kind != "owner":
                raise ValueError(f"task {self.n}: an escalation is the owner's")
        elif self.stage not in STAGES[self.lane]:
            raise ValueError(f"task {self.n}: {self.stage} is not a stage of {self.lane}")
        elif (self.kind == "review") != (self.stage in REVIEW_STAGES[self.lane]):
            raise ValueError(f"task {self.n}: a {self.stage} task is not of kind {self.kind}")
        if (self.claimed_by is None) != (self.claimed_at is None) or (self.claimed_by is None) != (
                self.claimed_run is None):
            raise ValueError(f"task {self.n}: a claim names its runner, run and instant together")
        if self.kind == "owner" and self.claimed_by is not None:
            raise ValueError(f"task {self.n}: an owner task is never claimed by a run")
        if self.kind == "review" and self.subject is None:
            raise ValueError(f"task {self.n}: a review names the artifact it reviews")
        if self.revision is not None:
            if self.stage != REVISION_STAGES[self.lane]:
                raise ValueError(f"task {self.n}: a {self.stage} task is not a revision of {self.lane}")
            if self.revision.parent >= self.n:
                raise ValueError(f"task {self.n}: a revision's parent review {self.revision.parent} comes after it")
        return self


class DoneTask(Doc):
    n: Positive
    stage: Stage
    candidate: Candidate
    by: Token
    done_at: Instant
    enqueued: Positive | None = None  # the one task this transition enqueued, if any


class Escalation(Doc):
    stage: Stage  # the stage the owner is asked about
    reason: Annotated[StrictStr, Field(min_length=1, max_length=300)]
    at: Instant
    revision: Revision | None = None  # the revision the owner's granted round carries on (parent, input, log)
    abandons: Count = 0  # an abandoned task past its cap: how often its run was confirmed gone
    subject: ArtifactRef | None = None  # ...and, for a review task, the artifact the granted round reviews


class Work(Doc):
    """One candidate a lane holds as current work (currentWip): no later Top-N evicts it."""

    candidate: Candidate
    product: Annotated[StrictStr, Field(pattern=r"^[a-z0-9][a-z0-9-]{0,31}$")]
    stage: Stage
    started_at: Instant
    decision: Positive | None = None  # maturation: the durable GO decision it started from
    criteria: Sha256 | None = None  # promotion: exit criteria frozen at the brief
    verifier: Token | None = None  # promotion: the exit verifier named by the brief
    criteria_frozen: StrictBool = False  # promotion: the reviewer's PASS froze criteria and verifier
    verified: ArtifactRef | None = None  # the latest verify artifact
    verified_passed: StrictBool | None = None
    boundary: Sha256 | None = None  # maturation: the MVP boundary frozen before the first slice
    metrics: Annotated[tuple[MetricName, ...], Field(max_length=16)] = ()  # the boundary's success metrics
    slice_metrics: Annotated[tuple[MetricName, ...], Field(max_length=16)] = ()  # the current slice's
    slices: Count = 0
    revisions: Count = 0
    retries: Count = 0
    grants: Count = 0  # extra rounds the owner granted on escalation, of the current counter (reset with it)
    escalation: Escalation | None = None
    artifacts: Annotated[tuple[ArtifactRef, ...], Field(max_length=8)] = ()  # the latest per stage


class HistoryEntry(Doc):
    candidate: Candidate
    outcome: Outcome
    at: Instant
    decision: Positive | None = None


class LaneRecord(Doc):
    lane: LaneName
    wip: Annotated[tuple[Work, ...], Field(max_length=4)] = ()
    tasks: Annotated[tuple[Task, ...], Field(max_length=4)] = ()
    done: Annotated[tuple[DoneTask, ...], Field(max_length=MAX_DONE_KEPT)] = ()
    tasks_done: Count = 0
    history: Annotated[tuple[HistoryEntry, ...], Field(max_length=MAX_HISTORY_KEPT)] = ()
    completed: Count = 0
    parked: Count = 0
    cooldown_until: Instant | None = None

    @model_validator(mode="after")
    def _consistent(self) -> LaneRecord:
        held = [work.candidate for work in self.wip]
        if len(set(held)) != len(held):
            raise ValueError(f"{self.lane}.wip: a candidate held twice")
        numbers = [task.n for task in self.tasks]
        if numbers != sorted(set(numbers)):
            raise ValueError(f"{self.lane}.tasks: numbers not ascending and unique")
        for task in self.tasks:
            if task.lane != self.lane:
                raise ValueError(f"{self.lane}.tasks: task {task.n} belongs to {task.lane}")
            if task.candidate not in held:
                raise ValueError(f"{self.lane}.tasks: task {task.n} is for {task.candidate}, not current work")
        for work in self.wip:
            open_tasks = [task for task in self.tasks if task.candidate == work.candidate]
            if len(open_tasks) != 1:
                raise ValueError(f"{self.lane}.wip: {work.candidate} has {len(open_tasks)} open tasks, not one")
            if open_tasks[0].stage != work.stage:
                raise ValueError(f"{self.lane}.wip: {work.candidate} is at {work.stage} but its task at "
                                 f"{open_tasks[0].stage}")
            if (work.stage == "escalation") != (work.escalation is not None):
                raise ValueError(f"{self.lane}.wip: {work.candidate}: an escalation stage and record go together")
            revision = open_tasks[0].revision or (work.escalation.revision if work.escalation else None)
            if revision is not None and revision.failed_starts > work.revisions:
                raise ValueError(f"{self.lane}.wip: {work.candidate}: {revision.failed_starts} failed starts of its "
                                 f"revision, above the {work.revisions} rounds reserved")
            if work.escalation is not None and work.escalation.revision is not None and (
                    work.escalation.stage != REVISION_STAGES[self.lane]):
                raise ValueError(f"{self.lane}.wip: {work.candidate}: an escalation at {work.escalation.stage} "
                                 "carries a revision")
            if work.escalation is not None and work.escalation.abandons and (
                    (work.escalation.subject is not None) != (work.escalation.stage in REVIEW_STAGES[self.lane])):
                raise ValueError(f"{self.lane}.wip: {work.candidate}: an abandoned {work.escalation.stage} task's "
                                 "escalation carries its subject exactly when it is a review")
            _check_work(self.lane, work)
        if len(self.done) > self.tasks_done:
            raise ValueError(f"{self.lane}.done: more kept than done")
        if len(self.history) > self.completed + self.parked:
            raise ValueError(f"{self.lane}.history: more kept than ended")
        return self

    def work_of(self, candidate: str) -> Work | None:
        return next((work for work in self.wip if work.candidate == candidate), None)

    def task(self, n: int) -> Task | None:
        return next((task for task in self.tasks if task.n == n), None)


def _check_work(lane: str, work: Work) -> None:
    where = f"{lane}.wip[{work.candidate}]"
    stages = STAGES[lane]
    stage_index = stages.index(work.escalation.stage if work.escalation else work.stage)
    if lane == "promotion":
        if (work.criteria is None) != (work.verifier is None):
            raise ValueError(f"{where}: criteria and verifier are frozen together")
        if stage_index > stages.index("brief") and work.criteria is None:
            raise ValueError(f"{where}: past the brief without criteria")
        if stage_index > stages.index("review") and not work.criteria_frozen:
            raise ValueError(f"{where}: past the review without frozen criteria")
        if work.criteria_frozen and work.criteria is None:
            raise ValueError(f"{where}: frozen criteria missing")
        if work.boundary is not None or work.decision is not None or work.slices:
            raise ValueError(f"{where}: a promotion has no boundary, GO decision or slices")
        if work.stage == "decide" and work.verified is None:
            raise ValueError(f"{where}: at decide without a verify artifact")
    else:
        if work.decision is None:
            raise ValueError(f"{where}: maturation starts only from a GO decision")
        if stage_index > stages.index("boundary") and work.boundary is None:
            raise ValueError(f"{where}: past the MVP boundary without freezing it")
        if work.criteria is not None or work.verifier is not None or work.criteria_frozen:
            raise ValueError(f"{where}: a maturation has no promotion criteria")
        if (work.boundary is None) != (not work.metrics):
            raise ValueError(f"{where}: the boundary and its success metrics are frozen together")
        if work.stage in ("verify", "review") and not work.slice_metrics:
            raise ValueError(f"{where}: a slice under verification or review names its success metrics")
        if not set(work.slice_metrics) <= set(work.metrics):
            raise ValueError(f"{where}: a slice metric the boundary does not name")
        if stage_index > stages.index("boundary") and work.slices < 1:
            raise ValueError(f"{where}: past the boundary without a slice")


class GateDecision(Doc):
    """A durable GO / PIVOT / PARK decision, recorded by the promotion reviewer at decide."""

    n: Positive
    candidate: Candidate
    product: Annotated[StrictStr, Field(pattern=r"^[a-z0-9][a-z0-9-]{0,31}$")]
    verdict: Verdict
    at: Instant
    criteria: Sha256
    verifier_artifact: Sha256
    consumed: StrictBool = False  # a GO maturation took in


class Approval(Doc):
    """An owner approval record for one external action on one candidate; used at most once."""

    id: Token
    candidate: Candidate
    action: ExternalAction
    requested_by: Token
    requested_at: Instant
    reason: Annotated[StrictStr, Field(min_length=1, max_length=300)]
    decided_by: Token | None = None
    decided_at: Instant | None = None
    approved: StrictBool | None = None
    used_at: Instant | None = None
    used_by: Token | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Approval:
        if len({self.decided_by is None, self.decided_at is None, self.approved is None}) != 1:
            raise ValueError(f"approval {self.id}: a decision names who, when and what together")
        if (self.used_at is None) != (self.used_by is None):
            raise ValueError(f"approval {self.id}: a use names who and when together")
        if self.used_at is not None and self.approved is not True:
            raise ValueError(f"approval {self.id}: used without the owner's approval")
        return self


class PipelineState(Doc):
    protocol: Literal["sf-pipeline/1"]
    settings: PipelineSettings
    settings_revision: Positive
    updated_at: Instant
    top_n: TopN | None = None
    candidates: Annotated[tuple[CandidateRecord, ...], Field(max_length=MAX_CANDIDATES)] = ()
    consumed: Annotated[tuple[Candidate, ...], Field(max_length=MAX_CONSUMED)] = ()  # ever entered promotion
    promotion: LaneRecord
    maturation: LaneRecord
    decisions: Annotated[tuple[GateDecision, ...], Field(max_length=MAX_DECISIONS)] = ()
    approvals: Annotated[tuple[Approval, ...], Field(max_length=MAX_APPROVALS)] = ()
    next_task: Positive = 1
    next_decision: Positive = 1

    @model_validator(mode="after")
    def _consistent(self) -> PipelineState:
        if self.promotion.lane != "promotion" or self.maturation.lane != "maturation":
            raise ValueError("promotion and maturation must be their own lanes")
        ids = [candidate.id for candidate in self.candidates]
        if len(set(ids)) != len(ids):
            raise ValueError("candidates: an ID appears twice")
        if len(set(self.consumed)) != len(self.consumed):
            raise ValueError("consumed: an ID appears twice")
        listed = {candidate.id for candidate in self.candidates if candidate.listed}
        if self.top_n is not None and listed != set(self.top_n.candidates):
            raise ValueError("candidates: the listed ones are not the latest Top-N")
        if self.top_n is None and listed:
            raise ValueError("candidates: listed without a Top-N")
        for lane in (self.promotion, self.maturation):
            if len(lane.wip) > self.settings.wip(lane.lane):
                raise ValueError(f"{lane.lane}.wip: {len(lane.wip)} above its WIP limit {self.settings.wip(lane.lane)}")
            for task in lane.tasks:
                if task.n >= self.next_task:
                    raise ValueError(f"{lane.lane}.tasks: task {task.n} is not yet numbered")
            for done in lane.done:
                if done.n >= self.next_task:
                    raise ValueError(f"{lane.lane}.done: task {done.n} is not yet numbered")
            for work in lane.wip:
                if work.revisions > self.settings.max_revisions + work.grants:
                    raise ValueError(f"{lane.lane}.wip[{work.candidate}]: revisions above their cap")
                if work.retries > self.settings.max_retries + work.grants:
                    raise ValueError(f"{lane.lane}.wip[{work.candidate}]: retries above their cap")
                if work.slices > self.settings.max_slices:
                    raise ValueError(f"{lane.lane}.wip[{work.candidate}]: slices above their cap")
        known = set(ids)
        for work in self.promotion.wip:
            if work.candidate not in known:
                raise ValueError(f"promotion.wip: {work.candidate} is not a kept candidate")
            if work.candidate not in self.consumed:
                raise ValueError(f"promotion.wip: {work.candidate} is not recorded as consumed")
        numbers = [decision.n for decision in self.decisions]
        if numbers != sorted(set(numbers)) or any(n >= self.next_decision for n in numbers):
            raise ValueError("decisions: numbers not ascending, unique and issued")
        by_number = {decision.n: decision for decision in self.decisions}
        for work in self.maturation.wip:
            decision = by_number.get(work.decision or 0)
            if decision is None or decision.verdict != "GO" or not decision.consumed:
                raise ValueError(f"maturation.wip: {work.candidate} holds no consumed GO decision")
            if decision.candidate != work.candidate:
                raise ValueError(f"maturation.wip: {work.candidate} holds another candidate's GO")
        approval_ids = [approval.id for approval in self.approvals]
        if len(set(approval_ids)) != len(approval_ids):
            raise ValueError("approvals: an ID appears twice")
        return self

    def lane(self, name: str) -> LaneRecord:
        return self.promotion if name == "promotion" else self.maturation

    def candidate(self, candidate_id: str) -> CandidateRecord | None:
        return next((candidate for candidate in self.candidates if candidate.id == candidate_id), None)

    def held(self) -> set[str]:
        return {work.candidate for lane in (self.promotion, self.maturation) for work in lane.wip}


WORD = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
