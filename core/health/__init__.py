"""Health's rules: a verdict over facts, with no process, file or clock of its own.

The shell gathers the facts (the journal's chain check, the schedule view, each
lease with whether its process lives on this host, the nights' states, the
installed LaunchAgent's intervals, the host's zone) into `HealthFacts`; `judge`
turns them into findings. So every rule can be tested with plain values, and the
shell's part (tui/host/health.py) is only probing and repairing.

What is reported: a journal aggregate whose hash chain breaks (each one named), or whose state does not
parse; a missing commission (an empty journal is never healthy: it is most often
a mistyped path); leases stale past 2 x TTL, or with a heartbeat from the future
(a clock that was wrong: no evidence of a live holder), each with the evidence a
`reconcile` confirmation needs; a run alive but making no progress (a staged
lane's run whose locks went stale while its process lives, a segment running well
past its deadline under a fresh lease); a running segment with no lease; lanes past
their slot plus a grace with nothing admitted; account stops; an owner record
that stops being current within three days; a week above 90 % of its ceiling; an
installed LaunchAgent whose intervals differ from the commission's. Of the staged
lanes (promotion and maturation): a state that does not read (CORRUPT) as an
error; a candidate's revision, retry or slice counter at its cap; a lane stalled
for longer than its owner's `stallHours` despite claimable work (a pending task, or free WIP
past its cooldown with eligible Top-N candidates or an untaken GO); a
security-approve request or an escalation waiting for the owner; and a record
carrying instants from the future (a clock that was ahead wrote it).

`plan_repairs` is the reconciler's part of the verdict: which leases the shell may
act on. A dead runner is reconciled only on conclusive evidence (its process is
provably gone from this host, its lease had no heartbeat for 2 x TTL, and the
schedule still shows its segment running); a lease is removed only once it is
stale (or from the future), its process is provably gone, and what it guarded is
no longer running (or is reconciled in the same pass). A staged lane's run is
confirmed gone on the same evidence over all of its locks (worker singleton, task
lock, exclusive resources: each stale past 2 x TTL, none from the future, its
process provably gone from this host) and a pipeline state that reads: each task
it still claims is abandoned as the supervisor first (an interrupted revision is
then a failed start of its round), and its locks are removed after. Anything on
another host, with a live process, or of another scope stays the owner's finding.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

import pendulum

from factory_schedule.core.commission import lane_occurrence_on, parse_commission
from factory_schedule.core.errors import ScheduleError
from factory_schedule.core.launchd import launch_intervals
from factory_schedule.core.owner import OwnerState
from factory_schedule.core.pipeline.rules import eligible, go_backlog_idle
from factory_schedule.core.results import ScheduleView
from factory_schedule.core.schedule_document import AccountState, Occurrence
from factory_schedule.core.zones import iso_week_of, local_date_of

if TYPE_CHECKING:
    from factory_schedule.core.pipeline.model import PipelineState
    from factory_schedule.store import Checkpoint

Severity = Literal["error", "warning", "info"]

DEFAULT_GRACE_MINUTES = 30
RECORD_EXPIRY_WARNING_DAYS = 3
CEILING_WARNING_FRACTION = 0.9
STALE_AFTER_TTLS = 2  # the store's rule: a lease is stale once 2 x TTL passed since its heartbeat
FUTURE_AFTER_TTLS = 1  # a heartbeat more than one TTL ahead of now is from a clock that was wrong
# A runner sends no call past its segment's deadline and retries its last report for a few minutes: a segment
# still running this long after its deadline, its lease heartbeated, is a run that makes no progress.
HUNG_PAST_DEADLINE = timedelta(minutes=15)
CLOCK_AHEAD_TOLERANCE = timedelta(minutes=5)  # a staged-lane instant further ahead was written by a wrong clock
HEALTHY, FINDINGS, COULD_NOT_CHECK = 0, 1, 2
# The staged lanes' locks (tui/cli/lanes.py takes them for a run's claim): a lane's worker singleton, a task lock,
# and an exclusive resource.
_PIPELINE_LOCK = re.compile(r"^pipeline/(promotion|maturation)/(?:worker|task/([1-9][0-9]*))$")
RESOURCE_PREFIX = "resource/"


@dataclass(frozen=True)
class Finding:
    kind: str
    severity: Severity
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)  # JSON
    repairable: bool = False


@dataclass(frozen=True)
class Repair:
    kind: str
    scope: str
    message: str
    lease: dict[str, Any]  # JSON: the evidence of the lease removed


@dataclass(frozen=True)
class HealthReport:
    checked_at: datetime
    host: str
    findings: tuple[Finding, ...]
    repairs: tuple[Repair, ...] = ()
    could_not_check: tuple[str, ...] = ()
    # How far each aggregate's hash chain was verified (the store's Checkpoint by aggregate, passed back as
    # `since`); None when they were not: one broken, or not checked at all.
    verified: Mapping[str, Checkpoint] | None = None

    @property
    def healthy(self) -> bool:
        return not self.could_not_check and not [f for f in self.findings if f.severity != "info"]

    @property
    def exit_code(self) -> int:
        if self.could_not_check:
            return COULD_NOT_CHECK
        return HEALTHY if self.healthy else FINDINGS


# -- the facts the shell gathers -------------------------------------------------------------


@dataclass(frozen=True)
class LeaseFact:
    """A lease as the journal holds it, with what the shell could see of its holder."""

    scope: str
    owner: str
    ttl_seconds: float
    heartbeat_at: datetime
    info: Mapping[str, Any]  # JSON: what its taker recorded (pid, host, runner, ...)
    segment: tuple[str, int] | None  # (occurrence ID, segment) of a segment lease, else None
    worker: bool  # the tick's own lease
    process_alive: bool | None  # None: taken on another host, whose processes this host cannot see
    pid_recycled: bool = False  # its pid lives, but with another start time than recorded: another process

    @property
    def stale_at(self) -> datetime:
        return self.heartbeat_at + timedelta(seconds=STALE_AFTER_TTLS * self.ttl_seconds)

    def stale(self, now: datetime) -> bool:
        return now > self.stale_at

    def from_future(self, now: datetime) -> bool:
        return heartbeat_from_future(self.heartbeat_at, self.ttl_seconds, now)

    @property
    def lane_lock(self) -> bool:
        """Whether this is one of a staged lane run's locks (worker singleton, task lock, exclusive resource)."""
        return bool(_PIPELINE_LOCK.match(self.scope)) or self.scope.startswith(RESOURCE_PREFIX)

    @property
    def lane_task(self) -> tuple[str, int] | None:
        """(lane, task) of a staged lane's task lock, else None."""
        match = _PIPELINE_LOCK.match(self.scope)
        return (match.group(1), int(match.group(2))) if match and match.group(2) else None


@dataclass(frozen=True)
class LaunchAgentFact:
    """The installed LaunchAgent: its StartCalendarInterval entries, or why it could not be read; what it
    runs and with which journal; whether launchd has it loaded (None: not checkable here, `loaded_problem`
    says why). The shell compares the journal URLs (it can resolve paths) and shows them without a password.
    """

    path: str
    intervals: tuple[Mapping[str, Any], ...] | None
    problem: str | None = None
    label: str | None = None
    program_arguments: tuple[str, ...] | None = None
    journal_shown: str | None = None  # its EnvironmentVariables' FACTORY_JOURNAL, password masked
    journal_expected: str | None = None  # the journal health checks, password masked
    same_journal: bool | None = None  # None: it names no journal
    missing_programs: tuple[str, ...] = ()  # programs it names that this host cannot run
    loaded: bool | None = None
    loaded_problem: str | None = None


