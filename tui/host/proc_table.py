"""The host's process table on Linux, read from /proc: each process's stat fields after its name, and the
environment it started with.

Both the run's process probe and the reader of a runner's adopted children walk the same table; a process
may exit while it is read, so one that can no longer be read is simply not listed. Another user's
environment is not readable, which is as it should be: a run's processes are its owner's.
"""

from __future__ import annotations

import os
from collections.abc import Iterator


def readable() -> bool:
    """Whether this host has a /proc to read (Linux); elsewhere callers ask the system's own tools."""
    return os.path.isdir("/proc/self")


def stat_fields() -> Iterator[tuple[int, list[str]]]:
    """Each live pid with the fields of its /proc/<pid>/stat after the command name: state, ppid, pgrp,
    session, ... (the name is skipped by its closing parenthesis, since a name may hold spaces)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                stat = handle.read()
        except OSError:
            continue  # it exited while we looked
        yield int(entry), stat[stat.rfind(")") + 2 :].split()


ENVIRONMENT_LIMIT = 4 * 1024 * 1024  # past the kernel's own limit on a process's arguments and environment


def environment_holds(pid: int, entry: str) -> bool:
    """Whether the environment process `pid` started with holds `entry` (`NAME=value`) exactly."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            environment = handle.read(ENVIRONMENT_LIMIT)
    except OSError:
        return False  # gone, or not ours to read
    return entry.encode() in environment.split(b"\0")
