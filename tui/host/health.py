"""Health's probes and repairs: gather the facts, let core judge them, remove only reversible drift.

`check_health` is what `factory-schedule health` prints and what the dashboard's
Health view draws. This module only looks (the journal's chain check and state,
the leases with whether each holder's process lives on this host, the nights'
states, the installed LaunchAgent, the host's zone, the runs the tick recorded) and hands the facts to
`core.health.judge`, where every rule lives as a pure function.

`repair` is the reconciler (tui/host/reconciler.py carries it out): it reconciles
a dead runner's segment through the engine when the evidence is conclusive (its
process provably gone from this host, told apart from a recycled pid by the start
time the lease recorded, and no heartbeat for 2 x TTL), then removes leases that
guard nothing any more, journaling each removal. A lease whose process lives, or
that was taken on another host, is never touched: that stays the owner's finding.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import pendulum

from factory_schedule.core import OWNER_AGGREGATE, load_owner
from factory_schedule.core.health import (
    COULD_NOT_CHECK,
    DEFAULT_GRACE_MINUTES,
    FINDINGS,
    HEALTHY,
    Finding,
    FiringRecord,
    HealthFacts,
    HealthReport,
    HistoryCounts,
    LeaseFact,
    PipelineHistory,
    Repair,
    RunFact,
    firing_records,
    judge,
    nights_to_check,
    reconcile_confirmation,
)
from factory_schedule.store import Checkpoint, Journal, leases
from factory_schedule.store.errors import JournalSetBackError
from factory_schedule.tui.host import chain_checkpoint, reconciler
from factory_schedule.tui.host.chain_checkpoint import CountedHistory
from factory_schedule.tui.host.clock import host_zone
from factory_schedule.tui.host.launch_agent import LoadedProbe, launchctl_loaded, read_launch_agent
from factory_schedule.tui.host.process_identity import (
    holder_alive,
    on_this_machine,
    process_alive,
    process_start_time,
    session_alive,
    this_machine,
    usable_pid,
)
from factory_schedule.tui.host.run_output import recorded_runs
from factory_schedule.tui.host.run_processes import run_processes
from factory_schedule.tui.host.tokens import parse_segment_scope

if TYPE_CHECKING:
    from factory_schedule.core import LifecycleSchedule, ScheduleView
    from factory_schedule.core.pipeline import PipelineLanes, PipelineState

__all__ = [
    "COULD_NOT_CHECK", "DEFAULT_GRACE_MINUTES", "FINDINGS", "HEALTHY", "AlreadyRead", "ChainCheck", "Finding",
    "HealthReport", "HealthScope", "LeaseFreshness", "Repair", "check_health", "host_zone", "lease_freshness",
    "reconcile_confirmation", "repair",
]  # fmt: skip


def lease_fact(
    lease: leases.Lease,
    host: str,
    alive: Callable[[object], bool] = process_alive,
    started: Callable[[object], str | None] = process_start_time,
    session: Callable[[object], bool] = session_alive,
    machine: str | None = None,
    members: Callable[[object], list[int] | None] = run_processes,
) -> LeaseFact:
    """A stored lease with what this host can see of its holder: only a process recorded on this machine
    (hostname and, when recorded, machine identity: `on_this_machine`) with a usable pid can be probed; a
    live pid that provably started after the recorded start is a recycled pid, so the holder is gone;
    a process left in the holder's recorded session, or carrying its call mark, keeps it alive, and the
    fact names each such pid (`members`) so the owner sees what holds the run."""
    machine = machine if machine is not None else this_machine()
    # Only a process on this host with a recorded pid can be probed: without one, nothing proves it gone.
    here = on_this_machine(lease.info, host, machine) and usable_pid(lease.info.get("pid"))
    living, recycled = holder_alive(lease.info, alive, started, session) if here else (False, False)
    living_pids = tuple(members(lease.info.get("session")) or ()) if living else ()
    return LeaseFact(
        scope=lease.scope,
        owner=lease.owner,
        ttl_seconds=lease.ttl_seconds,
        heartbeat_at=lease.heartbeat_at,
        info=lease.info,
        segment=parse_segment_scope(lease.scope),
        worker=lease.scope == leases.WORKER_SCOPE,
        process_alive=living if here else None,
        pid_recycled=recycled,
        living_pids=living_pids,
    )


def read_pipeline(journal: Journal, now: datetime, reader: PipelineLanes | None = None,
                  ) -> tuple[PipelineState | None, tuple[str, str] | None]:
    """The staged lanes' checked state, or why it does not read: reading it never fails health, so any
    error (a CORRUPT state, a journal that cannot be read) becomes the `pipeline-unreadable` finding.

    `reader`: the staged lanes' reader of this journal a caller keeps from one reading to the next (the
    dashboard's), which checks a stored text only when it is not byte for byte the last one it read, as a
    runner's does; without one, every reading parses and checks every member."""
    from factory_schedule.core import ManualClock
    from factory_schedule.core.pipeline import PipelineError, PipelineLanes

    try:
        lanes = reader if reader is not None else PipelineLanes(journal, ManualClock(pendulum.instance(now)))
        return lanes.state(), None
    except PipelineError as error:
        return None, (error.code, error.message)
    except Exception as error:
        return None, ("UNREADABLE", f"{type(error).__name__}: {error}")


