"""What `tick` and `tick-segment` do: repair first, start the lanes due under the worker lease, then run each
admitted segment's runner behind its lease (in this process, or under a detached keeper each)."""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
from typing import Any

from factory_schedule.core import LifecycleSchedule, ScheduleError
from factory_schedule.store import Journal, leases
from factory_schedule.tui.cli.journal import journal_url_of, open_existing, schedule_over
from factory_schedule.tui.cli.output import (
    ERROR_EXIT_CODES,
    EXIT_CHAIN_BROKEN,
    EXIT_OK,
    EXIT_RUNNER_FAILED,
    BadInput,
    emit,
)
from factory_schedule.tui.host import (
    chain_checkpoint,
    health,
    heartbeat,
    keepers,
    process_identity,
    segments,
    tokens,
)
from factory_schedule.tui.host.clock import SystemClock
from factory_schedule.tui.host.interrupted import reconcile_interrupted
from factory_schedule.tui.host.notify import notify_owner
from factory_schedule.tui.host.paths import ENV_JOURNAL
from factory_schedule.tui.host.process_identity import this_host
from factory_schedule.tui.host.reconciler import record_lease_removal

STARTED_KINDS = ("admitted", "resumed")


def _take_worker_lease(journal: Journal, owner: str, ttl: float, clock: SystemClock) -> leases.Lease:
    """Take `worker`, clearing it first only when its holder's tick is gone from this host and its lease is
    stale, or carries a heartbeat from the future (a clock that was wrong): that is no evidence of a live tick,
    and must not block every tick to come. `health` reports such a lease either way."""
    host = process_identity.this_host()
    info = {"pid": os.getpid(), "pid_started": process_identity.process_start_time(os.getpid()), "host": host,
            "machine": process_identity.this_machine(), "started": clock.now().isoformat()}
    try:
        return leases.acquire(journal, leases.WORKER_SCOPE, owner, ttl, clock.now(), info)
    except leases.LeaseHeldError as held:
        holder = held.holder
        alive, _recycled = process_identity.same_process_alive(holder.info.get("pid"), holder.info.get("pid_started"))
        here = process_identity.on_this_machine(holder.info, host, process_identity.this_machine())
        if not here or not process_identity.usable_pid(holder.info.get("pid")) or alive:
            raise
        by = f"tick@{host}"
        # Each removal is recorded before its DELETE (a removal is never missing from the journal).
        if leases.stale(holder, clock.now()):
            record = record_lease_removal(journal, holder, "its tick is gone and it is stale", by, clock.now())
            removed = leases.remove_stale(journal, leases.WORKER_SCOPE, clock.now(), expected=holder)
            if removed is not None:
                emit({"repaired": "stale-worker-lease", "lease": removed, "recorded": record})
        elif leases.heartbeat_from_future(holder.heartbeat_at, holder.ttl_seconds, clock.now()):
            record = record_lease_removal(journal, holder, "its tick is gone and its heartbeat is in the future",
                                          by, clock.now())
            try:  # owner-conditioned: a tick that took the scope meanwhile keeps it
                leases.release(journal, leases.WORKER_SCOPE, holder.owner)
            except leases.LeaseOwnerError:
                pass
            else:
                emit({"repaired": "future-worker-lease", "lease": holder, "recorded": record})
        else:
            raise
        return leases.acquire(journal, leases.WORKER_SCOPE, owner, ttl, clock.now(), info)


def _lanes_to_start(schedule: LifecycleSchedule, lane: str | None) -> list[str]:
    if lane:
        return [lane]
    return [plan.lane for plan in schedule.plan()]


def _start_lanes(journal: Journal, schedule: LifecycleSchedule, lanes: list[str], ttl: float,
                 clock: SystemClock) -> tuple[list[segments.SegmentJob], int]:
    """Start each lane's segment, its lease taken before the start is recorded (`segments.lease_ahead`): a tick
    that dies between the two leaves a lease naming a process that is gone, which health reconciles, never a
    running segment without a lease, which nothing could prove dead."""
    jobs: list[segments.SegmentJob] = []
    exit_code = EXIT_OK
    for lane in lanes:
        runner = tokens.new_runner_token()
        try:
            ahead = _lease_ahead(journal, schedule, lane, runner, ttl, clock)
        except leases.LeaseHeldError as held:
            # An earlier tick leased this segment and may be starting it (or died doing so: health removes its
            # lease once it is provably gone): starting it here would leave the segment without its lease.
            emit({"lane": lane, "waiting": f"its segment's lease is held: {held}"})
            continue
        try:
            tick = schedule.start(lane=lane, runner=runner)
        except ScheduleError as error:
            _release(journal, ahead, runner)
            emit({"lane": lane, "error": error.code, "message": error.message})
            exit_code = exit_code or ERROR_EXIT_CODES.get(error.code, 1)
            continue
        emit({"lane": lane, "runner": runner, "tick": tick})
        running = tick.occurrence.running_segment if tick.occurrence is not None else None
        if tick.kind not in STARTED_KINDS or tick.occurrence is None or running is None or running.runner != runner:
            _release(journal, ahead, runner)  # nothing started for this runner (a replay: its runner holds it)
            continue
        if ahead != segments.segment_scope(tick.occurrence.id, running.n):
            _release(journal, ahead, runner)  # the schedule started another segment than planned
        jobs.append(segments.SegmentJob(lane, tick.occurrence.id, running.n, runner))
    return jobs, exit_code


