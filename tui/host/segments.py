"""Run one segment behind its gate: take a segment's lease, run the runner COMMAND, heartbeat while it runs.

The schedule decides; this module only keeps the evidence a supervisor needs
when a runner dies. A segment's lease names the runner's token, process and host;
a thread heartbeats it every TTL/3 while the process lives. When the process
exits having deferred or settled its segment, the lease is released. When it
exits (or is killed) leaving the segment running, the lease is deliberately left
in place without heartbeats: it goes stale after 2 x TTL, and `health` lists it
with what a `reconcile` confirmation needs. Nothing here ever ends a segment.

The runner's stdout and stderr go to its bounded log file under the state folder
(tui/host/run_output.py), never to a terminal raw; its exit status and the first
error and warning lines are recorded in the journal for health to judge.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from factory_schedule.core import local_words
from factory_schedule.core.health import output_signal, run_outcome
from factory_schedule.store import Journal, leases
from factory_schedule.tui.host.environment import (
    ENV_LANE,
    ENV_LEASE_SCOPE,
    ENV_LEASE_TTL,
    ENV_OCCURRENCE,
    ENV_RUNNER,
    ENV_SEGMENT,
)
from factory_schedule.tui.host.heartbeat import Heartbeat
from factory_schedule.tui.host.paths import ENV_JOURNAL
from factory_schedule.tui.host.process_identity import process_start_time, this_host, this_machine
from factory_schedule.tui.host.run_output import (
    OutputCapture,
    RunOutput,
    log_folder,
    log_path,
    not_started,
    record_run,
    run_record,
)
from factory_schedule.tui.host.tokens import segment_scope

if TYPE_CHECKING:
    from factory_schedule.core import ScheduleView


@dataclass(frozen=True)
class SegmentJob:
    lane: str
    occurrence_id: str
    segment: int
    runner: str


@dataclass(frozen=True)
class SegmentRun:
    """What happened to one segment's runner process, as the tick reports it."""

    lane: str
    occurrence: str
    segment: int
    runner: str
    scope: str
    pid: int | None
    exit: int | None
    segment_running: bool
    lease: str  # released | left-to-go-stale | held-by-another | lost
    detail: str = ""
    ended: str = ""  # how its segment ended in the journal, in words ("deferred logged-out, resumes at ...")
    output: RunOutput | None = None  # its log and first error and warning lines; None: it never ran
    recorded: str | None = None  # the journal command that recorded its exit and output
    verdict: str = field(init=False, default="")  # run_verdict's word for it

    def __post_init__(self) -> None:
        signal = output_signal(self.output.errors, self.output.lines) if self.output is not None else "silent"
        object.__setattr__(self, "verdict", run_verdict(self.exit, self.segment_running, self.lease, signal))


def run_verdict(exit_code: int | None, segment_running: bool, lease: str, signal: str = "silent") -> str:
    """Whether a scheduled run failed: only when its exit status, its output and its expected record agree
    (core.health.run_outcome, health's own rule).

    `ended`: all three say it did its part (exit 0, no error line, its segment deferred or settled); `failed`:
    a non-zero exit (or none: it could not start), an error line or no output at all, and no record of its
    segment; `unclear` when they disagree (a non-zero exit after the segment ended: a host warning, not a
    failure; exit 0 leaving the segment running), or its lease was lost or held by another: left to health
    and a person, never called a failure."""
    if lease in ("lost", "held-by-another", "unknown"):
        return "unclear"
    outcome = run_outcome(exit_code, signal, "running" if segment_running else "settled")  # type: ignore[arg-type]
    return {"ok": "ended", "failed": "failed"}.get(outcome.verdict, "unclear")