def read_pipeline_history(journal: Journal, kept: CountedHistory | None = None,
                          ) -> tuple[PipelineHistory | None, CountedHistory | None]:
    """The staged lanes' state at one version and the counts of their events up to that version (so a write
    meanwhile cannot look like a disagreement), with the count to keep; (None, None) when the state does not
    read (its own finding). From `kept` (an earlier count whose event still has its hash) only the events after
    it are read, so a morning's count costs the night's events, not the lanes' history."""
    from factory_schedule.core.pipeline import PIPELINE_AGGREGATE, PipelineError, parse_pipeline

    version, text = journal.load_text(PIPELINE_AGGREGATE)
    if text is None:
        return None, None
    try:
        state = parse_pipeline(text)
    except PipelineError:
        return None, None
    counts, after, last_hash = HistoryCounts(), 0, None
    if kept is not None and kept.version <= version and (
            chain_checkpoint.event_hash(journal, PIPELINE_AGGREGATE, kept.version) == kept.hash):
        counts, after, last_hash = copy.deepcopy(kept.counts), kept.version, kept.hash
    for event in journal.iter_history(PIPELINE_AGGREGATE, after=after, until=version):
        counts.add(event.type, event.data)
        last_hash = event.hash
    counted = None if last_hash is None else CountedHistory(version, last_hash, copy.deepcopy(counts))
    return PipelineHistory(state, counts), counted


def verify_chains(journal: Journal, since: Mapping[str, Checkpoint] | None,
                  could_not: list[str]) -> tuple[dict[str, Checkpoint], dict[str, str]]:
    """Each aggregate's hash chain (the schedule's, the staged lanes', health's own and any other the journal
    holds), from where `since` left it: how far each verified, and why each that broke did not. A journal
    whose aggregates cannot be listed still has the schedule's chain checked, and says what it could not."""
    from factory_schedule.core import SCHEDULE_AGGREGATE

    names = {SCHEDULE_AGGREGATE, *(since or {})}  # a chain checked before and gone since is checked too
    try:
        names.update(journal.aggregates())
    except Exception as error:
        could_not.append(f"listing the journal's aggregates: {type(error).__name__}: {error}")
    verified: dict[str, Checkpoint] = {}
    problems: dict[str, str] = {}
    for name in sorted(names):
        try:
            verified[name] = journal.verify(name, since=(since or {}).get(name))
        except Exception as error:
            problems[name] = chain_problem(error)
    return verified, problems


