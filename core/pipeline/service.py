"""PipelineLanes: the staged lanes' service over an injected journal and clock.

Each command runs the schedule's loop (`command_loop`): planned once under the journal's write lock,
recorded as planned. A command's ID and payload come from the request alone, so an identical retry
replays its receipt and writes nothing, and a different request under a recorded ID is CONFLICT. The
stored state is parsed and checked on every read (any defect is CORRUPT and nothing is written over
it), and each decision checks the state it is about to store as a reader of it would.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pendulum import DateTime

from factory_schedule.store import (
    CanonicalJsonError,
    Decision,
    JournalCorruptError,
    NewEvent,
    canonical_digest,
    canonical_json,
)
from factory_schedule.store import CommandJournal as Journal  # the protocol: no database library loads

from .. import owner
from ..clock import Clock, as_utc
from ..command_loop import COMMAND_ROUNDS, CommandLoop, Planned
from ..commission import parse_commission
from ..errors import ScheduleError
from ..service import LifecycleSchedule
from ..text import checked_document, checked_token
from . import approvals, claims, rules, scheduled, transitions
from .codec import PipelineCodec
from .contracts import contract_fields
from .errors import PipelineError
from .model import (
    CANDIDATE_PATTERN,
    EXTERNAL_ACTIONS,
    LANES,
    MAX_PARTIAL,
    MAX_STATE_BYTES,
    PIPELINE_AGGREGATE,
    REVIEW_STAGES,
    STAGES,
    WEEK_PATTERN,
    PipelineState,
)

_CANDIDATE = re.compile(CANDIDATE_PATTERN)
_WEEK = re.compile(WEEK_PATTERN)
_PRODUCT = re.compile(r"^[a-z0-9][a-z0-9-]{0,31}$")
_WORD = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
ESCALATION_DECISIONS = ("revise", "park")


@dataclass(frozen=True)
class PipelineResult:
    """What a pipeline command answers: its command ID, the journal version, whether it replayed, and the
    command's own result (the same document on a replay, read back from the receipt)."""

    command_id: str
    version: int
    replayed: bool
    result: dict[str, Any]


@dataclass(frozen=True)
class ApprovalUse(PipelineResult):
    """An external action's use of the owner's approval: `licensed` only for the use that recorded it. A replay
    of that use (a retried run) answers the same recorded document with `licensed` false: the action was
    licensed once, to the run that first asked, and a run that sees false does not act again."""

    licensed: bool


# A claim that found nothing to claim (nothing written): the rules' own answer, under its public name.
ClaimIdle = rules.Idle


_Command = Planned[rules.PipelineChange]
Plan = Callable[[PipelineState | None, DateTime], _Command | rules.Idle]


# -- input checks (INVALID, naming the field; nothing written) --------------------------------------


def _pipeline_invalid(error: ScheduleError) -> PipelineError:
    """The engine's text rule (core/text.py) refuses with ScheduleError; the lanes answer PipelineError."""
    return PipelineError("INVALID", error.message)


def text(name: str, value: Any, limit: int = 200) -> str:
    """An identity or short free text, under the engine's one text rule (`checked_token`)."""
    try:
        return checked_token(name, value, limit)
    except ScheduleError as error:
        raise _pipeline_invalid(error) from None


def _matching(name: str, value: Any, pattern: re.Pattern[str], what: str) -> str:
    if not isinstance(value, str) or not pattern.match(value):
        raise PipelineError("INVALID", f"{name}: {what} is needed, got {value!r}")
    return value