@dataclass(frozen=True)
class HealthFacts:
    now: datetime
    host: str
    chain_problems: Mapping[str, str] = field(default_factory=dict)  # why each aggregate's chain did not verify
    view: ScheduleView | None = None
    state_problem: tuple[str, str] | None = None  # (code, message) when the stored state does not parse
    leases: tuple[LeaseFact, ...] = ()
    night_states: Mapping[str, str] = field(default_factory=dict)  # state of each of `nights_to_check`
    launch_agent: LaunchAgentFact | None = None
    host_zone: str | None = None
    grace: timedelta = timedelta(minutes=DEFAULT_GRACE_MINUTES)
    could_not_check: tuple[str, ...] = ()  # facts the shell could not gather
    pipeline: PipelineState | None = None  # the staged lanes' checked state; None before any settings
    pipeline_problem: tuple[str, str] | None = None  # (code, message) when it does not read (CORRUPT)
    stall_after: timedelta | None = None  # None: the owner's setting (the commission's `pipeline.stallHours`)
    runs: tuple[RunFact, ...] = ()  # what the tick recorded of each runner's exit and output (recent ones)
    # The staged lanes' state at one version with the counts derived from its own event history up to it;
    # None when not gathered (only a whole check reads the history: `health`, not every tick).
    pipeline_history: PipelineHistory | None = None
    # The journal's owner key as read (None: no key recorded), when the shell read it (`owner_key_read`).
    owner_key: OwnerState | None = None
    owner_key_read: bool = False


def heartbeat_from_future(heartbeat_at: datetime, ttl_seconds: float, now: datetime) -> bool:
    """A heartbeat more than one TTL ahead of `now` was written by a wrong clock: it proves no live holder."""
    return heartbeat_at - now > timedelta(seconds=FUTURE_AFTER_TTLS * ttl_seconds)


# -- the verdict -----------------------------------------------------------------------------


def judge(facts: HealthFacts) -> HealthReport:
    """Every rule over the facts; a rule that raises is reported as not checked, never fatal."""
    findings: list[Finding] = []
    could_not = list(facts.could_not_check)
    for aggregate, problem in sorted(facts.chain_problems.items()):
        findings.append(Finding("journal-chain-broken", "error",
                                f"the journal's hash chain of {aggregate} is broken: {problem}",
                                {"aggregate": aggregate, "detail": problem}))
    if facts.state_problem is not None:
        code, message = facts.state_problem
        findings.append(Finding("state-unreadable", "error", f"the schedule state does not parse: {message}",
                                {"code": code}))
    elif facts.view is None and not findings and not could_not:
        findings.append(Finding("not-commissioned", "warning",
                                "no commission is recorded in this journal: is it the right one? (record the "
                                "first commission with `factory-schedule record-commission FILE`)"))
    view = facts.view

    def attempt(what: str, rule: Callable[[], list[Finding]]) -> None:
        try:
            findings.extend(rule())
        except Exception as error:  # one defect must never hide the other rules' findings
            could_not.append(f"{what}: {type(error).__name__}: {error}")

    attempt("leases", lambda: lease_findings(facts.leases, view, facts.now, facts.host, facts.pipeline))
    if facts.pipeline_problem is not None:
        code, message = facts.pipeline_problem
        findings.append(Finding("pipeline-unreadable", "error",
                                f"the staged lanes' state does not read: {message}", {"code": code, "detail": message}))
    elif facts.pipeline is not None:
        pipeline = facts.pipeline
        stall_after = facts.stall_after or timedelta(hours=pipeline.settings.stall_hours)
        locked = frozenset(lease.owner for lease in facts.leases if lease.lane_lock)
        attempt("staged lanes", lambda: staged_lane_findings(pipeline, facts.now, stall_after, locked))
    if facts.pipeline_history is not None:
        history = facts.pipeline_history
        attempt("staged lanes' counts", lambda: count_findings(history))
    if view is not None and facts.owner_key_read:
        attempt("owner key", lambda: owner_key_findings(facts.owner_key))
    if view is not None:
        attempt("lanes", lambda: lane_findings(view, facts.night_states, facts.now, facts.grace))
        attempt("accounts", lambda: account_findings(view, facts.now))
        attempt("runners' CLIs", lambda: _runner_findings(view))
        attempt("runs", lambda: run_findings(view, facts.runs, facts.now))
        attempt("ledger", lambda: ledger_findings(view, facts.now))
        if facts.launch_agent is not None:
            agent = facts.launch_agent
            attempt("launch agent", lambda: launch_agent_findings(view, agent, facts.host_zone))
    return HealthReport(checked_at=facts.now, host=facts.host, findings=tuple(findings),
                        could_not_check=tuple(could_not))


def owner_key_findings(state: OwnerState | None) -> list[Finding]:
    """A journal without an owner key takes any owner record from anyone who can run the command line; a key
    the recovery code replaced is shown until the owner rotates it, so a recovery they did not make is seen."""
    if state is None:
        return [Finding("owner-key-missing", "error",
                        "owner decisions are not protected: any process that can run factory-schedule can record "
                        "them in the owner's name; run `factory-schedule owner init`")]
    current = state.current
    if current.how == "recovered":
        return [Finding("owner-key-recovered", "warning",
                        f"the owner key was replaced with the recovery code at {current.recorded_at} (key "
                        f"{current.n}): if you did not do it, your recovery code is known; rotate the key "
                        f"(`factory-schedule owner rotate`) once you have checked",
                        {"key": current.n, "recordedAt": current.recorded_at})]
    return []


@dataclass(frozen=True)
class ProviderReach:
    """What a lane's provider CLI may write: its extra arguments, and whether its workdir holds the journal."""

    lane: str
    provider: str
    args: tuple[str, ...]
    workdir_holds_journal: bool


def _option(args: tuple[str, ...], *names: str) -> list[str]:
    """Every value given to one of `names` (`--name value` or `--name=value`)."""
    values = []
    for i, arg in enumerate(args):
        for name in names:
            if arg == name and i + 1 < len(args):
                values.append(args[i + 1])
            elif arg.startswith(name + "="):
                values.append(arg[len(name) + 1:])
    return values


def provider_writes(reach: ProviderReach) -> str | None:
    """Why the lane's provider may write anywhere its user can ("anywhere") or inside its workdir ("workdir"),
    from the CLI's own sandbox and permission options; None: it may write neither."""
    args = reach.args
    if reach.provider == "claude":
        modes = _option(args, "--permission-mode")
        tools = " ".join(_option(args, "--allowedTools", "--allowed-tools"))
        if "--dangerously-skip-permissions" in args or "bypassPermissions" in modes or re.search(
                r"(^|[\s,])Bash(\(\*?\))?($|[\s,])", tools):
            return "anywhere"
        return "workdir" if "acceptEdits" in modes or re.search(r"(^|[\s,])(Edit|Write)\b", tools) else None
    sandbox = _option(args, "--sandbox", "-s")
    if "--dangerously-bypass-approvals-and-sandbox" in args or "danger-full-access" in sandbox:
        return "anywhere"
    return "workdir" if "--full-auto" in args or "workspace-write" in sandbox else None


def provider_write_findings(reaches: Sequence[ProviderReach]) -> list[Finding]:
    """A lane whose provider may write the journal's folder: an injected prompt could then rewrite or delete
    the journal itself, which no signature prevents."""
    findings = []
    for reach in reaches:
        writes = provider_writes(reach)
        if writes == "anywhere" or (writes == "workdir" and reach.workdir_holds_journal):
            where = "anywhere your user can" if writes == "anywhere" else "its workdir, which holds the journal"
            findings.append(Finding(
                "provider-writes-journal", "warning",
                f"{reach.lane}: its {reach.provider} CLI may write {where}, the journal's folder included: narrow "
                f"its permissions in lane.toml (`args`) or move its workdir away from the journal",
                {"lane": reach.lane, "provider": reach.provider, "writes": writes}))
    return findings


def _runner_findings(view: ScheduleView) -> list[Finding]:
    from factory_schedule.core.runner_findings import runner_findings  # it builds on Finding, defined here

    return runner_findings(view)


# -- leases ----------------------------------------------------------------------------------


def lease_evidence(lease: LeaseFact, now: datetime) -> dict[str, Any]:
    """What a person (or the reconciler) needs to confirm the holder gone; the process start time only when
    the lease recorded one, and `pid_recycled` only when the pid now names another process."""
    evidence = _lease_evidence(lease, now)
    if lease.info.get("pid_started") is not None:
        evidence["pid_started"] = lease.info.get("pid_started")
    if lease.pid_recycled:
        evidence["pid_recycled"] = True
    return evidence


