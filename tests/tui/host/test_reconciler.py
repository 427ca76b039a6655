"""The health reconciler against real processes: a runner SIGKILLed under a real tick on a night nobody
watches is reconciled by the next health run (or the next tick's repair pass), its lost call is never sent
again, its lane runs again without a human, and each repair is in the journal.

The CLI reads the system clock, so the killed night is real time; the next night is reached by an
in-process schedule over the same journal with a ManualClock a day later (no process can move the clock).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pendulum
import pytest

from factory_schedule.core import LifecycleSchedule, ManualClock
from factory_schedule.store import leases
from factory_schedule.tui.host import reconciler
from factory_schedule.tui.host.clock import SystemClock
from factory_schedule.tui.host.process_identity import this_host
from factory_schedule.tui.host.tokens import segment_scope
from tests.tui.runner_support import (
    CLI,
    EXAMPLE_RUNNER,
    FAKE_PROVIDER,
    REPO,
    cli,
    cli_env,
    commissioned_journal,
    json_lines,
    provider_contacts,
    wait_for,
)

TTL = 1.0


@pytest.fixture
def journal(sqlite_url: str) -> Any:
    """The test's one handle on the journal, commissioned (a due-now lane) with a current claude record."""
    return commissioned_journal(sqlite_url)


def _tick(url: str, tmp_path: Path, **env: str) -> subprocess.Popen[str]:
    environment = cli_env(url, PROVIDER=f"{sys.executable} {FAKE_PROVIDER}",
                          FAKE_PROVIDER_LOG=str(tmp_path / "provider.log"), **env)
    return subprocess.Popen(
        [*CLI, "--journal", url, "tick", "--ttl", f"{TTL:g}", "--", str(EXAMPLE_RUNNER)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment, cwd=REPO,
    )


def _kill_runner_mid_call(url: str, journal: Any, tmp_path: Path) -> tuple[str, leases.Lease]:
    """A real tick whose runner hangs in its first provider call; SIGKILL the runner and the provider."""
    tick = _tick(url, tmp_path, FAKE_PROVIDER_MODE="hang:item-1")
    wait_for(lambda: "item-1" in provider_contacts(tmp_path), what="the runner's first contact")
    [lease] = [lease for lease in leases.list_leases(journal) if lease.scope.startswith("segment/")]
    assert lease.info["pid_started"], "the lease records the runner's start time"
    provider_pid = json.loads((tmp_path / "provider.log").read_text().splitlines()[0])["pid"]
    os.kill(lease.info["pid"], signal.SIGKILL)
    os.kill(provider_pid, signal.SIGKILL)
    out, _err = tick.communicate(timeout=120)
    lines = json_lines(out)
    assert tick.returncode == 6 and lines[-1]["segment_run"]["lease"] == "left-to-go-stale"
    occurrence = lines[0]["tick"]["occurrence"]["id"]
    held = leases.get_lease(journal, segment_scope(occurrence, 1))
    assert held is not None
    wait_for(lambda: leases.stale(held, datetime.now(UTC)), timeout=3 * TTL + 5, what="2 x TTL")
    return occurrence, held


def test_a_runner_killed_on_a_night_nobody_watches_is_reconciled_by_the_next_health_run_and_its_lane_runs_again(
    sqlite_url: str, journal: Any, tmp_path: Path
) -> None:
    occurrence, held = _kill_runner_mid_call(sqlite_url, journal, tmp_path)
    schedule = LifecycleSchedule(journal, SystemClock())
    assert schedule.status(occurrence).state == "running"

    _code, report, err = cli(sqlite_url, "health", "--repair", "--json")
    assert [repair["kind"] for repair in report["repairs"]] == ["reconciled-dead-runner", "removed-stale-lease"], err
    assert "dead-runner" not in [finding["kind"] for finding in report["findings"]]
    # The reconcile is the engine's command, confirmed by the reconciler with the evidence.
    view = schedule.read()
    assert view is not None
    [record] = [o for o in view.occurrences if o.id == occurrence]
    assert record.state == "interrupted"
    [confirmation] = record.reconciliations
    assert confirmation.confirmed_by == f"health-reconciler@{this_host()}"
    assert str(held.info["pid"]) in confirmation.evidence
    [call] = record.calls
    assert (call.work, call.outcome, call.unknown) == ("item-1", "lost", True)
    # The lease removal is journaled too, and the lease is gone.
    [removal] = reconciler.removal_records(journal)
    assert (removal["scope"], removal["owner"], removal["pid"]) == (held.scope, held.owner, held.info["pid"])
    assert leases.list_leases(journal) == []

    # The next night, nobody having looked: the lane runs again (the interrupted occurrence resumes as its
    # second segment under a new runner), and the lost call's work is refused, never sent again.
    slot = pendulum.instance(datetime.fromisoformat(record.slot.replace("Z", "+00:00")))
    clock = ManualClock(slot.add(days=1, minutes=1).to_iso8601_string())
    next_night = LifecycleSchedule(journal, clock)
    started = next_night.start(lane=record.lane, runner="r-next-night")
    assert started.kind in ("admitted", "resumed"), started
    assert started.occurrence is not None and started.occurrence.segments[-1].runner == "r-next-night"
    refused = next_night.admit_call(occurrence_id=started.occurrence.id, runner="r-next-night", task="scan",
                                    work="item-1", bound=1000, sign_in="owner@example.com")
    assert not refused.admitted and refused.reason == "unknown-effect"
    assert provider_contacts(tmp_path) == ["item-1"]
    _code, report, _ = cli(sqlite_url, "health", "--json")
    assert "dead-runner" not in [finding["kind"] for finding in report["findings"]]


def test_the_next_tick_reconciles_a_killed_runner_itself_and_resumes_without_resending_its_lost_call(
    sqlite_url: str, journal: Any, tmp_path: Path
) -> None:
    occurrence, held = _kill_runner_mid_call(sqlite_url, journal, tmp_path)
    tick = _tick(sqlite_url, tmp_path)
    out, err = tick.communicate(timeout=120)
    lines = json_lines(out)
    assert tick.returncode == 0, (lines, err)
    repaired = [line["repaired"] for line in lines if "repaired" in line]
    assert repaired == ["reconciled-dead-runner", "removed-stale-lease"]
    [started] = [line for line in lines if "tick" in line]
    assert (started["tick"]["kind"], started["tick"]["occurrence"]["id"]) == ("resumed", occurrence)
    assert provider_contacts(tmp_path) == ["item-1", "item-2"]  # item-1 was lost: never sent again
    status = LifecycleSchedule(journal, SystemClock()).status(occurrence)
    assert (status.state, status.status) == ("settled", "partial")
    assert [record["scope"] for record in reconciler.removal_records(journal)] == [held.scope]
    assert leases.list_leases(journal) == []


def test_a_live_runner_without_heartbeats_keeps_its_lease_and_its_segment(
    sqlite_url: str, journal: Any, tmp_path: Path
) -> None:
    """A hung runner (alive, its tick gone, so nobody heartbeats) is the owner's finding, never repaired."""
    schedule = LifecycleSchedule(journal, SystemClock())
    runner = "r-hung"
    [plan] = schedule.plan()
    started = schedule.start(lane=plan.lane, runner=runner)
    assert started.occurrence is not None
    hung = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        from factory_schedule.tui.host.process_identity import process_start_time

        scope = segment_scope(started.occurrence.id, 1)
        info = {"pid": hung.pid, "pid_started": process_start_time(hung.pid), "host": this_host(),
                "runner": runner, "occurrence": started.occurrence.id, "segment": 1}
        leases.acquire(journal, scope, runner, TTL, datetime.now(UTC), info)
        held = leases.get_lease(journal, scope)
        assert held is not None
        wait_for(lambda: leases.stale(held, datetime.now(UTC)), timeout=3 * TTL + 5, what="2 x TTL")
        code, report, _ = cli(sqlite_url, "health", "--repair", "--json")
        assert code == 1 and report["repairs"] == []
        assert "stale-lease-live-process" in [finding["kind"] for finding in report["findings"]]
        assert leases.get_lease(journal, scope) is not None
        assert schedule.status(started.occurrence.id).state == "running"
    finally:
        hung.kill()
        hung.wait()
