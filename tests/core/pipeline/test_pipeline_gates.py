"""The gates nobody bypasses: independent review, the frozen exit verifier, the durable GO, the frozen MVP
boundary, caps, owner escalation and the security-approve boundary; and the lanes' selection rules."""

from __future__ import annotations

import json
import sqlite3

import pytest

from factory_schedule.core import LifecycleSchedule, parse_commission
from factory_schedule.core.commission import commission_digest
from factory_schedule.core.pipeline import PipelineError, PipelineLanes, claims, transitions
from factory_schedule.core.pipeline import rules as pipeline_rules
from factory_schedule.store import canonical_json, open_journal
from tests.core.pipeline.pipeline_support import (
    BOUNDARY,
    CRITERIA,
    Runs,
    adopt,
    commission,
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


def _refused(h, code: str, call, **kwargs) -> PipelineError:
    with writes_nothing(h), pytest.raises(PipelineError) as refused:
        call(**kwargs)
    assert refused.value.code == code, refused.value
    return refused.value


def _claim(h, lane: str, run: str, runner: str) -> dict:
    h.tick()
    claimed = h.lanes.claim(lane=lane, run=run, runner=runner)
    assert getattr(claimed, "kind", "") != "idle", claimed
    return claimed.result


def _promoted_to(tmp_path, stage: str, **settings):
    h = make_harness(tmp_path, **settings)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "alpha-one", "charlie"))
    runs = Runs()
    pending = drive_promotion(h, runs, until=stage)
    return h, runs, pending


# -- independent review ---------------------------------------------------------------------------


def test_a_review_task_is_claimed_only_by_the_lanes_reviewer_run_and_never_by_the_producer(tmp_path):
    h, _runs, pending = _promoted_to(tmp_path, "review")
    assert pending["kind"] == "review"
    idle = h.lanes.claim(lane="promotion", run="promotion", runner="run-x")
    assert idle.kind == "idle" and idle.reason == "awaiting-review"
    _refused(h, "WRONG_RUN", h.lanes.claim, lane="promotion", run="maturation-reviewer", runner="rev-x")
    producer = pending["subject"]["runner"]
    # The producer's token, which already claimed on this lane as its scheduler, is answered self-review
    # (nothing written), never a second task and never a bare CONFLICT.
    with writes_nothing(h):
        again = h.lanes.claim(lane="promotion", run="promotion-reviewer", runner=producer)
    assert again.kind == "idle" and again.reason == "self-review"
    # Nor can the producer report on the review task another run claimed.
    task = _claim(h, "promotion", "promotion-reviewer", "rev-x")
    _refused(h, "NOT_OWNER", h.lanes.report, lane="promotion", task=task["task"], runner=producer,
             report=promotion_report("review", task["task"]))


def test_the_rules_refuse_a_review_by_a_runner_that_produced_an_artifact_of_the_work(tmp_path):
    h, _runs, pending = _promoted_to(tmp_path, "review")
    state = h.lanes.state()
    producer = pending["subject"]["runner"]
    idle = claims.claim(state, "promotion", "promotion-reviewer", producer, h.clock.now())
    assert isinstance(idle, pipeline_rules.Idle) and idle.reason == "self-review"
    claimed = claims.claim(state, "promotion", "promotion-reviewer", "rev-9", h.clock.now()).state
    forged = claimed.model_copy(update={"promotion": claimed.promotion.model_copy(update={"tasks": tuple(
        t.model_copy(update={"claimed_by": producer}) for t in claimed.promotion.tasks)})})
    with pytest.raises(PipelineError) as refused:
        transitions.complete(forged, "promotion", pending["task"], producer,
                                promotion_report("review", pending["task"]), h.clock.now())
    assert refused.value.code == "SELF_REVIEW"