def _lease_evidence(lease: LeaseFact, now: datetime) -> dict[str, Any]:
    info = lease.info
    return {
        "scope": lease.scope,
        "runner": info.get("runner", lease.owner),
        "owner": lease.owner,
        "pid": info.get("pid"),
        "tick_pid": info.get("tick_pid"),
        "host": info.get("host"),
        "occurrence": info.get("occurrence"),
        "segment": info.get("segment"),
        "command": info.get("command"),
        "started": info.get("started"),
        "last_heartbeat": lease.heartbeat_at.isoformat(),
        "stale_since": lease.stale_at.isoformat(),
        "ttl_seconds": lease.ttl_seconds,
        "seconds_since_heartbeat": round((now - lease.heartbeat_at).total_seconds(), 1),
    }


def reconcile_confirmation(evidence: Mapping[str, Any], confirmed_by: str) -> dict[str, Any]:
    """The confirmation a supervisor would send for a dead runner, prefilled from the lease's evidence."""
    recycled = " (its pid now names another process)" if evidence.get("pid_recycled") else ""
    text = (
        f"runner process {evidence.get('pid')} on {evidence.get('host')} is gone{recycled}; its lease on "
        f"{evidence.get('scope')} had no heartbeat since {evidence.get('last_heartbeat')} "
        f"(stale since {evidence.get('stale_since')})"
    )
    return {"runner": str(evidence.get("runner")), "confirmedBy": confirmed_by, "evidence": text[:500]}


def running_segment(occurrence: Occurrence) -> tuple[int, str] | None:
    """(n, runner) of the occurrence's segment that has not ended, if any."""
    if not occurrence.segments or occurrence.segments[-1].ended is not None:
        return None
    last = occurrence.segments[-1]
    return last.n, last.runner


def segment_still_running(view: ScheduleView | None, occurrence_id: str, segment: int, runner: str) -> bool:
    """Whether the schedule still shows this runner's segment running (it neither deferred nor settled)."""
    for occurrence in view.occurrences if view is not None else []:
        if occurrence.id == occurrence_id:
            return occurrence.state == "running" and running_segment(occurrence) == (segment, runner)
    return False


def health_manages(lease: LeaseFact) -> bool:
    """Whether the reconciler acts on this lease by the lease rules: the tick's own worker lease and a segment's
    lease. A staged lane run's locks have their own rule over all of a run's locks (`dead_lane_runs`); any
    other scope guards work health cannot judge."""
    return lease.worker or lease.segment is not None


def lease_findings(leases: Sequence[LeaseFact], view: ScheduleView | None, now: datetime,
                   host: str, pipeline: PipelineState | None = None) -> list[Finding]:
    findings: list[Finding] = []
    dead = {run.runner: run for run in dead_lane_runs(leases, pipeline, now)}
    hung = hung_lane_runs(leases, now)
    for lease in leases:
        if lease.lane_lock and (lease.owner in dead or lease.owner in hung):
            continue  # its run's one finding says it all
        findings.extend(_lease_finding(lease, view, now, host))
    findings.extend(_dead_lane_run_finding(run, now, host) for run in dead.values())
    findings.extend(_hung_lane_run_finding(runner, locks, now, host) for runner, locks in sorted(hung.items()))
    findings.extend(hung_segment_findings(leases, view, now))
    held = {lease.segment for lease in leases if lease.segment is not None}
    findings.extend(_running_without_lease(view, held))
    return findings


@dataclass(frozen=True)
class DeadLaneRun:
    """A staged lane's run whose death is conclusive: every lock it holds is stale past 2 x TTL (none from the
    future) and its recorded process is provably gone from this host; `claimed` are the open tasks the
    stored lanes still show it claiming, as (lane, task, stage)."""

    runner: str
    locks: tuple[LeaseFact, ...]
    claimed: tuple[tuple[str, int, str], ...]


def dead_lane_runs(leases: Sequence[LeaseFact], pipeline: PipelineState | None,
                   now: datetime) -> list[DeadLaneRun]:
    """The staged lanes' runs the reconciler may confirm gone. Only over a state that reads (else what the run
    claimed cannot be told), and only when all of the run's locks agree: one fresh or unseen lock, or a live
    process, keeps the run the owner's."""
    if pipeline is None:
        return []
    by_runner: dict[str, list[LeaseFact]] = {}
    for lease in leases:
        if lease.lane_lock:
            by_runner.setdefault(lease.owner, []).append(lease)
    runs = []
    for runner, locks in sorted(by_runner.items()):
        if not all(lock.process_alive is False and lock.stale(now) and not lock.from_future(now) for lock in locks):
            continue
        claimed = tuple((lane.lane, task.n, task.stage) for lane in (pipeline.promotion, pipeline.maturation)
                        for task in lane.tasks if task.claimed_by == runner)
        runs.append(DeadLaneRun(runner, tuple(locks), claimed))
    return runs


def _dead_lane_run_finding(run: DeadLaneRun, now: datetime, host: str) -> Finding:
    first = run.locks[0]
    evidence = {**lease_evidence(first, now), "locks": [lock.scope for lock in run.locks],
                "claimed": [{"lane": lane, "task": n, "stage": stage} for lane, n, stage in run.claimed]}
    if not run.claimed:
        return Finding(
            "stale-lease", "warning",
            f"the staged lanes' run {run.runner} holds {', '.join(evidence['locks'])} with no heartbeat since "
            f"{evidence['last_heartbeat']}, its process is gone from {host} and it claims no task: its locks "
            "guard nothing (--repair removes them)", evidence, repairable=True)
    tasks = ", ".join(f"{lane} task {n} ({stage})" for lane, n, stage in run.claimed)
    return Finding(
        "dead-lane-run", "error",
        f"the staged lanes' run {run.runner} is gone (pid {evidence['pid']} on {host}) and its locks are stale "
        f"past 2 x TTL while it claims {tasks}: `health --repair` (or the next tick) confirms it as the "
        "supervisor; an interrupted revision counts as a failed start of its round, any other task returns to "
        "pending", evidence, repairable=True)


def hung_lane_runs(leases: Sequence[LeaseFact], now: datetime) -> dict[str, list[LeaseFact]]:
    """The staged lanes' runs whose process lives on this host while one of their locks has had no heartbeat for
    2 x TTL: a run heartbeats its locks through its call, so a live one that stopped is stopped or hung."""
    by_runner: dict[str, list[LeaseFact]] = {}
    for lease in leases:
        if lease.lane_lock:
            by_runner.setdefault(lease.owner, []).append(lease)
    return {runner: locks for runner, locks in by_runner.items()
            if any(lock.process_alive is True for lock in locks)
            and any(lock.stale(now) and not lock.from_future(now) for lock in locks)}


def _hung_lane_run_finding(runner: str, locks: list[LeaseFact], now: datetime, host: str) -> Finding:
    stale = min((lock for lock in locks if lock.stale(now)), key=lambda lock: lock.heartbeat_at)
    evidence = {**lease_evidence(stale, now), "locks": sorted(lock.scope for lock in locks)}
    return Finding(
        "run-hung", "error",
        f"the staged lanes' run {runner} (pid {evidence['pid']} on {host}) is alive but has not heartbeated "
        f"{stale.scope} since {evidence['last_heartbeat']}: it is stopped or hung and its lane waits for it; "
        "stop it (`kill` its pid) and health confirms it gone once its locks are stale", evidence)


def hung_segment_findings(leases: Sequence[LeaseFact], view: ScheduleView | None, now: datetime) -> list[Finding]:
    """Each running segment still running HUNG_PAST_DEADLINE after its deadline while its lease is kept fresh (its
    keeper heartbeats it): the runner makes no progress. Its evidence holds nothing that changes with each
    heartbeat, so the owner is told once."""
    held = {lease.segment: lease for lease in leases if lease.segment is not None}
    findings = []
    for occurrence in view.occurrences if view is not None else []:
        running = running_segment(occurrence) if occurrence.state == "running" else None
        if running is None:
            continue
        n, runner = running
        deadline = _instant(occurrence.segments[-1].deadline)
        lease = held.get((occurrence.id, n))
        if (deadline is None or now <= deadline + HUNG_PAST_DEADLINE or lease is None or lease.owner != runner
                or lease.stale(now) or lease.from_future(now)):
            continue  # a stale or missing lease has its own finding
        evidence = {"occurrence": occurrence.id, "segment": n, "runner": runner, "deadline": deadline.isoformat(),
                    "scope": lease.scope, "pid": lease.info.get("pid"), "tick_pid": lease.info.get("tick_pid"),
                    "host": lease.info.get("host"), "process_alive": lease.process_alive}
        findings.append(Finding(
            "run-hung", "error",
            f"runner {runner} of {occurrence.id} segment {n} (pid {evidence['pid']}) still runs "
            f"{int((now - deadline).total_seconds() // 60)} minutes past its deadline {deadline.isoformat()} while "
            "its lease is heartbeated: it makes no progress; stop it (`kill` its pid) and the next tick "
            "reconciles it", evidence))
    return findings


