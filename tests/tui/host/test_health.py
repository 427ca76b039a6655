"""The supervisor's health check: what it finds, the evidence it gives, and the little it repairs."""

from __future__ import annotations

import contextlib
import os
import plistlib
from datetime import timedelta
from pathlib import Path
from typing import Any

import pendulum

from factory_schedule.core import ManualClock, launch_intervals
from factory_schedule.core.health.records import HEALTH_AGGREGATE
from factory_schedule.store import leases
from factory_schedule.tui.host import health, reconciler
from factory_schedule.tui.host.process_identity import process_start_time
from factory_schedule.tui.host.tokens import segment_scope
from tests.core.schedule.support import epoch
from tests.owner_support import protect

HOST = "test-host"
OCCURRENCE = "discovery/alpha/basic/2026-12-07"


def _commission(weekly_tokens: int = 40_000_000) -> dict[str, Any]:
    return {
        "protocol": "sf-schedule-commission/1",
        "revision": 1,
        "zone": "Europe/London",
        "effectiveFrom": "2026-12-07",
        "weeklyTokens": weekly_tokens,
        "recordMaxAgeDays": 30,
        "lanes": [
            {"lane": "alpha/basic", "product": "alpha", "rhythm": "basic", "time": "02:00", "closes": "05:00",
             "deadlineMinutes": 45,
             "tasks": [{"task": "scan", "account": "claude", "maxCalls": 4, "callBound": 150000}]},
        ],
    }


def _commissioned(world: tuple[Any, Any, ManualClock], weekly_tokens: int = 40_000_000) -> None:
    _journal, schedule, _clock = world
    schedule.record_commission(_commission(weekly_tokens))
    schedule.record_account(account="claude", sequence=1, sign_in="me", overage=False, recorded_by="owner")


def _admitted(world: tuple[Any, Any, ManualClock], runner: str = "r-dead") -> None:
    _journal, schedule, clock = world
    _commissioned(world)
    clock.set("2026-12-07T02:00:00Z")
    assert schedule.start(lane="alpha/basic", runner=runner).kind == "admitted"


def _kinds(report: health.HealthReport) -> list[str]:
    return [finding.kind for finding in report.findings]


def _check(world: tuple[Any, Any, ManualClock], alive: bool = False, zone: str | None = None,
           **scope: Any) -> health.HealthReport:
    journal, schedule, clock = world
    return health.check_health(journal, schedule, clock.now(), HOST, health.HealthScope(**scope),
                               alive=lambda _pid: alive, zone=zone)


def _lease(world: tuple[Any, Any, ManualClock], runner: str = "r-dead", ttl: float = 60) -> None:
    journal, _schedule, clock = world
    info = {"pid": 424242, "host": HOST, "runner": runner, "occurrence": OCCURRENCE, "segment": 1,
            "command": ["runner.sh"], "started": clock.now().isoformat()}
    leases.acquire(journal, segment_scope(OCCURRENCE, 1), runner, ttl, clock.now(), info)


def test_an_empty_journal_is_never_healthy(world: tuple[Any, Any, ManualClock]) -> None:
    report = _check(world)  # most often a mistyped path: the owner must hear of it
    assert report.exit_code == health.FINDINGS and not report.healthy
    assert _kinds(report) == ["not-commissioned"]