def test_a_reject_loops_revise_and_re_review_within_the_cap_then_escalates_to_the_owner(tmp_path):
    h, runs, _pending = _promoted_to(tmp_path, "review", maxRevisions=2)
    for round_ in range(1, 4):
        task = _claim(h, "promotion", "promotion-reviewer", runs.token("rev"))
        assert task["stage"] == "review"
        done = h.lanes.report(lane="promotion", task=task["task"], runner=f"rev-{runs.k}",
                              report=promotion_report("review", task["task"], review="reject")).result
        if round_ <= 2:
            assert done["next"]["stage"] == "brief"
            brief = _claim(h, "promotion", "promotion", runs.token("run"))
            h.lanes.report(lane="promotion", task=brief["task"], runner=f"run-{runs.k}",
                           report=promotion_report("brief", brief["task"]))
        else:
            assert done["next"]["stage"] == "escalation"
    view = h.lanes.lane_view("promotion")
    assert view.wip[0]["revisions"] == 2 and view.tasks[0]["kind"] == "owner"
    assert h.lanes.claim(lane="promotion", run="promotion", runner="run-y").reason == "awaiting-owner"
    escalation = view.tasks[0]["task"]
    _refused(h, "WRONG_RUN", h.lanes.report, lane="promotion", task=escalation, runner="run-y",
             report=promotion_report("brief", escalation))
    granted = h.lanes.decide_escalation(lane="promotion", task=escalation, decided_by="owner", decision="revise",
                                        reason="one more round with the new evidence")
    assert granted.result["next"]["stage"] == "brief"
    event = h.events()[-1]
    assert (event.data["ownerDecision"], event.data["decision"], event.data["by"]) == ("revise", None, "owner")
    assert h.lanes.lane_view("promotion").wip[0]["grants"] == 1


def test_the_owner_parks_an_escalated_candidate_and_it_leaves_the_lane(tmp_path):
    h, runs, _pending = _promoted_to(tmp_path, "review", maxRevisions=1)
    for _ in range(2):
        task = _claim(h, "promotion", "promotion-reviewer", runs.token("rev"))
        h.lanes.report(lane="promotion", task=task["task"], runner=f"rev-{runs.k}",
                       report=promotion_report("review", task["task"], review="reject"))
        if h.lanes.lane_view("promotion").tasks[0]["stage"] == "brief":
            brief = _claim(h, "promotion", "promotion", runs.token("run"))
            h.lanes.report(lane="promotion", task=brief["task"], runner=f"run-{runs.k}",
                           report=promotion_report("brief", brief["task"]))
    escalation = h.lanes.lane_view("promotion").tasks[0]["task"]
    parked = h.lanes.decide_escalation(lane="promotion", task=escalation, decided_by="owner", decision="park",
                                       reason="not worth another round")
    assert parked.result["outcome"] == "park"
    view = h.lanes.lane_view("promotion")
    assert view.wip == [] and view.parked == 1 and view.history[-1]["outcome"] == "park"


# -- GO only with the frozen exit verifier -------------------------------------------------------------


def test_go_needs_the_frozen_verifiers_artifact_and_build_success_alone_is_not_go(tmp_path):
    h, runs, _pending = _promoted_to(tmp_path, "decide")
    verified = h.lanes.lane_view("promotion").wip[0]["verified"]["sha256"]
    task = _claim(h, "promotion", "promotion-reviewer", runs.token("rev"))
    runner = f"rev-{runs.k}"
    bad = promotion_report("decide", task["task"], verifier_sha=sha("a build log that says success"))
    _refused(h, "VERIFIER_REQUIRED", h.lanes.report, lane="promotion", task=task["task"], runner=runner, report=bad)
    changed = promotion_report("decide", task["task"], verifier_sha=verified, criteria=sha("softer criteria"))
    _refused(h, "CRITERIA_CHANGED", h.lanes.report, lane="promotion", task=task["task"], runner=runner,
             report=changed)
    go = h.lanes.report(lane="promotion", task=task["task"], runner=runner,
                        report=promotion_report("decide", task["task"], verifier_sha=verified))
    assert go.result["outcome"] == "go"