def held_to_checkpoints(journal: Journal, since: Mapping[str, Checkpoint]) -> dict[str, str]:
    """Why each chain is not the history an earlier check verified up to its checkpoint (a journal set back to
    a restored copy, or a chain replaced whole, passes a check from its first event): `verify` holds the
    journal to them as well."""
    problems: dict[str, str] = {}
    for name, point in sorted(since.items()):
        try:
            journal.verify(name, since=point)
        except Exception as error:
            problems[name] = chain_problem(error)
    return problems


def chain_problem(error: Exception) -> str:
    """A chain's break in words; for a history set back since an earlier check, what may have done it and the
    owner's way to take it as it is now."""
    if isinstance(error, JournalSetBackError):
        return (f"{error}: the journal no longer holds what an earlier check of it verified (a restored backup, "
                "a cut WAL file, or rows deleted or rewritten); if you restored or replaced it yourself, "
                "`factory-schedule verify --accept-history` takes its history as it is now")
    return str(error)


def recorded_owner_keys(journal: Journal) -> tuple[str, ...]:
    """The public key of every `owner-key-recorded` event of the owner's chain, in order: the history the state's
    key list should fold to. A state rewritten to drop this machine's key (or to replace the current key in
    place) is still told by the events, which the hash chain holds."""
    keys: list[str] = []
    after = 0
    while True:
        page = journal.history(OWNER_AGGREGATE, after=after)
        if not page:
            return tuple(keys)
        keys.extend(str(event.data.get("publicKey")) for event in page if event.type == "owner-key-recorded")
        after = page[-1].version


def owner_key_here() -> str | None:
    """The public key of this machine's owner key file (the owner's, in their data folder), None when there is
    none or it does not read: health holds the journal's current key to it."""
    from factory_schedule.tui.host.owner_key import OwnerKeyError, default_key_path, read_key_file

    try:
        key = read_key_file(default_key_path()).get("publicKey")
    except OwnerKeyError:
        return None
    return key if isinstance(key, str) else None


@dataclass(frozen=True)
class AlreadyRead:
    """What the caller read at this same instant (the dashboard's reading: the schedule's view, the staged lanes'
    state), so that health judges those very readings instead of reading and parsing them a second time."""

    view: ScheduleView | None
    pipeline: PipelineState | None
    pipeline_problem: tuple[str, str] | None


@dataclass(frozen=True)
class ChainCheck:
    """From where each aggregate's hash chain is verified, and whether where it ended is kept for the next check.

    `since` (an earlier report's `verified`) checks only the events appended after it: the live dashboard
    re-checks as the journal grows without re-reading a year of history each time. Without it, a check that
    `keep`s starts where the last check of this journal ended (the checkpoint file beside it,
    `chain_checkpoint`), and one that does not starts from each chain's first event. A check that `keep`s
    records where it ended there: `health`, the tick and the dashboard read only what was appended since."""

    since: Mapping[str, Checkpoint] | None = None
    keep: bool = False


@dataclass(frozen=True)
class HealthScope:
    """What one health check covers beyond the rules every check runs over the schedule, leases and runs.

    `chains`: how the hash chains are verified; None leaves them unverified. `count_history`: the staged
    lanes' history is counted against their state (the dashboard and the tick do not re-read it at every
    refresh or firing), on from the count kept with the checkpoint when the chains start from it.
    `already_read`: what the caller read at this instant, judged as it is. `launch_agent`: the installed
    LaunchAgent's plist to compare with the commission. `grace_minutes`: how long past its slot a lane's
    night may go unadmitted before it is reported."""

    chains: ChainCheck | None = ChainCheck()
    count_history: bool = False
    already_read: AlreadyRead | None = None
    launch_agent: str | None = None
    grace_minutes: float = DEFAULT_GRACE_MINUTES


