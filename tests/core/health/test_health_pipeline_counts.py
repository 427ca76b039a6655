"""Counting the staged lanes' history without their state, pure: each event's `done` and `enqueued` lists,
outcomes and gate decisions, and approval requests until their decision."""

from __future__ import annotations

from typing import Any

from factory_schedule.core.health import HistoryCounts


def test_the_history_counts_tasks_works_decisions_and_waiting_approvals() -> None:
    counts = HistoryCounts()
    events: list[tuple[str, dict[str, Any]]] = [
        ("task-claimed", {"lane": "promotion", "task": 1, "done": [], "enqueued": [1]}),
        ("task-done", {"lane": "promotion", "task": 1, "done": [1], "enqueued": [2], "outcome": None}),
        ("task-abandoned", {"lane": "promotion", "task": 2, "done": [], "enqueued": []}),
        ("task-done", {"lane": "promotion", "task": 2, "done": [2], "enqueued": [], "outcome": "go",
                       "decision": {"n": 1, "verdict": "GO"}}),
        # an older build wrote the owner's escalation answer as the event's `decision`: no gate decision
        ("task-done", {"lane": "maturation", "task": 3, "done": [3], "enqueued": [], "outcome": "park",
                       "decision": "park"}),
        ("approval-requested", {"id": "a-1"}), ("approval-requested", {"id": "a-2"}),
        ("approval-decided", {"id": "a-1", "approved": True}),
    ]
    for event_type, data in events:
        counts.add(event_type, data)
    assert counts.done == {"promotion": {1, 2}, "maturation": {3}}
    assert counts.enqueued == {"promotion": {1, 2}, "maturation": set()}
    assert (counts.completed, counts.parked) == ({"promotion": 1, "maturation": 0}, {"promotion": 0, "maturation": 1})
    assert counts.decisions == 1 and counts.undecided == {"a-2"}