def _positive(name: str, value: Any, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise PipelineError("INVALID", f"{name}: a positive integer at most {maximum} is needed, got {value!r}")
    return value


def _lane(value: Any) -> str:
    if value not in LANES:
        raise PipelineError("INVALID", f"lane: promotion or maturation, got {value!r}")
    return str(value)


def _json_object(name: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise PipelineError("INVALID", f"{name}: a JSON object is needed")
    try:
        checked_document(name, value)  # the text rule on every key and string, and a depth limit
    except ScheduleError as error:
        raise _pipeline_invalid(error) from None
    try:
        canonical_json(value)
    except CanonicalJsonError as error:
        raise PipelineError("INVALID", f"{name}: {error}") from None
    return value


def _top_n_entries(entries: Any) -> list[dict[str, Any]]:
    if not isinstance(entries, list) or not entries:
        raise PipelineError("INVALID", "candidates: a non-empty list is needed")
    checked: list[dict[str, Any]] = []
    for index, entry in enumerate(entries):
        where = f"candidates[{index}]"
        if not isinstance(entry, dict) or not {"candidate", "product", "rank"} <= set(entry) or not set(entry) <= {
                "candidate", "product", "rank", "evidence"}:
            raise PipelineError("INVALID", f"{where}: {{candidate, product, rank, evidence}} is needed")
        evidence = entry.get("evidence", [])
        if not isinstance(evidence, list) or len(evidence) > 8:
            raise PipelineError("INVALID", f"{where}.evidence: a list of at most 8 references is needed")
        checked.append({
            "candidate": _matching(f"{where}.candidate", entry["candidate"], _CANDIDATE,
                                   "a normalized candidate ID (a-z, 0-9, '-', at most 64)"),
            "product": _matching(f"{where}.product", entry["product"], _PRODUCT, "a Product ID"),
            "rank": _positive(f"{where}.rank", entry["rank"], 20),
            "evidence": [text(f"{where}.evidence[{i}]", ref, 300) for i, ref in enumerate(evidence)],
        })
    ids = [entry["candidate"] for entry in checked]
    ranks = [entry["rank"] for entry in checked]
    if len(set(ids)) != len(ids):
        raise PipelineError("INVALID", "candidates: a candidate is listed twice")
    if sorted(ranks) != list(range(1, len(ranks) + 1)):
        raise PipelineError("INVALID", "candidates: ranks must be 1..N, each once")
    return checked


# -- the state ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class LaneView:
    """One staged lane as the runner interface and the dashboard read it."""

    lane: str
    scheduler: str
    reviewer: str
    wip_limit: int
    wip: list[dict[str, Any]]
    tasks: list[dict[str, Any]]
    done: list[dict[str, Any]]
    tasks_done: int
    history: list[dict[str, Any]]
    completed: int
    parked: int
    cooldown_until: str | None
    stages: list[str]
    review_stages: list[str]
    allowed_transitions: dict[str, list[str]]
    contracts: dict[str, list[str]]
    eligible: list[str]


def _named(doc: dict[str, Any]) -> dict[str, Any]:
    """A task as a run reads it: its number is `task`, as a claim's result and every command name it (the
    stored document keeps its short `n`)."""
    return {"task": doc["n"], **{key: value for key, value in doc.items() if key != "n"}}


class PipelineLanes:
    """Promotion and maturation over one journal's `pipeline/lanes` aggregate."""

    def __init__(self, journal: Journal, clock: Clock, *, max_rounds: int = COMMAND_ROUNDS,
                 schedule: LifecycleSchedule | None = None) -> None:
        """`schedule`: the schedule of the same journal this process already holds (a runner's, which started or
        read its segment), through which a claim reads the schedule: a state that reader has read or written is
        not checked again, every other is checked as every read checks it. Without it the lanes read through a
        reader of their own; a reader of another journal (another URL) is refused with ValueError."""
        if schedule is not None and schedule.journal.url != journal.url:
            raise ValueError(f"the schedule reader given is on another journal ({schedule.journal.where}, "
                             f"not {journal.where})")
        self.journal = journal
        self.clock = clock
        self.max_rounds = max_rounds
        self._schedule = schedule if schedule is not None else LifecycleSchedule(journal, clock)  # for admission
        self._codec = PipelineCodec()  # the last state read or written, and its members' checked texts

    def _now(self) -> DateTime:
        return as_utc(self.clock.now())

    def _load(self) -> tuple[int, PipelineState | None]:
        try:
            version, stored = self.journal.load_text(PIPELINE_AGGREGATE)
        except JournalCorruptError as error:  # the state is not the one its command sealed
            raise PipelineError("CORRUPT", str(error)) from None
        if stored is None:
            return version, None
        return version, self._codec.read(stored)

    def state(self) -> PipelineState | None:
        """The checked state (CORRUPT on any defect), or None before any settings."""
        return self._load()[1]

    def _run(self, plan: Plan) -> PipelineResult | rules.Idle:
        # as_text: the decision stores the state the plan read, so the journal need not decode it again.
        loop = CommandLoop(self.journal, self.clock, PIPELINE_AGGREGATE, self._load, self._decision, PipelineError,
                           self.max_rounds, as_text=True)
        ran = loop.run(plan)
        if isinstance(ran, rules.Idle):
            return ran
        outcome = ran.outcome
        return PipelineResult(ran.planned.command_id, outcome.version, outcome.replayed, outcome.result)

    def _decision(self, planned: _Command, _at_version: int) -> Decision:
        change = planned.change
        assert change is not None  # the loop runs no decision for a recorded command
        # In parts, one per member (its lanes, candidates, decisions...): a command rewrites the few it changed,
        # checked as a reader of the stored bytes checks them, before they are stored.
        stored, _after = self._codec.write(change.state)
        size = len(stored.encode("utf-8"))
        if size > MAX_STATE_BYTES:
            raise PipelineError("LIMIT", f"the pipeline would grow to {size} bytes, above {MAX_STATE_BYTES}")
        return Decision(events=[NewEvent(change.event_type, change.event_data)], state=stored, result=change.result)

    def _command(self, command_id: str, payload: dict[str, Any],
                 decide: Callable[[PipelineState, DateTime], rules.PipelineChange | rules.Idle],
                 needs_state: bool = True) -> PipelineResult | rules.Idle:
        def plan(state: PipelineState | None, now: DateTime) -> _Command | rules.Idle:
            if self.journal.receipt(command_id) is not None:
                return Planned(command_id, payload, None)
            current = rules.configured(state) if needs_state else state
            change = decide(current, now)  # type: ignore[arg-type]
            if isinstance(change, rules.Idle):
                return change
            return Planned(command_id, payload, change)

        return self._run(plan)

    @staticmethod
    def _done(ran: PipelineResult | rules.Idle) -> PipelineResult:
        assert isinstance(ran, PipelineResult)
        return ran

    # -- the owner's records -----------------------------------------------------------------

    def _owner_checked(self, command_id: str, payload: dict[str, Any],
                       decide: Callable[[Any, DateTime], rules.PipelineChange],
                       ) -> Callable[[Any, DateTime], rules.PipelineChange]:
        """`decide`, first refusing UNSIGNED or BAD_SIGNATURE (nothing written) an owner record the journal's owner
        key did not sign (a journal without a key accepts it unsigned)."""

        def checked(state: Any, now: DateTime) -> rules.PipelineChange:
            try:
                problem = owner.owner_record_problem(owner.load_owner(self.journal)[1], command_id, payload)
            except ScheduleError as error:
                raise PipelineError("CORRUPT", error.message) from None
            if problem is not None:
                raise PipelineError(*problem)
            return decide(state, now)

        return checked

    def record_settings(self, commission: Any, *, signer: owner.Signer | None = None) -> PipelineResult:
        """Adopt the `pipeline` settings of the schedule's current recorded commission revision (REVISION for any
        other document; only a newer revision changes them)."""
        try:
            parsed = parse_commission(commission)
        except ScheduleError as error:
            raise PipelineError("INVALID", error.message) from None
        if parsed.pipeline is None:
            raise PipelineError("INVALID", "pipeline: the commission carries no pipeline settings")
        settings = parsed.pipeline
        command_id = f"pipeline/settings/{parsed.revision}"
        document = {"revision": parsed.revision, "settings": settings.model_dump(mode="json", by_alias=True)}
        payload = owner.signed(self.journal, signer, command_id, document)

        def decide(state: PipelineState | None, now: DateTime) -> rules.PipelineChange:
            view = self._schedule.read()
            problem = (scheduled.recorded_revision_problem(view, parsed)
                       or scheduled.settings_problem(view, settings))
            if problem is not None:
                raise problem
            return rules.record_settings(state, settings, parsed.revision, now)

        return self._done(self._command(command_id, payload, self._owner_checked(command_id, payload, decide),
                                        needs_state=False))

    def record_top_n(self, *, week: Any, candidates: Any) -> PipelineResult:
        """A week's ranked Top-N from the portfolio runs: one per ISO week, in order."""
        week = _matching("week", week, _WEEK, "an ISO week (YYYY-Www)")
        entries = _top_n_entries(candidates)
        payload = {"week": week, "candidates": entries}
        return self._done(self._command(f"pipeline/top-n/{week}", payload,
                                        lambda state, now: rules.record_top_n(state, week, entries, now)))

    # -- runs -------------------------------------------------------------------------------

    def claim(self, *, lane: Any, run: Any = None, runner: Any, occurrence: Any = None) -> PipelineResult | ClaimIdle:
        """The lane's next task for this run (a scheduler run gets work, a reviewer run reviews), or idle.

        A run the commission schedules names `occurrence`, the one the schedule admitted for its runner
        token (`run` is then the occurrence's and may be left out): one claim per occurrence, whose retry
        replays the task it claimed; a later segment's runner of the same occurrence (after a deferral)
        takes over that task while it is still claimed by an earlier segment, else is answered idle
        (`occurrence-reported`, or `occurrence-handed-back` when a supervisor returned it). Without an
        occurrence (a run the commission does not schedule), one claim per runner token and lane. See
        `scheduled`."""
        lane = _lane(lane)
        runner = text("runner", runner)
        if occurrence is not None:
            named = None if run is None else _matching("run", run, _WORD, "a run identity")
            occurrence_id, run = scheduled.scheduled_run(lane, named, occurrence)
            return self._claim_occurrence(lane, run, runner, occurrence_id)
        run = _matching("run", run, _WORD, "a run identity")
        payload = {"lane": lane, "run": run, "runner": runner}
        command_id = f"pipeline/{lane}/claim/{runner}"

        def plan(state: PipelineState | None, now: DateTime) -> _Command | rules.Idle:
            problem = scheduled.unscheduled_problem(self._schedule.read(), run)
            if problem is not None:
                raise problem
            recorded = self.journal.receipt(command_id)
            if recorded is not None and recorded.digest == canonical_digest(payload):
                return Planned(command_id, payload, None)  # this run's retry: replay its claim
            answer = claims.claim(rules.configured(state), lane, run, runner, now)
            if recorded is not None:  # one claim per token and lane: an idle answer says why, else CONFLICT
                if isinstance(answer, rules.Idle):
                    return answer
                raise PipelineError("CONFLICT", f"{command_id} was recorded with a different request")
            return answer if isinstance(answer, rules.Idle) else Planned(command_id, payload, answer)

        return self._run(plan)

    def _claim_occurrence(self, lane: str, run: str, runner: str, occurrence_id: str) -> PipelineResult | ClaimIdle:
        command_id = scheduled.occurrence_claim_command_id(lane, occurrence_id)
        payload = {"lane": lane, "run": run, "runner": runner, "occurrence": occurrence_id}

        def plan(state: PipelineState | None, now: DateTime) -> _Command | rules.Idle:
            # Admitted first, replay or not: a retry after its segment ended must not hand the task back.
            view = self._schedule.read()
            problem = scheduled.admitted_problem(view, occurrence_id, runner)
            if problem is not None:
                raise problem
            recorded = self.journal.receipt(command_id)
            if recorded is not None and recorded.digest == canonical_digest(payload):
                return Planned(command_id, payload, None)  # this run's retry: replay its claim
            current = rules.configured(state)
            as_run = scheduled.adopted_run(current.settings, lane, run)
            if recorded is not None:  # an earlier segment of this occurrence claimed: one claim per occurrence,
                earlier = scheduled.earlier_runners(view, occurrence_id, runner)
                return self._hand_over(lane, as_run, runner, occurrence_id, recorded.result.get("task"), earlier,
                                       state, now)
            change = claims.claim(current, lane, as_run, runner, now)
            return change if isinstance(change, rules.Idle) else Planned(command_id, payload, change)

        return self._run(plan)

    def _hand_over(self, lane: str, run: str, runner: str, occurrence_id: str, task: Any, earlier: frozenset[str],
                   state: PipelineState | None, now: DateTime) -> _Command | rules.Idle:
        """...whose task this resumed segment takes over, once (its retry replays the hand-over)."""
        command_id = scheduled.hand_over_command_id(lane, occurrence_id, runner)
        payload = {"lane": lane, "run": run, "runner": runner, "occurrence": occurrence_id, "task": task}
        recorded = self.journal.receipt(command_id)
        if recorded is not None and recorded.digest == canonical_digest(payload):
            return Planned(command_id, payload, None)
        if not isinstance(task, int):
            raise PipelineError("CORRUPT", f"the claim of {occurrence_id} names no task")
        change = claims.hand_over(rules.configured(state), lane, task, run, runner, occurrence_id, earlier, now)
        return change if isinstance(change, rules.Idle) else Planned(command_id, payload, change)

    def report(self, *, lane: Any, task: Any, runner: Any, report: Any) -> PipelineResult:
        """Complete a claimed work task with its stage's artifact; a reviewer's task with its review."""
        lane = _lane(lane)
        n = _positive("task", task, 10**9)
        runner = text("runner", runner)
        report = _json_object("report", report)
        payload = {"lane": lane, "task": n, "runner": runner, "report": report}
        return self._done(self._command(f"pipeline/{lane}/task/{n}/done", payload,
                                        lambda state, now: transitions.complete(state, lane, n, runner, report, now)))

    review = report  # a review is the report of a review task; the task's kind decides who may send it

    def abandon(self, *, lane: Any, task: Any, runner: Any, confirmed_by: Any, evidence: Any,
                partial: Any = ()) -> PipelineResult:
        """A supervisor confirms a claimed task's run is gone. A revision task's interrupted start is a failed
        start of its reserved round (kept with `partial`, the references of any partial output; requeued while
        the repair cap remains, else escalated); any other task goes back to pending as itself."""
        lane = _lane(lane)
        n = _positive("task", task, 10**9)
        runner = text("runner", runner)
        confirmed_by = text("confirmedBy", confirmed_by)
        evidence = text("evidence", evidence, 500)
        if not isinstance(partial, (list, tuple)) or len(partial) > MAX_PARTIAL:
            raise PipelineError("INVALID", f"partial: a list of at most {MAX_PARTIAL} references is needed")
        kept = tuple(text(f"partial[{i}]", ref, 300) for i, ref in enumerate(partial))
        payload: dict[str, Any] = {"lane": lane, "task": n, "runner": runner, "confirmedBy": confirmed_by,
                                   "evidence": evidence}
        if kept:  # absent when empty, so a command recorded before partial output existed replays unchanged
            payload["partial"] = list(kept)
        return self._done(self._command(
            f"pipeline/{lane}/task/{n}/abandon/{runner}", payload,
            lambda state, now: claims.abandon(state, lane, n, runner, confirmed_by, evidence, now, kept)))

    # -- the owner's decisions --------------------------------------------------------------------

    def decide_escalation(self, *, lane: Any, task: Any, decided_by: Any, decision: Any,
                          reason: Any, signer: owner.Signer | None = None) -> PipelineResult:
        """The owner's answer to an escalation: an owner record, signed when the journal holds an owner key."""
        lane = _lane(lane)
        n = _positive("task", task, 10**9)
        decided_by = text("decidedBy", decided_by)
        if decision not in ESCALATION_DECISIONS:
            raise PipelineError("INVALID", f"decision: revise or park, got {decision!r}")
        reason = text("reason", reason, 300)
        command_id = f"pipeline/{lane}/task/{n}/done"
        payload = owner.signed(self.journal, signer, command_id, {"lane": lane, "task": n, "decidedBy": decided_by,
                                                                  "decision": decision, "reason": reason})
        return self._done(self._command(command_id, payload, self._owner_checked(
            command_id, payload,
            lambda state, now: transitions.decide_escalation(state, lane, n, decided_by, decision, reason, now))))

    def request_approval(self, *, approval: Any, candidate: Any, action: Any, requested_by: Any,
                         reason: Any) -> PipelineResult:
        approval = _matching("approval", approval, _WORD, "an approval ID")
        candidate = _matching("candidate", candidate, _CANDIDATE, "a normalized candidate ID")
        if action not in EXTERNAL_ACTIONS:
            raise PipelineError("INVALID", f"action: one of {', '.join(EXTERNAL_ACTIONS)}, got {action!r}")
        requested_by = text("requestedBy", requested_by)
        reason = text("reason", reason, 300)
        payload = {"approval": approval, "candidate": candidate, "action": action, "requestedBy": requested_by,
                   "reason": reason}
        return self._done(self._command(
            f"pipeline/approval/{approval}/request", payload,
            lambda state, now: approvals.request_approval(state, approval, candidate, action, requested_by, reason,
                                                      now)))

    def decide_approval(self, *, approval: Any, decided_by: Any, approved: Any,
                        signer: owner.Signer | None = None) -> PipelineResult:
        """The owner's approval record (or refusal) of a requested external action: an owner record, signed when
        the journal holds an owner key, and never by the one who requested it (SELF_DECIDED)."""
        approval = _matching("approval", approval, _WORD, "an approval ID")
        decided_by = text("decidedBy", decided_by)
        if not isinstance(approved, bool):
            raise PipelineError("INVALID", f"approved: true or false, got {approved!r}")
        command_id = f"pipeline/approval/{approval}/decision"
        payload = owner.signed(self.journal, signer, command_id,
                               {"approval": approval, "decidedBy": decided_by, "approved": approved})
        return self._done(self._command(command_id, payload, self._owner_checked(
            command_id, payload,
            lambda state, now: approvals.decide_approval(state, approval, decided_by, approved, now))))

    def record_external_action(self, *, approval: Any, candidate: Any, action: Any, runner: Any) -> ApprovalUse:
        """Before a public publish, a payment or account change, an external-sensitive write or a legal-risk
        acceptance: uses the owner's approval record, or is refused APPROVAL_REQUIRED with nothing written. The
        answer's `licensed` says whether this call may act: true once, false on every replay."""
        approval = _matching("approval", approval, _WORD, "an approval ID")
        candidate = _matching("candidate", candidate, _CANDIDATE, "a normalized candidate ID")
        if action not in EXTERNAL_ACTIONS:
            raise PipelineError("INVALID", f"action: one of {', '.join(EXTERNAL_ACTIONS)}, got {action!r}")
        runner = text("runner", runner)
        payload = {"approval": approval, "candidate": candidate, "action": action, "runner": runner}
        used = self._done(self._command(
            f"pipeline/approval/{approval}/use", payload,
            lambda state, now: approvals.record_external_action(state, approval, candidate, action, runner, now)))
        return ApprovalUse(used.command_id, used.version, used.replayed, used.result, licensed=not used.replayed)

    # -- views ------------------------------------------------------------------------------

    def lane_view(self, lane: Any) -> LaneView | None:
        lane = _lane(lane)
        state = self.state()
        if state is None:
            return None
        record = state.lane(lane)
        stages = [*STAGES[lane], "escalation"]
        return LaneView(
            lane=lane, scheduler=state.settings.scheduler(lane), reviewer=state.settings.reviewer(lane),
            wip_limit=state.settings.wip(lane), wip=[w.doc() for w in record.wip],
            tasks=[_named(t.doc()) for t in record.tasks], done=[_named(d.doc()) for d in record.done],
            tasks_done=record.tasks_done, history=[h.doc() for h in record.history], completed=record.completed,
            parked=record.parked, cooldown_until=record.cooldown_until, stages=stages,
            review_stages=sorted(REVIEW_STAGES[lane]),
            allowed_transitions={k: list(v) for k, v in rules.ALLOWED_TRANSITIONS[lane].items()},
            contracts={stage: contract_fields(lane, stage) for stage in STAGES[lane]},
            eligible=[c.id for c in rules.eligible(state)] if lane == "promotion" else
            [f"{d.candidate}#{d.n}" for d in state.decisions if d.verdict == "GO" and not d.consumed],
        )