def check_health(
    journal: Journal,
    schedule: LifecycleSchedule,
    now: datetime,
    host: str,
    scope: HealthScope,
    *,
    alive: Callable[[object], bool] = process_alive,
    zone: str | None = None,
    loaded: LoadedProbe = launchctl_loaded,
) -> HealthReport:
    """Every check `scope` asks for over what this host can see: the facts gathered (a probe that fails is
    noted, not fatal), then judged by core's rules. A check that starts from the first event of every chain is
    recorded as a whole check; one from a checkpoint reports when the last whole check ran. `alive`, `zone` and
    `loaded` probe this host's processes, zone and launchd."""
    from factory_schedule.core import SCHEDULE_AGGREGATE, ScheduleError

    could_not: list[str] = []
    state_problem = view = None
    check = scope.chains
    keep = check is not None and check.keep
    since = check.since if check is not None else None
    if keep and since is None:
        since = chain_checkpoint.read_checkpoints(journal, journal.url)
    chains, chain_problems = verify_chains(journal, since, could_not) if check is not None else ({}, {})
    whole_check_at = now if not since else getattr(chain_checkpoint.read_whole_check(journal.url), "at", None)
    verified = chains if check is not None and not chain_problems and SCHEDULE_AGGREGATE in chains else None
    if scope.already_read is not None:
        view = scope.already_read.view
        pipeline, pipeline_problem = scope.already_read.pipeline, scope.already_read.pipeline_problem
    else:
        try:
            view = schedule.read()
        except ScheduleError as error:
            state_problem = (error.code, error.message)
        except Exception as error:
            could_not.append(f"reading the schedule: {error}")
        pipeline, pipeline_problem = read_pipeline(journal, now)
    lease_facts: tuple[LeaseFact, ...] = ()
    try:
        lease_facts = tuple(lease_fact(lease, host, alive) for lease in leases.list_leases(journal))
    except Exception as error:
        could_not.append(f"leases: {type(error).__name__}: {error}")
    runs: tuple[RunFact, ...] = ()
    try:
        runs = recorded_runs(journal)
    except Exception as error:
        could_not.append(f"recorded runs: {type(error).__name__}: {error}")
    history = counted = counted_before = None
    if scope.count_history and pipeline is not None:  # only a whole check (`health`) reads the lanes' history
        try:  # counted on from the count kept with the checkpoint the chains were checked from
            counted_before = chain_checkpoint.read_counted(journal.url) if keep and since else None
            history, counted = read_pipeline_history(journal, counted_before)
        except Exception as error:
            could_not.append(f"the staged lanes' history: {type(error).__name__}: {error}")
    side_findings = (chain_checkpoint.remember(journal.url, since or {}, chains, chain_problems, now,
                                               counted, counted_before)
                     if keep else [])
    owner_key, owner_key_read = None, False
    recorded_keys: tuple[str, ...] = ()
    try:
        owner_key, owner_key_read = load_owner(journal)[1], True
        recorded_keys = recorded_owner_keys(journal)
    except Exception as error:
        could_not.append(f"the owner key: {type(error).__name__}: {error}")
    grace = timedelta(minutes=scope.grace_minutes)
    night_states: dict[str, str] = {}
    if view is not None:
        try:
            ids = [night.occurrence_id for night in nights_to_check(view, now, grace)]
            night_states = {status.id: status.state for status in schedule.statuses(ids)} if ids else {}
        except Exception as error:
            could_not.append(f"lanes: {type(error).__name__}: {error}")
    facts = HealthFacts(
        now=now, host=host, chain_problems=chain_problems, view=view, state_problem=state_problem,
        leases=lease_facts, night_states=night_states,
        launch_agent=read_launch_agent(scope.launch_agent, journal.url, loaded) if scope.launch_agent else None,
        host_zone=zone or (host_zone() if scope.launch_agent else None), grace=grace, could_not_check=tuple(could_not),
        pipeline=pipeline, pipeline_problem=pipeline_problem, runs=runs, pipeline_history=history,
        owner_key=owner_key, owner_key_read=owner_key_read, owner_key_here=owner_key_here(),
        owner_keys_recorded=recorded_keys,
        whole_check_at=whole_check_at, whole_check_known=check is not None,
    )
    report = judge(facts)
    return HealthReport(report.checked_at, report.host, (*report.findings, *side_findings), report.repairs,
                        report.could_not_check, verified)