def _lease_finding(lease: LeaseFact, view: ScheduleView | None, now: datetime, host: str) -> list[Finding]:
    evidence = lease_evidence(lease, now)
    process_gone = lease.process_alive is False
    gone_words = "; its process is gone" + (" (its pid was recycled)" if lease.pid_recycled else "")
    guarding = lease.segment is not None and (
        view is None or segment_still_running(view, lease.segment[0], lease.segment[1], lease.owner))
    if not health_manages(lease):
        if not (lease.stale(now) or lease.from_future(now)):
            return []
        return [Finding(
            "stale-lease", "warning",
            f"{lease.scope} held by {lease.owner} has had no heartbeat since {evidence['last_heartbeat']}"
            + (gone_words if process_gone else "") + (
                ": its run's death is not conclusive (another of its locks fresh, its process alive or unseen, or "
                "the lanes' state unreadable), so the owner decides (`lanes abandon` after checking its artifacts)"
                if lease.lane_lock else ": health does not manage this scope, so the owner decides"), evidence)]
    if lease.from_future(now):
        return [Finding(
            "lease-heartbeat-in-future", "warning",
            f"{lease.scope} held by {lease.owner} has a heartbeat in the future ({evidence['last_heartbeat']}): "
            "a clock was wrong, so it proves no live holder" + (gone_words if process_gone else "")
            + ("; its segment still runs, so the owner decides" if guarding else ""),
            evidence, repairable=process_gone and not guarding)]
    if not lease.stale(now):
        return []
    if lease.segment is None:
        return [Finding(
            "stale-worker-lease" if lease.worker else "stale-lease", "warning",
            f"{lease.scope} held by {lease.owner} has had no heartbeat since {evidence['last_heartbeat']}"
            + (gone_words if process_gone else ""),
            evidence, repairable=process_gone)]
    occurrence_id, segment = lease.segment
    if process_gone and not guarding:
        return [Finding(
            "stale-lease-segment-ended", "warning",
            f"{lease.scope} is stale, its process is gone and its segment is no longer running: safe to remove "
            "(--repair)", evidence, repairable=True)]
    if process_gone:
        evidence["confirmation"] = reconcile_confirmation(evidence, "<supervisor>")
        return [Finding(
            "dead-runner", "error",
            f"runner {evidence['runner']} of {occurrence_id} segment {segment} is gone (pid {evidence['pid']} on "
            f"{host}{', recycled' if lease.pid_recycled else ''}) and its lease is stale past 2 x TTL: "
            "`health --repair` (or the next tick) reconciles it as the supervisor; its call in flight, if "
            "any, ends as lost and is never sent again", evidence, repairable=True)]
    if lease.process_alive:
        still = "" if guarding else " (its segment has ended)"
        return [Finding(
            "stale-lease-live-process", "warning",
            f"runner {evidence['runner']} (pid {evidence['pid']}) is alive but has not heartbeated "
            f"{lease.scope} since {evidence['last_heartbeat']}{still}: hung, or its tick died; the owner decides",
            evidence)]
    return [Finding(
        "stale-lease-other-host", "warning",
        f"{lease.scope} is stale and held from {evidence['host']}; this host cannot see its process, so the "
        "owner decides", evidence)]


def _running_without_lease(view: ScheduleView | None, held: set[tuple[str, int]]) -> list[Finding]:
    findings = []
    for occurrence in view.occurrences if view is not None else []:
        running = running_segment(occurrence) if occurrence.state == "running" else None
        if running is None or (occurrence.id, running[0]) in held:
            continue
        findings.append(Finding(
            "running-without-lease", "info",
            f"{occurrence.id} segment {running[0]} runs under {running[1]} with no lease (not started by "
            "`tick`, or its lease was removed): health cannot tell whether its runner lives",
            {"occurrence": occurrence.id, "segment": running[0], "runner": running[1]}))
    return findings


# -- the reconciler's plan -------------------------------------------------------------------


RepairAction = Literal["reconcile", "abandon-task", "remove-lease"]


@dataclass(frozen=True)
class PlannedRepair:
    """One repair the evidence licenses: reconcile a dead runner's segment (its lease goes after it), or
    remove a lease that guards nothing. `confirmation` is what the engine's `reconcile` records."""

    action: RepairAction
    scope: str
    owner: str
    reason: str
    evidence: dict[str, Any]  # JSON
    from_future: bool = False
    occurrence: str | None = None
    confirmation: dict[str, Any] | None = None  # JSON
    lane: str | None = None  # abandon-task: the staged lane and its task
    task: int | None = None
    after: str | None = None  # a removal that waits for this runner's abandon (dropped if that is refused)


def plan_repairs(facts: HealthFacts, confirmed_by: str | None = None) -> tuple[PlannedRepair, ...]:
    """The repairs conclusive evidence allows, in order: each reconcile before any lease removal.

    Never a lease whose process lives or cannot be seen (another host); never from TTL alone (it must be
    stale past 2 x TTL, or carry a heartbeat from the future); a segment lease only once its segment is no
    longer running, or is reconciled first (a heartbeat from the future is no evidence of 2 x TTL without
    one, so such a segment stays the owner's)."""
    view = facts.view
    reconciles: list[PlannedRepair] = []
    removals: list[PlannedRepair] = []
    by = confirmed_by or f"health-reconciler@{facts.host}"
    for lease in facts.leases:
        if lease.process_alive is not False or not health_manages(lease):
            continue
        future = lease.from_future(facts.now)
        if not (future or lease.stale(facts.now)):
            continue
        evidence = lease_evidence(lease, facts.now)
        gone = "its process is gone" + (" (its pid was recycled)" if lease.pid_recycled else "")
        if future:
            gone += " and its heartbeat is in the future"
        if lease.segment is not None:
            occurrence_id, segment = lease.segment
            if view is None:
                continue
            if segment_still_running(view, occurrence_id, segment, lease.owner):
                if future:
                    continue
                # The segment runs under the lease's owner, whatever the lease's info says of its runner.
                confirmation = {**reconcile_confirmation(evidence, by), "runner": lease.owner}
                reconciles.append(PlannedRepair(
                    "reconcile", lease.scope, lease.owner, f"{gone}, its lease stale since "
                    f"{evidence['stale_since']} and its segment still running", evidence, future, occurrence_id,
                    confirmation))
                removals.append(PlannedRepair(
                    "remove-lease", lease.scope, lease.owner, f"{gone} and its segment was reconciled", evidence,
                    future, occurrence_id))
                continue
            removals.append(PlannedRepair("remove-lease", lease.scope, lease.owner,
                                          f"{gone} and its segment is no longer running", evidence, future,
                                          occurrence_id))
            continue
        removals.append(PlannedRepair("remove-lease", lease.scope, lease.owner, gone, evidence, future))
    for run in dead_lane_runs(facts.leases, facts.pipeline, facts.now):
        evidence = lease_evidence(run.locks[0], facts.now)
        for lane, n, stage in run.claimed:
            confirmation = {**reconcile_confirmation(evidence, by), "runner": run.runner}
            reconciles.append(PlannedRepair(
                "abandon-task", f"pipeline/{lane}/task/{n}", run.runner,
                f"its process is gone and its locks are stale since {evidence['stale_since']} while it claims "
                f"{lane} task {n} ({stage})", evidence, confirmation=confirmation, lane=lane, task=n))
        for lock in run.locks:
            removals.append(PlannedRepair(
                "remove-lease", lock.scope, lock.owner,
                "its run's process is gone" + (" and its claim was reconciled" if run.claimed else
                                               " and it claims no task"),
                lease_evidence(lock, facts.now), after=run.runner if run.claimed else None))
    return (*reconciles, *removals)