def _lease_ahead(journal: Journal, schedule: LifecycleSchedule, lane: str, runner: str, ttl: float,
                 clock: SystemClock) -> str | None:
    """Take the lease of the segment the schedule plans to start on `lane` for `runner`; its scope, or None
    when no start is planned. Raises LeaseHeldError when another runner's lease holds that segment."""
    plan = next((plan for plan in schedule.plan() if plan.lane == lane), None)
    if plan is None or plan.occurrence_id is None or plan.action not in ("admit", "resume"):
        return None
    segment = 1
    if plan.action == "resume":
        view = schedule.read()
        known = [o for o in (view.occurrences if view is not None else []) if o.id == plan.occurrence_id]
        if not known:
            return None
        segment = len(known[0].segments) + 1
    scope = segments.segment_scope(plan.occurrence_id, segment)
    segments.lease_ahead(journal, segments.SegmentJob(lane, plan.occurrence_id, segment, runner), ttl, clock.now())
    return scope


def _release(journal: Journal, scope: str | None, runner: str) -> None:
    if scope is not None:
        with contextlib.suppress(leases.LeaseOwnerError):
            leases.release(journal, scope, runner)


def _reconcile_first(journal: Journal, schedule: LifecycleSchedule, clock: SystemClock) -> None:
    """The health reconciler's repair pass, ahead of the lanes (a night starts with health): a
    runner that died on a night nobody watched is reconciled on conclusive evidence, so its lane admits
    again without a human. One `{"repaired": ...}` line per repair; a pass that fails admits the lanes
    anyway and says why (`{"repair_error": ...}`), since health reports what it could not do."""
    try:
        repairs = health.repair(journal, schedule, clock.now(), this_host(), record_firings=False)
    except Exception as error:
        emit({"repair_error": f"{type(error).__name__}: {error}"})
        return
    for repair in repairs:
        emit({"repaired": repair.kind, "repair": repair})


def _after_ctrl_c(journal: Journal, schedule: LifecycleSchedule, runs: list[segments.SegmentRun]) -> None:
    """Say what the Ctrl-C gave up, one `{"interrupted": ...}` line per runner, reconciling at once each segment
    the tick's own runner left running (tui/host/interrupted.py); a failure is said, never raised over the
    interrupt."""
    try:
        lines = reconcile_interrupted(journal, schedule, runs, this_host())
    except Exception as error:
        emit({"interrupted_error": f"{type(error).__name__}: {error}"})
        return
    for line in lines:
        emit({"interrupted": line})


def _record_firings(journal: Journal, schedule: LifecycleSchedule, clock: SystemClock) -> None:
    """After the starts: the compact no-op/error record of each earlier firing that left none."""
    try:
        repairs = health.record_missing_firings(journal, schedule, clock.now(), this_host())
    except Exception as error:
        emit({"repair_error": f"{type(error).__name__}: {error}"})
        return
    for repair in repairs:
        emit({"repaired": repair.kind, "repair": repair})


def _tell_owner(journal: Journal, url: str, schedule: LifecycleSchedule, clock: SystemClock) -> None:
    """Send each finding that needs the owner (a sign-in, an overage, a dead runner the evidence cannot
    settle, a broken hash chain) to their notifier, once: an unattended night tells them, not only the
    dashboard. The hash chains are checked from where the last check ended (a year of history is not re-read
    at every firing)."""
    try:
        scope = health.HealthScope(chains=health.ChainCheck(keep=True))
        report = health.check_health(journal, schedule, clock.now(), this_host(), scope)
        told = notify_owner(report.findings, url, clock.now())
    except Exception as error:
        emit({"notify_failed": f"{type(error).__name__}: {error}"})
        return
    for notice in told.sent:
        emit({"notified": notice})
    for problem in told.failed:
        emit({"notify_failed": problem})
    if told.unremembered is not None:
        emit({"notify_failed": f"what was notified could not be remembered: {told.unremembered}"})


def _runner_and_schedule(args: argparse.Namespace, missing: str) -> tuple[list[str], str, Any, Any, Any]:
    """The runner command after `--` (BadInput `missing` without one), the journal's URL, the existing journal,
    the system clock and the schedule over them: what the tick and a detached segment's keeper both start from."""
    command = _strip_dashes(args.tick_command)
    if not command:
        raise BadInput(missing)
    url = journal_url_of(args)
    journal = open_existing(url)
    clock = SystemClock()
    return command, url, journal, clock, schedule_over(journal, clock)