@dataclass(frozen=True)
class LeaseFreshness:
    """What the dashboard shows beside a running occurrence: is its runner's lease alive, or stale since when."""

    occurrence: str
    segment: int
    scope: str
    runner: str
    pid: int | None
    host: str | None
    last_heartbeat: datetime
    stale: bool
    stale_since: datetime
    process_alive: bool | None  # None when the lease was taken on another host

    @property
    def words(self) -> str:
        if not self.stale:
            return "alive"
        return f"stale since {self.stale_since.isoformat()}"


def lease_freshness(
    journal: Journal, now: datetime, host: str, alive: Callable[[object], bool] = process_alive
) -> dict[str, LeaseFreshness]:
    """Each segment lease by occurrence ID (the latest segment wins), for the running-occurrence view."""
    found: dict[str, LeaseFreshness] = {}
    for lease in leases.list_leases(journal):
        fact = lease_fact(lease, host, alive)
        if fact.segment is None:
            continue
        occurrence_id, segment = fact.segment
        if occurrence_id in found and found[occurrence_id].segment > segment:
            continue
        pid = lease.info.get("pid")
        found[occurrence_id] = LeaseFreshness(
            occurrence=occurrence_id, segment=segment, scope=lease.scope, runner=lease.owner,
            pid=pid if isinstance(pid, int) else None, host=lease.info.get("host"),
            last_heartbeat=lease.heartbeat_at, stale=fact.stale(now) or fact.from_future(now),
            stale_since=fact.stale_at, process_alive=fact.process_alive,
        )
    return found


def repair(
    journal: Journal,
    schedule: LifecycleSchedule,
    now: datetime,
    host: str,
    alive: Callable[[object], bool] = process_alive,
    confirmed_by: str | None = None,
    grace_minutes: float = DEFAULT_GRACE_MINUTES,
    record_firings: bool = True,
) -> list[Repair]:
    """Reconcile each dead runner on conclusive evidence, remove each lease that guards nothing any more,
    and write the compact record of each scheduled firing that left none; one Repair per action, each
    journaled (the reconcile as the engine's command, the others as events on the `health/repairs`
    aggregate). The tick passes `record_firings=False` before its starts and records them after
    (`record_missing_firings`), so a late tick's own night is admitted, not recorded as missed."""
    grace = timedelta(minutes=grace_minutes)

    def facts() -> HealthFacts:
        pipeline, _problem = read_pipeline(journal, now)  # unreadable: no lane run is confirmed gone
        return HealthFacts(
            now=now, host=host, view=schedule.read(),
            leases=tuple(lease_fact(lease, host, alive) for lease in leases.list_leases(journal)),
            pipeline=pipeline)

    def firings() -> list[FiringRecord]:
        return _missing_firings(schedule, now, grace)

    return reconciler.repair(journal, schedule, now, host, facts, confirmed_by,
                             firings if record_firings else None)


def record_missing_firings(journal: Journal, schedule: LifecycleSchedule, now: datetime, host: str,
                           grace_minutes: float = DEFAULT_GRACE_MINUTES) -> list[Repair]:
    """Only the compact records of scheduled firings that left none (what the tick does after its starts)."""
    records = _missing_firings(schedule, now, timedelta(minutes=grace_minutes))
    return reconciler.record_missing_firings(journal, records, f"health-reconciler@{host}", now)


def _missing_firings(schedule: LifecycleSchedule, now: datetime, grace: timedelta) -> list[FiringRecord]:
    view = schedule.read()
    if view is None:
        return []
    ids = [night.occurrence_id for night in nights_to_check(view, now, grace)]
    states = {status.id: status.state for status in schedule.statuses(ids)} if ids else {}
    return firing_records(view, states, now, grace)