def test_a_dead_runner_is_reported_with_the_evidence_only_after_twice_its_ttl_and_reconciled_by_repair(
    world: tuple[Any, Any, ManualClock],
) -> None:
    _admitted(world)
    _lease(world)
    journal, schedule, clock = world
    clock.advance(seconds=120)
    assert "dead-runner" not in _kinds(_check(world))
    assert health.repair(journal, schedule, clock.now(), HOST, alive=lambda _pid: False) == []  # not from TTL

    clock.advance(seconds=1)
    report = _check(world)
    [finding] = [f for f in report.findings if f.kind == "dead-runner"]
    assert report.exit_code == health.FINDINGS
    assert finding.severity == "error" and finding.repairable
    evidence = finding.evidence
    assert (evidence["runner"], evidence["pid"], evidence["host"]) == ("r-dead", 424242, HOST)
    assert (evidence["occurrence"], evidence["segment"]) == (OCCURRENCE, 1)
    assert evidence["last_heartbeat"] == "2026-12-07T02:00:00+00:00"
    assert evidence["confirmation"]["runner"] == "r-dead"

    # Checking never reconciles; repairing does, as the supervisor's confirmation, then removes the lease.
    assert schedule.status(OCCURRENCE).state == "running"
    reconciled, removed = health.repair(journal, schedule, clock.now(), HOST, alive=lambda _pid: False)
    assert (reconciled.kind, removed.kind) == ("reconciled-dead-runner", "removed-stale-lease")
    assert schedule.status(OCCURRENCE).state == "interrupted"
    [occurrence] = [o for o in schedule.read().occurrences if o.id == OCCURRENCE]
    [confirmation] = occurrence.reconciliations
    assert confirmation.confirmed_by == f"health-reconciler@{HOST}" and "424242" in confirmation.evidence
    assert leases.get_lease(journal, segment_scope(OCCURRENCE, 1)) is None
    [record] = reconciler.removal_records(journal)
    assert (record["scope"], record["owner"], record["pid"]) == (segment_scope(OCCURRENCE, 1), "r-dead", 424242)
    assert health.repair(journal, schedule, clock.now(), HOST, alive=lambda _pid: False) == []


def test_a_live_process_keeps_its_stale_lease_and_its_segment_whatever_repair_is_asked(
    world: tuple[Any, Any, ManualClock],
) -> None:
    journal, schedule, clock = world
    _admitted(world)
    _lease(world)
    clock.advance(hours=3)
    assert health.repair(journal, schedule, clock.now(), HOST, alive=lambda _pid: True) == []
    assert schedule.status(OCCURRENCE).state == "running"
    schedule.settle(occurrence_id=OCCURRENCE, settled_by="r-dead", status="unavailable", reason="nothing done")
    # Its segment has ended, but its process still lives: the lease stays.
    assert health.repair(journal, schedule, clock.now(), HOST, alive=lambda _pid: True) == []
    assert leases.get_lease(journal, segment_scope(OCCURRENCE, 1)) is not None
    assert "stale-lease-live-process" in _kinds(_check(world, alive=True))
    # Taken on another host: this host cannot see its process, so nothing is removed either.
    assert health.repair(journal, schedule, clock.now(), "another-host", alive=lambda _pid: False) == []
    assert leases.get_lease(journal, segment_scope(OCCURRENCE, 1)) is not None
    assert reconciler.removal_records(journal) == []


def test_a_recycled_pid_is_told_apart_by_its_start_time(world: tuple[Any, Any, ManualClock]) -> None:
    journal, schedule, clock = world
    _admitted(world)
    # The lease names this very process's pid, but with a start time it never had: the pid was recycled.
    info = {"pid": os.getpid(), "pid_started": "linux-ticks:1", "host": HOST, "runner": "r-dead",
            "occurrence": OCCURRENCE, "segment": 1}
    leases.acquire(journal, segment_scope(OCCURRENCE, 1), "r-dead", 60, clock.now(), info)
    clock.advance(minutes=3)
    report = health.check_health(journal, schedule, clock.now(), HOST, health.HealthScope())
    [finding] = [f for f in report.findings if f.kind == "dead-runner"]
    assert finding.evidence["pid_recycled"] is True and finding.evidence["pid_started"] == "linux-ticks:1"
    kinds = [repair.kind for repair in health.repair(journal, schedule, clock.now(), HOST)]
    assert kinds == ["reconciled-dead-runner", "removed-stale-lease"]
    # Recorded with its true start time, the same live pid is a live process: never touched.
    info["pid_started"] = process_start_time(os.getpid())
    leases.acquire(journal, "segment/other", "r-live", 60, clock.now() - timedelta(hours=1), info)
    assert health.repair(journal, schedule, clock.now(), HOST) == []
    assert leases.get_lease(journal, "segment/other") is not None


def test_a_stale_lease_whose_process_lives_is_a_warning_not_a_dead_runner(
    world: tuple[Any, Any, ManualClock],
) -> None:
    _admitted(world)
    _lease(world)
    world[2].advance(minutes=10)
    assert "stale-lease-live-process" in _kinds(_check(world, alive=True))
    assert "dead-runner" not in _kinds(_check(world, alive=True))


