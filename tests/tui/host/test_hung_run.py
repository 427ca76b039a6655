"""A hung run is a finding the owner is told of, once: a staged lane's run whose process lives (here a real
process stopped with SIGSTOP) while its locks go stale, and a segment still running well past its deadline
while its keeper heartbeats its lease. Neither is ever reconciled while its process lives."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pendulum
import pytest

from factory_schedule.core import ManualClock
from factory_schedule.core.health import HUNG_PAST_DEADLINE
from factory_schedule.core.pipeline import PipelineLanes
from factory_schedule.store import leases, open_journal
from factory_schedule.tui.host import health
from factory_schedule.tui.host.clock import SystemClock
from factory_schedule.tui.host.notify import NEEDS_OWNER, finding_key, notify_owner
from factory_schedule.tui.host.process_identity import process_start_time, this_host, this_machine
from factory_schedule.tui.host.tokens import segment_scope
from tests.core.pipeline.pipeline_support import adopt, top_n
from tests.core.pipeline.pipeline_support import commission as pipeline_commission
from tests.tui.runner_support import cli, fake_notifier, notifications, wait_for

from .test_health import OCCURRENCE, _admitted

LOCK_TTL = 0.2


@pytest.fixture
def stopped_run() -> Iterator[subprocess.Popen[bytes]]:
    """A real process, stopped as `kill -STOP` stops a runner: alive, doing nothing."""
    process = subprocess.Popen(["sleep", "600"])
    os.kill(process.pid, signal.SIGSTOP)
    yield process
    with contextlib.suppress(ProcessLookupError):
        os.kill(process.pid, signal.SIGKILL)
        os.kill(process.pid, signal.SIGCONT)
    process.wait()


def _lanes_with_work(url: str) -> None:
    lanes = PipelineLanes(open_journal(url), ManualClock(SystemClock().now() - timedelta(hours=2)))
    adopt(lanes, pipeline_commission())
    lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))


def _hung(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [finding for finding in report["findings"] if finding["kind"] == "run-hung"]


def test_a_stopped_lane_run_whose_locks_go_stale_is_one_finding_the_owner_is_told_of_once(
    sqlite_url: str, tmp_path: Path, stopped_run: subprocess.Popen[bytes]
) -> None:
    _lanes_with_work(sqlite_url)
    code, claimed, err = cli(sqlite_url, "lanes", "claim", "--lane", "promotion", "--run", "promotion",
                             "--runner", "r-stopped", f"--pid={stopped_run.pid}", f"--ttl={LOCK_TTL:g}")
    assert code == 0 and claimed["leases"], (claimed, err)
    journal = open_journal(sqlite_url)
    wait_for(lambda: all(leases.stale(lock, SystemClock().now()) for lock in leases.list_leases(journal)),
             timeout=30, what="its locks to go stale")
    command, log = fake_notifier(tmp_path)
    code, report, err = cli(sqlite_url, "health", "--json", "--repair", "--notify", command, NOTIFY_LOG=str(log))
    assert code == 1, err
    [hung] = _hung(report)
    assert hung["evidence"]["runner"] == "r-stopped" and hung["evidence"]["pid"] == stopped_run.pid
    assert sorted(hung["evidence"]["locks"]) == sorted(claimed["leases"])
    assert not [f for f in report["findings"] if f["kind"] in ("stale-lease", "dead-lane-run")], report["findings"]
    assert report["repairs"] == [] and len(leases.list_leases(journal)) == len(claimed["leases"])
    assert [notice["kind"] for notice in report["notified"]].count("run-hung") == 1
    _code, again, _err = cli(sqlite_url, "health", "--json", "--notify", command, NOTIFY_LOG=str(log))
    assert _hung(again) and again["notified"] == []
    assert len([sent for sent in notifications(log) if "r-stopped" in sent[-1]]) == 1


def test_a_segment_still_running_past_its_deadline_under_a_heartbeated_lease_is_a_hung_run_told_once(
    world: tuple[Any, Any, ManualClock],
) -> None:
    journal, schedule, clock = world
    _admitted(world, runner="r-hung")
    view = schedule.read()
    [occurrence] = [o for o in view.occurrences if o.id == OCCURRENCE]
    deadline = occurrence.segments[-1].deadline
    info = {"pid": os.getpid(), "pid_started": process_start_time(os.getpid()), "host": this_host(),
            "machine": this_machine(), "runner": "r-hung", "occurrence": OCCURRENCE, "segment": 1}
    scope = segment_scope(OCCURRENCE, 1)
    leases.acquire(journal, scope, "r-hung", 60, clock.now(), info)

    def check_at(offset: timedelta) -> health.HealthReport:
        clock.set((pendulum.instance(datetime.fromisoformat(deadline.replace("Z", "+00:00"))) + offset).isoformat())
        leases.heartbeat(journal, scope, "r-hung", clock.now())  # its keeper heartbeats on
        return health.check_health(journal, schedule, clock.now(), this_host(), health.HealthScope(chains=None))

    assert "run-hung" not in [f.kind for f in check_at(HUNG_PAST_DEADLINE).findings]
    first = [f for f in check_at(HUNG_PAST_DEADLINE + timedelta(minutes=1)).findings if f.kind == "run-hung"]
    later = [f for f in check_at(HUNG_PAST_DEADLINE + timedelta(minutes=40)).findings if f.kind == "run-hung"]
    assert len(first) == len(later) == 1 and first[0].evidence["runner"] == "r-hung"
    assert finding_key(first[0]) == finding_key(later[0])  # told once, however long it hangs
    assert schedule.status(OCCURRENCE).state == "running"  # never reconciled while it lives


def test_a_lane_run_that_is_alive_and_heartbeating_is_not_hung(sqlite_url: str) -> None:
    _lanes_with_work(sqlite_url)
    code, _claimed, err = cli(sqlite_url, "lanes", "claim", "--lane", "promotion", "--run", "promotion",
                              "--runner", "r-live", f"--pid={os.getpid()}", "--ttl=60")
    assert code == 0, err
    _code, report, _err = cli(sqlite_url, "health", "--json")
    assert _hung(report) == []


def test_a_segment_running_without_a_lease_past_its_deadline_is_a_finding_the_owner_is_told_of_once(
    world: tuple[Any, Any, ManualClock], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No lease means health cannot tell whether its runner lives, so it never reconciles it; but a segment
    still running that long after its deadline holds its lane up, and only the owner can settle it."""
    journal, schedule, clock = world
    _admitted(world, runner="r-unleased")
    view = schedule.read()
    [occurrence] = [o for o in view.occurrences if o.id == OCCURRENCE]
    deadline = pendulum.instance(datetime.fromisoformat(occurrence.segments[-1].deadline.replace("Z", "+00:00")))

    def findings_at(offset: timedelta) -> list[Any]:
        clock.set((deadline + offset).isoformat())
        report = health.check_health(journal, schedule, clock.now(), this_host(), health.HealthScope(chains=None))
        return [f for f in report.findings if f.kind.startswith("run") and "lease" in f.kind]

    assert [(f.kind, f.severity) for f in findings_at(HUNG_PAST_DEADLINE)] == [("running-without-lease", "info")]
    first = findings_at(HUNG_PAST_DEADLINE + timedelta(minutes=1))
    later = findings_at(HUNG_PAST_DEADLINE + timedelta(hours=3))
    assert [(f.kind, f.severity) for f in first] == [("run-unleased-past-deadline", "error")]
    assert first[0].evidence["runner"] == "r-unleased" and first[0].evidence["deadline"] == deadline.isoformat()
    assert first[0].kind in NEEDS_OWNER and finding_key(first[0]) == finding_key(later[0])  # told once
    assert schedule.status(OCCURRENCE).state == "running"  # health cannot tell its runner is gone: never reconciled
    command, log = fake_notifier(tmp_path)
    monkeypatch.setenv("NOTIFY_LOG", str(log))
    for _ in range(2):
        notify_owner(first + later, journal.url, clock.now(), configured=command)
    assert len([sent for sent in notifications(log) if "r-unleased" in sent[-1]]) == 1
