"""`factory-schedule tick [--lane L] [--ttl SECONDS] -- COMMAND [ARGS]`: what the LaunchAgent fires.

Under the journal's `worker` lease the tick first runs the health reconciler's
repair pass (a dead runner reconciled on conclusive evidence, leases that guard
nothing removed, each journaled; one `{"repaired": ...}` line each), then calls
`start` for every lane of the current commission (or just `--lane`), each with a
fresh runner token, and prints one JSON line per lane with what `start` answered. The worker lease guards the
tick's own decisions (the starts) and is released as soon as they are made,
before any runner runs: runners are fenced by their token (the schedule answers a
running segment only to its runner) and by their segment lease, and a runner may
work for hours while the next lane's tick must still be able to fire.

Then, for each admission or resumption, it takes the segment's lease and runs
COMMAND with FACTORY_JOURNAL, FACTORY_OCCURRENCE, FACTORY_RUNNER and
FACTORY_SEGMENT (also FACTORY_LANE, FACTORY_LEASE_SCOPE, FACTORY_LEASE_TTL) in its
environment, heartbeating every TTL/3; all admitted segments run at once. The
runner's stdout and stderr go to its bounded log file under the state folder
(`<journal file>.runs/`), never to the tick's terminal; its exit status and first
error and warning lines are recorded in the journal and shown escaped in its
`segment_run` line. It counts as failed only when its exit status, its output and
its segment's record agree (health's rule).

With `--detach` (what the LaunchAgent runs) each admitted segment gets a keeper
process (`tick-segment`) in a session of its own that does the same, and the tick
returns after a short observation window (`--observe`, default 5 s): launchd never
starts a job while its last run is still running, so a tick that waited for a
two-hour runner would swallow the next lanes' times. In that window it checks
that each keeper stays the same process (pid and start time) and holds its
segment's lease, and prints one `{"keeper_observed": ...}` line each; only a
keeper that exited non-zero leaving its segment running counts as failed (exit 6).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import TYPE_CHECKING, Any

from factory_schedule.tui.cli.journal import journal_url_of, open_existing, schedule_over
from factory_schedule.tui.cli.options import lease_ttl_seconds, segment_number
from factory_schedule.tui.cli.output import ERROR_EXIT_CODES, EXIT_OK, EXIT_RUNNER_FAILED, BadInput, emit
from factory_schedule.tui.host.environment import DEFAULT_LEASE_TTL_SECONDS
from factory_schedule.tui.host.paths import ENV_JOURNAL

if TYPE_CHECKING:
    import subprocess

    from factory_schedule.core import LifecycleSchedule
    from factory_schedule.store import Journal, leases
    from factory_schedule.tui.host import segments
    from factory_schedule.tui.host.clock import SystemClock

DEFAULT_OBSERVE_SECONDS = 5.0
MAX_OBSERVE_SECONDS = 300.0


def _observation_window(value: str) -> float:
    """0 (do not watch) up to five minutes: the tick waits that long before launchd sees it return."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {value!r}") from None
    if not (math.isfinite(number) and 0 <= number <= MAX_OBSERVE_SECONDS):
        raise argparse.ArgumentTypeError(f"expected 0 to {MAX_OBSERVE_SECONDS:g} seconds, got {value!r}")
    return number
STARTED_KINDS = ("admitted", "resumed")


def _take_worker_lease(journal: Journal, owner: str, ttl: float, clock: SystemClock) -> leases.Lease:
    """Take `worker`, clearing it first only when its holder's tick is gone from this host and its lease is
    stale, or carries a heartbeat from the future (a clock that was wrong): that is no evidence of a live tick,
    and must not block every tick to come. `health` reports such a lease either way."""
    from factory_schedule.store import leases
    from factory_schedule.tui.host import process_identity
    from factory_schedule.tui.host.reconciler import record_lease_removal

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


def _start_lanes(schedule: LifecycleSchedule, lanes: list[str]) -> tuple[list[segments.SegmentJob], int]:
    from factory_schedule.core import ScheduleError
    from factory_schedule.tui.host import segments, tokens

    jobs: list[segments.SegmentJob] = []
    exit_code = EXIT_OK
    for lane in lanes:
        runner = tokens.new_runner_token()
        try:
            tick = schedule.start(lane=lane, runner=runner)
        except ScheduleError as error:
            emit({"lane": lane, "error": error.code, "message": error.message})
            exit_code = exit_code or ERROR_EXIT_CODES.get(error.code, 1)
            continue
        emit({"lane": lane, "runner": runner, "tick": tick})
        if tick.kind not in STARTED_KINDS or tick.occurrence is None:
            continue
        running = tick.occurrence.running_segment
        if running is None or running.runner != runner:
            continue  # a replay to another runner's segment: that runner holds it
        jobs.append(segments.SegmentJob(lane, tick.occurrence.id, running.n, runner))
    return jobs, exit_code


