"""Health's rules as pure functions: facts in, findings out, with no journal, process or file behind them."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pendulum
from hypothesis import given
from hypothesis import strategies as st

from factory_schedule.core import launch_intervals
from factory_schedule.core.health import (
    FINDINGS,
    HEALTHY,
    HealthFacts,
    LaunchAgentFact,
    LeaseFact,
    judge,
    nights_to_check,
)
from factory_schedule.core.results import ScheduleView
from factory_schedule.core.schedule_document import AccountState, LaneState, LedgerWeek, Occurrence
from factory_schedule.store.leases import heartbeat_from_future

NOW = pendulum.datetime(2026, 12, 7, 3, 0, tz="UTC")
HOST = "this-mac"
OCCURRENCE = "discovery/alpha/basic/2026-12-07"

COMMISSION: dict[str, Any] = {
    "protocol": "sf-schedule-commission/1",
    "revision": 1,
    "zone": "Europe/London",
    "effectiveFrom": "2026-12-07",
    "weeklyTokens": 1_000_000,
    "recordMaxAgeDays": 30,
    "lanes": [
        {"lane": "alpha/basic", "product": "alpha", "rhythm": "basic", "time": "02:00", "closes": "05:00",
         "deadlineMinutes": 45, "tasks": [{"task": "scan", "account": "claude", "maxCalls": 4, "callBound": 1000}]},
    ],
}


def _running(runner: str = "r-1") -> Occurrence:
    return Occurrence.model_validate({
        "id": OCCURRENCE, "lane": "alpha/basic", "key": "2026-12-07", "date": "2026-12-07",
        "slot": "2026-12-07T02:00:00.000Z", "state": "running", "admittedAt": "2026-12-07T02:00:00.000Z",
        "segments": [{"n": 1, "runner": runner, "kind": "admit", "startedAt": "2026-12-07T02:00:00.000Z",
                      "night": "2026-12-07", "deadline": "2026-12-07T02:45:00.000Z"}],
        "transitions": {"admit": 2},
    })


def _view(running: Occurrence | None = None, debited: int = 0, recorded_at: str = "2026-12-06T12:00:00.000Z",
          commission: dict[str, Any] | None = None) -> ScheduleView:
    lanes = []
    if running is not None:
        lanes.append(LaneState.model_validate({
            "lane": "alpha/basic", "since": "2026-12-06T12:00:00.000Z", "open": running.model_dump(by_alias=True),
            "watermark": {"occurrence": running.id, "date": running.date}}))
    record = {"sequence": 1, "signIn": "me", "overage": False, "recordedBy": "owner", "recordedAt": recorded_at}
    return ScheduleView(
        version=3, commission=commission or COMMISSION, lanes=lanes, occurrences=[running] if running else [],
        ledger=[LedgerWeek(week="2026-W50", ceiling=1_000_000, debited=debited)],
        accounts=[AccountState.model_validate({"account": "claude", "record": record}),
                  AccountState(account="chatgpt")],
        revision_recorded_at="2026-12-06T12:00:00.000Z",
    )


def _lease(heartbeat_seconds_ago: float, ttl: float = 60, alive: bool | None = False, runner: str = "r-1",
           worker: bool = False) -> LeaseFact:
    scope = "worker" if worker else f"segment/{OCCURRENCE}/1"
    return LeaseFact(
        scope=scope, owner=runner, ttl_seconds=ttl, heartbeat_at=NOW - timedelta(seconds=heartbeat_seconds_ago),
        info={"pid": 4242, "host": HOST if alive is not None else "elsewhere", "runner": runner},
        segment=None if worker else (OCCURRENCE, 1), worker=worker, process_alive=alive)


def _kinds(facts: HealthFacts) -> list[str]:
    return [finding.kind for finding in judge(facts).findings]


def test_a_journal_with_no_commission_is_never_healthy() -> None:
    report = judge(HealthFacts(now=NOW, host=HOST))
    assert [f.kind for f in report.findings] == ["not-commissioned"]
    assert report.exit_code == FINDINGS and not report.healthy


def test_a_broken_chain_is_an_error_whatever_else_is_fine() -> None:
    report = judge(HealthFacts(now=NOW, host=HOST, view=_view(),
                               chain_problems={"discovery/schedule": "event 3 does not follow 2"}))
    assert report.findings[0].kind == "journal-chain-broken" and report.findings[0].severity == "error"
    assert "event 3 does not follow 2" in report.findings[0].message


def test_a_healthy_schedule_has_no_finding_but_information() -> None:
    report = judge(HealthFacts(now=NOW, host=HOST, view=_view(_running()), leases=(_lease(5, alive=True),)))
    assert report.exit_code == HEALTHY, report.findings


def test_a_dead_runner_carries_the_confirmation_a_reconcile_needs() -> None:
    facts = HealthFacts(now=NOW, host=HOST, view=_view(_running()), leases=(_lease(121),))
    [finding] = judge(facts).findings
    assert finding.kind == "dead-runner" and finding.severity == "error"
    assert finding.evidence["confirmation"]["runner"] == "r-1"
    assert "4242" in finding.evidence["confirmation"]["evidence"]


def test_a_stale_lease_is_judged_by_what_the_shell_could_see_of_its_process() -> None:
    view = _view(_running())
    assert _kinds(HealthFacts(now=NOW, host=HOST, view=view, leases=(_lease(121, alive=True),))) == [
        "stale-lease-live-process"]
    assert _kinds(HealthFacts(now=NOW, host=HOST, view=view, leases=(_lease(121, alive=None),))) == [
        "stale-lease-other-host"]
    ended = _view(None)
    assert _kinds(HealthFacts(now=NOW, host=HOST, view=ended, leases=(_lease(121),))) == ["stale-lease-segment-ended"]


def test_a_running_segment_without_a_lease_is_only_information() -> None:
    report = judge(HealthFacts(now=NOW, host=HOST, view=_view(_running())))
    assert [f.kind for f in report.findings] == ["running-without-lease"] and report.healthy


def test_a_worker_lease_from_the_future_is_reported_and_repairable_once_its_process_is_gone() -> None:
    future = _lease(-9.8e4, worker=True)
    [finding] = judge(HealthFacts(now=NOW, host=HOST, view=_view(), leases=(future,))).findings
    assert finding.kind == "lease-heartbeat-in-future" and finding.repairable
    alive = _lease(-9.8e4, worker=True, alive=True)
    [finding] = judge(HealthFacts(now=NOW, host=HOST, view=_view(), leases=(alive,))).findings
    assert finding.kind == "lease-heartbeat-in-future" and not finding.repairable


@given(ago=st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), ttl=st.floats(min_value=0.5, max_value=3600))
def test_a_lease_is_fresh_stale_or_from_the_future_by_its_heartbeat_alone(ago: float, ttl: float) -> None:
    lease = _lease(ago, ttl=ttl, alive=False, worker=True)
    kinds = _kinds(HealthFacts(now=NOW, host=HOST, view=_view(), leases=(lease,)))
    if lease.heartbeat_at - NOW > timedelta(seconds=ttl):
        assert kinds == ["lease-heartbeat-in-future"]
    elif lease.heartbeat_at + timedelta(seconds=2 * ttl) < NOW:
        assert kinds == ["stale-worker-lease"]
    else:
        assert kinds == []


def test_a_heartbeat_within_one_ttl_ahead_is_a_slow_clock_not_a_future_one() -> None:
    assert not heartbeat_from_future(NOW + timedelta(seconds=60), 60, NOW)
    assert heartbeat_from_future(NOW + timedelta(seconds=61), 60, NOW)


def test_a_night_past_its_slot_and_grace_with_nothing_admitted_is_reported_by_its_state() -> None:
    view = _view()
    nights = nights_to_check(view, NOW, timedelta(minutes=30))
    assert [night.occurrence_id for night in nights][-1] == OCCURRENCE
    facts = HealthFacts(now=NOW, host=HOST, view=view, night_states={OCCURRENCE: "due"})
    assert "lane-not-started" in _kinds(facts)
    assert "lane-not-started" not in _kinds(HealthFacts(now=NOW, host=HOST, view=view,
                                                        night_states={OCCURRENCE: "running"}))


def test_a_week_above_ninety_percent_of_its_ceiling_is_reported() -> None:
    assert "week-near-ceiling" not in _kinds(HealthFacts(now=NOW, host=HOST, view=_view(debited=900_000)))
    assert "week-near-ceiling" in _kinds(HealthFacts(now=NOW, host=HOST, view=_view(debited=900_001)))


def test_an_owner_record_is_reported_three_days_before_it_stops_being_current_and_after() -> None:
    assert _kinds(HealthFacts(now=NOW, host=HOST, view=_view(recorded_at="2026-11-09T12:00:00.000Z"))) == [
        "account-record-expiring"]
    assert _kinds(HealthFacts(now=NOW, host=HOST, view=_view(recorded_at="2026-11-01T12:00:00.000Z"))) == [
        "account-record-expired"]


def test_the_installed_launch_agent_is_compared_with_the_commissions_intervals() -> None:
    intervals = tuple(launch_intervals(COMMISSION, "Europe/London"))
    same = LaunchAgentFact("/agent.plist", intervals)
    assert _kinds(HealthFacts(now=NOW, host=HOST, view=_view(), launch_agent=same, host_zone="Europe/London")) == []
    other = LaunchAgentFact("/agent.plist", ({"Hour": 3, "Minute": 0},))
    assert _kinds(HealthFacts(now=NOW, host=HOST, view=_view(), launch_agent=other,
                              host_zone="Europe/London")) == ["launch-agent-drift"]
    assert _kinds(HealthFacts(now=NOW, host=HOST, view=_view(), launch_agent=same,
                              host_zone="Asia/Tokyo")) == ["launch-agent-zone"]
    unreadable = LaunchAgentFact("/agent.plist", None, "not a plist")
    assert _kinds(HealthFacts(now=NOW, host=HOST, view=_view(), launch_agent=unreadable)) == [
        "launch-agent-unreadable"]


def test_a_rule_that_fails_is_reported_as_not_checked_and_the_others_still_run() -> None:
    broken = {**COMMISSION, "zone": "Not/AZone"}
    report = judge(HealthFacts(now=NOW, host=HOST, view=_view(commission=broken), leases=(_lease(121),)))
    assert report.could_not_check and report.exit_code == 2
    assert "dead-runner" not in [f.kind for f in report.findings]  # no running occurrence in this view
    assert "stale-lease-segment-ended" in [f.kind for f in report.findings]