def test_repair_removes_only_stale_leases_whose_segment_no_longer_runs_and_records_each(
    world: tuple[Any, Any, ManualClock],
) -> None:
    journal, schedule, clock = world
    _admitted(world)
    protect(journal, clock)  # a journal without an owner key is never healthy
    _lease(world)
    schedule.settle(occurrence_id=OCCURRENCE, settled_by="r-dead", status="unavailable", reason="nothing done")
    clock.advance(minutes=1)
    assert health.repair(journal, schedule, clock.now(), HOST) == []  # not stale yet

    clock.advance(minutes=2)
    report = _check(world)
    assert [f.kind for f in report.findings if f.repairable] == ["stale-lease-segment-ended"]
    version = journal.head("discovery/schedule")
    [repair] = health.repair(journal, schedule, clock.now(), HOST)
    assert repair.scope == segment_scope(OCCURRENCE, 1) and repair.lease["runner"] == "r-dead"
    assert leases.list_leases(journal) == []
    assert journal.head("discovery/schedule") == version  # no decision written
    [record] = reconciler.removal_records(journal)  # but the removal itself is journaled
    assert (record["scope"], record["owner"], record["removedBy"]) == (
        segment_scope(OCCURRENCE, 1), "r-dead", f"health-reconciler@{HOST}")
    assert _check(world).exit_code == health.HEALTHY


def test_a_lane_past_its_slot_and_grace_with_nothing_admitted_is_reported(
    world: tuple[Any, Any, ManualClock],
) -> None:
    _commissioned(world)
    world[2].set("2026-12-07T02:20:00Z")
    assert "lane-not-started" not in _kinds(_check(world, grace_minutes=30))
    world[2].set("2026-12-07T02:31:00Z")
    report = _check(world, grace_minutes=30)
    [finding] = [f for f in report.findings if f.kind == "lane-not-started"]
    assert finding.evidence["occurrence"] == OCCURRENCE


def test_a_weekly_lane_missed_earlier_in_the_week_is_reported_until_its_lane_admits_again(
    world: tuple[Any, Any, ManualClock],
) -> None:
    _journal, schedule, clock = world
    commission = _commission()
    commission["lanes"].append(
        {"lane": "alpha/full", "product": "alpha", "rhythm": "full", "weekday": 1, "time": "03:00", "closes": "05:00",
         "deadlineMinutes": 45, "tasks": [{"task": "scan", "account": "claude", "maxCalls": 4, "callBound": 150000}]}
    )
    schedule.record_commission(commission)
    schedule.record_account(account="claude", sequence=1, sign_in="me", overage=False, recorded_by="owner")
    clock.set("2026-12-10T12:00:00Z")  # Thursday: Monday 7 December's full run was never admitted
    [finding] = [f for f in _check(world).findings if f.evidence.get("lane") == "alpha/full"]
    assert finding.kind == "lane-missed" and finding.evidence["occurrence"] == "discovery/alpha/full/2026-W50"
    clock.set("2026-12-14T03:00:00Z")  # the next Monday's admission coalesces it
    assert schedule.start(lane="alpha/full", runner="r-1").kind == "admitted"
    assert not [f for f in _check(world).findings if f.evidence.get("lane") == "alpha/full"]


def test_an_owner_record_that_stops_being_current_within_three_days_is_reported(
    world: tuple[Any, Any, ManualClock],
) -> None:
    _commissioned(world)
    world[2].set("2027-01-01T11:00:00Z")  # the record expires 2027-01-04T12:00Z
    assert "account-record-expiring" not in _kinds(_check(world))
    world[2].set("2027-01-01T13:00:00Z")
    assert "account-record-expiring" in _kinds(_check(world))
    world[2].set("2027-01-04T13:00:00Z")
    assert "account-record-expired" in _kinds(_check(world))


def _one_call(world: tuple[Any, Any, ManualClock], weekly_tokens: int, report: dict[str, Any]) -> None:
    _journal, schedule, clock = world
    _commissioned(world, weekly_tokens=weekly_tokens)
    clock.set("2026-12-07T02:00:00Z")
    schedule.start(lane="alpha/basic", runner="r-1")
    admission = schedule.admit_call(occurrence_id=OCCURRENCE, runner="r-1", task="scan", work="w1",
                                    bound=150000, sign_in="me")
    schedule.end_call(occurrence_id=OCCURRENCE, runner="r-1", call=admission.call, report=report)


