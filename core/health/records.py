"""Health's own records in the journal, and what each append decides (pure: the shell only appends).

`health/repairs` holds what health's hands did or could not do: a lease removed, a scheduled firing that left
no trace, a lane's prompt binding recorded, or a blocker where it could not be. Its state counts them by type
and names the last command. `health/runs` holds what the tick saw of each runner's process; its state keeps
the latest `KEPT_RUNS` so that health reads them in one row.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from factory_schedule.store import Decision, NewEvent
from factory_schedule.store.records import Decide

HEALTH_AGGREGATE = "health/repairs"
LEASE_REMOVED = "lease-removed"
FIRING_RECORDED = "firing-recorded"
BINDING_RECORDED = "binding-recorded"
BINDING_BLOCKED = "binding-blocked"

RUNS_AGGREGATE = "health/runs"
RUN_RECORDED = "run-recorded"
KEPT_RUNS = 64


def counted_record(event_type: str, data: Mapping[str, Any], command_id: str) -> Decide:
    """One `health/repairs` event; the aggregate's state counts each type and names this command as the last."""

    def decide(state: Any, _version: int) -> Decision:
        counts = dict(state.get("counts", {})) if isinstance(state, dict) else {}
        counts[event_type] = int(counts.get(event_type, 0)) + 1
        return Decision(events=[NewEvent(event_type, dict(data))], state={"counts": counts, "last": command_id},
                        result={"recorded": command_id})

    return decide


def kept_run(record: Mapping[str, Any], command_id: str) -> Decide:
    """One `health/runs` event; the aggregate's state keeps the latest KEPT_RUNS records, oldest first."""

    def decide(state: Any, _version: int) -> Decision:
        runs = list(state.get("runs", [])) if isinstance(state, dict) else []
        runs = [*runs, dict(record)][-KEPT_RUNS:]
        return Decision(events=[NewEvent(RUN_RECORDED, dict(record))], state={"runs": runs},
                        result={"recorded": command_id})

    return decide
