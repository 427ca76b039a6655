"""LifecycleSchedule: the schedule's commands and views over an injected journal and clock.

This is all the I/O the engine does, and it is injected: the journal and the clock. Each command
plans once, under the journal's write lock, and the journal records what it planned (`command_loop`).
A command's ID and payload come from the request alone, so a retry at any later time is the same
command and replays its receipt.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pendulum import DateTime

from factory_schedule.store import (
    CanonicalJsonError,
    Decision,
    JournalCorruptError,
    Outcome,
    canonical_json,
)
from factory_schedule.store import CommandJournal as Journal  # the protocol: no database library loads

from . import calls, lifecycle, owner, records
from .calendar import nights_from
from .change import Change
from .clock import Clock, as_utc
from .command_loop import COMMAND_ROUNDS, CommandLoop, Planned, Ran
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
from .settled_records import SettledRecords
from .text import checked_document, checked_token, shown
from .views import lane_plans, occurrence_status
from .zones import monday_of_week

MAX_HOLDER_SEARCH_DAYS = 400


_Command = Planned[Change]
_Ran = tuple[_Command, Outcome, Schedule | None]  # the command run, the journal's outcome, the state after
Answer = TypeVar("Answer")


def _token(name: str, value: Any, limit: int = 200) -> str:
    return checked_token(name, value, limit)


def _positive(name: str, value: Any, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1 or (maximum and value > maximum):
        bound = f" at most {maximum}" if maximum else ""
        raise invalid(f"{name}: a positive integer{bound} is needed, got {shown(value)}")
    return value


class LifecycleSchedule:
    """The schedule of one journal's `discovery/schedule` aggregate."""

    def __init__(self, journal: Journal, clock: Clock, *, max_rounds: int = COMMAND_ROUNDS) -> None:
        self.journal = journal
        self.clock = clock
        self.max_rounds = max_rounds
        # The last state read or written, by version and stored text: an unchanged text parses to the
        # same answer, so it is checked whole only when its bytes change (a tampered row always is),
        # and a decision checks only the lanes it changed (`stored`).
        self._codec = StateCodec()
        self._settled = SettledRecords(journal)  # the whole records of settled occurrences, checked

    # -- reading -------------------------------------------------------------------------

    def _now(self) -> DateTime:
        return as_utc(self.clock.now())

    def _load(self) -> tuple[int, Schedule | None]:
        try:
            version, text = self.journal.load_text(SCHEDULE_AGGREGATE)
        except JournalCorruptError as error:  # the state is not the one its command sealed
            raise corrupt(str(error)) from None
        schedule = self._codec.read(version, text)
        if schedule is not None:
            self._settled.check_kept(schedule, version)
        return version, schedule

    def _find(self, schedule: Schedule | None, ref: OccurrenceRef) -> tuple[Occurrence | None, bool]:
        """(the occurrence, whether it left the state) or (None, False) when nothing knows it."""
        if schedule is None:
            raise ScheduleError("NOT_COMMISSIONED", "no commission has been recorded")
        lane_state = schedule.state.lane(ref.lane)
        if lane_state is not None:
            for occurrence in (lane_state.open, *lane_state.recent):
                if occurrence is not None and occurrence.id == ref.id:
                    return self._settled.whole(occurrence, schedule.version), False
        pruned = self._settled.pruned(ref.id, schedule.version)
        return pruned, pruned is not None

    def _known(self, schedule: Schedule | None, ref: OccurrenceRef) -> tuple[Occurrence, bool]:
        """An occurrence a transition may name: in the state, or settled and pruned; else UNKNOWN_OCCURRENCE."""
        occurrence, pruned = self._find(schedule, ref)
        if occurrence is None:
            raise ScheduleError("UNKNOWN_OCCURRENCE", f"{ref.id} was never admitted")
        return occurrence, pruned

    # -- the command loop ----------------------------------------------------------------

    def _run(self, plan: Callable[[Schedule | None, DateTime], _Command | Answer]) -> _Ran | Answer:
        """The plan's answer, or the command it planned as run: with the state after it (the state read, on a
        replay), kept by the codec so the next read of those bytes needs no parse."""
        decided: dict[int, tuple[str, Schedule]] = {}  # by the version decided (a retried attempt decides again)

        def decision(planned: _Command, at_version: int) -> Decision:
            change = planned.change
            assert change is not None  # the loop runs no decision for a recorded command
            after, new_text = self._codec.write(change.state, at_version + 1)
            if change.growing:  # an ASCII text's length is its size: encoding 60-90 KB only to count it costs more
                size = len(new_text) if new_text.isascii() else len(new_text.encode("utf-8"))
                if size > SCHEDULE_LIMITS.max_state_bytes:
                    raise ScheduleError("LIMIT", f"the schedule would grow to {size} bytes, above the limit")
            decided[at_version + 1] = (new_text, after)
            return Decision(events=change.events, state=new_text, result=change.result)

        loop = CommandLoop(self.journal, self.clock, SCHEDULE_AGGREGATE, self._load, decision, ScheduleError,
                           self.max_rounds, as_text=True)
        ran = loop.run(plan)
        if not isinstance(ran, Ran):
            return ran
        outcome = ran.outcome
        if not outcome.replayed and outcome.version in decided:
            new_text, after = decided[outcome.version]
            self._codec.remember(outcome.version, new_text, after)
            change = ran.planned.change
            assert change is not None  # a decided version was planned with its change
            self._settled.written(change.event_type, change.event_data)
            return ran.planned, outcome, after
        return ran.planned, outcome, ran.read

    def _occurrence_in(self, schedule: Schedule | None, occurrence_id: str, lane_id: str) -> Occurrence | None:
        """The whole record of an occurrence the state keeps, else None (`lane_id`: the ID's own lane)."""
        if schedule is None:
            return None
        lane_state = schedule.state.lane(lane_id)
        if lane_state is None:
            return None
        for occurrence in (lane_state.open, *lane_state.recent):
            if occurrence is not None and occurrence.id == occurrence_id:
                return self._settled.whole(occurrence, schedule.version)
        return None

    def _result(self, ran: _Ran, ref: OccurrenceRef | None = None) -> CommandResult:
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

        def plan(schedule: Schedule | None, now: DateTime) -> _Command:
            if self.journal.receipt(command_id) is not None:
                return Planned(command_id, payload, None, {})
            self._check_owner_record(command_id, payload)
            return Planned(command_id, payload, records.record_commission(schedule, parsed, now), {})

        ran = self._run(plan)
        assert isinstance(ran, tuple)
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

        def plan(schedule: Schedule | None, now: DateTime) -> _Command:
            if self.journal.receipt(command_id) is not None:
                return Planned(command_id, payload, None, {})
            self._check_owner_record(command_id, payload)
            if schedule is None:
                raise ScheduleError("NOT_COMMISSIONED", "record a commission before account records")
            return Planned(command_id, payload, records.record_account(schedule, payload, now), {})

        try:
            ran = self._run(plan)
        except ScheduleError as error:
            if error.code != "CONFLICT":
                raise
            raise ScheduleError("CONFLICT", self._taken_sequence(account, sequence)) from None
        assert isinstance(ran, tuple)
        return self._result(ran)

    def _taken_sequence(self, account: str, sequence: int) -> str:
        """Why an account record's sequence is refused when it is already recorded with other values: in words
        that name the next sequence, as a sequence ahead of it is refused."""
        schedule = self._load()[1]
        record = schedule.state.account(account).record if schedule is not None else None
        following = f"; the next {account} record is sequence {record.sequence + 1}" if record is not None else ""
        return (f"{account} record {sequence} is already recorded, with other values (a record is never changed: "
                f"record the next one){following}; nothing was written")

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

        def plan(schedule: Schedule | None, now: DateTime) -> _Command | Tick:
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
                        return Planned(f"{occurrence.id}/{suffix}", payload, None,
                                        {"kind": kind, "occurrence": occurrence.id})
                    return Tick("running", lane_id, occurrence, False, None, None,
                                        f"running under runner {segment.runner}")
                check = lifecycle.resume_check(schedule, occurrence, now)
                if check.night is None:
                    return Tick("waiting", lane_id, occurrence, False, None, check.until, check.reason)
                if len(occurrence.segments) >= SCHEDULE_LIMITS.max_segments:
                    return Planned(f"{occurrence.id}/settle", payload,
                                    lifecycle.settle_segment_limit(schedule, occurrence, runner, now),
                                    {"kind": "settled", "occurrence": occurrence.id})
                n = len(occurrence.segments) + 1
                return Planned(f"{occurrence.id}/resume/{n}", payload,
                                lifecycle.resume(schedule, occurrence, check.night, runner, now),
                                {"kind": "resumed", "occurrence": occurrence.id})
            night = lifecycle.due_night(schedule, config, lane_state, now)
            if night is None:
                upcoming = lifecycle.next_due(schedule, config, lane_state, now)
                return Tick("waiting", lane_id, None, False, None, upcoming.slot if upcoming else None,
                                    "nothing is due now")
            return Planned(f"{night.id}/admit", payload,
                            lifecycle.admit(schedule, config, lane_state, night, runner, now),
                            {"kind": "admitted", "occurrence": night.id})

        ran = self._run(plan)
        if not isinstance(ran, tuple):
            return ran
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

        def plan(schedule: Schedule | None, now: DateTime) -> _Command | CallRefusal:
            occurrence, pruned = self._known(schedule, ref)
            for call in occurrence.calls:
                if (occurrence.runner_of(call), call.task, call.work, call.bound, call.attempt) == (
                        runner, task, work, bound, attempt):
                    return Planned(f"{occurrence.id}/call/{call.k}", payload, None,
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
                return CallRefusal(refused.reason, refused.detail)
            k = len(occurrence.calls) + 1
            change = calls.admit(schedule, occurrence, runner, task_config, work, bound, sign_in, attempt, now)
            return Planned(f"{occurrence.id}/call/{k}", payload, change, {"call": k, "week": change.result["week"]})

        ran = self._run(plan)
        if not isinstance(ran, tuple):
            return ran
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

        def plan(schedule: Schedule | None, now: DateTime) -> _Command:
            occurrence, pruned = self._known(schedule, ref)
            if f"call/{k}/end" in occurrence.transitions:
                return Planned(command_id, payload, None, {})
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
            return Planned(command_id, payload, calls.end(schedule, occurrence, recorded, report, now), {})

        ran = self._run(plan)
        assert isinstance(ran, tuple)
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

        def plan(schedule: Schedule | None, now: DateTime) -> _Command:
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
                return Planned(f"{occurrence.id}/defer/{n}", payload, None, {"still_running": later})
            if pruned or occurrence.state == "settled":
                raise ScheduleError("SETTLED", f"{occurrence_id} is settled")
            running = occurrence.running_segment
            if running is None:
                raise ScheduleError("NOT_RUNNING", f"{occurrence_id} is {occurrence.state}, not running")
            if n != running.n:
                raise ScheduleError("STALE", f"segment {n} is not the running segment {running.n}")
            assert schedule is not None  # `_known` refused NOT_COMMISSIONED
            change = lifecycle.defer(schedule, occurrence, runner, reason, bound, now)
            return Planned(f"{occurrence.id}/defer/{n}", payload, change, {})

        return self._result(self._run(plan), ref)

    def reconcile(self, *, occurrence_id: Any, confirmation: Any) -> CommandResult:
        if not isinstance(confirmation, dict) or set(confirmation) != {"runner", "confirmedBy", "evidence"}:
            raise invalid("confirmation: {runner, confirmedBy, evidence} is needed")
        runner = _token("confirmation.runner", confirmation["runner"])
        confirmed_by = _token("confirmation.confirmedBy", confirmation["confirmedBy"])
        evidence = _token("confirmation.evidence", confirmation["evidence"], 500)
        ref = parse_occurrence_id(occurrence_id)  # INVALID before anything is read
        payload = {"occurrenceId": occurrence_id, "confirmation": dict(confirmation)}

        def plan(schedule: Schedule | None, now: DateTime) -> _Command:
            occurrence, pruned = self._known(schedule, ref)
            # A confirmation names a runner: it maps to the segment that runner's reconciliation ended (the
            # journal then replays an identical one and calls any other CONFLICT), unless the token runs
            # again now, in a later segment.
            running_now = occurrence.running_segment is not None and occurrence.running_segment.runner == runner
            earlier = [r.segment for r in occurrence.reconciliations if r.runner == runner]
            if earlier and not running_now:
                return Planned(f"{occurrence.id}/reconcile/{earlier[-1]}", payload, None, {})
            if pruned or occurrence.state == "settled":
                raise ScheduleError("SETTLED", f"{occurrence_id} is settled")
            running = occurrence.running_segment
            if running is None:
                raise ScheduleError("NOT_RUNNING", f"{occurrence_id} is {occurrence.state}, not running")
            assert schedule is not None  # `_known` refused NOT_COMMISSIONED
            change = lifecycle.reconcile(schedule, occurrence, runner, confirmed_by, evidence, now)
            return Planned(f"{occurrence.id}/reconcile/{running.n}", payload, change, {})

        return self._result(self._run(plan), ref)

    def settle(self, *, occurrence_id: Any, settled_by: Any, status: Any, reason: Any) -> CommandResult:
        settled_by = _token("settledBy", settled_by)
        if status not in SETTLEMENT_STATUSES:
            raise invalid(f"status: one of {', '.join(SETTLEMENT_STATUSES)}, got {shown(status)}")
        reason = _token("reason", reason, 200)
        ref = parse_occurrence_id(occurrence_id)  # INVALID before anything is read
        payload = {"occurrenceId": occurrence_id, "settledBy": settled_by, "status": status, "reason": reason}
        command_id = f"{occurrence_id}/settle"

        def plan(schedule: Schedule | None, now: DateTime) -> _Command:
            occurrence, _pruned = self._known(schedule, ref)
            if "settle" in occurrence.transitions:
                return Planned(command_id, payload, None, {})
            assert schedule is not None  # `_known` refused NOT_COMMISSIONED
            change = lifecycle.settle(schedule, occurrence, settled_by, status, reason, now)
            return Planned(command_id, payload, change, {})

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
                            revision_recorded_at=state.revision_recorded_at, checked_commission=schedule.commission)

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
        return {o.id: self._settled.whole(o, schedule.version) for o in kept}

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
        pruned = self._settled.records([ref.id for ref in refs], schedule.version) if schedule is not None else {}
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
            record = (self._occurrence_in(schedule, night.id, night.lane)
                      or self._settled.pruned(night.id, schedule.version))
            span = record.coalesced if record is not None else None
            if span is not None and span.first.rsplit("/", 1)[1] <= ref.key <= span.last.rsplit("/", 1)[1]:
                return night.id
            return None
        return None
