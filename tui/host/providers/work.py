"""Work one admitted segment of a lane through its provider: ask, contact, report, then defer or settle.

For each task of the lane and each unit of work, in order: `admit_call` first; the
provider is contacted only on a fresh admission (`dispatch: true`); every contact is
reported with `end_call`, the report retried until the journal has it; a replayed
admission still in flight is ended `lost` (nobody can know whether it went out). A
refusal or a stopping report ends the segment as the refusal table (docs/guides/runner.md) says:
a closed usage window defers `usage-limit`, a refused sign-in `sign-in-needed`, a
week's ceiling `budget-exhausted`; paid overage, an unverified owner record, a limit
without a readable reset, an unreachable provider and the night's deadline settle
(an unreachable provider after its first call: the unsent work goes out on a later
night, never one call after another into a dead line). Work of unknown effect is
never sent again (the schedule refuses it, and this never asks twice).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pendulum

from factory_schedule.core import ScheduleError
from factory_schedule.core.health.provider_clis import (
    PROVIDER_STOPPED_ACCOUNT,
    PROVIDER_UNREACHABLE,
    sign_in_mismatch_reason,
    stopped_by_provider,
)
from factory_schedule.store import JournalError
from factory_schedule.tui.host.providers.calls import Made, make_call
from factory_schedule.tui.host.providers.prompts import LaneBinding, TaskBinding, Unit

if TYPE_CHECKING:
    from factory_schedule.core import CallAdmission, CallEnd, CallRefusal, LifecycleSchedule, Occurrence

Answer = TypeVar("Answer")

TRANSIENT_CODES = ("CONTENDED", "CONFLICT")
MIN_CALL_SECONDS = 1.0

Emit = Callable[[dict[str, Any]], None]


class Unrecorded(Exception):
    """A call's report could not be written after every retry."""


@dataclass(frozen=True)
class Retry:
    """How long schedule commands are retried when the journal is busy or briefly unreachable."""

    attempts: int = 8
    report_attempts: int = 40
    first_wait: float = 0.2
    longest_wait: float = 10.0
    sleep: Callable[[float], None] = time.sleep

    def run(self, action: Callable[[], Answer], attempts: int | None = None) -> Answer:
        wait = self.first_wait
        tries = attempts or self.attempts
        for attempt in range(1, tries + 1):
            try:
                return action()
            except ScheduleError as error:
                if error.code not in TRANSIENT_CODES or attempt == tries:
                    raise
            except JournalError:
                if attempt == tries:
                    raise
            self.sleep(wait)
            wait = min(wait * 2, self.longest_wait)
        raise AssertionError("unreachable")  # pragma: no cover


@dataclass
class Segment:
    occurrence: str
    runner: str
    sign_in: str
    ended: dict[str, Any] | None = None
    sent: list[tuple[str, str]] = field(default_factory=list)


MakeCall = Callable[..., Made]