def test_a_failed_verification_can_pivot_or_park_but_never_go(tmp_path):
    h = make_harness(tmp_path)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "alpha-one"))
    runs = Runs()
    drive_promotion(h, runs, until="verify")
    task = _claim(h, "promotion", "promotion", runs.token("run"))
    h.lanes.report(lane="promotion", task=task["task"], runner=f"run-{runs.k}",
                   report=promotion_report("verify", task["task"], passed=False))
    verified = h.lanes.lane_view("promotion").wip[0]["verified"]["sha256"]
    decide = _claim(h, "promotion", "promotion-reviewer", runs.token("rev"))
    _refused(h, "VERIFIER_REQUIRED", h.lanes.report, lane="promotion", task=decide["task"], runner=f"rev-{runs.k}",
             report=promotion_report("decide", decide["task"], verifier_sha=verified))
    pivot = h.lanes.report(lane="promotion", task=decide["task"], runner=f"rev-{runs.k}",
                           report=promotion_report("decide", decide["task"], verifier_sha=verified,
                                                   verdict="PIVOT"))
    assert pivot.result["outcome"] == "pivot"
    assert h.lanes.claim(lane="maturation", run="maturation", runner="m-1").reason == "no-go"


def test_the_verifier_must_run_against_the_criteria_frozen_at_the_gate(tmp_path):
    h, runs, _pending = _promoted_to(tmp_path, "verify")
    task = _claim(h, "promotion", "promotion", runs.token("run"))
    changed = promotion_report("verify", task["task"], criteria=sha("changed criteria"))
    _refused(h, "CRITERIA_CHANGED", h.lanes.report, lane="promotion", task=task["task"], runner=f"run-{runs.k}",
             report=changed)
    other_verifier = {**promotion_report("verify", task["task"]), "verifier": "a-kinder-verifier"}
    _refused(h, "CRITERIA_CHANGED", h.lanes.report, lane="promotion", task=task["task"], runner=f"run-{runs.k}",
             report=other_verifier)


def test_a_review_against_other_criteria_than_the_briefs_is_refused(tmp_path):
    h, runs, _pending = _promoted_to(tmp_path, "review")
    task = _claim(h, "promotion", "promotion-reviewer", runs.token("rev"))
    _refused(h, "CRITERIA_CHANGED", h.lanes.report, lane="promotion", task=task["task"], runner=f"rev-{runs.k}",
             report=promotion_report("review", task["task"], criteria=sha("other")))


def test_a_failed_build_retries_within_the_cap_then_escalates(tmp_path):
    h, runs, _pending = _promoted_to(tmp_path, "prototype", maxRetries=1)
    stages = []
    for _ in range(2):
        task = _claim(h, "promotion", "promotion", runs.token("run"))
        done = h.lanes.report(lane="promotion", task=task["task"], runner=f"run-{runs.k}",
                              report=promotion_report("prototype", task["task"], build="failure"))
        stages.append(done.result["next"]["stage"])
    assert stages == ["prototype", "escalation"]


# -- maturation -----------------------------------------------------------------------------------


def _matured_to(tmp_path, stage: str, **settings):
    h = make_harness(tmp_path, **settings)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "alpha-one"))
    runs = Runs()
    go = drive_promotion(h, runs)
    assert go["outcome"] == "go"
    pending = drive_maturation(h, runs, until=stage, go=go["decision"])
    return h, runs, pending


def test_maturation_starts_only_from_a_durable_go_decision(tmp_path):
    h = make_harness(tmp_path)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "alpha-one"))
    assert h.lanes.claim(lane="maturation", run="maturation", runner="m-1").reason == "no-go"
    runs = Runs()
    drive_promotion(h, runs)
    task = _claim(h, "maturation", "maturation", "m-2")
    assert (task["stage"], task["candidate"], task["activated"]) == ("intake", "alpha-one", True)
    wrong = maturation_report("intake", task["task"], go=7)
    _refused(h, "CONTRACT", h.lanes.report, lane="maturation", task=task["task"], runner="m-2", report=wrong)