def test_a_week_above_ninety_percent_of_its_ceiling_is_reported(world: tuple[Any, Any, ManualClock]) -> None:
    _one_call(world, 200_000, {"kind": "result", "tokens": 190000, "output": "ok"})
    [finding] = [f for f in _check(world).findings if f.kind == "week-near-ceiling"]
    assert finding.evidence == {"week": "2026-W50", "ceiling": 200_000, "debited": 190000}


def test_an_account_whose_usage_window_closed_is_reported(world: tuple[Any, Any, ManualClock]) -> None:
    resets = epoch("2026-12-07T05:00:00Z")
    _one_call(world, 40_000_000, {"kind": "usage-limit", "tokens": 0,
                                  "observation": {"status": "rejected", "rateLimitType": "five_hour",
                                                  "resetsAt": resets, "isUsingOverage": False}})
    [finding] = [f for f in _check(world).findings if f.kind == "account-window-closed"]
    assert finding.evidence["until"] == "2026-12-07T05:00:00+00:00"


def test_a_sign_in_refusal_stops_the_account_until_a_newer_record(world: tuple[Any, Any, ManualClock]) -> None:
    _one_call(world, 40_000_000, {"kind": "sign-in-needed", "tokens": 0, "httpStatus": 401})
    assert "account-sign-in-needed" in _kinds(_check(world))
    world[2].advance(minutes=5)
    world[1].record_account(account="claude", sequence=2, sign_in="me", overage=False, recorded_by="owner")
    assert "account-sign-in-needed" not in _kinds(_check(world))


def test_an_installed_launch_agent_whose_intervals_differ_is_reported(
    world: tuple[Any, Any, ManualClock], tmp_path: Path
) -> None:
    _commissioned(world)
    plist = tmp_path / "agent.plist"
    intervals = launch_intervals(_commission(), "Europe/London")
    plist.write_bytes(plistlib.dumps({"Label": "x", "StartCalendarInterval": intervals}))
    assert "launch-agent-drift" not in _kinds(_check(world, launch_agent=str(plist), zone="Europe/London"))

    plist.write_bytes(plistlib.dumps({"Label": "x", "StartCalendarInterval": [{"Hour": 3, "Minute": 0}]}))
    report = _check(world, launch_agent=str(plist), zone="Europe/London")
    [finding] = [f for f in report.findings if f.kind == "launch-agent-drift"]
    assert finding.evidence["expected"] == intervals

    assert "launch-agent-zone" in _kinds(_check(world, launch_agent=str(plist), zone="Asia/Tokyo"))


def test_a_report_has_a_stable_instant(world: tuple[Any, Any, ManualClock]) -> None:
    report = _check(world)
    assert report.checked_at == pendulum.parse("2026-12-05T12:00:00Z")


def test_lease_freshness_says_alive_until_twice_the_ttl_then_stale_since(world: tuple[Any, Any, ManualClock]) -> None:
    journal, _schedule, clock = world
    _admitted(world)
    _lease(world)
    fresh = health.lease_freshness(journal, clock.now(), HOST, alive=lambda _pid: True)[OCCURRENCE]
    assert (fresh.words, fresh.runner, fresh.segment, fresh.process_alive) == ("alive", "r-dead", 1, True)
    clock.advance(minutes=3)
    stale = health.lease_freshness(journal, clock.now(), HOST, alive=lambda _pid: False)[OCCURRENCE]
    assert stale.words == "stale since 2026-12-07T02:02:00+00:00" and stale.process_alive is False
    assert health.lease_freshness(journal, clock.now(), "another-host")[OCCURRENCE].process_alive is None


def test_a_lease_is_never_removed_without_its_removal_record(
    world: tuple[Any, Any, ManualClock], monkeypatch: Any
) -> None:
    """The record is written before the DELETE: a record that fails (a full disk) leaves the lease in place,
    so no removal is ever lost from the journal."""
    from factory_schedule.store import JournalFullError

    journal, schedule, clock = world
    _admitted(world)
    _lease(world)
    schedule.settle(occurrence_id=OCCURRENCE, settled_by="r-dead", status="unavailable", reason="nothing done")
    clock.advance(minutes=3)
    real_execute = type(journal).execute

    def full_for_health(self: Any, aggregate: str, *args: Any, **kwargs: Any) -> Any:
        if aggregate == HEALTH_AGGREGATE:
            raise JournalFullError("database or disk is full")
        return real_execute(self, aggregate, *args, **kwargs)

    monkeypatch.setattr(type(journal), "execute", full_for_health)
    with contextlib.suppress(JournalFullError):
        health.repair(journal, schedule, clock.now(), HOST, alive=lambda _pid: False)
    monkeypatch.setattr(type(journal), "execute", real_execute)
    [lease] = leases.list_leases(journal)
    assert lease.scope == segment_scope(OCCURRENCE, 1) and reconciler.removal_records(journal) == []

    [repair] = health.repair(journal, schedule, clock.now(), HOST, alive=lambda _pid: False)
    assert repair.kind == "removed-stale-lease" and leases.list_leases(journal) == []
    [record] = reconciler.removal_records(journal)
    assert record["scope"] == lease.scope


