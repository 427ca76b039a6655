"""Stop what a provider call left running when the call ends.

A provider starts tools of its own, and not every tool stays in the call's process group: Claude Code's
shell tool starts each command in a session of its own (setsid), where a signal to the call's group never
reaches it. On Linux the runner adopts its orphaned descendants (PR_SET_CHILD_SUBREAPER): when the provider
exits or is stopped, such a tool becomes the runner's child, so the runner finds it among its children and
stops it, with its group, when the call ends. Elsewhere (macOS) only the call's own group is stopped.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
from collections.abc import Iterator

from factory_schedule.tui.host import proc_table
from factory_schedule.tui.host.process_privacy import linux_prctl

PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
PR_GET_CHILD_SUBREAPER = 37
ROUNDS = 5  # a stopped tool's own children are adopted in turn; each round stops one generation


def adopt_orphans(adopt: bool = True) -> bool:
    """Make this process the one its orphaned descendants are handed to (or no longer); whether the host did."""
    prctl = linux_prctl()
    return prctl is not None and prctl(PR_SET_CHILD_SUBREAPER, int(adopt), 0, 0, 0) == 0


@contextlib.contextmanager
def orphans_adopted() -> Iterator[None]:
    """Adopt orphaned descendants while the block runs, then leave the process as it was: a caller that runs a
    segment in its own process (a test, a dashboard) is not left adopting what other work of it orphans."""
    was = adopting()
    adopt_orphans()
    try:
        yield
    finally:
        if not was:
            adopt_orphans(False)


def adopting() -> bool:
    """Whether this process adopts its orphaned descendants (only then are its children the calls' leftovers)."""
    prctl = linux_prctl()
    if prctl is None:
        return False
    flag = ctypes.c_int(0)
    return prctl(PR_GET_CHILD_SUBREAPER, ctypes.addressof(flag), 0, 0, 0) == 0 and flag.value == 1


def children() -> set[int]:
    """The pids whose parent is this process (zombies included: they are reaped here)."""
    me = str(os.getpid())
    return {pid for pid, fields in proc_table.stat_fields() if len(fields) > 1 and fields[1] == me}


def stop_adopted(before: set[int]) -> list[int]:
    """SIGKILL every child of this process that was not among `before` (a call's leftovers, adopted when their
    provider ended), with the process group it leads, and reap it; the pids stopped."""
    if not adopting():
        return []
    stopped: list[int] = []
    for _ in range(ROUNDS):
        left = children() - before
        if not left:
            break
        for pid in left:
            with contextlib.suppress(OSError):
                if os.getpgid(pid) == pid:
                    os.killpg(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
            stopped.append(pid)
    return stopped
