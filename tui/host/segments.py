"""The tick's process runner: take a segment's lease, run the runner COMMAND, heartbeat while it runs.

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
import functools
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from factory_schedule.core.health import output_signal, run_outcome
from factory_schedule.store import Journal, leases
from factory_schedule.tui.host import proc_table
from factory_schedule.tui.host.environment import (
    ENV_LANE,
    ENV_LEASE_SCOPE,
    ENV_LEASE_TTL,
    ENV_OCCURRENCE,
    ENV_RUNNER,
    ENV_SEGMENT,
)
from factory_schedule.tui.host.paths import ENV_JOURNAL
from factory_schedule.tui.host.run_output import (
    OutputCapture,
    RunOutput,
    log_folder,
    log_path,
    not_started,
    record_run,
    run_record,
)

if TYPE_CHECKING:
    from factory_schedule.core.results import ScheduleView

SEGMENT_SCOPE_PREFIX = "segment/"


def new_runner_token() -> str:
    """A fresh token for one segment's runner: the schedule's fence between runners."""
    return "r-" + secrets.token_hex(6)


def new_tick_owner() -> str:
    return f"tick-{os.getpid()}-{secrets.token_hex(4)}"


def segment_scope(occurrence_id: str, segment: int) -> str:
    return f"{SEGMENT_SCOPE_PREFIX}{occurrence_id}/{segment}"


def parse_segment_scope(scope: str) -> tuple[str, int] | None:
    """(occurrence ID, segment) of a segment scope; None for any other scope."""
    if not scope.startswith(SEGMENT_SCOPE_PREFIX):
        return None
    occurrence_id, _, number = scope[len(SEGMENT_SCOPE_PREFIX) :].rpartition("/")
    if not occurrence_id or not number.isdigit():
        return None
    return occurrence_id, int(number)


def this_host() -> str:
    return socket.gethostname()


@functools.cache
def this_machine() -> str | None:
    """What tells this machine's process table from any other's, beyond a hostname that a container or
    another machine sharing the journal may also have; None when it cannot be read.

    Linux: /etc/machine-id, this boot's ID and this process's pid namespace (a container shares neither
    namespace nor, often, machine-id; a reboot restarts every pid). macOS: `sysctl -n kern.uuid
    kern.boottime`. A lease records it, and its holder's pid is probed only on the machine it names."""
    if os.path.isdir("/proc/self"):
        parts: list[str] = []
        for path in ("/etc/machine-id", "/proc/sys/kernel/random/boot_id"):
            try:
                with open(path, encoding="ascii", errors="replace") as handle:
                    parts.append(handle.read().strip())
            except OSError:
                parts.append("")
        try:
            parts.append(os.readlink("/proc/self/ns/pid"))
        except OSError:
            parts.append("")
        return "linux:" + "/".join(parts) if any(parts) else None
    try:
        completed = subprocess.run(["sysctl", "-n", "kern.uuid", "kern.boottime"], capture_output=True, text=True,
                                   timeout=5, env={**os.environ, "LC_ALL": "C", "TZ": "UTC0"})
    except (OSError, subprocess.SubprocessError):
        return None
    identity = " ".join(completed.stdout.split())
    return f"sysctl:{identity}" if completed.returncode == 0 and identity else None


def on_this_machine(info: Mapping[str, Any], host: str, machine: str | None) -> bool:
    """Whether a lease was recorded on this machine, so its pid can be probed here: its host must match,
    and so must its machine identity when it recorded one (a lease from before identities by host alone)."""
    if info.get("host") != host:
        return False
    recorded = info.get("machine")
    if recorded is None:
        return True
    return machine is not None and recorded == machine


def usable_pid(pid: object) -> bool:
    """Whether a lease's recorded pid is one a probe can test (a positive int; a bool is no pid)."""
    return isinstance(pid, int) and not isinstance(pid, bool) and pid > 0


def process_alive(pid: object) -> bool:
    """Whether a process with this ID exists on this host (signal 0 tests without sending) and is not a
    zombie: a killed runner whose tick died first waits, dead, until the system reaps it, and does no work."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    if _zombie(pid):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _zombie(pid: int) -> bool:
    """Whether /proc shows this pid as a zombie (False where there is no /proc, or it cannot be read)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            fields = handle.read().rpartition(")")[2].split()
    except OSError:
        return False
    return bool(fields) and fields[0] == "Z"