def test_the_mvp_boundary_is_frozen_and_every_slice_answers_to_its_metrics(tmp_path):
    h, runs, _pending = _matured_to(tmp_path, "slice")
    task = _claim(h, "maturation", "maturation", runs.token("run"))
    runner = f"run-{runs.k}"
    off_boundary = {**maturation_report("slice", task["task"]),
                    "successMetrics": [{"name": "something-else", "target": "x"}]}
    _refused(h, "CONTRACT", h.lanes.report, lane="maturation", task=task["task"], runner=runner, report=off_boundary)
    no_metrics = {**maturation_report("slice", task["task"]), "successMetrics": []}
    _refused(h, "CONTRACT", h.lanes.report, lane="maturation", task=task["task"], runner=runner, report=no_metrics)
    h.lanes.report(lane="maturation", task=task["task"], runner=runner, report=maturation_report("slice", task["task"]))
    verify = _claim(h, "maturation", "maturation", runs.token("run"))
    h.lanes.report(lane="maturation", task=verify["task"], runner=f"run-{runs.k}",
                   report=maturation_report("verify", verify["task"]))
    review = _claim(h, "maturation", "maturation-reviewer", runs.token("rev"))
    moved = maturation_report("review", review["task"], boundary=sha("a bigger MVP"))
    _refused(h, "CRITERIA_CHANGED", h.lanes.report, lane="maturation", task=review["task"], runner=f"rev-{runs.k}",
             report=moved)
    assert h.lanes.lane_view("maturation").wip[0]["boundary"] == BOUNDARY


def test_slices_are_capped_and_the_reviewer_decides_continue_revise_or_complete(tmp_path):
    h, runs, _pending = _matured_to(tmp_path, "slice", maxSlices=2, maxRevisions=1)
    decisions = iter(["continue", "revise", "revise", "continue"])
    slice_n = 1
    escalated = False
    while not escalated:
        for stage in ("slice" if h.lanes.lane_view("maturation").tasks[0]["stage"] == "slice" else "iterate",
                      "verify"):
            task = _claim(h, "maturation", "maturation", runs.token("run"))
            assert task["stage"] == stage
            h.lanes.report(lane="maturation", task=task["task"], runner=f"run-{runs.k}",
                           report=maturation_report(stage, task["task"], slice_n=slice_n))
        review = _claim(h, "maturation", "maturation-reviewer", runs.token("rev"))
        decision = next(decisions)
        report = maturation_report("review", review["task"], slice_n=slice_n, decision=decision)
        if decision == "continue" and slice_n == 2:
            _refused(h, "CAP_REACHED", h.lanes.report, lane="maturation", task=review["task"],
                     runner=f"rev-{runs.k}", report=report)
            break
        done = h.lanes.report(lane="maturation", task=review["task"], runner=f"rev-{runs.k}", report=report).result
        if decision == "continue":
            slice_n += 1
        escalated = done["next"]["stage"] == "escalation"
    assert escalated and h.lanes.lane_view("maturation").wip[0]["slices"] == 2


# -- selection, threshold, WIP, cooldown, currentWip ------------------------------------------------------


def test_promotion_activates_only_at_the_portfolio_threshold(tmp_path):
    h = make_harness(tmp_path, threshold=3)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "alpha-one"))
    idle = h.lanes.claim(lane="promotion", run="promotion", runner="run-1")
    assert idle.reason == "below-threshold"
    h.lanes.record_top_n(week="2026-W51", candidates=top_n("bravo", "alpha-one", "charlie"))
    task = _claim(h, "promotion", "promotion", "run-2")
    assert (task["stage"], task["activated"]) == ("select", True)


def test_selection_takes_the_oldest_gate_then_the_candidate_id_and_wip_is_never_exceeded(tmp_path):
    h = make_harness(tmp_path, threshold=1)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("zulu"))
    h.lanes.record_top_n(week="2026-W51", candidates=top_n("bravo", "zulu", "alpha-one"))
    first = _claim(h, "promotion", "promotion", "run-1")
    assert first["candidate"] == "zulu"  # listed since the first Top-N, though last by ID
    assert h.lanes.claim(lane="promotion", run="promotion", runner="run-2").reason == "claimed"
    h.lanes.report(lane="promotion", task=first["task"], runner="run-1", report=promotion_report("select", 1))
    assert h.lanes.claim(lane="promotion", run="promotion", runner="run-3").result["candidate"] == "zulu"
    assert len(h.lanes.lane_view("promotion").wip) == 1


