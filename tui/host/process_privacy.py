"""Keep a factory process's environment and memory out of reach of the providers it starts.

A provider is a coding agent with a shell, running as the owner's user, so the allow-listed environment it
starts with is not enough: on Linux any process of the same user may read another's environment
(/proc/<pid>/environ, where the journal's URL and the runner token of a runner or a tick live) and memory
(/proc/<pid>/mem, where the dashboard keeps an unlocked owner key). A process that is not dumpable
(prctl PR_SET_DUMPABLE 0, as ssh-agent does) keeps both to itself and to root. The flag does not pass
through exec, so each factory process sets it for itself, first thing. Elsewhere (macOS) there is no
such switch; the owner-key guide says what that leaves open.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable

PR_SET_DUMPABLE = 4  # linux/prctl.h
PR_SET_PDEATHSIG = 1

Prctl = Callable[[int, int, int, int, int], int]


def linux_prctl() -> Prctl | None:
    """libc's prctl on Linux; None elsewhere, or where libc does not offer it."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return prctl  # type: ignore[no-any-return]


def keep_to_this_process() -> bool:
    """Make this process not dumpable, so no process of the same user reads its environment or memory; whether
    the host did (False where there is no such switch)."""
    prctl = linux_prctl()
    return prctl is not None and prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