# -- lanes -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Night:
    """A lane's night whose slot passed more than the grace ago and that its lane has not admitted past."""

    lane: str
    occurrence_id: str
    slot: datetime
    holding: Occurrence | None  # the lane's open occurrence, which any new admission waits for


def nights_to_check(view: ScheduleView, now: datetime, grace: timedelta) -> list[Night]:
    """Each lane's last two nights whose slot passed more than `grace` ago and that nothing admitted:
    yesterday's and today's for a daily lane, and a weekly lane's night even when it was days ago (until
    the lane's next admission coalesces it). A night whose window a clock change swallowed is left out:
    nothing could be admitted, and no tick could have helped. The shell asks the schedule for their states.
    """
    commission = parse_commission(view.commission)
    lane_states = {lane.lane: lane for lane in view.lanes}
    today = local_date_of(commission.zone, pendulum.instance(now))
    # A week back, and as many days again as the grace (a slot + grace may fall on a later date than its night).
    look_back = 8 + math.ceil(grace / timedelta(days=1))
    nights = []
    for lane in commission.lanes:
        state = lane_states.get(lane.lane)
        watermark = state.watermark.date if state is not None and state.watermark is not None else ""
        past = []
        for date in (today.subtract(days=back) for back in range(look_back)):
            occurrence = lane_occurrence_on(commission, lane, date)
            if occurrence is not None and occurrence.slot + grace <= now and occurrence.closes > occurrence.slot:
                past.append((date, occurrence))
            if len(past) == 2:
                break
        for date, occurrence in reversed(past):
            if watermark < date.isoformat():  # else admitted, or coalesced into a later one
                nights.append(Night(lane.lane, occurrence.id, occurrence.slot,
                                    state.open if state is not None else None))
    return nights


def lane_findings(view: ScheduleView, night_states: Mapping[str, str], now: datetime,
                  grace: timedelta) -> list[Finding]:
    """A night still `due` or `missed` is reported; one whose lane holds an open occurrence is only
    information (`lane-held`): no tick can admit it until that one settles, whose trouble is reported
    elsewhere."""
    findings = []
    for night in nights_to_check(view, now, grace):
        state = night_states.get(night.occurrence_id)
        if state not in ("due", "missed"):
            continue
        evidence: dict[str, Any] = {"lane": night.lane, "occurrence": night.occurrence_id,
                                    "slot": night.slot.isoformat(), "state": state,
                                    "grace_minutes": grace.total_seconds() / 60}
        if night.holding is not None:
            evidence["held_by"] = night.holding.id
            findings.append(Finding(
                "lane-held", "info",
                f"{night.occurrence_id} waits: its lane still holds {night.holding.id} ({night.holding.state}), "
                "and it is admitted or coalesced once that one settles", evidence))
        elif state == "due":
            findings.append(Finding(
                "lane-not-started", "warning",
                f"{night.occurrence_id} was due at {night.slot.isoformat()} and nothing has been admitted: is "
                "the LaunchAgent loaded and the Mac awake?", evidence))
        else:
            findings.append(Finding(
                "lane-missed", "warning",
                f"{night.occurrence_id} was never admitted before its window closed; the lane's next admission "
                "coalesces it", evidence))
    return findings


@dataclass(frozen=True)
class FiringRecord:
    """The compact record of a lane's scheduled firing that left no trace in the schedule: a `no-op` (the
    lane still held an earlier occurrence, so nothing could be admitted) or an `error` (nothing was admitted
    though the lane was free: no tick fired, or it failed). Its fields are the journal event's payload."""

    occurrence: str
    lane: str
    slot: str
    kind: Literal["no-op", "error"]
    reason: str

    def doc(self) -> dict[str, str]:
        return {"occurrence": self.occurrence, "lane": self.lane, "slot": self.slot, "kind": self.kind,
                "reason": self.reason}


def firing_records(view: ScheduleView, night_states: Mapping[str, str], now: datetime,
                   grace: timedelta) -> list[FiringRecord]:
    """One compact record per night past its slot and grace that the schedule has no record of (still
    `due` or `missed`): an admitted night has its occurrence, a coalesced one its admission's count."""
    records = []
    for night in nights_to_check(view, now, grace):
        if night_states.get(night.occurrence_id) not in ("due", "missed"):
            continue
        slot = night.slot.isoformat()
        if night.holding is not None:
            records.append(FiringRecord(night.occurrence_id, night.lane, slot, "no-op",
                                        f"the lane still held {night.holding.id} ({night.holding.state})"))
        else:
            records.append(FiringRecord(night.occurrence_id, night.lane, slot, "error",
                                        "nothing was admitted within the grace: no tick fired (the agent not "
                                        "loaded, the Mac asleep or off) or it failed before starting the lane"))
    return records


# -- accounts and the ledger -----------------------------------------------------------------


def _instant(text: str | None) -> datetime | None:
    return pendulum.parse(text).in_timezone("UTC") if text else None  # type: ignore[union-attr]


def _accounts_in_use(commission: Mapping[str, Any]) -> set[str]:
    return {task["account"] for lane in commission.get("lanes", []) for task in lane.get("tasks", [])
            if isinstance(task, dict) and task.get("account")}


def account_findings(view: ScheduleView, now: datetime) -> list[Finding]:
    max_age = int(view.commission.get("recordMaxAgeDays", 30))
    used = _accounts_in_use(view.commission)
    findings = []
    for account in view.accounts:
        findings.extend(_account_findings(account, account.account in used, max_age, now))
    return findings


def _account_findings(account: AccountState, used: bool, max_age: int, now: datetime) -> list[Finding]:
    name, record = account.account, account.record
    recorded_at = _instant(record.recorded_at) if record is not None else None
    window = _instant(account.window_closed_until)
    refused = _instant(account.sign_in_refused_at)
    overage = _instant(account.overage_observed_at)
    evidence: dict[str, Any] = {"account": name, "record_recorded_at": recorded_at.isoformat() if recorded_at else None}
    findings = []
    if window is not None and now < window:
        findings.append(Finding("account-window-closed", "warning",
                                f"{name}'s usage window is closed until {window.isoformat()}",
                                {**evidence, "until": window.isoformat()}))
    if refused is not None and (recorded_at is None or recorded_at <= refused):
        findings.append(Finding("account-sign-in-needed", "error",
                                f"{name} refused sign-in at {refused.isoformat()}: sign in again, then record "
                                "the account (`factory-schedule record-account`)",
                                {**evidence, "refused_at": refused.isoformat()}))
    if overage is not None and (recorded_at is None or recorded_at <= overage):
        findings.append(Finding("account-overage", "error",
                                f"paid overage was observed on {name} at {overage.isoformat()}: turn it off, "
                                "then record the account", {**evidence, "observed_at": overage.isoformat()}))
    if not used:
        return findings
    if record is None or recorded_at is None:
        findings.append(Finding("account-no-record", "error",
                                f"{name} is used by the commission but has no owner record: nothing is "
                                "admitted on it", evidence))
        return findings
    expires = recorded_at + timedelta(days=max_age)
    if now > expires:
        findings.append(Finding("account-record-expired", "error",
                                f"{name}'s owner record expired at {expires.isoformat()}: record it again",
                                {**evidence, "expires": expires.isoformat()}))
    elif now + timedelta(days=RECORD_EXPIRY_WARNING_DAYS) > expires:
        findings.append(Finding("account-record-expiring", "warning",
                                f"{name}'s owner record stops being current at {expires.isoformat()}",
                                {**evidence, "expires": expires.isoformat()}))
    if record.overage:
        findings.append(Finding("account-overage-on", "error",
                                f"{name}'s record has paid overage on: no call is admitted on it", evidence))
    return findings


def ledger_findings(view: ScheduleView, now: datetime) -> list[Finding]:
    week_now = iso_week_of(local_date_of(view.commission["zone"], pendulum.instance(now)))
    findings = []
    for week in view.ledger:
        if week.week < week_now:
            continue
        if week.debited > CEILING_WARNING_FRACTION * week.ceiling:
            findings.append(Finding("week-near-ceiling", "warning",
                                    f"{week.week} has debited {week.debited} of its {week.ceiling} tokens "
                                    f"({100 * week.debited / week.ceiling:.0f} %)",
                                    {"week": week.week, "ceiling": week.ceiling, "debited": week.debited}))
    return findings