def _reconcile_first(journal: Journal, schedule: LifecycleSchedule, clock: SystemClock) -> None:
    """The health reconciler's repair pass, ahead of the lanes (a night starts with health): a
    runner that died on a night nobody watched is reconciled on conclusive evidence, so its lane admits
    again without a human. One `{"repaired": ...}` line per repair; a pass that fails admits the lanes
    anyway and says why (`{"repair_error": ...}`), since health reports what it could not do."""
    from factory_schedule.tui.host import health
    from factory_schedule.tui.host.process_identity import this_host

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
    from factory_schedule.tui.host.interrupted import reconcile_interrupted
    from factory_schedule.tui.host.process_identity import this_host

    try:
        lines = reconcile_interrupted(journal, schedule, runs, this_host())
    except Exception as error:
        emit({"interrupted_error": f"{type(error).__name__}: {error}"})
        return
    for line in lines:
        emit({"interrupted": line})


def _record_firings(journal: Journal, schedule: LifecycleSchedule, clock: SystemClock) -> None:
    """After the starts: the compact no-op/error record of each earlier firing that left none."""
    from factory_schedule.tui.host import health
    from factory_schedule.tui.host.process_identity import this_host

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
    from factory_schedule.tui.host import health
    from factory_schedule.tui.host.notify import notify_owner
    from factory_schedule.tui.host.process_identity import this_host

    try:
        report = health.check_health(journal, schedule, clock.now(), this_host(), keep_checkpoint=True)
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
    from factory_schedule.tui.host.clock import SystemClock

    command = _strip_dashes(args.tick_command)
    if not command:
        raise BadInput(missing)
    url = journal_url_of(args)
    journal = open_existing(url)
    clock = SystemClock()
    return command, url, journal, clock, schedule_over(journal, clock)


def _tick(args: argparse.Namespace) -> int:
    from factory_schedule.store import leases
    from factory_schedule.tui.host import heartbeat, keepers, segments, tokens

    command, url, journal, clock, schedule = _runner_and_schedule(args, "tick needs a runner command after `--`")
    owner = tokens.new_tick_owner()
    _take_worker_lease(journal, owner, args.ttl, clock)
    beat = heartbeat.Heartbeat(journal, leases.WORKER_SCOPE, owner, args.ttl / 3, clock.now)
    beat.start()
    try:
        _reconcile_first(journal, schedule, clock)
        jobs, exit_code = _start_lanes(schedule, _lanes_to_start(schedule, args.lane))
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
    import subprocess  # here, not at the top: every command builds this module's parser

    keeper = subprocess.Popen(
        [sys.executable, "-m", "factory_schedule.tui.cli", "tick-segment", "--lane", job.lane,
         "--occurrence", job.occurrence_id, "--segment", str(job.segment), "--runner", job.runner,
         "--ttl", f"{ttl:g}", "--", *command],
        stdin=subprocess.DEVNULL, start_new_session=True,
        env={**os.environ, ENV_JOURNAL: url},  # not on its command line, where `ps` would show a password
    )
    return keeper


def _keep_segment(args: argparse.Namespace) -> int:
    from factory_schedule.tui.host import segments

    command, url, journal, clock, schedule = _runner_and_schedule(
        args, "tick-segment needs the runner command after `--`")
    job = segments.SegmentJob(args.lane, args.occurrence, args.segment, args.runner)
    run = segments.run_segment(journal, url, job, command, args.ttl, clock.now, schedule.read)
    emit({"segment_run": run})
    return EXIT_RUNNER_FAILED if run.exit != 0 or run.segment_running else EXIT_OK


def register(subcommands: Any) -> None:
    tick = subcommands.add_parser(
        "tick",
        help="start the lanes due and run COMMAND for each admitted segment (what the LaunchAgent fires)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    tick.add_argument("--lane", help="start only this lane (default: every lane of the current commission)")
    tick.add_argument(
        "--ttl",
        type=lease_ttl_seconds,
        default=DEFAULT_LEASE_TTL_SECONDS,
        help="lease TTL in seconds; heartbeats every TTL/3, stale after 2 x TTL "
        f"(default {DEFAULT_LEASE_TTL_SECONDS:g})",
    )
    tick.add_argument(
        "--detach",
        action="store_true",
        help="start each admitted segment's runner under a keeper process of its own and return at once "
        "(what the LaunchAgent uses: launchd never runs a second tick while the first still runs)",
    )
    tick.add_argument(
        "--observe",
        type=_observation_window,
        default=DEFAULT_OBSERVE_SECONDS,
        metavar="SECONDS",
        help="with --detach: watch each keeper this long after starting it, and report whether the same "
        f"process holds its segment's lease (`keeper_observed`; 0 skips; default {DEFAULT_OBSERVE_SECONDS:g})",
    )
    tick.add_argument("tick_command", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS]")
    tick.set_defaults(handler=_tick)

    keeper = subcommands.add_parser(
        "tick-segment",
        help="hold one admitted segment's lease while its runner runs (what `tick --detach` starts)",
    )
    keeper.add_argument("--lane", required=True)
    keeper.add_argument("--occurrence", required=True)
    keeper.add_argument("--segment", type=segment_number, required=True)
    keeper.add_argument("--runner", required=True, help="the token the segment was admitted to")
    keeper.add_argument("--ttl", type=lease_ttl_seconds, default=DEFAULT_LEASE_TTL_SECONDS)
    keeper.add_argument("tick_command", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS]")
    keeper.set_defaults(handler=_keep_segment)
