"""The host's process table on Linux, read from /proc: each process's stat fields after its name.

Both the runner's session probe and the reader of a runner's adopted children walk the same table; a process
may exit while it is read, so one that can no longer be read is simply not listed.
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