def runner_environment(base: Mapping[str, str], journal_url: str, job: SegmentJob, ttl: float) -> dict[str, str]:
    env = dict(base)
    env.update(
        {
            ENV_JOURNAL: journal_url,
            ENV_OCCURRENCE: job.occurrence_id,
            ENV_RUNNER: job.runner,
            ENV_SEGMENT: str(job.segment),
            ENV_LANE: job.lane,
            ENV_LEASE_SCOPE: segment_scope(job.occurrence_id, job.segment),
            ENV_LEASE_TTL: f"{ttl:g}",
        }
    )
    return env


# The runner's gate: a shell that waits for one line "go" on its stdin (the keeper writes it once the lease
# names the runner), then runs COMMAND in its place with /dev/null as stdin. A keeper that dies first closes
# the pipe, so the shell reads end-of-file and exits without running anything.
RUNNER_GATE = ("/bin/sh", "-c", 'IFS= read -r go && [ "$go" = go ] || exit 125; exec "$@" </dev/null',
               "factory-schedule-runner")


def _open_gate(process: subprocess.Popen[bytes]) -> None:
    assert process.stdin is not None
    try:
        process.stdin.write(b"go\n")
        process.stdin.close()
    except OSError:
        pass  # it died at its gate; `wait` reports how


def _stop_before_start(process: subprocess.Popen[bytes]) -> None:
    """Kill a runner still waiting at its gate (it has run nothing) and reap it."""
    try:
        os.killpg(process.pid, 9)
    except OSError:
        process.kill()
    if process.stdin is not None:
        with contextlib.suppress(OSError):
            process.stdin.close()
    process.wait()


def lease_ahead(journal: Journal, job: SegmentJob, ttl: float, now: datetime) -> None:
    """Take `job`'s segment lease for its runner before the schedule records its start, naming this process
    (the tick): whatever ends the tick after the start leaves the segment leased to a process that is gone,
    so health can prove it dead and reconcile it. `run_segment` takes the lease over from it."""
    info = {"pid": os.getpid(), "tick_pid": os.getpid(), "pid_started": process_start_time(os.getpid()),
            "tick_pid_started": process_start_time(os.getpid()), "host": this_host(), "machine": this_machine(),
            "runner": job.runner, "occurrence": job.occurrence_id, "segment": job.segment, "lane": job.lane,
            "started": now.isoformat()}
    leases.acquire(journal, segment_scope(job.occurrence_id, job.segment), job.runner, ttl, now, info)


