"""Health's judgement of a lane's prompt binding: pure, for the health check to call (tui/host/bindings.py does).

A lane's binding is three things read together: its source (the prompt folder as
configured: `run --prompts`, the LaunchAgent's command line or $FACTORY_PROMPTS),
the path that resolves to (symlinks followed), and a normalized snapshot of what
is there (lane.toml and every prompt file, each without a BOM, with `\\n` line
endings and one trailing newline, so an editor's re-save is not drift). Drift is
any difference from the recorded binding. A repair (recording the binding now
read) is allowed only when all three were read back together twice, identically;
a read that changed in between is retried once, and otherwise the verdict is a
blocker for the owner. Nothing here touches the schedule, the LaunchAgent's
calendar or whether it is loaded.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

BOM = b"\xef\xbb\xbf"


def normalized(data: bytes) -> bytes:
    """The text as a binding compares it: no BOM, `\\n` line endings, exactly one trailing newline."""
    if data.startswith(BOM):
        data = data[len(BOM):]
    data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return data.rstrip(b"\n") + b"\n"


def snapshot_of(files: Mapping[str, bytes]) -> str:
    """One digest of a lane's files (relative path -> bytes), normalized, in path order."""
    digest = hashlib.sha256()
    for name in sorted(files):
        body = normalized(files[name])
        digest.update(f"{name}\0{len(body)}\0".encode())
        digest.update(body)
    return digest.hexdigest()


@dataclass(frozen=True)
class BindingRead:
    """One reading of a lane's binding; `error` when any of the three could not be read."""

    lane: str
    source: str
    resolved: str | None = None
    snapshot: str | None = None
    error: str | None = None


Verdict = Literal["ok", "unrecorded", "drift", "unreadable", "changing"]


@dataclass(frozen=True)
class BindingFinding:
    lane: str
    verdict: Verdict
    repair: Literal["record", "re-read", "blocker"] | None
    message: str
    drifted: tuple[str, ...] = ()


def judge_binding(recorded: BindingRead | None, first: BindingRead, second: BindingRead,
                  retried: bool = False) -> BindingFinding:
    """What health reports for one lane, from the recorded binding and two readings taken one after the other."""
    lane = first.lane
    for reading in (first, second):
        if reading.error is not None or reading.resolved is None or reading.snapshot is None:
            why = reading.error or "the binding could not be read back whole"
            return BindingFinding(lane, "unreadable", "blocker", f"{lane}: prompt binding unreadable: {why}")
    if first != second:
        if retried:
            return BindingFinding(lane, "changing", "blocker",
                                  f"{lane}: the prompt folder changed while it was read, twice: left to the owner")
        return BindingFinding(lane, "changing", "re-read", f"{lane}: the prompt folder changed while it was read")
    if recorded is None:
        return BindingFinding(lane, "unrecorded", "record", f"{lane}: no binding recorded yet")
    drifted = tuple(name for name in ("source", "resolved", "snapshot")
                    if getattr(recorded, name) != getattr(first, name))
    if not drifted:
        return BindingFinding(lane, "ok", None, f"{lane}: prompt binding as recorded")
    return BindingFinding(lane, "drift", "record", f"{lane}: prompt binding drifted ({', '.join(drifted)})",
                          drifted)