def test_a_later_top_n_never_evicts_the_current_work_and_a_cooldown_follows_the_end(tmp_path):
    h = make_harness(tmp_path, threshold=1, cooldownHours=24)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("alpha-one", "bravo"))
    runs = Runs()
    drive_promotion(h, runs, until="prototype")
    h.lanes.record_top_n(week="2026-W51", candidates=top_n("charlie"))
    view = h.lanes.lane_view("promotion")
    assert view.wip[0]["candidate"] == "alpha-one" and view.eligible == ["charlie"]
    candidates = {c.id: c.listed for c in h.lanes.state().candidates}
    assert candidates == {"alpha-one": False, "charlie": True}
    drive_promotion(h, runs)
    assert {c.id for c in h.lanes.state().candidates} == {"charlie"}
    idle = h.lanes.claim(lane="promotion", run="promotion", runner="run-late")
    assert idle.reason == "cooldown"
    h.clock.advance(hours=24)
    assert _claim(h, "promotion", "promotion", "run-later")["candidate"] == "charlie"


def test_a_report_carrying_an_external_action_needs_the_owners_approval(tmp_path):
    h, runs, _pending = _promoted_to(tmp_path, "evidence")
    task = _claim(h, "promotion", "promotion", runs.token("run"))
    report = {**promotion_report("evidence", task["task"]), "externalActions": ["external-write"]}
    _refused(h, "APPROVAL_REQUIRED", h.lanes.report, lane="promotion", task=task["task"], runner=f"run-{runs.k}",
             report=report)
    h.lanes.request_approval(approval="write-1", candidate="alpha-one", action="external-write",
                             requested_by=f"run-{runs.k}", reason="post the survey")
    h.lanes.decide_approval(approval="write-1", decided_by="owner", approved=True)
    h.tick()
    done = h.lanes.report(lane="promotion", task=task["task"], runner=f"run-{runs.k}", report=report)
    assert done.result["next"]["stage"] == "brief"
    assert h.lanes.state().approvals[0].used_by == f"run-{runs.k}"


# -- commands, replays, stored state ---------------------------------------------------------------


def test_an_identical_retry_replays_and_another_request_under_the_same_id_conflicts(tmp_path):
    h, _runs, _pending = _promoted_to(tmp_path, "evidence")
    task = _claim(h, "promotion", "promotion", "run-a")
    report = promotion_report("evidence", task["task"])
    first = h.lanes.report(lane="promotion", task=task["task"], runner="run-a", report=report)
    with writes_nothing(h):
        again = h.lanes.report(lane="promotion", task=task["task"], runner="run-a", report=report)
        claim_again = h.lanes.claim(lane="promotion", run="promotion", runner="run-a")
    assert again.replayed and again.result == first.result and again.version == first.version
    assert claim_again.replayed and claim_again.result["task"] == task["task"]
    _refused(h, "CONFLICT", h.lanes.report, lane="promotion", task=task["task"], runner="run-a",
             report={**report, "summary": "a different story"})


def test_a_commission_without_pipeline_settings_stays_valid_and_keeps_its_digest(tmp_path):
    plain = commission()
    del plain["pipeline"]
    assert parse_commission(plain).pipeline is None
    with_defaults = {**plain, "pipeline": {}}
    assert commission_digest(plain) != commission_digest(with_defaults)
    assert commission_digest(plain) == commission_digest(parse_commission(plain))
    h = make_harness(tmp_path)
    _refused(h, "INVALID", h.lanes.record_settings, commission=plain)
    _refused(h, "CONFLICT", h.lanes.record_settings, commission=commission(revision=1, threshold=5))
    schedule = LifecycleSchedule(h.lanes.journal, h.clock)
    schedule.record_commission(commission(revision=2))
    adopt(h.lanes, commission(revision=3))
    _refused(h, "REVISION", h.lanes.record_settings, commission=commission(revision=2))
    with pytest.raises(Exception) as bad:
        parse_commission({**plain, "pipeline": {"promotionWip": 9}})
    assert "pipeline.promotionWip" in str(bad.value)