def run_segment(
    journal: Journal,
    journal_url: str,
    job: SegmentJob,
    command: Sequence[str],
    ttl: float,
    now: Callable[[], datetime],
    read_view: Callable[[], ScheduleView | None],
    started: Callable[[int], None] | None = None,
) -> SegmentRun:
    """Hold the segment's lease while COMMAND runs; release it only if the runner ended its segment.
    `started` hears the runner's pid (the leader of its own session) once its gate opens."""
    scope = segment_scope(job.occurrence_id, job.segment)
    info: dict[str, Any] = {
        "pid": os.getpid(),
        "tick_pid": os.getpid(),
        "tick_pid_started": process_start_time(os.getpid()),
        "host": this_host(),
        "machine": this_machine(),
        "runner": job.runner,
        "occurrence": job.occurrence_id,
        "segment": job.segment,
        "lane": job.lane,
        "command": list(command),
        "started": now().isoformat(),
    }
    base: dict[str, Any] = dict(scope=scope, lane=job.lane, occurrence=job.occurrence_id, segment=job.segment,
                                runner=job.runner)
    try:
        leases.acquire(journal, scope, job.runner, ttl, now(), info)
    except leases.LeaseHeldError as error:
        if error.holder.owner != job.runner:
            return SegmentRun(**base, pid=None, exit=None, segment_running=True, lease="held-by-another",
                              detail=str(error))
        # The tick took it for this runner before recording the start (lease_ahead): this keeper holds it now.
        try:
            leases.heartbeat(journal, scope, job.runner, now(), info)
        except leases.LeaseOwnerError as lost:
            return SegmentRun(**base, pid=None, exit=None, segment_running=True, lease="lost", detail=str(lost))
    env = runner_environment(os.environ, journal_url, job, ttl)
    if shutil.which(command[0]) is None:
        # Nothing ran, so nothing was sent: the segment is still running with no runner. Leave the
        # lease to go stale so health shows it; a supervisor's reconcile then frees the lane.
        detail = f"cannot run {command[0]!r}: no such program, or not executable"
        return _recorded(journal, SegmentRun(**base, pid=None, exit=None, segment_running=True,
                                             lease="left-to-go-stale", detail=detail, output=not_started(detail)),
                         now)
    try:
        process = subprocess.Popen([*RUNNER_GATE, *command], env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, stdin=subprocess.PIPE, start_new_session=True)
    except OSError as error:
        detail = f"cannot run {command[0]!r}: {error.strerror}"
        return _recorded(journal, SegmentRun(**base, pid=None, exit=None, segment_running=True,
                                             lease="left-to-go-stale", detail=detail, output=not_started(detail)),
                         now)
    assert process.stdout is not None
    capture = OutputCapture(process.stdout, log_path(log_folder(journal_url), job.occurrence_id, job.segment,
                                                     job.runner))
    capture.start()
    # The runner waits at its gate until the lease names it (pid, start time, session): a keeper that dies
    # before that write leaves a lease naming a dead keeper and a runner that never started, never the
    # reverse (a dead pid in the lease while the runner works, which a reconcile would wrongly end).
    info["pid"] = process.pid
    info["session"] = process.pid  # start_new_session: the runner leads a session of its own
    info["pid_started"] = process_start_time(process.pid)
    beat = Heartbeat(journal, scope, job.runner, ttl / 3, now)
    try:
        leases.heartbeat(journal, scope, job.runner, now(), info)
    except BaseException as error:
        _stop_before_start(process)
        capture.finish()
        if isinstance(error, leases.LeaseOwnerError):
            return SegmentRun(**base, pid=process.pid, exit=None, segment_running=True, lease="lost",
                              detail=f"{error}; the runner was stopped before it started")
        if not isinstance(error, Exception):
            raise
        return SegmentRun(**base, pid=process.pid, exit=None, segment_running=True, lease="left-to-go-stale",
                          detail=f"could not record the runner in its lease ({type(error).__name__}: {error}); "
                          "the runner was stopped before it started")
    _open_gate(process)
    if started is not None:
        started(process.pid)
    beat.start()
    code = process.wait()
    base["output"] = capture.finish()
    if beat.is_alive():
        beat.stop()
    if beat.lost is not None:
        return _recorded(journal, SegmentRun(**base, pid=process.pid, exit=code, segment_running=False,
                                             lease="lost", detail=beat.lost), now)
    try:
        view = read_view()
        still_running = view is not None and view.segment_running(job.occurrence_id, job.segment, job.runner)
    except Exception as error:  # cannot tell: keep the lease, which errs towards a supervisor looking
        return _recorded(journal, SegmentRun(**base, pid=process.pid, exit=code, segment_running=True,
                                             lease="left-to-go-stale", detail=f"could not read the schedule: {error}"),
                         now)
    if still_running:
        return _recorded(journal, SegmentRun(
            **base, pid=process.pid, exit=code, segment_running=True, lease="left-to-go-stale",
            detail="the runner exited without deferring or settling its segment"), now)
    try:
        leases.release(journal, scope, job.runner)
    except leases.LeaseOwnerError as error:
        return _recorded(journal, SegmentRun(**base, pid=process.pid, exit=code, segment_running=False, lease="lost",
                                             detail=str(error)), now)
    return _recorded(journal, SegmentRun(**base, pid=process.pid, exit=code, segment_running=False,
                                         lease="released", ended=how_it_ended(view, job)), now)