def _chains_sound(journal: Journal, url: str, clock: SystemClock) -> bool:
    """Whether every hash chain verifies from where the last check of this journal ended (kept for the next
    one). A journal set back to an earlier copy has lost decisions made since (calls admitted, tokens debited,
    nights started): acting on it would make them a second time, so a broken chain is named, one line each."""
    since = chain_checkpoint.read_checkpoints(journal, url)
    verified, problems = health.verify_chains(journal, since, [])
    chain_checkpoint.remember(url, since, verified, problems, clock.now())  # what it cannot write, health says
    for name, problem in sorted(problems.items()):
        emit({"chain_broken": name, "message": problem})
    return not problems


def tick(args: argparse.Namespace) -> int:
    command, url, journal, clock, schedule = _runner_and_schedule(args, "tick needs a runner command after `--`")
    if not _chains_sound(journal, url, clock):
        emit({"not_started": "no lane starts and nothing is repaired while a hash chain of the journal is broken "
                             "(`factory-schedule health` and `verify` say more)"})
        _tell_owner(journal, url, schedule, clock)
        return EXIT_CHAIN_BROKEN
    owner = tokens.new_tick_owner()
    _take_worker_lease(journal, owner, args.ttl, clock)
    beat = heartbeat.Heartbeat(journal, leases.WORKER_SCOPE, owner, args.ttl / 3, clock.now)
    beat.start()
    try:
        _reconcile_first(journal, schedule, clock)
        jobs, exit_code = _start_lanes(journal, schedule, _lanes_to_start(schedule, args.lane), args.ttl, clock)
        _record_firings(journal, schedule, clock)
    finally:
        beat.stop()
        leases.release(journal, leases.WORKER_SCOPE, owner)
    _tell_owner(journal, url, schedule, clock)
    if args.detach:
        started = []
        for job in jobs:
            keeper = _start_keeper(url, job, command, args.ttl)
            started.append((job, keeper))
            emit({"detached": {"lane": job.lane, "occurrence": job.occurrence_id, "segment": job.segment,
                               "runner": job.runner, "keeper_pid": keeper.pid}})
        if started and args.observe > 0:
            observed = keepers.observe_keepers(journal, started, args.observe, clock.now, schedule.read)
            for observation in observed:
                emit({"keeper_observed": observation})
            if exit_code == EXIT_OK and any(o.verdict == "failed" for o in observed):
                exit_code = EXIT_RUNNER_FAILED
        return exit_code
    runs = segments.run_segments(
        journal, url, jobs, command, args.ttl, clock.now, schedule.read, lambda run: emit({"segment_run": run}),
        interrupted=lambda ended: _after_ctrl_c(journal, schedule, ended),
    )
    if exit_code == EXIT_OK and any(run.exit != 0 or run.segment_running for run in runs):
        exit_code = EXIT_RUNNER_FAILED
    return exit_code


def _strip_dashes(command: list[str] | None) -> list[str]:
    command = list(command or [])
    return command[1:] if command and command[0] == "--" else command


def _spawn_keeper(url: str, job: segments.SegmentJob, command: list[str], ttl: float) -> int:
    """`_start_keeper`'s process ID."""
    return _start_keeper(url, job, command, ttl).pid


def _start_keeper(
    url: str, job: segments.SegmentJob, command: list[str], ttl: float
) -> subprocess.Popen[bytes]:
    """Start `tick-segment` for one admitted segment in a session of its own, so it outlives this tick.

    launchd runs one instance of a job at a time and, when that instance exits, kills what is left in
    its process group; a keeper in its own session escapes both, so the next lane's tick can fire while
    this lane's runner works.
    """
    keeper = subprocess.Popen(
        [sys.executable, "-m", "factory_schedule.tui.cli", "tick-segment", "--lane", job.lane,
         "--occurrence", job.occurrence_id, "--segment", str(job.segment), "--runner", job.runner,
         "--ttl", f"{ttl:g}", "--", *command],
        stdin=subprocess.DEVNULL, start_new_session=True,
        env={**os.environ, ENV_JOURNAL: url},  # not on its command line, where `ps` would show a password
    )
    return keeper


def keep_segment(args: argparse.Namespace) -> int:
    command, url, journal, clock, schedule = _runner_and_schedule(
        args, "tick-segment needs the runner command after `--`")
    job = segments.SegmentJob(args.lane, args.occurrence, args.segment, args.runner)
    run = segments.run_segment(journal, url, job, command, args.ttl, clock.now, schedule.read)
    emit({"segment_run": run})
    return EXIT_RUNNER_FAILED if run.exit != 0 or run.segment_running else EXIT_OK
