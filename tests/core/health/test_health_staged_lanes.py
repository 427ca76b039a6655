"""Health's rules over the staged lanes' state, as pure functions of a real pipeline document (driven through
the engine on a real SQLite journal) and one clock reading."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from factory_schedule.core import LifecycleSchedule, ManualClock
from factory_schedule.core.health import HealthFacts, judge
from factory_schedule.core.owner_commission import record_commission
from factory_schedule.core.pipeline import PipelineLanes
from factory_schedule.store import open_journal
from tests.core.pipeline.pipeline_support import (
    START,
    Harness,
    Runs,
    claim_next,
    commission,
    drive_maturation,
    drive_promotion,
    make_harness,
    promotion_report,
    top_n,
)

DAY = timedelta(days=1)


def findings(state, now, kinds=None, stall_after=DAY):
    report = judge(HealthFacts(now=now, host="h", pipeline=state, stall_after=stall_after))
    return [f for f in report.findings if kinds is None or f.kind in kinds]


def _now(h):
    return h.clock.now()


def test_a_corrupt_pipeline_state_is_an_error_finding_never_a_failed_check():
    report = judge(HealthFacts(now=datetime(2026, 12, 1, tzinfo=UTC), host="h",
                               pipeline_problem=("CORRUPT", "stored pipeline: promotion.wip: bad")))
    [finding] = [f for f in report.findings if f.kind == "pipeline-unreadable"]
    assert finding.severity == "error" and "promotion.wip: bad" in finding.message
    assert not report.could_not_check


def test_a_revision_counter_at_its_cap_warns_naming_lane_candidate_counter_value_and_cap(tmp_path):
    h = make_harness(tmp_path, maxRevisions=1)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    runs = Runs()
    drive_promotion(h, runs, until="review")
    assert not findings(h.lanes.state(), _now(h), {"lane-counter-at-cap"})
    runner, task = claim_next(h, "promotion", runs)
    h.lanes.review(lane="promotion", task=task["task"], runner=runner,
                   report=promotion_report("review", task["task"], review="reject"))
    [finding] = findings(h.lanes.state(), _now(h), {"lane-counter-at-cap"})
    assert finding.severity == "warning"
    assert finding.evidence == {"lane": "promotion", "candidate": "bravo", "stage": "brief",
                                "counter": "revisions", "value": 1, "cap": 1}


def test_a_full_wip_is_information_not_a_warning(tmp_path):
    h = make_harness(tmp_path)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    drive_promotion(h, Runs(), until="review")
    [finding] = findings(h.lanes.state(), _now(h), {"lane-wip-full"})
    assert finding.severity == "info" and finding.evidence["lane"] == "promotion"


def test_pending_work_unclaimed_past_the_threshold_stalls_its_lane(tmp_path):
    h = make_harness(tmp_path)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    drive_promotion(h, Runs(), until="review")
    state, now = h.lanes.state(), _now(h)
    assert not findings(state, now + DAY, {"lane-stalled"})
    [finding] = findings(state, now + DAY + timedelta(minutes=1), {"lane-stalled"})
    assert finding.evidence["lane"] == "promotion" and finding.evidence["stage"] == "review"
    assert finding.severity == "warning"


def test_eligible_top_n_with_free_wip_and_nothing_started_stalls_promotion(tmp_path):
    h = make_harness(tmp_path)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    state, now = h.lanes.state(), _now(h)
    assert not findings(state, now + timedelta(hours=23), {"lane-stalled"})
    [finding] = findings(state, now + timedelta(hours=25), {"lane-stalled"})
    assert finding.evidence["lane"] == "promotion" and "eligible Top-N candidates" in finding.message


def test_below_the_threshold_promotion_is_waiting_not_stalled(tmp_path):
    h = make_harness(tmp_path)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo"))
    state = h.lanes.state()
    assert len(state.candidates) == 1 < state.settings.threshold
    assert not findings(state, _now(h) + 30 * DAY, {"lane-stalled"})


def test_a_waiting_security_approve_request_and_an_escalation_are_the_owners_findings(tmp_path):
    h = make_harness(tmp_path)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    runs = Runs()
    go = drive_promotion(h, runs)["decision"]
    drive_maturation(h, runs, go=go)
    h.lanes.request_approval(approval="publish-1", candidate="bravo", action="public-publish",
                             requested_by="run-pub", reason="ship it")
    [finding] = findings(h.lanes.state(), _now(h), {"security-approve-waiting"})
    assert finding.evidence["approval"] == "publish-1" and finding.evidence["action"] == "public-publish"
    h.lanes.decide_approval(approval="publish-1", decided_by="owner", approved=True)
    assert not findings(h.lanes.state(), _now(h), {"security-approve-waiting"})


def test_an_escalation_after_the_reject_cap_waits_for_the_owner(tmp_path):
    h = make_harness(tmp_path, maxRevisions=1)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    runs = Runs()
    drive_promotion(h, runs, until="review")
    for _ in range(2):
        runner, task = claim_next(h, "promotion", runs)
        h.lanes.review(lane="promotion", task=task["task"], runner=runner,
                       report=promotion_report("review", task["task"], review="reject"))
        if h.lanes.lane_view("promotion").tasks[0]["stage"] == "brief":
            runner, task = claim_next(h, "promotion", runs)
            h.lanes.report(lane="promotion", task=task["task"], runner=runner,
                           report=promotion_report("brief", task["task"]))
    [finding] = findings(h.lanes.state(), _now(h), {"escalation-waiting"})
    assert finding.evidence["candidate"] == "bravo" and finding.severity == "warning"


def settings_findings(h):
    """Health's findings on the settings, judged over the schedule's view and the lanes' state as they read now."""
    view = LifecycleSchedule(h.lanes.journal, h.clock).read()
    report = judge(HealthFacts(now=_now(h), host="h", view=view, pipeline=h.lanes.state()))
    return [f for f in report.findings if f.kind == "pipeline-settings-behind"]