def how_it_ended(view: ScheduleView | None, job: SegmentJob) -> str:
    """How the job's segment ended, as the journal has it: its deferral's reason and when it resumes, or its
    occurrence's settlement ("" when the view does not say). The runner's own lines go to its log file, so this
    is what the tick's line tells an owner of why the night stopped."""
    if view is None:
        return ""
    occurrence = next((o for o in view.occurrences if o.id == job.occurrence_id), None)
    if occurrence is None:
        return ""
    deferral = next((d for d in reversed(occurrence.deferrals) if d.segment == job.segment), None)
    if deferral is not None:
        resumes = local_words(view.commission["zone"], deferral.resume_at) if deferral.resume_at else ""
        return f"deferred {deferral.reason}" + (f", resumes at {resumes}" if resumes else "")
    if occurrence.settlement is not None:
        return f"settled {occurrence.settlement.status}: {occurrence.settlement.reason}"
    segment = next((s for s in occurrence.segments if s.n == job.segment), None)
    return segment.ended.how if segment is not None and segment.ended is not None else ""


def _recorded(journal: Journal, run: SegmentRun, now: Callable[[], datetime]) -> SegmentRun:
    """The run with its exit status and output recorded in the journal for health; a record that cannot be
    written is said in the run's detail (the run itself is over either way)."""
    if run.output is None:
        return run
    record = run_record(run.occurrence, run.segment, run.runner, run.lane, run.exit, run.output, this_host(), now())
    try:
        recorded = record_run(journal, record)
    except Exception as error:
        return replace(run, detail=f"{run.detail}; its output was not recorded: {type(error).__name__}: {error}")
    return replace(run, recorded=recorded)


def run_segments(
    journal: Journal,
    journal_url: str,
    jobs: Sequence[SegmentJob],
    command: Sequence[str],
    ttl: float,
    now: Callable[[], datetime],
    read_view: Callable[[], ScheduleView | None],
    report: Callable[[SegmentRun], None],
    interrupted: Callable[[list[SegmentRun]], None] | None = None,
) -> list[SegmentRun]:
    """Run every admitted segment's COMMAND at once (each lane has its own deadline) and wait for all.

    A Ctrl-C at a tick in the foreground reaches only the tick: each runner leads a session of its own (so
    that a closed terminal or a dying tick does not take a paid call down with it). The tick passes the
    interrupt on to every runner's session, as if the owner had pressed Ctrl-C at each, waits for them to
    end as their own rules say (a call in flight is never sent again), hands `interrupted` every run, and
    stops: the tick itself ended those runners, so it need not wait 2 x TTL for health to prove them gone."""
    runs: list[SegmentRun] = []
    lock = threading.Lock()
    ended = threading.Condition(lock)  # notified as each run ends: what the waits below count
    sessions: list[int] = []

    def started(pid: int) -> None:
        with lock:
            sessions.append(pid)

    def one(job: SegmentJob) -> None:
        try:
            result = run_segment(journal, journal_url, job, command, ttl, now, read_view, started)
        except Exception as error:
            scope = segment_scope(job.occurrence_id, job.segment)
            result = SegmentRun(job.lane, job.occurrence_id, job.segment, job.runner, scope, None, None, True,
                                "unknown", detail=f"{type(error).__name__}: {error}")
        with ended:
            runs.append(result)
            report(result)
            ended.notify_all()

    def every_run_ended() -> None:
        # A condition, not Thread.join: a join that a Ctrl-C interrupted may return at once the next time,
        # before its thread has ended.
        with ended:
            while len(runs) < len(jobs):
                ended.wait()

    threads = [threading.Thread(target=one, args=(job,), name=f"segment {job.occurrence_id}") for job in jobs]
    for thread in threads:
        thread.start()
    try:
        every_run_ended()
    except KeyboardInterrupt:
        with lock:
            started_sessions = list(sessions)
        for session in started_sessions:
            with contextlib.suppress(OSError):
                os.killpg(session, signal.SIGINT)
        every_run_ended()
        if interrupted is not None:
            interrupted(list(runs))
        raise
    for thread in threads:
        thread.join()
    return runs
