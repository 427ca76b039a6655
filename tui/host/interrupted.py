"""What a tick does with its own runners after a Ctrl-C: say what it gave up, and reconcile at once what it ended.

Health reconciles a dead runner only after 2 x TTL without a heartbeat, because it has to prove the runner gone
from the outside. The tick that passed the Ctrl-C on has better evidence: it waited for its runner's exit
itself, and the runner's session (where its provider call runs) holds no process any more. So each segment its
runner left running is reconciled through the engine's own `reconcile` right away, as the tick's confirmation
with that evidence (a call in flight ends `lost` and is never sent again; the occurrence goes `interrupted` and
its lane resumes on its next tick), and the tick releases the segment's lease it holds. A segment whose session
still has a process, or whose lease the tick no longer holds, is left to health, and the line says so.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from factory_schedule.core import LifecycleSchedule, ScheduleError
from factory_schedule.store import Journal, leases
from factory_schedule.tui.host.process_identity import session_alive
from factory_schedule.tui.host.segments import SegmentRun


def given_up(run: SegmentRun, outcome: str, detail: str, **more: Any) -> dict[str, Any]:
    return {"lane": run.lane, "occurrence": run.occurrence, "segment": run.segment, "runner": run.runner,
            "pid": run.pid, "exit": run.exit, "outcome": outcome, "detail": detail, **more}


def reconcile_interrupted(journal: Journal, schedule: LifecycleSchedule, runs: list[SegmentRun], host: str,
                          alive: Callable[[object], bool] = session_alive) -> list[dict[str, Any]]:
    """One line per run the Ctrl-C ended: `ended` (its runner deferred or settled its segment itself),
    `reconciled` (the tick confirmed it gone and the engine recorded it), or `left-to-health` (why not)."""
    lines = []
    for run in runs:
        if not run.segment_running:
            lines.append(given_up(run, "ended", "its runner ended its segment itself"))
            continue
        if run.lease != "left-to-go-stale" or run.pid is None:
            lines.append(given_up(run, "left-to-health", f"the tick does not hold its lease ({run.lease}): "
                                  "health reconciles it once its runner is provably gone"))
            continue
        if alive(run.pid):
            lines.append(given_up(run, "left-to-health", f"a process of its runner's session {run.pid} still "
                                  "runs: health reconciles it once nothing of it lives"))
            continue
        evidence = (f"the tick ended runner pid {run.pid} on {host} at a Ctrl-C: it exited {run.exit} and no "
                    f"process of its session {run.pid} runs")
        confirmation = {"runner": run.runner, "confirmedBy": f"tick@{host}", "evidence": evidence[:500]}
        try:
            result = schedule.reconcile(occurrence_id=run.occurrence, confirmation=confirmation)
        except ScheduleError as error:
            lines.append(given_up(run, "left-to-health", f"the engine refused its reconcile: {error.code}: "
                                  f"{error.message}"))
            continue
        calls = result.occurrence.calls if result.occurrence is not None else []
        lost = [call.k for call in calls if call.outcome == "lost" and call.segment == run.segment]
        with contextlib.suppress(leases.LeaseOwnerError):
            leases.release(journal, run.scope, run.runner)
        lines.append(given_up(run, "reconciled", evidence, command_id=result.command_id, calls_lost=lost,
                              confirmed_by=confirmation["confirmedBy"]))
    return lines
