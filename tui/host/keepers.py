"""Whether a keeper that `tick --detach` started took hold of its segment: watched for a window, then judged
by its identity, its lease and its segment's record together."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from factory_schedule.store import Journal, leases
from factory_schedule.tui.host.process_identity import process_start_time
from factory_schedule.tui.host.segments import SegmentJob
from factory_schedule.tui.host.tokens import segment_scope


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
