"""Abandons are capped like retries: a task whose run a supervisor confirms gone returns to pending at most
`maxRetries` times; the next abandon escalates it to the owner instead of re-sending it every night. The
owner's `revise` sends it once more (the same stage, the same subject), `park` ends the work."""

from __future__ import annotations

from pathlib import Path

import pytest

from factory_schedule.core.pipeline import PipelineLanes, PipelineResult
from tests.core.pipeline.pipeline_support import Harness, Runs, drive_promotion, lane_view, make_harness, top_n


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    harness = make_harness(tmp_path, maxRetries=2)
    harness.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    return harness


def _claim(h: Harness, run: str, runner: str) -> dict:
    h.tick()
    claimed = h.lanes.claim(lane="promotion", run=run, runner=runner)
    assert isinstance(claimed, PipelineResult), claimed
    return claimed.result


def _abandon(lanes: PipelineLanes, n: int, runner: str) -> dict:
    return lanes.abandon(lane="promotion", task=n, runner=runner, confirmed_by="health-reconciler@host",
                         evidence="process gone, locks stale past 2 x TTL").result


def test_an_abandoned_task_returns_to_pending_at_most_max_retries_times_then_escalates_to_the_owner(
        h: Harness) -> None:
    first = _claim(h, "promotion", "run-1")
    n = first["task"]
    for night in (1, 2):  # maxRetries = 2: two returns to pending
        answer = _abandon(h.lanes, n, f"run-{night}")
        assert (answer["state"], answer["abandons"], answer["cap"]) == ("pending", night, 2)
        again = _claim(h, "promotion", f"run-{night + 1}")
        assert again["task"] == n  # the same task, re-sent
    h.tick()
    answer = _abandon(h.lanes, n, "run-3")
    assert answer["state"] == "escalated" and answer["abandons"] == 3
    view = lane_view(h.lanes, "promotion")
    [owner] = view.tasks
    assert (owner["kind"], owner["stage"]) == ("owner", "escalation")
    [work] = view.wip
    assert work["escalation"]["stage"] == "select" and work["escalation"]["abandons"] == 3
    assert "confirmed gone 3 times" in work["escalation"]["reason"]
    assert [(d["task"], d["by"]) for d in view.done] == [(n, "health-reconciler@host")]
    events = h.events()
    assert [e.type for e in events[-1:]] == ["task-abandoned"]
    assert events[-1].data["outcome"] == "escalated" and events[-1].data["enqueued"] == [owner["task"]]
    # Nothing is re-sent: the lane's scheduler finds only the owner's task.
    h.tick()
    idle = h.lanes.claim(lane="promotion", run="promotion", runner="run-4")
    assert not isinstance(idle, PipelineResult) and idle.reason == "awaiting-owner"


def test_the_owners_revise_sends_an_abandoned_task_once_more_and_park_ends_the_work(h: Harness) -> None:
    n = _claim(h, "promotion", "run-1")["task"]
    for k in (1, 2, 3):
        _abandon(h.lanes, n, f"run-{k}")
        if k < 3:
            _claim(h, "promotion", f"run-{k + 1}")
    [owner] = lane_view(h.lanes, "promotion").tasks
    h.tick()
    h.lanes.decide_escalation(lane="promotion", task=owner["task"], decided_by="owner", decision="revise",
                              reason="try once more")
    [again] = lane_view(h.lanes, "promotion").tasks
    assert (again["stage"], again["kind"], again["abandons"]) == ("select", "work", 2)
    retried = _claim(h, "promotion", "run-4")
    assert retried["task"] == again["task"]
    h.tick()
    answer = _abandon(h.lanes, again["task"], "run-4")  # the granted round was the one more send
    assert answer["state"] == "escalated"
    [owner] = lane_view(h.lanes, "promotion").tasks
    h.tick()
    ended = h.lanes.decide_escalation(lane="promotion", task=owner["task"], decided_by="owner", decision="park",
                                      reason="it keeps dying").result
    assert ended["outcome"] == "park" and lane_view(h.lanes, "promotion").wip == []


def test_an_abandoned_review_task_escalates_with_its_subject_and_the_owners_revise_keeps_it(h: Harness) -> None:
    runs = Runs()
    drive_promotion(h, runs, until="review")
    [pending] = lane_view(h.lanes, "promotion").tasks
    subject = pending["subject"]
    for k in (1, 2, 3):
        claimed = _claim(h, "promotion-reviewer", f"rev-{k}")
        assert claimed["task"] == pending["task"]
        h.tick()
        _abandon(h.lanes, pending["task"], f"rev-{k}")
    [owner] = lane_view(h.lanes, "promotion").tasks
    assert owner["stage"] == "escalation"
    h.tick()
    h.lanes.decide_escalation(lane="promotion", task=owner["task"], decided_by="owner", decision="revise",
                              reason="once more")
    [again] = lane_view(h.lanes, "promotion").tasks
    assert (again["stage"], again["kind"], again["subject"]) == ("review", "review", subject)


def test_a_task_reported_after_a_return_to_pending_starts_its_next_task_with_no_abandons(h: Harness) -> None:
    n = _claim(h, "promotion", "run-1")["task"]
    _abandon(h.lanes, n, "run-1")
    _claim(h, "promotion", "run-2")
    h.tick()
    done = h.lanes.report(lane="promotion", task=n, runner="run-2",
                          report={"artifact": "select.md", "sha256": "ab" * 32, "evidence": ["top-n"]}).result
    [following] = lane_view(h.lanes, "promotion").tasks
    assert following["task"] == done["next"]["task"] and "abandons" not in following
