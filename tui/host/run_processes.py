"""The processes on this host that are a run's: those of its runner's session, and those carrying its call mark.

A runner leads a session of its own, and what it starts keeps that session, except a tool a provider starts in
a session of its own (Claude Code's shell tool runs each command detached). Such a tool carries the call mark
(provider_environment.CALL_MARK, the runner's session ID) in the environment it inherited, so it is found by
that mark instead. Linux reads both from /proc (proc_table); macOS asks `pgrep -s` for the session and
`ps -E` for the environments of this user's processes (a process's environment as it started: the mark is
set before the provider starts and only inherited after). Zombies do no work, so they never count.
"""

from __future__ import annotations

import subprocess

from factory_schedule.tui.host import proc_table
from factory_schedule.tui.host.provider_environment import call_mark

PS_TIMEOUT_SECONDS = 10


def run_processes(session: object) -> list[int] | None:
    """The live pids of the run whose runner leads `session`, sorted; None when this host cannot tell."""
    if not isinstance(session, int) or isinstance(session, bool) or session <= 0:
        return []
    mark = call_mark(session)
    if proc_table.readable():
        return sorted(pid for pid, fields in proc_table.stat_fields()
                      if len(fields) > 3 and fields[0] != "Z"
                      and (fields[3] == str(session) or proc_table.environment_holds(pid, mark)))
    members, carrying = _session_members(session), _ps_carrying(mark)
    if members is None or carrying is None:
        return None
    return sorted(set(members) | set(carrying))


def _session_members(session: int) -> list[int] | None:
    try:
        done = subprocess.run(["pgrep", "-s", str(session)], capture_output=True, text=True,
                              timeout=PS_TIMEOUT_SECONDS)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode not in (0, 1):  # 1: no process matched; anything else: cannot tell
        return None
    return [int(word) for word in done.stdout.split() if word.isdigit()]


def _ps_carrying(mark: str) -> list[int] | None:
    try:
        done = subprocess.run(["ps", "-A", "-E", "-ww", "-o", "pid=,stat=,command="], capture_output=True,
                              text=True, errors="replace", timeout=PS_TIMEOUT_SECONDS)
    except (OSError, subprocess.SubprocessError):
        return None
    return carrying_in_ps(done.stdout, mark) if done.returncode == 0 else None


def carrying_in_ps(listing: str, mark: str) -> list[int]:
    """The pids of `ps -E -o pid=,stat=,command=` lines (the command followed by the environment, each entry a
    word) that carry `mark` as one word and are not zombies."""
    found = []
    for line in listing.splitlines():
        words = line.split()
        if len(words) >= 3 and words[0].isdigit() and not words[1].startswith("Z") and mark in words[2:]:
            found.append(int(words[0]))
    return found
