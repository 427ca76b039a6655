"""One candidate from a Top-N to private release-readiness with no human step, then security-approve."""

from __future__ import annotations

from pathlib import Path

import pytest

from factory_schedule.core.pipeline import PipelineError
from tests.core.pipeline.pipeline_support import (
    lane_view,
    make_harness,
    maturation_report,
    promotion_report,
    top_n,
    writes_nothing,
)


def _work(h, lane: str, run: str, runner: str, reporter) -> dict:
    """One run: claim the lane's next task and report its stage's artifact."""
    h.tick()
    claimed = h.lanes.claim(lane=lane, run=run, runner=runner)
    assert not hasattr(claimed, "reason"), claimed  # an idle claim has a reason; a claimed task has none
    task = claimed.result
    h.tick()
    done = h.lanes.report(lane=lane, task=task["task"], runner=runner, report=reporter(task))
    return done.result


def test_a_candidate_runs_from_top_n_to_release_readiness_without_a_human_and_stops_at_security_approve(
    tmp_path: Path
) -> None:
    h = make_harness(tmp_path)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "alpha-one", "charlie"))
    seen: list[str] = []
    verify_sha: dict[str, str] = {}

    def promote(task):
        seen.append(task["stage"])
        report = promotion_report(task["stage"], task["task"], verifier_sha=verify_sha.get("sha"))
        if task["stage"] == "verify":
            verify_sha["sha"] = report["sha256"]
        return report

    k = 0
    result = None
    while result is None or result["next"] is not None:
        k += 1
        stage_runs = lane_view(h.lanes, "promotion").tasks
        kind = stage_runs[0]["kind"] if stage_runs else "work"
        run, runner = ("promotion-reviewer", f"rev-{k}") if kind == "review" else ("promotion", f"run-{k}")
        result = _work(h, "promotion", run, runner, promote)
    assert seen == ["select", "evidence", "brief", "review", "prototype", "verify", "decide"]
    assert result["candidate"] == "alpha-one" and result["outcome"] == "go"
    go = result["decision"]

    stages: list[str] = []

    def mature(task):
        stages.append(task["stage"])
        return maturation_report(task["stage"], task["task"], go=go)

    result = None
    while result is None or result["next"] is not None:
        k += 1
        tasks = lane_view(h.lanes, "maturation").tasks
        kind = tasks[0]["kind"] if tasks else "work"
        run, runner = ("maturation-reviewer", f"rev-{k}") if kind == "review" else ("maturation", f"run-{k}")
        result = _work(h, "maturation", run, runner, mature)
    assert stages == ["intake", "boundary", "slice", "verify", "review", "release"]
    assert result["outcome"] == "release-ready"
    view = lane_view(h.lanes, "maturation")
    assert view.completed == 1 and view.wip == [] and view.history[-1]["outcome"] == "release-ready"

    # Private release-ready is not public release: publishing stops at security-approve until the owner approves.
    with writes_nothing(h), pytest.raises(PipelineError) as refused:
        h.lanes.record_external_action(approval="publish-1", candidate="alpha-one", action="public-publish",
                                       runner="run-pub")
    assert refused.value.code == "APPROVAL_REQUIRED"
    h.lanes.request_approval(approval="publish-1", candidate="alpha-one", action="public-publish",
                             requested_by="run-pub", reason="ship the private build to the store")
    with writes_nothing(h), pytest.raises(PipelineError) as pending:
        h.lanes.record_external_action(approval="publish-1", candidate="alpha-one", action="public-publish",
                                       runner="run-pub")
    assert pending.value.code == "APPROVAL_REQUIRED"
    h.lanes.decide_approval(approval="publish-1", decided_by="owner", approved=True)
    used = h.lanes.record_external_action(approval="publish-1", candidate="alpha-one", action="public-publish",
                                          runner="run-pub")
    assert used.result["approval"]["usedBy"] == "run-pub"
    with writes_nothing(h), pytest.raises(PipelineError) as again:  # an approval record licenses one action
        h.lanes.record_external_action(approval="publish-1", candidate="alpha-one", action="public-publish",
                                       runner="run-pub-2")
    assert again.value.code == "CONFLICT"
    h.lanes.request_approval(approval="pay-1", candidate="alpha-one", action="payment-account",
                             requested_by="run-pay", reason="enable in-app purchases")
    h.lanes.decide_approval(approval="pay-1", decided_by="owner", approved=False)
    with writes_nothing(h), pytest.raises(PipelineError) as refused_by_owner:
        h.lanes.record_external_action(approval="pay-1", candidate="alpha-one", action="payment-account",
                                       runner="run-pay")
    assert refused_by_owner.value.code == "APPROVAL_REQUIRED"
    h.lanes.journal.verify("pipeline/lanes")