def process_start_time(pid: object) -> str | None:
    """When the process with this ID started, as this host tells it; None when it cannot be read.

    Recorded beside a pid in a lease so a later probe can tell the same process from one that was given its
    recycled pid. On Linux it is field 22 of /proc/<pid>/stat (clock ticks since boot); elsewhere (macOS)
    `ps -o lstart=` read in UTC (`ps_start_time`). A pid counts as recycled only when its process provably
    started after the recorded one (`started_after`); the two forms are never compared with each other.
    """
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            stat = handle.read()
    except FileNotFoundError:
        if os.path.isdir("/proc/self"):
            return None  # a /proc host without this pid: the process is gone
    except OSError:
        return None
    else:
        fields = stat[stat.rfind(")") + 2 :].split()  # the command name may hold spaces and parentheses
        return f"linux-ticks:{fields[19]}" if len(fields) > 19 else None
    return ps_start_time(pid)


PS_LSTART = "ps-lstart-utc:"
PS_LSTART_FORMAT = "%a %b %d %H:%M:%S %Y"


def ps_start_time(pid: object) -> str | None:
    """`ps -o lstart=` for this pid (macOS's probe), read in UTC: lstart prints local time, and the keeper
    that records it (under launchd) and the shell that checks it may run in different zones."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    try:
        completed = subprocess.run(["ps", "-o", "lstart=", "-p", str(pid)], capture_output=True, text=True,
                                   timeout=5, env={**os.environ, "LC_ALL": "C", "TZ": "UTC0"})
    except (OSError, subprocess.SubprocessError):
        return None
    started = " ".join(completed.stdout.split())
    return f"{PS_LSTART}{started}" if completed.returncode == 0 and started else None


def _start_order(start: str) -> tuple[str, float] | None:
    """A start time as (form, comparable value); None when it does not parse (an older local-time
    `ps-lstart:` record among them: its zone is unknown)."""
    form, _, value = start.partition(":")
    if form == "linux-ticks" and value.isdigit():
        return form, float(value)
    if start.startswith(PS_LSTART):
        try:
            moment = datetime.strptime(" ".join(start[len(PS_LSTART):].split()), PS_LSTART_FORMAT)
        except ValueError:
            return None
        return "ps-lstart-utc", moment.replace(tzinfo=UTC).timestamp()
    return None


def started_after(current: str, recorded: str) -> bool:
    """Whether the process now holding a pid provably started after the recorded one (so it is another
    process given the recycled pid); anything unparseable or of different forms proves nothing."""
    now, then = _start_order(current), _start_order(recorded)
    return now is not None and then is not None and now[0] == then[0] and now[1] > then[1]


def session_alive(session: object) -> bool:
    """Whether any process of this session (a runner's session ID: its first process's pid) still lives here.

    A runner may leave work behind in processes it started and then exit itself; they keep its session, so
    the session, not the first pid, tells whether anything of the runner still runs. Linux reads field 6 of
    every /proc/<pid>/stat (zombies do no work, so they do not count); elsewhere (macOS) `pgrep -s`. When
    it cannot be told, the session counts as alive: only proof of absence may end a runner's segment."""
    if not isinstance(session, int) or isinstance(session, bool) or session <= 0:
        return False
    if proc_table.readable():
        return any(len(fields) > 3 and fields[0] != "Z" and fields[3] == str(session)
                   for _, fields in proc_table.stat_fields())
    try:
        completed = subprocess.run(["pgrep", "-s", str(session)], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return True
    return completed.returncode != 1  # 1: no process matched; 0: some did; anything else: cannot tell


def holder_alive(
    info: Mapping[str, Any],
    alive: Callable[[object], bool] = process_alive,
    started: Callable[[object], str | None] = process_start_time,
    session: Callable[[object], bool] = session_alive,
) -> tuple[bool, bool]:
    """(alive, recycled) for a lease's holder on this host: its recorded process (told apart from a recycled
    pid by its start time), or else any process left in its recorded session. A recycled pid proves the
    session gone too (a session's ID stays reserved while any of its processes lives)."""
    living, recycled = same_process_alive(info.get("pid"), info.get("pid_started"), alive, started)
    if living or recycled:
        return living, recycled
    if session(info.get("session")):
        return True, False
    return False, False


def same_process_alive(
    pid: object,
    recorded_start: object,
    alive: Callable[[object], bool] = process_alive,
    started: Callable[[object], str | None] = process_start_time,
) -> tuple[bool, bool]:
    """(alive, recycled) for a pid recorded with its start time: a live pid whose start time differs from
    the recorded one is another process that was given the same number, so the recorded one is gone.
    Only a current start strictly after the recorded one counts; without a recorded start time (an older
    lease), a readable current one, or one that parses, a live pid counts as alive."""
    if not alive(pid):
        return False, False
    if not isinstance(recorded_start, str) or not recorded_start:
        return True, False
    now_started = started(pid)
    if now_started is None or not started_after(now_started, recorded_start):
        return True, False
    return False, True


class Heartbeat(threading.Thread):
    """Extends one lease every `interval` seconds until stopped, or until the lease is no longer ours."""

    def __init__(
        self, journal: Journal, scope: str, owner: str, interval: float, now: Callable[[], datetime]
    ) -> None:
        super().__init__(name=f"heartbeat {scope}", daemon=True)
        self.journal = journal
        self.scope = scope
        self.owner = owner
        self.interval = interval
        self.now = now
        self.lost: str | None = None
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.wait(self.interval):
            try:
                leases.heartbeat(self.journal, self.scope, self.owner, self.now())
            except leases.LeaseOwnerError as error:
                self.lost = str(error)
                return
            except Exception as error:  # a busy or briefly unreachable journal: try again next beat
                print(f"factory-schedule tick: heartbeat of {self.scope} failed: {error}", file=sys.stderr)

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=max(self.interval * 2, 5))


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
        return SegmentRun(**base, pid=None, exit=None, segment_running=True, lease="held-by-another",
                          detail=str(error))
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
                                         lease="released"), now)


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