# -- the LaunchAgent -------------------------------------------------------------------------


def _interval_key(interval: Mapping[str, Any]) -> tuple[Any, ...]:
    return (interval.get("Weekday"), interval.get("Hour"), interval.get("Minute"))


def launch_agent_findings(view: ScheduleView, agent: LaunchAgentFact, host_zone: str | None) -> list[Finding]:
    if agent.intervals is None:
        return [Finding("launch-agent-unreadable", "error", f"cannot read {agent.path}: {agent.problem}",
                        {"plist": agent.path})]
    commission = view.commission
    try:
        expected = launch_intervals(commission, host_zone or commission.get("zone", ""))
    except ScheduleError as error:
        return [Finding("launch-agent-zone", "error",
                        f"the commission's intervals cannot be placed in this Mac's zone {host_zone}: "
                        f"{error.message}", {"host_zone": host_zone, "commission_zone": commission.get("zone")})]
    have = [dict(interval) for interval in agent.intervals]
    want = [dict(interval) for interval in expected]
    findings = []
    if sorted(map(_interval_key, have), key=repr) != sorted(map(_interval_key, want), key=repr):
        findings.append(Finding("launch-agent-drift", "error",
                                f"{agent.path} fires at other times than the commission asks: reinstall it with "
                                "`factory-schedule launchd install`",
                                {"plist": agent.path, "installed": have, "expected": want}))
    findings.extend(launch_agent_program_findings(agent))
    findings.extend(launch_agent_loaded_findings(agent))
    return findings


REINSTALL = "reinstall it with `factory-schedule launchd install`"


def launch_agent_program_findings(agent: LaunchAgentFact) -> list[Finding]:
    """What `launchd install` writes: `<factory-schedule> tick --detach [--ttl S] -- RUNNER...`, every program
    an absolute path this host can run, and the journal in EnvironmentVariables as FACTORY_JOURNAL (the
    journal health checks), never `--journal` on the command line."""
    if agent.program_arguments is None:
        return []
    arguments = list(agent.program_arguments)
    evidence: dict[str, Any] = {"plist": agent.path, "program_arguments": arguments}
    findings = []
    tick_at = arguments.index("tick") if "tick" in arguments else None
    dashes = arguments.index("--") if "--" in arguments else None
    if tick_at is None:
        findings.append(Finding("launch-agent-not-tick", "error",
                                f"{agent.path} does not run `factory-schedule tick`: {REINSTALL}", evidence))
    else:
        tick_options = arguments[tick_at + 1 : dashes]
        if "--detach" not in tick_options:
            findings.append(Finding(
                "launch-agent-no-detach", "error",
                f"{agent.path} runs the tick without --detach: launchd would wait for every runner and swallow "
                f"the next lanes' times; {REINSTALL}", evidence))
        if dashes is None or dashes == len(arguments) - 1:
            findings.append(Finding("launch-agent-no-runner", "error",
                                    f"{agent.path} names no runner after `--`: {REINSTALL}", evidence))
        if any(a == "--journal" or a.startswith("--journal=") for a in arguments[: dashes]):
            findings.append(Finding(
                "launch-agent-journal-on-command-line", "warning",
                f"{agent.path} names its journal on the command line, where `ps` shows a password: {REINSTALL}",
                evidence))
    if agent.missing_programs:
        findings.append(Finding(
            "launch-agent-program-missing", "error",
            f"{agent.path} runs {', '.join(agent.missing_programs)}, which this host cannot run: {REINSTALL}",
            {**evidence, "missing": list(agent.missing_programs)}))
    journal = {"plist": agent.path, "installed": agent.journal_shown, "expected": agent.journal_expected}
    if agent.same_journal is None:
        findings.append(Finding(
            "launch-agent-no-journal", "error",
            f"{agent.path} sets no FACTORY_JOURNAL: its ticks would use the default journal file, not "
            f"{agent.journal_expected}; {REINSTALL}", journal))
    elif not agent.same_journal:
        findings.append(Finding(
            "launch-agent-journal-drift", "error",
            f"{agent.path} runs the ticks against {agent.journal_shown}, not this journal "
            f"({agent.journal_expected}): {REINSTALL}", journal))
    return findings


def launch_agent_loaded_findings(agent: LaunchAgentFact) -> list[Finding]:
    evidence = {"plist": agent.path, "label": agent.label}
    if agent.loaded is None and agent.loaded_problem is None:
        return []  # not probed
    if agent.loaded is None:
        reason = agent.loaded_problem or "not checked"
        return [Finding("launch-agent-loaded-unchecked", "info",
                        f"whether {agent.label} is loaded cannot be checked here: {reason}",
                        {**evidence, "reason": reason})]
    if agent.loaded:
        return []
    return [Finding("launch-agent-not-loaded", "error",
                    f"{agent.label} is installed at {agent.path} but launchd has not loaded it: nothing fires; "
                    f"load it with `launchctl bootstrap gui/$(id -u) {agent.path}`", evidence)]


# -- the staged lanes (promotion and maturation) ----------------------------------------------


def staged_lane_findings(state: PipelineState, now: datetime, stall_after: timedelta,
                         locked: frozenset[str] = frozenset()) -> list[Finding]:
    """Counters at their caps, lanes stalled despite eligible work, and what waits for the owner."""
    return [*cap_findings(state), *stall_findings(state, now, stall_after, locked), *owner_wait_findings(state),
            *clock_ahead_findings(state, now)]


def _pipeline_records(state: PipelineState) -> list[tuple[str, dict[str, Any], dict[str, str]]]:
    """Every record of the staged lanes that carries instants: (what it is, whose, its instants by name)."""
    records: list[tuple[str, dict[str, Any], dict[str, str]]] = []
    for lane in (state.promotion, state.maturation):
        for work in lane.wip:
            instants = {"startedAt": work.started_at}
            if work.escalation is not None:
                instants["escalation.at"] = work.escalation.at
            for task in lane.tasks:
                if task.candidate == work.candidate:
                    instants[f"task {task.n} enqueuedAt"] = task.enqueued_at
                    if task.claimed_at is not None:
                        instants[f"task {task.n} claimedAt"] = task.claimed_at
            records.append((f"{lane.lane}'s {work.candidate}", {"lane": lane.lane, "candidate": work.candidate},
                            instants))
        ended = {f"task {done.n} doneAt": done.done_at for done in lane.done}
        ended.update({f"{entry.candidate} ended at": entry.at for entry in lane.history})
        records.append((f"{lane.lane}'s done tasks and history", {"lane": lane.lane}, ended))
    for approval in state.approvals:
        stamps = {"requestedAt": approval.requested_at, "decidedAt": approval.decided_at, "usedAt": approval.used_at}
        records.append((f"approval {approval.id}", {"approval": approval.id},
                        {name: instant for name, instant in stamps.items() if instant is not None}))
    if state.top_n is not None:
        records.append((f"the Top-N of {state.top_n.week}", {"week": state.top_n.week},
                        {"recordedAt": state.top_n.recorded_at}))
    records.append(("the gate decisions", {}, {f"decision {d.n} at": d.at for d in state.decisions}))
    return records


def clock_ahead_findings(state: PipelineState, now: datetime) -> list[Finding]:
    """A staged-lane record carrying an instant later than this host's clock (past a small tolerance): a clock
    that was ahead wrote it. The lanes' clock rule is per record, so that record alone (a candidate's work, an
    approval) refuses what would change it until the clock passes its latest instant; the finding names the
    record and its instants from the future, so the owner can check the clock that wrote them."""
    now = datetime.fromtimestamp(now.timestamp(), UTC)
    findings: list[Finding] = []
    for what, whose, instants in _pipeline_records(state):
        ahead = {name: instant for name, instant in instants.items()
                 if _instant_of(instant) - now > CLOCK_AHEAD_TOLERANCE}
        if not ahead:
            continue
        latest = max(ahead.values(), key=_instant_of)
        hours = (_instant_of(latest) - now).total_seconds() / 3600
        findings.append(Finding(
            "pipeline-clock-ahead", "warning",
            f"{what} carries {len(ahead)} instant(s) up to {latest}, {hours:.1f} h ahead of this host's clock: a "
            "clock that was ahead wrote them; what would change this record is refused INVALID until the clock "
            "passes them (check the clocks of the hosts that run the lanes)",
            {**whose, "record": what, "latest": latest, "instants": ahead}))
    return findings


