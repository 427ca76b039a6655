"""The tick starts the staged lanes' runs like every other lane, and examples/lane_runner.sh works one task
of its admitted occurrence through the CLI: claim with the occurrence, one admitted call, the stage's
report, settle. Real processes on a real journal file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pendulum
import pytest

from factory_schedule.core import LifecycleSchedule
from factory_schedule.core.pipeline import PipelineLanes
from factory_schedule.store import Journal, leases, open_journal
from factory_schedule.tui.host.clock import SystemClock
from tests.tui.runner_support import (
    CLI,
    FAKE_PROVIDER,
    REPO,
    cli_env,
    commission_due_now,
    json_lines,
    provider_contacts,
)

LANE_RUNNER = REPO / "examples" / "lane_runner.sh"


def _commission_with_a_promotion_run_due_now() -> dict[str, Any]:
    """alpha/basic half an hour ago, then portfolio/promotion this minute (discovery comes first)."""
    commission = commission_due_now()
    basic = commission["lanes"][0]
    now = pendulum.now(commission["zone"])
    basic["time"] = now.subtract(minutes=30).format("HH:mm")
    commission["lanes"].append({"lane": "portfolio/promotion", "product": "portfolio", "rhythm": "promotion",
                                "time": now.format("HH:mm"), "closes": "16:00", "deadlineMinutes": 60,
                                "tasks": [{"task": "stage", "account": "claude", "maxCalls": 1,
                                           "callBound": 150000}]})
    commission["pipeline"] = {"threshold": 1}
    return commission


def promotion_run_world(url: str) -> tuple[LifecycleSchedule, PipelineLanes]:
    """A journal whose commission schedules the promotion run now, with claude's record and a one-candidate
    Top-N (this week's), so the run has a task to claim."""
    journal = open_journal(url)
    schedule = LifecycleSchedule(journal, SystemClock())
    lanes = PipelineLanes(journal, SystemClock())
    commission = _commission_with_a_promotion_run_due_now()
    schedule.record_commission(commission)
    schedule.record_account(account="claude", sequence=1, sign_in="owner@example.com", overage=False,
                            recorded_by="owner")
    lanes.record_settings(commission)
    year, week_number, _day = pendulum.now("UTC").isocalendar()
    week = f"{year}-W{week_number:02d}"
    lanes.record_top_n(week=week, candidates=[{"candidate": "tiny-tower", "product": "alpha", "rank": 1}])
    return schedule, lanes


@pytest.fixture
def world(sqlite_url: str) -> tuple[LifecycleSchedule, PipelineLanes]:
    return promotion_run_world(sqlite_url)


def _file_journal(lanes: PipelineLanes) -> Journal:
    """The lanes' journal as the store's class (the leases live beside its events)."""
    assert isinstance(lanes.journal, Journal)
    return lanes.journal


def _tick(url: str, tmp_path: Path, *command: str) -> tuple[int, list[dict[str, Any]], str]:
    environment = cli_env(url, PROVIDER=f"{sys.executable} {FAKE_PROVIDER}",
                          FAKE_PROVIDER_LOG=str(tmp_path / "provider.log"))
    done = subprocess.run([*CLI, "--journal", url, "tick", "--ttl", "1", "--lane", "portfolio/promotion", "--",
                           *command], capture_output=True, text=True, env=environment, cwd=REPO, timeout=180)
    return done.returncode, json_lines(done.stdout), done.stderr


def test_the_tick_starts_a_promotion_run_and_the_lane_runner_works_one_task(
        sqlite_url: str, world: tuple[LifecycleSchedule, PipelineLanes], tmp_path: Path) -> None:
    schedule, lanes = world
    code, lines, err = _tick(sqlite_url, tmp_path, str(LANE_RUNNER))
    assert code == 0, (lines, err)
    [started] = [line for line in lines if "tick" in line]
    [ran] = [line for line in lines if "segment_run" in line]
    assert started["lane"] == "portfolio/promotion" and started["tick"]["kind"] == "admitted"
    occurrence = started["tick"]["occurrence"]["id"]
    assert occurrence.startswith("discovery/portfolio/promotion/")
    assert ran["segment_run"]["exit"] == 0, err
    record = schedule.record(occurrence)
    assert record is not None and record.state == "settled" and record.settlement is not None
    assert (record.settlement.status, record.settlement.reason) == ("completed", "task 1 reported")
    assert [(call.task, call.work, call.outcome) for call in record.calls] == [("stage", "task-1", "ok")]
    assert provider_contacts(tmp_path) == ["task-1"]
    view = lanes.lane_view("promotion")
    assert view is not None and [task["stage"] for task in view.done] == ["select"]
    assert [(task["stage"], task.get("claimedBy")) for task in view.tasks] == [("evidence", None)]
    assert leases.list_leases(_file_journal(lanes)) == []


def test_a_second_tick_the_same_night_finds_the_run_settled_and_starts_nothing(
        sqlite_url: str, world: tuple[LifecycleSchedule, PipelineLanes], tmp_path: Path) -> None:
    _schedule, lanes = world
    assert _tick(sqlite_url, tmp_path, str(LANE_RUNNER))[0] == 0
    code, lines, err = _tick(sqlite_url, tmp_path, str(LANE_RUNNER))
    assert code == 0, (lines, err)
    assert [line["tick"]["kind"] for line in lines if "tick" in line] == ["waiting"]
    assert provider_contacts(tmp_path) == ["task-1"]
    claims = [e for e in lanes.journal.history("pipeline/lanes") if e.type == "task-claimed"]
    assert len(claims) == 1 and json.dumps(claims[0].command_id).count("claim/occurrence/") == 1
