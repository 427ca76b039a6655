"""Revision (repair) tasks: each names its parent review, the rejected artifact's hash and the critic log; an
interrupted one is a failed start of the round already reserved for it, kept with its partial output, requeued
only while the repair cap remains and then escalated to the owner, never silently reset to a fresh repair."""

from __future__ import annotations

import json
import sqlite3

import pytest

from factory_schedule.core.pipeline import PipelineError, PipelineLanes
from factory_schedule.store import open_journal
from tests.core.pipeline.pipeline_support import (
    Runs,
    drive_maturation,
    drive_promotion,
    make_harness,
    maturation_report,
    promotion_report,
    sha,
    top_n,
    writes_nothing,
)
from tests.store.forgery import put_whole_state, reseal_head, stored_state


def _claim(h, lane: str, run: str, runner: str) -> dict:
    h.tick()
    claimed = h.lanes.claim(lane=lane, run=run, runner=runner)
    assert getattr(claimed, "kind", "") != "idle", claimed
    return claimed.result


def _rejected_brief(tmp_path, **settings):
    """Promotion up to its first review, rejected with findings: (harness, runs, the review task, the brief's
    report that was rejected, the review's report)."""
    h = make_harness(tmp_path, **settings)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "alpha-one", "charlie"))
    runs = Runs()
    drive_promotion(h, runs, until="review")
    review = _claim(h, "promotion", "promotion-reviewer", runs.token("rev"))
    report = {**promotion_report("review", review["task"], review="reject"),
              "findings": ["the evidence does not support the market size"]}
    h.lanes.report(lane="promotion", task=review["task"], runner=f"rev-{runs.k}", report=report)
    return h, runs, review, report


def _open_task(h, lane: str = "promotion") -> dict:
    tasks = h.lanes.lane_view(lane).tasks
    assert len(tasks) == 1
    return tasks[0]


def _abandon(h, task: int, runner: str, lane: str = "promotion", **extra):
    h.tick()
    return h.lanes.abandon(lane=lane, task=task, runner=runner, confirmed_by="supervisor",
                           evidence="its process is gone", **extra)


def test_a_rejected_brief_is_revised_by_a_task_naming_its_parent_review_input_hash_and_critic_log(tmp_path):
    h, _runs, review, report = _rejected_brief(tmp_path)
    brief = _open_task(h)
    assert brief["stage"] == "brief" and brief["kind"] == "work"
    assert brief["revision"] == {
        "parent": review["task"], "inputSha256": review["subject"]["sha256"],
        "criticArtifact": report["artifact"], "criticSha256": report["sha256"],
        "findings": ["the evidence does not support the market size"]}


def test_an_interrupted_revision_is_a_failed_start_of_its_reserved_round_and_is_requeued_with_its_partial_output(
        tmp_path):
    h, runs, review, _report = _rejected_brief(tmp_path, maxRevisions=3)
    brief = _claim(h, "promotion", "promotion", runs.token("run"))
    runner = f"run-{runs.k}"
    rounds = h.lanes.lane_view("promotion").wip[0]["revisions"]
    answer = _abandon(h, brief["task"], runner, partial=["artifacts/brief-draft.md"])
    assert answer.result == {"lane": "promotion", "task": brief["task"], "state": "pending", "failedStarts": 1,
                             "revisions": rounds + 1, "cap": 3}
    event = h.events()[-1]
    assert event.type == "repair-start-failed"
    assert (event.data["parent"], event.data["outcome"], event.data["partial"]) == (
        review["task"], "requeued", ["artifacts/brief-draft.md"])
    requeued = _open_task(h)
    assert requeued["task"] == brief["task"] and "claimedBy" not in requeued, "the same task, pending again"
    assert requeued["revision"]["parent"] == review["task"]
    assert (requeued["revision"]["failedStarts"], requeued["revision"]["partial"]) == (
        1, ["artifacts/brief-draft.md"]), "never reset to a fresh pending repair"
    assert h.lanes.lane_view("promotion").wip[0]["revisions"] == rounds + 1
    again = _claim(h, "promotion", "promotion", runs.token("run"))
    assert again["task"] == brief["task"]
    h.lanes.report(lane="promotion", task=again["task"], runner=f"run-{runs.k}",
                   report=promotion_report("brief", again["task"]))
    assert _open_task(h)["stage"] == "review"


def test_an_interrupted_revision_past_the_repair_cap_escalates_to_the_owner_whose_grant_carries_it_on(tmp_path):
    h, runs, review, _report = _rejected_brief(tmp_path, maxRevisions=1)
    brief = _claim(h, "promotion", "promotion", runs.token("run"))
    answer = _abandon(h, brief["task"], f"run-{runs.k}", partial=["artifacts/partial.md"])
    assert answer.result["state"] == "escalated" and answer.result["next"]["stage"] == "escalation"
    event = h.events()[-1]
    assert event.type == "repair-start-failed" and event.data["done"] == [brief["task"]]
    assert len(event.data["enqueued"]) == 1
    view = h.lanes.lane_view("promotion")
    escalation = view.wip[0]["escalation"]
    assert escalation["stage"] == "brief" and "failed to start 1 time" in escalation["reason"]
    assert (escalation["revision"]["parent"], escalation["revision"]["failedStarts"],
            escalation["revision"]["partial"]) == (review["task"], 1, ["artifacts/partial.md"])
    assert view.tasks[0]["kind"] == "owner" and view.wip[0]["revisions"] == 1
    owner = view.tasks[0]["task"]
    h.lanes.decide_escalation(lane="promotion", task=owner, decided_by="owner", decision="revise", reason="go on")
    granted = _open_task(h)
    assert granted["stage"] == "brief" and granted["revision"]["failedStarts"] == 1
    assert granted["revision"]["inputSha256"] == review["subject"]["sha256"]