def test_a_commission_whose_staged_lane_settings_were_never_recorded_is_an_error_naming_its_revision(tmp_path):
    h = make_harness(tmp_path)
    schedule = LifecycleSchedule(h.lanes.journal, h.clock)
    schedule.record_commission(commission(revision=2, stallHours=48))  # the revision alone: its settings' command lost
    [finding] = settings_findings(h)
    assert finding.severity == "error"
    assert finding.evidence == {"revision": 2, "held_revision": 1}
    assert "revision 2" in finding.message and "revision 1's" in finding.message
    assert "record-commission" in finding.message and ".schedule.commission" in finding.message
    assert "cannot be recorded now" not in finding.message


def test_recording_the_revision_again_replays_it_records_its_settings_and_ends_the_finding(tmp_path):
    h = make_harness(tmp_path)
    schedule = LifecycleSchedule(h.lanes.journal, h.clock)
    document = commission(revision=2, stallHours=48)
    schedule.record_commission(document)
    assert settings_findings(h)
    recorded = record_commission(schedule, document)  # what the finding tells the owner to do
    assert recorded.commission.replayed and recorded.settings_revision == 2
    assert settings_findings(h) == []


def test_lanes_holding_no_settings_under_a_commission_that_carries_them_are_reported(tmp_path):
    journal = open_journal(f"sqlite:///{tmp_path / 'journal.db'}")
    clock = ManualClock(START)
    LifecycleSchedule(journal, clock).record_commission(commission())
    h = Harness(journal.url, clock, PipelineLanes(journal, clock))
    [finding] = settings_findings(h)
    assert finding.evidence == {"revision": 1, "held_revision": None}
    assert "hold none" in finding.message


def test_lanes_holding_the_very_settings_asked_for_are_not_reported_though_their_revision_is_behind(tmp_path):
    """The dashboard's proposed revision copies the settings in force: if its settings' command is lost, the lanes
    still run exactly what was asked."""
    h = make_harness(tmp_path)
    LifecycleSchedule(h.lanes.journal, h.clock).record_commission(commission(revision=2))
    assert h.lanes.state().settings_revision == 1
    assert settings_findings(h) == []


def test_settings_that_the_lanes_rule_refuses_now_are_said_to_wait_with_the_rules_words(tmp_path):
    """Revision 2 lowers promotion's WIP below the two candidates it took under revision 1's settings: recording
    revision 2 again is refused until one ends, and the finding says so rather than promise a repair that fails."""
    h = make_harness(tmp_path, promotionWip=2, threshold=1)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie", "delta"))
    for runner in ("run-1", "run-2"):
        h.tick()
        h.lanes.claim(lane="promotion", run="promotion", runner=runner)
    LifecycleSchedule(h.lanes.journal, h.clock).record_commission(commission(revision=2, promotionWip=1, threshold=1))
    [finding] = settings_findings(h)
    assert "cannot be recorded now (INVALID: pipeline.promotionWip: 1 is below the 2 candidates" in finding.message


def test_a_commission_without_pipeline_settings_asks_nothing_of_the_staged_lanes(tmp_path):
    h = make_harness(tmp_path)
    schedule = LifecycleSchedule(h.lanes.journal, h.clock)
    document = commission(revision=2)
    del document["pipeline"]  # a revision may leave the lanes' settings as the last one recorded them
    schedule.record_commission(document)
    assert settings_findings(h) == []
