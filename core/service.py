"""LifecycleSchedule: read, plan, execute through the journal, re-plan on a conflict.

This is all the I/O the engine does, and it is injected: the journal and the clock.
Each method plans at the version it read with one clock reading; the decision runs
inside the journal's transaction with a second reading and must reach the same
command, or the method re-plans (at most 16 rounds, then CONTENDED). A command's
ID and payload come from the request alone, so a retry at any later time is the
same command and replays its receipt.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Never, TypeVar

from pendulum import DateTime

from factory_schedule.store import (
    CanonicalJsonError,
    CommandConflictError,
    Decision,
    JournalCorruptError,
    Outcome,
    VersionConflictError,
    canonical_json,
)
from factory_schedule.store import CommandJournal as Journal  # the protocol: no database library loads

from . import calls, lifecycle, owner, records
from .calendar import nights_from
from .change import Change
from .clock import Clock, as_utc
from .commission import commission_document, parse_commission
from .errors import ScheduleError, corrupt, invalid
from .identity import OccurrenceRef, parse_occurrence_id
from .limits import SCHEDULE_AGGREGATE, SCHEDULE_LIMITS
from .results import (
    CallAdmission,
    CallEnd,
    CallRefusal,
    CommandResult,
    LanePlan,
    OccurrenceStatusView,
    ScheduleView,
    Tick,
)
from .schedule_checks import Schedule
from .schedule_codec import StateCodec
from .schedule_document import ACCOUNTS, DEFERRAL_REASONS, SETTLEMENT_STATUSES, Occurrence, at
from .text import checked_document, checked_token, shown
from .views import lane_plans, occurrence_status
from .zones import monday_of_week

SETTLED_EVENT = "occurrence-settled"
MAX_HOLDER_SEARCH_DAYS = 400


class _Replan(Exception):
    """The reading inside the transaction no longer supports the plan."""


Answer = TypeVar("Answer")


@dataclass(frozen=True)
class _Answer(Generic[Answer]):
    value: Answer


@dataclass(frozen=True)
class _Command:
    command_id: str
    payload: dict[str, Any]
    change: Change | None  # None for a recorded command answered from its receipt
    meta: dict[str, Any]


Plan = Callable[[Schedule | None, DateTime], "_Answer[Answer] | _Command"]
_Ran = tuple[_Command, Outcome, Schedule | None]  # the command run, the journal's outcome, the state after


def _token(name: str, value: Any, limit: int = 200) -> str:
    return checked_token(name, value, limit)


def _positive(name: str, value: Any, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1 or (maximum and value > maximum):
        bound = f" at most {maximum}" if maximum else ""
        raise invalid(f"{name}: a positive integer{bound} is needed, got {shown(value)}")
    return value


class LifecycleSchedule:
    """The schedule of one journal's `discovery/schedule` aggregate."""

    def __init__(self, journal: Journal, clock: Clock, *, max_rounds: int = SCHEDULE_LIMITS.max_rounds) -> None:
        self.journal = journal
        self.clock = clock
        self.max_rounds = max_rounds
        # The last state read or written, by version and stored text: an unchanged text parses to the
        # same answer, so it is checked whole only when its bytes change (a tampered row always is),
        # and a decision checks only the lanes it changed (`schedule_codec`).
        self._codec = StateCodec()
        # Whole records of settled occurrences `recent` keeps without their calls, read from their settlement
        # events (a settled record never changes again) and checked against what the state keeps.
        self._whole_records: dict[str, tuple[Occurrence | None, Occurrence]] = {}  # id: (kept, whole)
        self._kept_checked: Schedule | None = None  # the last state whose kept records were checked

    # -- reading -------------------------------------------------------------------------

    def _now(self) -> DateTime:
        return as_utc(self.clock.now())

    def _load(self) -> tuple[int, Schedule | None]:
        try:
            version, text = self.journal.load_text(SCHEDULE_AGGREGATE)
        except JournalCorruptError as error:  # the state is not the one its command sealed
            raise corrupt(str(error)) from None
        schedule = self._codec.read(version, text)
        if schedule is not None and schedule is not self._kept_checked:
            # A settled record kept without its calls must be exactly its settlement event's record, less
            # the calls: checked whenever the state is new to this engine, reading in one go the events of
            # the records it does not know yet. A lane that is the very (frozen) object of the last state
            # checked holds the very records compared then: only the other lanes' are compared.
            checked = self._kept_checked.state.lanes if self._kept_checked is not None else []
            seen = {id(lane_state) for lane_state in checked}
            kept = [o for lane_state in schedule.state.lanes if id(lane_state) not in seen
                    for o in lane_state.recent if o.elided is not None]
            unknown = [o.id for o in kept if not self._knows_whole(o)]
            if unknown:
                for occurrence_id, record in self._settled_records(unknown, version).items():
                    if record is not None:
                        self._remember_whole(occurrence_id, record)
            for occurrence in kept:
                self._whole(occurrence, version)
            self._kept_checked = schedule
        return version, schedule

    def _settled_records(self, occurrence_ids: list[str], up_to: int) -> dict[str, Occurrence | None]:
        """Records of settled occurrences, from their settlement events (None: not settled by `up_to`)."""
        commands = [f"{occurrence_id}/settle" for occurrence_id in occurrence_ids]
        found = self.journal.events_of(SCHEDULE_AGGREGATE, commands)
        records: dict[str, Occurrence | None] = {}
        for occurrence_id in occurrence_ids:
            events = found[f"{occurrence_id}/settle"]
            if not events or events[0].version > up_to:
                records[occurrence_id] = None
                continue
            if events[0].type != SETTLED_EVENT:
                raise corrupt(f"{occurrence_id}/settle recorded no settlement event")
            try:
                record = Occurrence.model_validate(events[0].data["occurrence"])
            except Exception:
                raise corrupt(f"{occurrence_id}: its settlement event does not hold a valid record") from None
            if record.elided is not None:
                raise corrupt(f"{occurrence_id}: its settlement event holds the record without its calls")
            records[occurrence_id] = record
        return records

    def _pruned(self, occurrence_id: str, up_to: int) -> Occurrence | None:
        """A settled occurrence that left the state: its record is its settlement event."""
        return self._settled_records([occurrence_id], up_to)[occurrence_id]

    def _find(self, schedule: Schedule | None, ref: OccurrenceRef) -> tuple[Occurrence | None, bool]:
        """(the occurrence, whether it left the state) or (None, False) when nothing knows it."""
        if schedule is None:
            raise ScheduleError("NOT_COMMISSIONED", "no commission has been recorded")
        lane_state = schedule.state.lane(ref.lane)
        if lane_state is not None:
            for occurrence in (lane_state.open, *lane_state.recent):
                if occurrence is not None and occurrence.id == ref.id:
                    return self._whole(occurrence, schedule.version), False
        pruned = self._pruned(ref.id, schedule.version)
        return pruned, pruned is not None

    def _knows_whole(self, kept: Occurrence) -> bool:
        """Whether the whole record of this kept one is known and reduces to it. A kept record is frozen and
        carried from state to state as the same object, so once compared it is recognised by identity."""
        known = self._whole_records.get(kept.id)
        if known is None:
            return False
        if known[0] is kept:
            return True
        if known[1].without_calls() != kept:
            return False
        self._whole_records[kept.id] = (kept, known[1])
        return True

    def _remember_whole(self, occurrence_id: str, record: Occurrence) -> None:
        if len(self._whole_records) >= 4 * SCHEDULE_LIMITS.max_lanes:
            self._whole_records.clear()
        self._whole_records[occurrence_id] = (None, record)

    def _whole(self, kept: Occurrence, version: int) -> Occurrence:
        """The whole record of an occurrence the state keeps, its calls included."""
        if kept.elided is None:
            return kept
        if not self._knows_whole(kept):
            record = self._pruned(kept.id, version)
            if record is None or record.without_calls() != kept:
                raise corrupt(f"{kept.id}: its settlement event does not hold the record the state keeps")
            self._remember_whole(kept.id, record)
            self._knows_whole(kept)
        return self._whole_records[kept.id][1]

    def _known(self, schedule: Schedule | None, ref: OccurrenceRef) -> tuple[Occurrence, bool]:
        """An occurrence a transition may name: in the state, or settled and pruned; else UNKNOWN_OCCURRENCE."""
        occurrence, pruned = self._find(schedule, ref)
        if occurrence is None:
            raise ScheduleError("UNKNOWN_OCCURRENCE", f"{ref.id} was never admitted")
        return occurrence, pruned

    # -- the command loop ----------------------------------------------------------------

    def _run(self, plan: Plan[Answer]) -> _Ran | _Answer[Answer]:
        for _ in range(self.max_rounds):
            now = self._now()
            # Read, plan and decide under the journal's write lock: writers queue rather than conflict.
            with self.journal.writing():
                version, schedule = self._load()
                try:
                    planned = plan(schedule, now)
                except JournalCorruptError as error:  # a receipt the plan looked up is not what was sealed
                    raise corrupt(str(error)) from None
                if isinstance(planned, _Answer):
                    return planned
                decided: list[tuple[str, Schedule]] = []
                decide = self._decision(plan, planned, version, schedule, decided)
                try:
                    outcome = self.journal.execute(SCHEDULE_AGGREGATE, planned.command_id, planned.payload, version,
                                                   decide, as_text=True)
                except (VersionConflictError, _Replan):
                    continue
                except CommandConflictError:
                    raise ScheduleError(
                        "CONFLICT", f"{planned.command_id} was recorded with a different request"
                    ) from None
                except JournalCorruptError as error:
                    raise corrupt(str(error)) from None
            if decided:
                new_text, after = decided[-1]  # a retried attempt decided again
                self._codec.remember(outcome.version, new_text, after)
                return planned, outcome, after
            return planned, outcome, schedule
        raise ScheduleError("CONTENDED", f"other writers kept committing; gave up after {self.max_rounds} rounds")

    def _decision(self, plan: Plan[Answer], planned: _Command, version: int, schedule: Schedule | None,
                  decided: list[tuple[str, Schedule]]) -> Callable[[Any, int], Decision]:
        """The decision the journal runs in its transaction: the clock read again, the same command
        planned again from the state it holds, and the new state re-read before it is stored."""

        def decide(_text: Any, at_version: int) -> Decision:
            if planned.change is None:
                raise corrupt(
                    f"{planned.command_id} is recorded in the schedule but the journal holds no receipt for it"
                )
            if at_version != version:  # the journal decides only at the version planned from; never here
                raise _Replan()
            # The stored text is the one planned from (same version, under the write lock): no need to read it.
            again = plan(schedule, self._now())
            if (not isinstance(again, _Command) or again.change is None
                    or again.command_id != planned.command_id or again.payload != planned.payload):
                raise _Replan()
            change = again.change
            after, new_text = self._codec.write(change.state, at_version + 1)
            if change.growing:
                size = len(new_text.encode("utf-8"))
                if size > SCHEDULE_LIMITS.max_state_bytes:
                    raise ScheduleError("LIMIT", f"the schedule would grow to {size} bytes, above the limit")
            decided.append((new_text, after))
            return Decision(events=change.events, state=new_text, result=change.result)

        return decide

    def _occurrence_in(self, schedule: Schedule | None, occurrence_id: str, lane_id: str) -> Occurrence | None:
        """The whole record of an occurrence the state keeps, else None (`lane_id`: the ID's own lane)."""
        if schedule is None:
            return None
        lane_state = schedule.state.lane(lane_id)
        if lane_state is None:
            return None
        for occurrence in (lane_state.open, *lane_state.recent):
            if occurrence is not None and occurrence.id == occurrence_id:
                return self._whole(occurrence, schedule.version)
        return None

    def _result(self, ran: _Ran | _Answer[Never], ref: OccurrenceRef | None = None) -> CommandResult:
        assert not isinstance(ran, _Answer)  # these commands always run
        planned, outcome, after = ran
        occurrence = self._occurrence_in(after, ref.id, ref.lane) if ref is not None else None
        return CommandResult(command_id=planned.command_id, version=outcome.version, replayed=outcome.replayed,
                             occurrence=occurrence, still_running=planned.meta.get("still_running"))

    # -- the owner's records -------------------------------------------------------------

    def record_commission(self, commission: Any, *, signer: owner.Signer | None = None) -> CommandResult:
        """The next commission revision: an owner record, signed by `signer` when the journal holds an owner key."""
        parsed = parse_commission(commission)
        command_id = f"discovery/commission/{parsed.revision}"
        payload = owner.signed(self.journal, signer, command_id, commission_document(parsed))

        def plan(schedule: Schedule | None, now: DateTime) -> _Answer[Never] | _Command:
            if self.journal.receipt(command_id) is not None:
                return _Command(command_id, payload, None, {})
            self._check_owner_record(command_id, payload)
            return _Command(command_id, payload, records.record_commission(schedule, parsed, now), {})

        ran = self._run(plan)
        assert not isinstance(ran, _Answer)
        return self._result(ran)

    def record_account(self, *, account: Any, sequence: Any, sign_in: Any, overage: Any,
                       recorded_by: Any, signer: owner.Signer | None = None) -> CommandResult:
        """An account record (sign-in and overage): an owner record, signed when the journal holds an owner key."""
        if account not in ACCOUNTS:
            raise invalid(f"account: one of {', '.join(ACCOUNTS)}, got {shown(account)}")
        _positive("sequence", sequence)
        if not isinstance(overage, bool):
            raise invalid(f"overage: true or false, got {shown(overage)}")
        payload = {"account": account, "sequence": sequence, "signIn": _token("signIn", sign_in),
                   "overage": overage, "recordedBy": _token("recordedBy", recorded_by)}
        command_id = f"discovery/account/{account}/{sequence}"
        payload = owner.signed(self.journal, signer, command_id, payload)

        def plan(schedule: Schedule | None, now: DateTime) -> _Answer[Never] | _Command:
            if self.journal.receipt(command_id) is not None:
                return _Command(command_id, payload, None, {})
            self._check_owner_record(command_id, payload)
            if schedule is None:
                raise ScheduleError("NOT_COMMISSIONED", "record a commission before account records")
            return _Command(command_id, payload, records.record_account(schedule, payload, now), {})

        ran = self._run(plan)
        assert not isinstance(ran, _Answer)
        return self._result(ran)

    def _check_owner_record(self, command_id: str, payload: dict[str, Any]) -> None:
        """UNSIGNED or BAD_SIGNATURE (nothing written) unless the journal's owner key signed this record."""
        problem = owner.owner_record_problem(owner.load_owner(self.journal)[1], command_id, payload)
        if problem is not None:
            raise ScheduleError(*problem)

    # -- the tick ------------------------------------------------------------------------

    def start(self, *, lane: Any, runner: Any) -> Tick:
        lane_id = _token("lane", lane)
        runner = _token("runner", runner)
        payload = {"lane": lane_id, "runner": runner}

        def plan(schedule: Schedule | None, now: DateTime) -> _Answer[Tick] | _Command:
            if schedule is None:
                raise ScheduleError("NOT_COMMISSIONED", "no commission has been recorded")
            config = schedule.lane_config(lane_id)
            if config is None:
                raise ScheduleError("NOT_A_LANE", f"{lane_id} is not a lane of the current commission")
            lane_state = schedule.state.lane(lane_id)
            assert lane_state is not None
            occurrence = lane_state.open
            if occurrence is not None:
                if occurrence.state == "running":
                    segment = occurrence.segments[-1]
                    if segment.runner == runner:
                        suffix = "admit" if segment.kind == "admit" else f"resume/{segment.n}"
                        kind = "admitted" if segment.kind == "admit" else "resumed"
                        return _Command(f"{occurrence.id}/{suffix}", payload, None,
                                        {"kind": kind, "occurrence": occurrence.id})
                    return _Answer(Tick("running", lane_id, occurrence, False, None, None,
                                        f"running under runner {segment.runner}"))
                check = lifecycle.resume_check(schedule, occurrence, now)
                if check.night is None:
                    return _Answer(Tick("waiting", lane_id, occurrence, False, None, check.until, check.reason))
                if len(occurrence.segments) >= SCHEDULE_LIMITS.max_segments:
                    return _Command(f"{occurrence.id}/settle", payload,
                                    lifecycle.settle_segment_limit(schedule, occurrence, runner, now),
                                    {"kind": "settled", "occurrence": occurrence.id})
                n = len(occurrence.segments) + 1
                return _Command(f"{occurrence.id}/resume/{n}", payload,
                                lifecycle.resume(schedule, occurrence, check.night, runner, now),
                                {"kind": "resumed", "occurrence": occurrence.id})
            night = lifecycle.due_night(schedule, config, lane_state, now)
            if night is None:
                upcoming = lifecycle.next_due(schedule, config, lane_state, now)
                return _Answer(Tick("waiting", lane_id, None, False, None, upcoming.slot if upcoming else None,
                                    "nothing is due now"))
            return _Command(f"{night.id}/admit", payload,
                            lifecycle.admit(schedule, config, lane_state, night, runner, now),
                            {"kind": "admitted", "occurrence": night.id})

        ran = self._run(plan)
        if isinstance(ran, _Answer):
            return ran.value
        planned, outcome, after = ran
        occurrence = self._occurrence_in(after, planned.meta["occurrence"], lane_id)
        until = None
        if occurrence is not None and occurrence.state == "running":
            until = at(occurrence.segments[-1].deadline)
        return Tick(planned.meta["kind"], lane_id, occurrence, outcome.replayed, planned.command_id, until)

    # -- calls ---------------------------------------------------------------------------

    def admit_call(self, *, occurrence_id: Any, runner: Any, task: Any, work: Any, bound: Any, sign_in: Any,
                   attempt: Any = 1) -> CallAdmission | CallRefusal:
        runner = _token("runner", runner)
        task = _token("task", task)
        work = _token("work", work)
        bound = _positive("bound", bound, SCHEDULE_LIMITS.max_call_bound_tokens)
        sign_in = _token("signIn", sign_in)
        attempt = _positive("attempt", attempt, 1000)
        ref = parse_occurrence_id(occurrence_id)  # INVALID before anything is read
        payload = {"occurrenceId": occurrence_id, "runner": runner, "task": task, "work": work, "bound": bound,
                   "signIn": sign_in, "attempt": attempt}

        def plan(schedule: Schedule | None, now: DateTime) -> _Answer[CallRefusal] | _Command:
            occurrence, pruned = self._known(schedule, ref)
            for call in occurrence.calls:
                if (occurrence.runner_of(call), call.task, call.work, call.bound, call.attempt) == (
                        runner, task, work, bound, attempt):
                    return _Command(f"{occurrence.id}/call/{call.k}", payload, None,
                                    {"call": call.k, "week": call.week})
            if pruned or occurrence.state == "settled":
                raise ScheduleError("SETTLED", f"{occurrence_id} is settled")
            segment = occurrence.running_segment
            if segment is None:
                raise ScheduleError("NOT_RUNNING", f"{occurrence_id} is {occurrence.state}, not running")
            if segment.runner != runner:
                raise ScheduleError("NOT_OWNER", f"segment {segment.n} of {occurrence_id} runs under another runner")
            config = schedule.lane_config(occurrence.lane) if schedule else None
            task_config = config.task_named(task) if config is not None else None
            if schedule is None or task_config is None:
                raise invalid(f"task: {task!r} is not a task of lane {occurrence.lane}")
            refused = calls.refusal(schedule, occurrence, task_config, work, bound, sign_in, now)
            if refused is not None:
                return _Answer(CallRefusal(refused.reason, refused.detail))
            k = len(occurrence.calls) + 1
            change = calls.admit(schedule, occurrence, runner, task_config, work, bound, sign_in, attempt, now)
            return _Command(f"{occurrence.id}/call/{k}", payload, change, {"call": k, "week": change.result["week"]})

        ran = self._run(plan)
        if isinstance(ran, _Answer):
            return ran.value
        planned, outcome, after = ran
        occurrence = self._occurrence_in(after, ref.id, ref.lane)
        k = planned.meta["call"]
        in_flight = occurrence is not None and len(occurrence.calls) >= k and occurrence.calls[k - 1].in_flight
        return CallAdmission(call=k, week=planned.meta["week"], replayed=outcome.replayed,
                             command_id=planned.command_id, dispatch=not outcome.replayed, in_flight=in_flight,
                             occurrence_id=occurrence_id)

    def end_call(self, *, occurrence_id: Any, runner: Any, call: Any, report: Any) -> CallEnd:
        runner = _token("runner", runner)
        k = _positive("call", call)
        if not isinstance(report, dict):
            raise invalid("report: a JSON object is needed")
        checked_document("report", report)
        try:
            canonical_json(report)
        except CanonicalJsonError as error:
            raise invalid(f"report: {error}") from None
        ref = parse_occurrence_id(occurrence_id)  # INVALID before anything is read
        payload = {"occurrenceId": occurrence_id, "runner": runner, "call": k, "report": report}
        command_id = f"{occurrence_id}/call/{k}/end"

        def plan(schedule: Schedule | None, now: DateTime) -> _Answer[Never] | _Command:
            occurrence, pruned = self._known(schedule, ref)
            if f"call/{k}/end" in occurrence.transitions:
                return _Command(command_id, payload, None, {})
            if pruned or occurrence.state == "settled":
                raise ScheduleError("SETTLED", f"{occurrence_id} is settled")
            if k > len(occurrence.calls):
                raise ScheduleError("UNKNOWN_CALL", f"{occurrence_id} has no call {k}")
            recorded = occurrence.calls[k - 1]
            if occurrence.runner_of(recorded) != runner:
                raise ScheduleError("NOT_OWNER", f"call {k} belongs to another runner")
            if not recorded.in_flight:
                raise ScheduleError("STALE", f"call {k} already ended ({recorded.outcome}) by a reconciliation")
            assert schedule is not None  # `_known` refused NOT_COMMISSIONED
            return _Command(command_id, payload, calls.end(schedule, occurrence, recorded, report, now), {})

        ran = self._run(plan)
        assert not isinstance(ran, _Answer)
        _planned, outcome, after = ran
        return CallEnd(command_id=command_id, replayed=outcome.replayed, outcome=outcome.result["outcome"],
                       debit=outcome.result["debit"], occurrence=self._occurrence_in(after, ref.id, ref.lane))

    # -- deferral, reconciliation, settlement ---------------------------------------------

    def defer(self, *, occurrence_id: Any, runner: Any, reason: Any, bound: Any = None,
              segment: Any = None) -> CommandResult:
        runner = _token("runner", runner)
        if reason not in DEFERRAL_REASONS:
            raise invalid(f"reason: one of {', '.join(DEFERRAL_REASONS)}, got {shown(reason)}")
        if bound is not None:
            _positive("bound", bound, SCHEDULE_LIMITS.max_weekly_tokens)
        if segment is not None:
            _positive("segment", segment, SCHEDULE_LIMITS.max_segments)
        ref = parse_occurrence_id(occurrence_id)  # INVALID before anything is read
        payload = {"occurrenceId": occurrence_id, "runner": runner, "reason": reason, "bound": bound,
                   "segment": segment}

        def plan(schedule: Schedule | None, now: DateTime) -> _Answer[Never] | _Command:
            occurrence, pruned = self._known(schedule, ref)
            n = segment
            if n is None:
                earlier = [d for d in occurrence.deferrals
                           if (d.runner, d.reason, d.bound) == (runner, reason, bound)]
                if earlier:
                    n = earlier[-1].segment
                elif occurrence.running_segment is not None:
                    n = occurrence.running_segment.n
            if n is not None and f"defer/{n}" in occurrence.transitions:
                running = occurrence.running_segment
                later = running.n if running is not None and running.runner == runner and running.n > n else None
                return _Command(f"{occurrence.id}/defer/{n}", payload, None, {"still_running": later})
            if pruned or occurrence.state == "settled":
                raise ScheduleError("SETTLED", f"{occurrence_id} is settled")
            running = occurrence.running_segment
            if running is None:
                raise ScheduleError("NOT_RUNNING", f"{occurrence_id} is {occurrence.state}, not running")
            if n != running.n:
                raise ScheduleError("STALE", f"segment {n} is not the running segment {running.n}")
            assert schedule is not None  # `_known` refused NOT_COMMISSIONED
            change = lifecycle.defer(schedule, occurrence, runner, reason, bound, now)
            return _Command(f"{occurrence.id}/defer/{n}", payload, change, {})

        return self._result(self._run(plan), ref)

    def reconcile(self, *, occurrence_id: Any, confirmation: Any) -> CommandResult:
        if not isinstance(confirmation, dict) or set(confirmation) != {"runner", "confirmedBy", "evidence"}:
            raise invalid("confirmation: {runner, confirmedBy, evidence} is needed")
        runner = _token("confirmation.runner", confirmation["runner"])
        confirmed_by = _token("confirmation.confirmedBy", confirmation["confirmedBy"])
        evidence = _token("confirmation.evidence", confirmation["evidence"], 500)
        ref = parse_occurrence_id(occurrence_id)  # INVALID before anything is read
        payload = {"occurrenceId": occurrence_id, "confirmation": dict(confirmation)}

        def plan(schedule: Schedule | None, now: DateTime) -> _Answer[Never] | _Command:
            occurrence, pruned = self._known(schedule, ref)
            # A confirmation names a runner: it maps to the segment that runner's reconciliation ended (the
            # journal then replays an identical one and calls any other CONFLICT), unless the token runs
            # again now, in a later segment.
            running_now = occurrence.running_segment is not None and occurrence.running_segment.runner == runner
            earlier = [r.segment for r in occurrence.reconciliations if r.runner == runner]
            if earlier and not running_now:
                return _Command(f"{occurrence.id}/reconcile/{earlier[-1]}", payload, None, {})
            if pruned or occurrence.state == "settled":
                raise ScheduleError("SETTLED", f"{occurrence_id} is settled")
            running = occurrence.running_segment
            if running is None:
                raise ScheduleError("NOT_RUNNING", f"{occurrence_id} is {occurrence.state}, not running")
            assert schedule is not None  # `_known` refused NOT_COMMISSIONED
            change = lifecycle.reconcile(schedule, occurrence, runner, confirmed_by, evidence, now)
            return _Command(f"{occurrence.id}/reconcile/{running.n}", payload, change, {})

        return self._result(self._run(plan), ref)

    def settle(self, *, occurrence_id: Any, settled_by: Any, status: Any, reason: Any) -> CommandResult:
        settled_by = _token("settledBy", settled_by)
        if status not in SETTLEMENT_STATUSES:
            raise invalid(f"status: one of {', '.join(SETTLEMENT_STATUSES)}, got {shown(status)}")
        reason = _token("reason", reason, 200)
        ref = parse_occurrence_id(occurrence_id)  # INVALID before anything is read
        payload = {"occurrenceId": occurrence_id, "settledBy": settled_by, "status": status, "reason": reason}
        command_id = f"{occurrence_id}/settle"

        def plan(schedule: Schedule | None, now: DateTime) -> _Answer[Never] | _Command:
            occurrence, _pruned = self._known(schedule, ref)
            if "settle" in occurrence.transitions:
                return _Command(command_id, payload, None, {})
            assert schedule is not None  # `_known` refused NOT_COMMISSIONED
            change = lifecycle.settle(schedule, occurrence, settled_by, status, reason, now)
            return _Command(command_id, payload, change, {})

        return self._result(self._run(plan), ref)

    # -- views ---------------------------------------------------------------------------

    def read(self) -> ScheduleView | None:
        version, schedule = self._load()
        if schedule is None:
            return None
        state = schedule.state
        occurrences = [o for lane in state.lanes for o in (lane.open, *lane.recent) if o is not None]
        return ScheduleView(version=version, commission=state.commission, lanes=list(state.lanes),
                            occurrences=occurrences, ledger=list(state.ledger), accounts=list(state.accounts),
                            revision_recorded_at=state.revision_recorded_at)

    def record(self, occurrence_id: Any) -> Occurrence | None:
        """The whole record of an occurrence, calls included: from the state, or from the settlement event of
        one settled (`read()` lists settled ones as the state keeps them, with their calls counted, not listed)."""
        ref = parse_occurrence_id(occurrence_id)
        _version, schedule = self._load()
        if schedule is None:
            return None
        return self._find(schedule, ref)[0]

    def settled_records(self) -> dict[str, Occurrence]:
        """The whole records of the settled occurrences the state keeps without their calls, by ID."""
        _version, schedule = self._load()
        if schedule is None:
            return {}
        kept = [o for lane in schedule.state.lanes for o in lane.recent if o.elided is not None]
        return {o.id: self._whole(o, schedule.version) for o in kept}

    def plan(self) -> list[LanePlan]:
        _version, schedule = self._load()
        if schedule is None:
            return []
        return lane_plans(schedule, self._now())

    def status(self, occurrence_id: Any) -> OccurrenceStatusView:
        return self.statuses([occurrence_id])[0]

    def statuses(self, occurrence_ids: list[Any]) -> list[OccurrenceStatusView]:
        """`status` of each ID, in order, from one reading of the journal: a health check asks about every
        lane's nights at once, and on a server each separate `status` is its own round trips."""
        if not isinstance(occurrence_ids, list | tuple):
            raise invalid(f"occurrence_ids: a list of occurrence IDs is needed, got {shown(occurrence_ids)}")
        refs = [parse_occurrence_id(occurrence_id) for occurrence_id in occurrence_ids]
        _version, schedule = self._load()
        now = self._now()
        pruned = self._settled_records([ref.id for ref in refs], schedule.version) if schedule is not None else {}
        views = []
        for ref in refs:
            view = occurrence_status(schedule, ref, now, pruned.get(ref.id))
            if view.state == "pruned" and pruned.get(ref.id) is None and schedule is not None:
                holder = self._holder_of(schedule, ref)
                if holder is not None:
                    view = OccurrenceStatusView(ref.id, "coalesced", "unavailable", holder)
            views.append(view)
        return views

    def _holder_of(self, schedule: Schedule, ref: OccurrenceRef) -> str | None:
        """The admitted occurrence a never-admitted one coalesced into, found after the holder left the
        state: it is the lane's first admission after it (receipts say which nights were admitted)."""
        lane = schedule.lane_config(ref.lane)
        lane_state = schedule.state.lane(ref.lane)
        if lane is None or lane_state is None or lane_state.watermark is None:
            return None
        if self.journal.receipt(f"{ref.id}/admit") is not None:
            return None  # it ran itself
        start = ref.date if ref.date is not None else monday_of_week(ref.week)
        for night in nights_from(schedule.commission, lane, start.add(days=1), days=MAX_HOLDER_SEARCH_DAYS):
            if night.date.isoformat() > lane_state.watermark.date:
                return None
            if night.id == ref.id or self.journal.receipt(f"{night.id}/admit") is None:
                continue
            record = self._occurrence_in(schedule, night.id, night.lane) or self._pruned(night.id, schedule.version)
            span = record.coalesced if record is not None else None
            if span is not None and span.first.rsplit("/", 1)[1] <= ref.key <= span.last.rsplit("/", 1)[1]:
                return night.id
            return None
        return None