@dataclass(frozen=True)
class KeeperObservation:
    """What a detached keeper did in the observation window after `tick --detach` started it.

    `verdict`: `holding` (the same process, by pid and start time, is alive and holds its segment's lease
    with a fresh heartbeat: responsive), `finished` (it exited 0 having ended its segment), `failed` (it
    exited non-zero and its segment is still running with no deferral or settlement: exit status and the
    missing artifact agree), `unresponsive` (alive but not holding a fresh lease), or `unclear` (the
    signals disagree: kept as a hypothesis for a person, never called a failure)."""

    lane: str
    occurrence: str
    segment: int
    keeper_pid: int
    window_seconds: float
    same_process: bool
    exit: int | None
    lease_held: bool
    segment_running: bool
    verdict: str


def observe_keepers(
    journal: Journal,
    keepers: Sequence[tuple[SegmentJob, subprocess.Popen[bytes]]],
    window: float,
    now: Callable[[], datetime],
    read_view: Callable[[], Any],
    poll_every: float = 0.2,
) -> list[KeeperObservation]:
    """Watch each keeper for `window` seconds after its start; a launcher's exit code or a momentary pid
    proves nothing about the keeper's lifetime, so its identity and its lease are checked at the end."""
    import time

    identities = {process.pid: process_start_time(process.pid) for _job, process in keepers}
    deadline = time.monotonic() + window
    while time.monotonic() < deadline and any(process.poll() is None for _job, process in keepers):
        time.sleep(poll_every)
    try:
        view = read_view()
    except Exception:
        view = None
    observations = []
    for job, process in keepers:
        code = process.poll()
        started = identities[process.pid]
        same = code is None and (started is None or process_start_time(process.pid) == started)
        lease = leases.get_lease(journal, segment_scope(job.occurrence_id, job.segment))
        held = (lease is not None and lease.owner == job.runner and lease.info.get("tick_pid") == process.pid
                and not leases.stale(lease, now()))
        running = view is not None and view.segment_running(job.occurrence_id, job.segment, job.runner)
        if same and held:
            verdict = "holding"
        elif code == 0 and not running:
            verdict = "finished"
        elif code not in (None, 0) and running:
            verdict = "failed"
        elif same:
            verdict = "unresponsive"
        else:
            verdict = "unclear"
        observations.append(KeeperObservation(job.lane, job.occurrence_id, job.segment, process.pid, window, same,
                                               code, held, running, verdict))
    return observations