def test_a_reject_past_the_cap_escalates_with_the_revision_the_owners_round_repairs(tmp_path):
    h, runs, review, _report = _rejected_brief(tmp_path, maxRevisions=1)
    brief = _claim(h, "promotion", "promotion", runs.token("run"))
    h.lanes.report(lane="promotion", task=brief["task"], runner=f"run-{runs.k}",
                   report=promotion_report("brief", brief["task"]))
    second = _claim(h, "promotion", "promotion-reviewer", runs.token("rev"))
    h.lanes.report(lane="promotion", task=second["task"], runner=f"rev-{runs.k}",
                   report=promotion_report("review", second["task"], review="reject"))
    escalation = h.lanes.lane_view("promotion").wip[0]["escalation"]
    assert escalation["revision"]["parent"] == second["task"] != review["task"]
    assert escalation["revision"]["inputSha256"] == second["subject"]["sha256"]


def test_an_interrupted_slice_revision_names_the_rejected_slice_and_keeps_its_round(tmp_path):
    h = make_harness(tmp_path, maxRevisions=2)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "alpha-one"))
    runs = Runs()
    drive_promotion(h, runs)
    drive_maturation(h, runs, until="review")
    review = _claim(h, "maturation", "maturation-reviewer", runs.token("rev"))
    h.lanes.report(lane="maturation", task=review["task"], runner=f"rev-{runs.k}",
                   report=maturation_report("review", review["task"], decision="revise"))
    iterate = _open_task(h, "maturation")
    slice_done = next(d for d in h.lanes.lane_view("maturation").done if d["stage"] == "slice")
    assert iterate["stage"] == "iterate"
    rejected = sha(f"slice-{slice_done['task']}")
    assert iterate["revision"]["inputSha256"] == rejected, "the rejected slice, not its verify"
    claimed = _claim(h, "maturation", "maturation", runs.token("run"))
    answer = _abandon(h, claimed["task"], f"run-{runs.k}", lane="maturation")
    assert answer.result["state"] == "pending" and answer.result["failedStarts"] == 1


def test_an_interrupted_task_that_is_no_revision_returns_to_pending_as_itself(tmp_path):
    h = make_harness(tmp_path)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "alpha-one"))
    runs = Runs()
    drive_promotion(h, runs, until="evidence")
    claimed = _claim(h, "promotion", "promotion", runs.token("run"))
    with writes_nothing(h), pytest.raises(PipelineError) as refused:
        _abandon(h, claimed["task"], f"run-{runs.k}", partial=["artifacts/x.md"])
    assert refused.value.code == "INVALID"
    answer = _abandon(h, claimed["task"], f"run-{runs.k}")
    assert answer.result == {"lane": "promotion", "task": claimed["task"], "state": "pending", "abandons": 1,
                             "cap": 2}
    assert h.events()[-1].type == "task-abandoned"
    assert "revision" not in _open_task(h)


def test_the_same_confirmation_replays_and_writes_nothing_more(tmp_path):
    h, runs, _review, _report = _rejected_brief(tmp_path)
    brief = _claim(h, "promotion", "promotion", runs.token("run"))
    first = _abandon(h, brief["task"], f"run-{runs.k}", partial=["artifacts/a.md"])
    with writes_nothing(h):
        again = _abandon(h, brief["task"], f"run-{runs.k}", partial=["artifacts/a.md"])
    assert again.replayed and again.result == first.result
    with writes_nothing(h), pytest.raises(PipelineError) as refused:
        _abandon(h, brief["task"], f"run-{runs.k}", partial=["artifacts/b.md"])
    assert refused.value.code == "CONFLICT"


def _more_failed_starts_than_rounds(doc):
    doc["promotion"]["tasks"][0]["revision"]["failedStarts"] = 9


def _revision_on_a_review_task(doc):
    task = doc["promotion"]["tasks"][0]
    doc["promotion"]["tasks"][0] = {**task, "stage": "review", "kind": "review",
                                    "subject": {"stage": "brief", "task": 1, "artifact": "a", "sha256": "0" * 64,
                                                "runner": "run-1"}}
    doc["promotion"]["wip"][0]["stage"] = "review"


def _parent_after_the_task(doc):
    doc["promotion"]["tasks"][0]["revision"]["parent"] = 999


def _findings_not_text(doc):
    doc["promotion"]["tasks"][0]["revision"]["findings"] = [7]


@pytest.mark.parametrize("tamper", [_more_failed_starts_than_rounds, _revision_on_a_review_task,
                                    _parent_after_the_task, _findings_not_text])
def test_a_stored_revision_that_breaks_its_rules_is_corrupt_on_read(tmp_path, tamper):
    h, _runs, _review, _report = _rejected_brief(tmp_path)
    path = h.url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as db:
        state = stored_state(db, "pipeline/lanes")
        document = json.loads(state)
        tamper(document)
        put_whole_state(db, "pipeline/lanes", json.dumps(document))
        reseal_head(db, "pipeline/lanes")
    fresh = PipelineLanes(open_journal(h.url), h.clock)
    with pytest.raises(PipelineError) as refused:
        fresh.state()
    assert refused.value.code == "CORRUPT"