class SegmentWork:
    def __init__(self, schedule: LifecycleSchedule, binding: LaneBinding | None, segment: Segment, emit: Emit,
                 make: MakeCall = make_call, retry: Retry | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.schedule = schedule
        self.binding = binding
        self.segment = segment
        self.emit = emit
        self.make = make
        self.retry = retry or Retry()
        self.clock = clock
        self.deadline: float | None = None
        self.made: list[Made] = []  # every contact this segment made, in order
        self.refused: str | None = None  # the schedule's last refusal of a call, its reason

    # -- the journal, retried ----------------------------------------------------------------

    def _admit(self, task: TaskBinding, unit: Unit) -> CallAdmission | CallRefusal:
        return self.retry.run(lambda: self.schedule.admit_call(
            occurrence_id=self.segment.occurrence, runner=self.segment.runner, task=task.task, work=unit.work,
            bound=task.bound, sign_in=self.segment.sign_in))

    def _end(self, call: int, report: dict[str, Any]) -> CallEnd:
        try:
            return self.retry.run(lambda: self.schedule.end_call(
                occurrence_id=self.segment.occurrence, runner=self.segment.runner, call=call, report=report),
                attempts=self.retry.report_attempts)
        except (ScheduleError, JournalError) as error:
            self.emit({"run": "unrecorded", "call": call, "report": report, "error": str(error)})
            raise Unrecorded(str(error)) from error

    def defer(self, reason: str, bound: int | None = None) -> bool:
        try:
            self.retry.run(lambda: self.schedule.defer(
                occurrence_id=self.segment.occurrence, runner=self.segment.runner, reason=reason, bound=bound))
        except ScheduleError as error:
            self.emit({"run": "defer-refused", "reason": reason, "error": error.code, "message": error.message})
            return False
        self.segment.ended = {"run": "deferred", "reason": reason}
        return True

    def _occurrence(self) -> Occurrence | None:
        view = self.retry.run(self.schedule.read)
        for occurrence in view.occurrences if view is not None else []:
            if occurrence.id == self.segment.occurrence:
                return occurrence
        return None

    def settle(self, why: str) -> None:
        """Settle with the status the calls support: completed only when every unit was performed cleanly."""
        occurrence = self._occurrence()
        calls = occurrence.calls if occurrence is not None else []
        performed = {(c.task, c.work) for c in calls if c.outcome == "ok"}
        tasks = self.binding.tasks if self.binding is not None else ()
        units = {(t.task, u.work) for t in tasks for u in t.units}
        doubtful = any(c.unknown or c.overage or c.outcome == "malformed" for c in calls)
        if units and units <= performed and not doubtful:
            statuses = ["completed", "partial"]
        elif any(c.outcome in ("ok", "malformed") for c in calls):
            statuses = ["partial"]
        else:
            statuses = ["unavailable", "partial"]
        self.settle_first(statuses, why)

    def settle_first(self, statuses: list[str], why: str) -> None:
        """Settle with the first of `statuses` the schedule's rules allow: its refusal (`RULE`) of one, such as
        `completed` over a call of unknown effect, tries the next; the last one's refusal raises."""
        last: ScheduleError | None = None
        reason = why[:200].rstrip()  # the engine's limit, with no whitespace left at the cut (INVALID)
        for status in statuses:
            try:
                self.retry.run(lambda s=status: self.schedule.settle(  # type: ignore[misc]
                    occurrence_id=self.segment.occurrence, settled_by=self.segment.runner, status=s,
                    reason=reason))
            except ScheduleError as error:
                if error.code != "RULE":
                    raise
                last = error
                continue
            self.segment.ended = {"run": "settled", "status": status, "reason": reason}
            return
        assert last is not None
        raise last

    def sign_in_mismatch(self, source: str) -> str | None:
        """The settlement reason when the sign-in this runner observes is not the one a task's account record
        names (the schedule would refuse every call `overage-unverified`); None when they agree or no record
        names one."""
        view = self.retry.run(self.schedule.read)
        records: dict[str, Any] = {a.account: a.record for a in view.accounts} if view is not None else {}
        for task in self.binding.tasks if self.binding is not None else ():
            record = records.get(task.account)
            if record is not None and record.sign_in != self.segment.sign_in:
                return sign_in_mismatch_reason(self.segment.sign_in, source, task.account, record.sign_in)
        return None

    def account_held(self) -> str | None:
        """The reason to send nothing when a provider stopped this lane's account on another lane tonight."""
        view = self.retry.run(self.schedule.read)
        if view is None or self.binding is None:
            return None
        now = pendulum.from_timestamp(self.clock(), tz="UTC")
        return stopped_by_provider(view, {task.account for task in self.binding.tasks}, now)

    # -- the work ----------------------------------------------------------------------------

    def _end_in_flight(self) -> None:
        occurrence = self._occurrence()
        for call in occurrence.calls if occurrence is not None else []:
            if call.ended_at is None:
                self._end(call.k, {"kind": "lost"})
                self.emit({"run": "lost-in-flight", "call": call.k, "task": call.task, "work": call.work})

    def _read_deadline(self) -> None:
        """The running segment's deadline: no call is left running past it."""
        occurrence = self._occurrence()
        if occurrence is not None:
            deadline = pendulum.parse(occurrence.segments[-1].deadline)
            assert isinstance(deadline, pendulum.DateTime)  # an Instant, checked when the state was read
            self.deadline = deadline.timestamp()

    def _timeout(self, task: TaskBinding) -> float:
        if self.deadline is None:
            return task.timeout_seconds
        return max(min(task.timeout_seconds, self.deadline - self.clock()), MIN_CALL_SECONDS)

    def _contact(self, task: TaskBinding, unit: Unit, call: int) -> Made:
        assert self.binding is not None
        transcript: Path | None = None
        if self.binding.transcripts is not None:
            folder = self.binding.transcripts / self.segment.occurrence.replace("/", "_")
            folder.mkdir(parents=True, exist_ok=True)
            transcript = folder / f"{call:03d}-{task.task}-{unit.work}.jsonl"
        self.segment.sent.append((task.task, unit.work))
        return self.make(self.binding.provider, self.binding.executable, unit.prompt, task.bound,
                         self._timeout(task), task.args, cwd=self.binding.workdir, transcript=transcript,
                         passed=self.binding.env)

    def _after_refusal(self, task: TaskBinding, unit: Unit, reason: str, detail: str) -> str | None:
        """What a refusal does: `next` unit, `task` (skip the rest of this task), or stop (None after ending)."""
        self.refused = reason
        self.emit({"run": "refused", "task": task.task, "work": unit.work, "reason": reason, "detail": detail})
        if reason in ("duplicate-work", "unknown-effect"):
            return "next"
        if reason == "call-bound":
            return "task"
        if reason == "limited":
            if not self.defer("usage-limit"):
                self.settle(f"usage window closed: {detail}")
        elif reason == "sign-in-needed":
            if not self.defer("sign-in-needed"):
                self.settle("the account refused its sign-in")
        elif reason == "budget-exhausted":
            if not self.defer("budget-exhausted", bound=task.bound):
                self.settle(f"the week's ceiling: {detail}")
        elif reason == "deadline":
            self.settle("the night's deadline passed")
        else:  # overage-unverified, or a reason this runner does not know: stop asking
            self.settle(f"stopped: {reason}: {detail}")
        return None

    def _after_report(self, made: Made) -> bool:
        """End the segment when the report stops it; True when the segment goes on."""
        stop = made.outcome.stop
        if stop == "usage-limit":
            if not self.defer("usage-limit"):
                self.settle("the provider's usage window closed")
            return False
        if stop == "sign-in":
            if not self.defer("sign-in-needed"):
                self.settle("the provider refused the sign-in")
            return False
        if stop == "overage":
            self.settle("the provider ran on paid overage: the owner records the account again")
            return False
        if stop == "limit-unread":
            said = made.outcome.extra.get("provider_message") or made.outcome.detail
            self.settle(f"{PROVIDER_STOPPED_ACCOUNT}, naming no reset this runner can read: {said}")
            return False
        if stop == "unreachable":
            self.settle(f"{PROVIDER_UNREACHABLE}: {made.outcome.detail}")
            return False
        return True

    @staticmethod
    def _stderr_tail(made: Made) -> dict[str, str]:
        """The tail of the provider's stderr, for a call that did not complete cleanly: a clean call's stderr
        (a CLI's own log lines, "ERROR ... reconnecting") would read as the runner's error."""
        clean = made.outcome.kind == "result" and made.outcome.report.get("output") == "ok" and made.run.end.clean
        return {} if clean else {"provider_stderr_tail": made.run.stderr_tail[-500:]}

    def _unit(self, task: TaskBinding, unit: Unit, retried_open: bool = False) -> str | None:
        admission = self._admit(task, unit)
        if not admission.admitted:
            if admission.reason == "call-open" and not retried_open:
                self._end_in_flight()
                return self._unit(task, unit, retried_open=True)
            return self._after_refusal(task, unit, admission.reason, admission.detail)
        if not admission.dispatch:
            if admission.in_flight:  # a replay: whether it went out cannot be known
                self._end(admission.call, {"kind": "lost"})
                self.emit({"run": "lost-in-flight", "call": admission.call, "task": task.task, "work": unit.work})
            return "next"
        made = self._contact(task, unit, admission.call)
        self.made.append(made)
        ended = self._end(admission.call, made.outcome.report)
        self.emit({
            "run": "call", "call": admission.call, "task": task.task, "work": unit.work,
            "report": made.outcome.report, "debit": ended.debit, "stop": made.outcome.stop,
            "detail": made.outcome.detail, "session": made.outcome.session,
            "provider_exit": made.run.end.exit_code, **self._stderr_tail(made), **made.outcome.extra,
        })
        return "next" if self._after_report(made) else None

    def one_unit(self, task: TaskBinding, unit: Unit) -> Made | None:
        """A staged lane's run: ask for and make this one unit's call, leaving the segment running when the
        call was made and reported and the segment may go on (the run reports its stage, then settles).
        None when there was no contact to read or the segment ended (deferred or settled). Unrecorded
        propagates as from `run`."""
        self._read_deadline()
        before = len(self.made)
        step = self._unit(task, unit)
        if step is None or len(self.made) == before:
            return None
        return self.made[-1]

    def settle_as(self, status: str, why: str) -> None:
        """Settle with the status the run decided (a staged lane's run knows whether its stage was reported)."""
        self.settle_first([status], why)

    def calls_went_out(self) -> bool:
        """Whether any call of the occurrence (any segment's) may have reached the provider."""
        occurrence = self._occurrence()
        return any(not call.unsent for call in (occurrence.calls if occurrence is not None else []))

    def run(self) -> bool:
        """Every unit of work asked for; False when a report the journal would not take after every retry left
        the segment to a supervisor (Unrecorded)."""
        assert self.binding is not None
        try:
            self._read_deadline()
            for task in self.binding.tasks:
                for unit in task.units:
                    step = self._unit(task, unit)
                    if step is None:
                        return True
                    if step == "task":
                        break
            self.settle("every unit of work was asked for")
        except Unrecorded:
            return False
        return True