def cap_findings(state: PipelineState) -> list[Finding]:
    """Each candidate's revision, retry and slice counters at or past their caps (a warning: the next reject
    or failure escalates it to the owner), and a lane whose WIP is full (information: it admits no new work
    until one ends). Revisions and retries count the owner's granted rounds in their cap, as the rules do."""
    settings = state.settings
    findings: list[Finding] = []
    for lane in (state.promotion, state.maturation):
        wip_cap = settings.wip(lane.lane)
        if len(lane.wip) >= wip_cap:
            findings.append(Finding(
                "lane-wip-full", "info",
                f"{lane.lane} holds {len(lane.wip)} of its {wip_cap} WIP: no new work until one ends",
                {"lane": lane.lane, "counter": "wip", "value": len(lane.wip), "cap": wip_cap}))
        for work in lane.wip:
            counters = [("revisions", work.revisions, settings.max_revisions + work.grants),
                        ("retries", work.retries, settings.max_retries + work.grants)]
            if lane.lane == "maturation":
                counters.append(("slices", work.slices, settings.max_slices))
            for counter, value, cap in counters:
                if value >= cap:
                    findings.append(Finding(
                        "lane-counter-at-cap", "warning",
                        f"{lane.lane}'s {work.candidate} has {counter} {value} of its cap {cap}"
                        + (" (past it)" if value > cap else "") + f" at {work.stage}",
                        {"lane": lane.lane, "candidate": work.candidate, "stage": work.stage, "counter": counter,
                         "value": value, "cap": cap}))
    return findings


def _instant_of(text: str) -> datetime:
    """A stored instant (`2026-12-07T02:00:00.000Z`) as a plain aware datetime, comparable with any other."""
    return datetime.fromisoformat(text)


def stall_findings(state: PipelineState, now: datetime, stall_after: timedelta,
                   locked: frozenset[str] = frozenset()) -> list[Finding]:
    """A lane with a run-claimable task pending, or with free WIP, its cooldown over and eligible work to
    start (enough Top-N candidates for promotion, an untaken GO for maturation), and nothing claimed for
    longer than `stall_after` since that work became claimable. A task claimed longer than that by a run that
    holds none of the lanes' locks (`locked`: their owners) stalls it too: that run ended without its report
    (a refused or lost call, an answer that was not its report), and only a supervisor's `lanes abandon`
    returns the task. The owner's own tasks never stall a lane here: they are their own findings."""
    settings = state.settings
    now = datetime.fromtimestamp(now.timestamp(), UTC)  # plain, whatever datetime class the shell passed
    findings: list[Finding] = []
    for lane in (state.promotion, state.maturation):
        for task in lane.tasks:
            if task.kind == "owner" or task.claimed_by in locked:
                continue
            if task.claimed_by is not None:
                claimed_at = task.claimed_at or task.enqueued_at
                if now - _instant_of(claimed_at) > stall_after:
                    findings.append(Finding(
                        "lane-stalled", "warning",
                        f"{lane.lane}'s task {task.n} ({task.candidate} at {task.stage}) is claimed by "
                        f"{task.claimed_by} since {claimed_at}, which holds none of the lane's locks: its run ended "
                        f"without its report; after checking its artifacts, return it with `factory-schedule lanes "
                        f"abandon --lane {lane.lane} --task {task.n} --runner {task.claimed_by}`",
                        {"lane": lane.lane, "task": task.n, "candidate": task.candidate, "stage": task.stage,
                         "runner": task.claimed_by, "since": claimed_at,
                         "stall_hours": stall_after.total_seconds() / 3600}))
                continue
            waiting = now - _instant_of(task.enqueued_at)
            if waiting > stall_after:
                findings.append(Finding(
                    "lane-stalled", "warning",
                    f"{lane.lane}'s task {task.n} ({task.candidate} at {task.stage}) has waited since "
                    f"{task.enqueued_at} with nothing claiming it: is its {task.kind} run scheduled?",
                    {"lane": lane.lane, "task": task.n, "candidate": task.candidate, "stage": task.stage,
                     "since": task.enqueued_at, "stall_hours": stall_after.total_seconds() / 3600}))
        if len(lane.wip) >= settings.wip(lane.lane):
            continue
        free_since: list[str] = []
        if lane.cooldown_until is not None:
            if now < _instant_of(lane.cooldown_until):
                continue
            free_since.append(lane.cooldown_until)
        if lane.lane == "promotion":
            pool = len(eligible(state))
            if state.top_n is None or pool < settings.threshold:
                continue
            if go_backlog_idle(state, len(lane.wip) + 1) is not None:
                continue  # held by the GO backlog, which waits for maturation: not a stall of its run
            free_since.append(state.top_n.recorded_at)
            what = f"{pool} eligible Top-N candidates"
        else:
            held = {work.candidate for work in lane.wip}
            waiting_go = [d for d in state.decisions if d.verdict == "GO" and not d.consumed
                          and d.candidate not in held]
            if not waiting_go:
                continue
            first = min(waiting_go, key=lambda d: d.n)
            free_since.append(first.at)
            what = f"GO #{first.n} ({first.candidate})"
        since = max(free_since, key=_instant_of)
        if now - _instant_of(since) > stall_after:
            findings.append(Finding(
                "lane-stalled", "warning",
                f"{lane.lane} has free WIP and {what} since {since}, but nothing has started: is its "
                f"{settings.scheduler(lane.lane)} run scheduled?",
                {"lane": lane.lane, "since": since, "stall_hours": stall_after.total_seconds() / 3600}))
    return findings


def owner_wait_findings(state: PipelineState) -> list[Finding]:
    """A security-approve request with no decision, and an escalation waiting for the owner's decision:
    only the owner frees either, so each is told to them (tui/host/notify.py)."""
    findings: list[Finding] = []
    for approval in state.approvals:
        if approval.approved is None:
            findings.append(Finding(
                "security-approve-waiting", "warning",
                f"{approval.candidate} waits at security-approve for {approval.action} (approval {approval.id}, "
                f"asked by {approval.requested_by}): approve or deny it",
                {"approval": approval.id, "candidate": approval.candidate, "action": approval.action,
                 "requested_at": approval.requested_at}))
    for lane in (state.promotion, state.maturation):
        for work in lane.wip:
            if work.escalation is not None:
                findings.append(Finding(
                    "escalation-waiting", "warning",
                    f"{lane.lane}'s {work.candidate} is escalated to the owner at {work.escalation.stage} "
                    f"({work.escalation.reason}): revise once more, or park it",
                    {"lane": lane.lane, "candidate": work.candidate, "stage": work.escalation.stage,
                     "at": work.escalation.at}))
    return findings


# -- scheduled runs: failed only when exit status, output and the expected record agree ------------------

LineKind = Literal["error", "warning"]
OutputSignal = Literal["error", "silent", "ordinary"]
SegmentRecord = Literal["deferred", "settled", "reconciled", "running"]
RunVerdict = Literal["ok", "failed", "disagrees"]
RUN_FINDING_DAYS = 7  # a recorded run's failure or disagreement is reported for a week, or until its next run
_ERROR_LINE = re.compile(r"\b(error|errors|fatal|traceback|exception|panic|failed|failure)\b", re.IGNORECASE)
_WARNING_LINE = re.compile(r"\b(warn|warning|warnings|deprecated)\b", re.IGNORECASE)
# A count of none ("0 errors", "no failures", "zero warnings") reports that nothing went wrong: not a marker.
_NONE_COUNTED = re.compile(r"\b(?:0|no|zero)\s+(?:errors?|failures?|warnings?|exceptions?)\b", re.IGNORECASE)


