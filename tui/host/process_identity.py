"""Which machine this is and whether a recorded process still lives on it.

A lease or a lane lock records its holder's host, machine identity, pid, the pid's start time and its
session; health probes them only on the machine that recorded them, tells a recycled pid from the holder by
its start time, and counts work left running in the holder's session as the holder's.
"""

from __future__ import annotations

import functools
import os
import socket
import subprocess
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from factory_schedule.tui.host.run_processes import run_processes


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
    """Whether anything of the run whose runner leads this session (its first process's pid) still lives here.

    A runner may leave work behind in processes it started and then exit itself: they keep its session, or
    carry its call mark where a tool left the session (run_processes), so they, not the first pid, tell
    whether anything of the runner still runs. When it cannot be told, the session counts as alive: only
    proof of absence may end a runner's segment."""
    living = run_processes(session)
    return living is None or bool(living)


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

