"""What a run reads is enough to do its task, under one name: a maturation claim carries the GO decision its
work started from and the current slice (what its intake, slice, verify and review reports name), and the lane
view names a task's number `task`, as the claim does."""

from __future__ import annotations

from pathlib import Path

from factory_schedule.core.pipeline import PipelineResult
from tests.core.pipeline.pipeline_support import (
    Runs,
    claim_next,
    drive_promotion,
    lane_view,
    make_harness,
    maturation_report,
    top_n,
)


def test_a_maturation_claim_carries_its_go_decision_and_current_slice(tmp_path: Path) -> None:
    h = make_harness(tmp_path)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    runs = Runs()
    go = drive_promotion(h, runs)["decision"]
    seen = []
    for _ in range(4):  # intake, boundary, slice, verify: each report built from the claim alone
        runner, task = claim_next(h, "maturation", runs)
        seen.append((task["stage"], task["decision"], task["slice"]))
        h.tick()
        h.lanes.report(lane="maturation", task=task["task"], runner=runner,
                       report=maturation_report(task["stage"], task["task"], go=task["decision"],
                                                slice_n=task["slice"] or 1))
    assert seen == [("intake", go, None), ("boundary", go, None), ("slice", go, 1), ("verify", go, 1)]


def test_the_lane_view_names_a_tasks_number_task_as_the_claim_does(tmp_path: Path) -> None:
    h = make_harness(tmp_path)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    claimed = h.lanes.claim(lane="promotion", run="promotion", runner="run-1")
    assert isinstance(claimed, PipelineResult)
    [task] = lane_view(h.lanes, "promotion").tasks
    assert task["task"] == claimed.result["task"] and "n" not in task
    h.lanes.report(lane="promotion", task=task["task"], runner="run-1",
                   report={"artifact": "select.md", "sha256": "ab" * 32, "evidence": ["top-n"]})
    [done] = lane_view(h.lanes, "promotion").done
    assert done["task"] == claimed.result["task"] and "n" not in done