def classify_line(line: str) -> LineKind | None:
    """Whether a line of a runner's output reports an error, only a warning, or neither: the first marker
    decides, so "warning: the retry failed" is a warning and "error: warnings are errors" an error; a count of
    none ("0 errors", "no failures") is no marker at all."""
    line = _NONE_COUNTED.sub(" ", line)
    error = _ERROR_LINE.search(line)
    warning = _WARNING_LINE.search(line)
    if error is not None and (warning is None or error.start() < warning.start()):
        return "error"
    return "warning" if warning is not None else None


def output_signal(error_lines: int, lines: int) -> OutputSignal:
    """What a run's output says: `error` (a line reports one), `silent` (nothing at all: a crash without words
    says nothing against failure) or `ordinary` (it spoke, with no error; warnings are ordinary)."""
    if error_lines:
        return "error"
    return "silent" if lines == 0 else "ordinary"


@dataclass(frozen=True)
class RunOutcome:
    verdict: RunVerdict
    reason: str


def run_outcome(exit_code: int | None, signal: OutputSignal, record: SegmentRecord) -> RunOutcome:
    """A scheduled run failed only when its exit status, its output and its expected record agree: a non-zero
    exit (or none: it could not start), output with an error line or none at all, and no deferral or
    settlement of its segment. It succeeded when it exited 0 with no error line and its segment has its
    record; a warning alone is neither. Anything else is a disagreement, which names its signals."""
    exit_words = "could not start" if exit_code is None else f"exited {exit_code}"
    output_words = {"error": "its output reports an error", "silent": "it printed nothing",
                    "ordinary": "its output reports no error"}[signal]
    recorded = record in ("deferred", "settled")
    record_words = f"its segment was {record}" if recorded else (
        "its segment has no deferral or settlement" + (" (a supervisor reconciled it)" if record == "reconciled"
                                                        else ""))
    words = f"it {exit_words}, {output_words}, and {record_words}"
    if recorded and exit_code == 0 and signal != "error":
        return RunOutcome("ok", words)
    if not recorded and exit_code != 0 and signal != "ordinary":
        return RunOutcome("failed", words)
    return RunOutcome("disagrees", words)


@dataclass(frozen=True)
class RunFact:
    """What the tick recorded when a runner's process ended: its exit status (None: it could not start), the
    first error and warning lines of its output (escaped) with their counts, and where its bounded log is."""

    occurrence: str
    segment: int
    runner: str
    lane: str
    exit: int | None
    error_lines: tuple[str, ...]
    warning_lines: tuple[str, ...]
    errors: int
    warnings: int
    lines: int
    log: str | None
    host: str | None
    finished_at: datetime


def segment_record(view: ScheduleView, occurrence_id: str, segment: int) -> SegmentRecord | None:
    """How the schedule recorded a segment's end (`running` while it has none); None when the journal's
    schedule no longer holds that occurrence or segment."""
    for occurrence in view.occurrences:
        if occurrence.id == occurrence_id:
            for kept in occurrence.segments:
                if kept.n == segment:
                    return kept.ended.how if kept.ended is not None else "running"
    return None


def run_findings(view: ScheduleView, runs: Sequence[RunFact], now: datetime) -> list[Finding]:
    """The latest recorded run of each occurrence, of the last `RUN_FINDING_DAYS`: `run-failed` when its exit
    status, output and the schedule's record agree that it failed; `run-outcome-disagrees` when they do not
    agree either way (the owner looks: the log is named)."""
    latest: dict[str, RunFact] = {}
    for run in runs:
        if now - run.finished_at > timedelta(days=RUN_FINDING_DAYS):
            continue
        kept = latest.get(run.occurrence)
        if kept is None or (run.segment, run.finished_at) >= (kept.segment, kept.finished_at):
            latest[run.occurrence] = run
    findings = []
    for run in latest.values():
        record = segment_record(view, run.occurrence, run.segment)
        if record is None:
            continue
        outcome = run_outcome(run.exit, output_signal(run.errors, run.lines), record)
        if outcome.verdict == "ok":
            continue
        evidence: dict[str, Any] = {"occurrence": run.occurrence, "segment": run.segment, "runner": run.runner,
                                    "lane": run.lane, "exit": run.exit, "record": record, "log": run.log,
                                    "host": run.host, "error_lines": list(run.error_lines),
                                    "warning_lines": list(run.warning_lines)}
        where = f" (log: {run.log})" if run.log else ""
        if outcome.verdict == "failed":
            findings.append(Finding("run-failed", "error",
                                    f"{run.occurrence} segment {run.segment} failed: {outcome.reason}{where}",
                                    evidence))
        else:
            findings.append(Finding("run-outcome-disagrees", "warning",
                                    f"{run.occurrence} segment {run.segment}: its signals disagree, so it is not "
                                    f"called failed: {outcome.reason}{where}", evidence))
    return findings


# -- the staged lanes' durable counts against the state the dashboard draws ---------------------------


@dataclass
class HistoryCounts:
    """What the pipeline's own events say, counted without its state: per lane the task numbers enqueued and
    done and the works ended (completed, parked); the gate decisions recorded; the approval requests not yet
    decided."""

    enqueued: dict[str, set[int]] = field(default_factory=lambda: {"promotion": set(), "maturation": set()})
    done: dict[str, set[int]] = field(default_factory=lambda: {"promotion": set(), "maturation": set()})
    completed: dict[str, int] = field(default_factory=lambda: {"promotion": 0, "maturation": 0})
    parked: dict[str, int] = field(default_factory=lambda: {"promotion": 0, "maturation": 0})
    decisions: int = 0
    undecided: set[str] = field(default_factory=set)

    def add(self, event_type: str, data: Mapping[str, Any]) -> None:
        """Count one event (its type and data, as the lanes wrote it)."""
        lane = data.get("lane")
        if lane in self.enqueued:
            self.enqueued[lane].update(int(n) for n in data.get("enqueued", ()))
            self.done[lane].update(int(n) for n in data.get("done", ()))
            if event_type == "task-done":
                outcome = data.get("outcome")
                if outcome == "park":
                    self.parked[lane] += 1
                elif outcome is not None:
                    self.completed[lane] += 1
                if isinstance(data.get("decision"), Mapping):  # a gate decision (older events held text here)
                    self.decisions += 1
        if event_type == "approval-requested":
            self.undecided.add(str(data.get("id")))
        elif event_type == "approval-decided":
            self.undecided.discard(str(data.get("id")))


@dataclass(frozen=True)
class PipelineHistory:
    state: PipelineState  # the state at the version the counts were taken to
    counts: HistoryCounts


def count_findings(history: PipelineHistory) -> list[Finding]:
    """Each count the dashboard draws from the state (open tasks, tasks done, works completed and parked, gate
    decisions, approval requests waiting) that its event history does not support: one error finding naming
    them. Nothing is repaired: the state is the record every decision reads, and rewriting it from history
    would be health changing decisions; the owner restores the journal from a copy they trust."""
    state, counts = history.state, history.counts
    differences: list[dict[str, Any]] = []

    def compare(what: str, in_state: Any, in_history: Any) -> None:
        if in_state != in_history:
            differences.append({"count": what, "state": in_state, "history": in_history})

    for lane in (state.promotion, state.maturation):
        name = lane.lane
        compare(f"{name}.openTasks", sorted(task.n for task in lane.tasks),
                sorted(counts.enqueued[name] - counts.done[name]))
        compare(f"{name}.tasksDone", lane.tasks_done, len(counts.done[name]))
        compare(f"{name}.completed", lane.completed, counts.completed[name])
        compare(f"{name}.parked", lane.parked, counts.parked[name])
    compare("tasksNumbered", state.next_task - 1,
            max((n for numbers in counts.enqueued.values() for n in numbers), default=0))
    compare("decisions", state.next_decision - 1, counts.decisions)
    compare("approvalsWaiting", sorted(a.id for a in state.approvals if a.approved is None), sorted(counts.undecided))
    if not differences:
        return []
    named = "; ".join(f"{d['count']} {d['state']} in the state, {d['history']} by its history" for d in differences)
    return [Finding(
        "pipeline-counts-disagree", "error",
        f"the staged lanes' state, which the dashboard draws, disagrees with their own event history: {named}. "
        "Nothing is repaired (the state is what every decision reads); restore the journal from a copy you trust",
        {"differences": differences})]