def test_a_lease_of_this_host_without_a_usable_pid_is_one_health_cannot_see_never_repaired(
    world: tuple[Any, Any, ManualClock],
) -> None:
    """No pid (or not a number) is no evidence that the holder is gone: it is the owner's finding."""
    journal, schedule, clock = world
    _admitted(world)
    for pid in (None, "424242", True):
        info = {"host": HOST, "runner": "r-dead", "occurrence": OCCURRENCE, "segment": 1}
        if pid is not None:
            info["pid"] = pid
        leases.acquire(journal, segment_scope(OCCURRENCE, 1), "r-dead", 60, clock.now(), info)
        [lease] = leases.list_leases(journal)
        assert health.lease_fact(lease, HOST, alive=lambda _pid: False).process_alive is None
        clock.advance(minutes=3)
        assert health.repair(journal, schedule, clock.now(), HOST, alive=lambda _pid: False) == []
        assert "dead-runner" not in _kinds(_check(world))
        leases.release(journal, lease.scope, "r-dead")


def test_a_lease_from_a_same_named_machine_with_another_process_table_is_another_hosts(
    world: tuple[Any, Any, ManualClock],
) -> None:
    """A shared journal: a container or machine with this hostname but its own processes recorded the lease.
    Its pid means nothing here, so it is never probed nor repaired; a lease recorded here is probed."""
    from factory_schedule.tui.host.process_identity import this_machine

    journal, schedule, clock = world
    _admitted(world)
    here = this_machine()
    assert here  # this host can name itself
    info = {"pid": 424242, "host": HOST, "machine": "another-machine", "runner": "r-dead",
            "occurrence": OCCURRENCE, "segment": 1}
    leases.acquire(journal, segment_scope(OCCURRENCE, 1), "r-dead", 60, clock.now(), info)
    clock.advance(minutes=3)
    [lease] = leases.list_leases(journal)
    assert health.lease_fact(lease, HOST, alive=lambda _pid: False).process_alive is None
    assert health.repair(journal, schedule, clock.now(), HOST, alive=lambda _pid: False) == []
    assert "stale-lease-other-host" in _kinds(_check(world))
    recorded_here = leases.Lease(lease.scope, lease.owner, lease.ttl_seconds, lease.acquired_at,
                                 lease.heartbeat_at, {**lease.info, "machine": here})
    assert health.lease_fact(recorded_here, HOST, alive=lambda _pid: False).process_alive is False


def test_a_reconcile_another_repairer_made_first_is_reported_as_already_reconciled(
    world: tuple[Any, Any, ManualClock],
) -> None:
    """Two repairers that planned at once: the second's reconcile is the engine's replay, not a second
    reconcile, and says so."""
    from factory_schedule.core.health import plan_repairs

    journal, schedule, clock = world
    _admitted(world)
    _lease(world)
    clock.advance(minutes=3)
    by = f"health-reconciler@{HOST}"

    def planned() -> Any:
        facts = health.HealthFacts(now=clock.now(), host=HOST, view=schedule.read(), leases=tuple(
            health.lease_fact(lease, HOST, alive=lambda _pid: False) for lease in leases.list_leases(journal)))
        return plan_repairs(facts, by)

    first_plan, second_plan = planned(), planned()
    first = reconciler.carry_out(journal, schedule, first_plan, clock.now(), by)
    second = reconciler.carry_out(journal, schedule, second_plan, clock.now(), by)
    assert [repair.kind for repair in first] == ["reconciled-dead-runner", "removed-stale-lease"]
    assert [repair.kind for repair in second] == ["already-reconciled"]
    assert "already" in second[0].message