def test_the_settings_are_the_owners_and_a_lower_wip_waits_for_current_work(tmp_path):
    h = make_harness(tmp_path, threshold=1, promotionWip=2)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("alpha-one", "bravo"))
    _claim(h, "promotion", "promotion", "run-1")
    _claim(h, "promotion", "promotion", "run-2")
    lower = commission(revision=2, threshold=1, promotionWip=1)
    LifecycleSchedule(h.lanes.journal, h.clock).record_commission(lower)
    _refused(h, "INVALID", h.lanes.record_settings, commission=lower)
    assert len(h.lanes.lane_view("promotion").wip) == 2


def _tamper_stage(doc):
    doc["promotion"]["wip"][0]["stage"] = "decide"


def _tamper_second_task(doc):
    doc["promotion"]["tasks"].append({**doc["promotion"]["tasks"][0], "n": 99})


def _tamper_unknown_key(doc):
    doc["promotion"]["wip"][0]["shortcut"] = True


def _tamper_revisions(doc):
    doc["promotion"]["wip"][0]["revisions"] = 50


def _tamper_wip(doc):
    doc["promotion"]["wip"].append({**doc["promotion"]["wip"][0], "candidate": "bravo"})


def _tamper_maturation_without_go(doc):
    work = {**doc["promotion"]["wip"][0], "stage": "intake", "decision": 1}
    for key in ("criteria", "verifier", "artifacts"):
        work.pop(key, None)
    doc["maturation"]["wip"] = [work]
    doc["maturation"]["tasks"] = [{**doc["promotion"]["tasks"][0], "lane": "maturation", "stage": "intake",
                                   "kind": "work", "n": 1}]


def _tamper_count_as_text(doc):
    doc["nextTask"] = str(doc["nextTask"])


@pytest.mark.parametrize("process", ["fresh", "warm"])
@pytest.mark.parametrize("form", [json.dumps, canonical_json], ids=["spaced", "canonical"])
@pytest.mark.parametrize("forged", [False, True], ids=["hand-edited", "resealed-by-a-forger"])
@pytest.mark.parametrize("tamper", [_tamper_stage, _tamper_second_task, _tamper_unknown_key, _tamper_revisions,
                                    _tamper_wip, _tamper_maturation_without_go, _tamper_count_as_text])
def test_stored_state_that_breaks_a_rule_is_corrupt_on_every_read_and_command_and_never_written_over(
        tmp_path, tamper, forged, form, process):
    """A hand edit breaks the journal's seal; a forger who also reseals the head meets the lanes' own checks.
    Either way every read and command answers the pipeline's CORRUPT, never a raw journal error: in a fresh
    process, and in the one that wrote the state before (which has every other member's bytes checked), the
    forged text in canonical form (read member by member) or not."""
    h, _runs, _pending = _promoted_to(tmp_path, "review")
    path = h.url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as db:
        state = stored_state(db, "pipeline/lanes")
        document = json.loads(state)
        tamper(document)
        put_whole_state(db, "pipeline/lanes", form(document))
        if forged:
            reseal_head(db, "pipeline/lanes")
    lanes = h.lanes if process == "warm" else PipelineLanes(open_journal(h.url), h.clock)
    for call in (lanes.state, lambda: lanes.lane_view("promotion"),
                 lambda: lanes.claim(lane="promotion", run="promotion-reviewer", runner="rev-z"),
                 lambda: lanes.record_top_n(week="2026-W51", candidates=top_n("delta"))):
        with writes_nothing(h), pytest.raises(PipelineError) as refused:
            call()
        assert refused.value.code == "CORRUPT"


def test_a_clock_that_reads_earlier_than_the_last_transition_is_refused(tmp_path):
    h = make_harness(tmp_path)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("alpha-one", "bravo"))
    h.clock.advance(minutes=-5)
    _refused(h, "INVALID", h.lanes.claim, lane="promotion", run="promotion", runner="run-1")
    assert CRITERIA and BOUNDARY  # the fixtures the reports freeze
