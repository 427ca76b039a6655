"""The owner's granted round is one more round of the escalated stage, never of another counter (the repair
cap is `maxRevisions` + grants): a grant that revived a rejected brief must not give the prototype an extra
failed build, and a grant for slice 1's revisions must not give slice 2 (or its interrupted revision starts) a
round past `maxRevisions` without the owner. Real journal files, no mocks."""

from __future__ import annotations

from tests.core.pipeline.pipeline_support import (
    Runs,
    claim_next,
    drive_promotion,
    make_harness,
    maturation_report,
    promotion_report,
    top_n,
)


def _report(h, lane, runner, task, report):
    h.tick()
    return h.lanes.report(lane=lane, task=task["task"], runner=runner, report=report).result


def _owner_revises(h, lane):
    [owner] = [t for t in h.lanes.lane_view(lane).tasks if t["kind"] == "owner"]
    h.tick()
    h.lanes.decide_escalation(lane=lane, task=owner["task"], decided_by="owner", decision="revise", reason="once more")


def test_a_grant_for_the_brief_gives_the_prototype_no_extra_failed_build(tmp_path):
    h = make_harness(tmp_path, maxRevisions=1, maxRetries=1)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    runs = Runs()
    drive_promotion(h, runs, until="review")
    for _ in range(2):  # reject, revise, reject again: past maxRevisions 1, to the owner
        runner, review = claim_next(h, "promotion", runs)
        _report(h, "promotion", runner, review, promotion_report("review", review["task"], review="reject"))
        if h.lanes.lane_view("promotion").wip[0]["stage"] == "escalation":
            break
        runner, brief = claim_next(h, "promotion", runs)
        _report(h, "promotion", runner, brief, promotion_report("brief", brief["task"]))
    _owner_revises(h, "promotion")
    drive_promotion(h, runs, until="prototype")
    for failed in range(1, 3):
        runner, build = claim_next(h, "promotion", runs)
        done = _report(h, "promotion", runner, build, promotion_report("prototype", build["task"], build="failure"))
        if failed == 1:
            assert done["next"]["stage"] == "prototype", "maxRetries 1: one retry"
    assert done["next"]["stage"] == "escalation", "the second failed build is past maxRetries 1: the owner decides"


def test_a_grant_for_one_slice_gives_the_next_slice_no_extra_revision(tmp_path):
    h = make_harness(tmp_path, maxRevisions=1)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "alpha-one"))
    runs = Runs()
    drive_promotion(h, runs)

    def review_slice(slice_n: int, decision: str) -> dict:
        while True:  # the slice's work (slice/iterate, verify) up to its review
            runner, task = claim_next(h, "maturation", runs)
            stage = task["stage"]
            report = maturation_report(stage, task["task"], slice_n=slice_n, decision=decision)
            done = _report(h, "maturation", runner, task, report)
            if stage == "review":
                return done

    review_slice(1, "revise")  # round 1 of maxRevisions 1
    assert review_slice(1, "revise")["next"]["stage"] == "escalation"
    _owner_revises(h, "maturation")  # slice 1 gets one more round from the owner
    assert review_slice(1, "continue")["next"]["stage"] == "slice"
    assert review_slice(2, "revise")["next"]["stage"] == "iterate"  # slice 2's one round
    assert review_slice(2, "revise")["next"]["stage"] == "escalation", (
        "slice 2's second revise is past maxRevisions 1: the owner's grant was for slice 1")
