"""The staged lanes' durable counts against the state the dashboard draws."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .report import Finding

if TYPE_CHECKING:
    from factory_schedule.core.pipeline.model import PipelineState


@dataclass
class HistoryCounts:
    """What the pipeline's own events say, counted without its state: per lane the task numbers enqueued and
    done and the works ended (completed, parked); the gate decisions recorded; the approval requests not yet
    decided."""

    enqueued: dict[str, set[int]] = field(default_factory=lambda: {"promotion": set(), "maturation": set()})
    done: dict[str, set[int]] = field(default_factory=lambda: {"promotion": set(), "maturation": set()})
    completed: dict[str, int] = field(default_factory=lambda: {"promotion": 0, "maturation": 0})
    parked: dict[str, int] = field(default_factory=lambda: {"promotion": 0, "maturation": 0})
    decisions: int = 0
    undecided: set[str] = field(default_factory=set)

    def add(self, event_type: str, data: Mapping[str, Any]) -> None:
        """Count one event (its type and data, as the lanes wrote it)."""
        lane = data.get("lane")
        if lane in self.enqueued:
            self.enqueued[lane].update(int(n) for n in data.get("enqueued", ()))
            self.done[lane].update(int(n) for n in data.get("done", ()))
            if event_type == "task-done":
                outcome = data.get("outcome")
                if outcome == "park":
                    self.parked[lane] += 1
                elif outcome is not None:
                    self.completed[lane] += 1
                if isinstance(data.get("decision"), Mapping):  # a gate decision (older events held text here)
                    self.decisions += 1
        if event_type == "approval-requested":
            self.undecided.add(str(data.get("id")))
        elif event_type == "approval-decided":
            self.undecided.discard(str(data.get("id")))


@dataclass(frozen=True)
class PipelineHistory:
    state: PipelineState  # the state at the version the counts were taken to
    counts: HistoryCounts


def count_findings(history: PipelineHistory) -> list[Finding]:
    """Each count the dashboard draws from the state (open tasks, tasks done, works completed and parked, gate
    decisions, approval requests waiting) that its event history does not support: one error finding naming
    them. Nothing is repaired: the state is the record every decision reads, and rewriting it from history
    would be health changing decisions; the owner restores the journal from a copy they trust."""
    state, counts = history.state, history.counts
    differences: list[dict[str, Any]] = []

    def compare(what: str, in_state: Any, in_history: Any) -> None:
        if in_state != in_history:
            differences.append({"count": what, "state": in_state, "history": in_history})

    for lane in (state.promotion, state.maturation):
        name = lane.lane
        compare(f"{name}.openTasks", sorted(task.n for task in lane.tasks),
                sorted(counts.enqueued[name] - counts.done[name]))
        compare(f"{name}.tasksDone", lane.tasks_done, len(counts.done[name]))
        compare(f"{name}.completed", lane.completed, counts.completed[name])
        compare(f"{name}.parked", lane.parked, counts.parked[name])
    compare("tasksNumbered", state.next_task - 1,
            max((n for numbers in counts.enqueued.values() for n in numbers), default=0))
    compare("decisions", state.next_decision - 1, counts.decisions)
    compare("approvalsWaiting", sorted(a.id for a in state.approvals if a.approved is None), sorted(counts.undecided))
    if not differences:
        return []
    named = "; ".join(f"{d['count']} {d['state']} in the state, {d['history']} by its history" for d in differences)
    return [Finding(
        "pipeline-counts-disagree", "error",
        f"the staged lanes' state, which the dashboard draws, disagrees with their own event history: {named}. "
        "Nothing is repaired (the state is what every decision reads); restore the journal from a copy you trust",
        {"differences": differences})]
