"""A release found not ready is a reviewer's reject like any other: bounded revise and re-review (`iterate`
of the current slice, its verification and review again) while the revision cap has a round left, and only
past it an escalation to the owner; no artificial human confirmation inside the cap."""

from __future__ import annotations

from pathlib import Path

from tests.core.pipeline.pipeline_support import (
    Harness,
    Runs,
    claim_next,
    drive_promotion,
    lane_view,
    make_harness,
    maturation_report,
    top_n,
)


def _at_release(tmp_path: Path, max_revisions: int) -> tuple[Harness, Runs]:
    h = make_harness(tmp_path, maxRevisions=max_revisions)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    runs = Runs()
    drive_promotion(h, runs)
    return h, runs


def _work_until_release(h: Harness, runs: Runs) -> None:
    """Maturation's tasks with passing reports until its release task is pending."""
    while lane_view(h.lanes, "maturation").tasks[:1] == [] or lane_view(h.lanes, "maturation").tasks[0][
            "stage"] != "release":
        runner, task = claim_next(h, "maturation", runs)
        h.tick()
        h.lanes.report(lane="maturation", task=task["task"], runner=runner,
                       report=maturation_report(task["stage"], task["task"]))


def _not_ready(h: Harness, runs: Runs) -> dict:
    runner, task = claim_next(h, "maturation", runs)
    assert task["stage"] == "release"
    h.tick()
    return h.lanes.review(lane="maturation", task=task["task"], runner=runner,
                          report=maturation_report("release", task["task"], ready=False)).result


def test_a_release_found_not_ready_goes_to_iterate_while_revisions_are_left(tmp_path: Path) -> None:
    h, runs = _at_release(tmp_path, max_revisions=2)
    _work_until_release(h, runs)
    done = _not_ready(h, runs)
    assert done["next"]["stage"] == "iterate" and done["outcome"] is None
    [task] = lane_view(h.lanes, "maturation").tasks
    assert task["stage"] == "iterate" and task["revision"]["parent"] == done["task"]
    [work] = lane_view(h.lanes, "maturation").wip
    assert work["revisions"] == 1 and "escalation" not in work
    _work_until_release(h, runs)  # iterate, verify, review (complete): release again
    assert _not_ready(h, runs)["next"]["stage"] == "iterate"
    _work_until_release(h, runs)
    escalated = _not_ready(h, runs)  # the third not-ready is past maxRevisions 2
    assert escalated["next"]["stage"] == "escalation"
    [work] = lane_view(h.lanes, "maturation").wip
    assert work["escalation"]["stage"] == "iterate"
