"""A staged lane's run killed mid-call, then the next tick: its repair pass reconciles the dead segment (the
call ends lost) and confirms the run's task gone, the occurrence resumes, and the resumed run settles it with
the lost call's unknown effect on record and the task handed back. Real processes over a real journal file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.core import LifecycleSchedule
from factory_schedule.core.pipeline import PipelineLanes
from factory_schedule.store import leases
from tests.tui.provider_support import fake_path
from tests.tui.runner_support import CLI, REPO, cli_env, json_lines, run_logs, wait_for

from .test_run import runner_lines
from .test_run_stage import SELECT_REPORT, _prompts, _transcripts
from .test_tick_lane_runs import LANE_RUNNER, _file_journal, promotion_run_world
from .test_tick_lane_runs import _tick as _lane_runner_tick

TTL = 1.0


@pytest.fixture
def world(sqlite_url: str) -> tuple[LifecycleSchedule, PipelineLanes]:
    return promotion_run_world(sqlite_url)


def _tick(url: str, tmp_path: Path, name: str, sleep: float) -> subprocess.Popen[str]:
    """A tick (lease TTL 1 s) running `run` for the promotion run, its provider answering after `sleep`."""
    environment = cli_env(url, FAKE_PROVIDER_LOG=str(tmp_path / "contacts.log"),
                          FAKE_TRANSCRIPTS=str(_transcripts(tmp_path / name, json.dumps(SELECT_REPORT), sleep)))
    environment["PATH"] = fake_path(environment["PATH"])
    return subprocess.Popen([*CLI, "--journal", url, "tick", "--ttl", f"{TTL:g}", "--lane", "portfolio/promotion",
                             "--", *CLI, "run", "--prompts", str(_prompts(tmp_path / f"{name}-prompts"))],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment, cwd=REPO)


def _contacts(tmp_path: Path) -> list[dict[str, Any]]:
    log = tmp_path / "contacts.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def kill_a_staged_run_mid_call(url: str, lanes: PipelineLanes, tmp_path: Path) -> str:
    """A tick whose promotion run hangs in its provider call; SIGKILL the run and its provider, then wait out
    2 x TTL of every lease they held. The occurrence's ID."""
    journal = _file_journal(lanes)
    tick = _tick(url, tmp_path, "killed", sleep=600)
    try:
        [contact] = wait_for(lambda: _contacts(tmp_path), what="the run's provider call")
        [segment] = [lease for lease in leases.list_leases(journal) if lease.scope.startswith("segment/")]
        os.kill(segment.info["pid"], signal.SIGKILL)
        os.kill(contact["pid"], signal.SIGKILL)
        out, _err = tick.communicate(timeout=120)
    finally:
        if tick.poll() is None:
            tick.kill()
            tick.wait()
    [started] = [line for line in json_lines(out) if "tick" in line]
    held = leases.list_leases(journal)
    assert {lease.scope.split("/")[0] for lease in held} == {"segment", "pipeline"}, held
    wait_for(lambda: all(leases.stale(lease, datetime.now(UTC)) for lease in held), timeout=3 * TTL + 5,
             what="2 x TTL")
    return str(started["tick"]["occurrence"]["id"])


def _a_run_whose_call_went_out(schedule: LifecycleSchedule, lanes: PipelineLanes) -> tuple[str, int]:
    """Tonight's promotion run `r-gone`, written through the engines: admitted, its task claimed, the task's
    one call admitted (gone out); the occurrence and the task's number."""
    [plan] = [plan for plan in schedule.plan() if plan.lane == "portfolio/promotion"]
    started = schedule.start(lane=plan.lane, runner="r-gone")
    assert started.occurrence is not None
    occurrence = started.occurrence.id
    claimed = lanes.claim(lane="promotion", runner="r-gone", occurrence=occurrence)
    n = int(claimed.result["task"])  # type: ignore[union-attr]
    admitted = schedule.admit_call(occurrence_id=occurrence, runner="r-gone", task="stage", work=f"task-{n}",
                                   bound=150000, sign_in="owner@example.com")
    assert admitted.admitted
    return occurrence, n


def test_a_staged_run_killed_mid_call_is_resumed_by_the_next_tick_and_settled_with_its_lost_call(
        sqlite_url: str, world: tuple[LifecycleSchedule, PipelineLanes], tmp_path: Path) -> None:
    schedule, lanes = world
    occurrence = kill_a_staged_run_mid_call(sqlite_url, lanes, tmp_path)

    tick = _tick(sqlite_url, tmp_path, "next", sleep=0)
    out, err = tick.communicate(timeout=180)
    lines = json_lines(out)
    assert tick.returncode == 0, (lines, err + run_logs(lines))
    repaired = [line["repaired"] for line in lines if "repaired" in line]
    assert "reconciled-dead-runner" in repaired and "reconciled-dead-lane-run" in repaired, lines
    [started] = [line for line in lines if "tick" in line]
    assert (started["tick"]["kind"], started["tick"]["occurrence"]["id"]) == ("resumed", occurrence)
    steps = runner_lines(run_logs(lines))
    assert steps[-1]["run"] == "settled", steps
    record = schedule.record(occurrence)
    assert record is not None and record.settlement is not None
    # The lost call's effect is unknown: the occurrence is settled as what its calls support, never completed.
    assert record.settlement.status == "partial", record.settlement
    assert record.settlement.reason.startswith("handed back: ") and "claimed task 1" in record.settlement.reason
    assert "pending again" in record.settlement.reason
    [call] = record.calls
    assert (call.work, call.outcome, call.unknown) == ("task-1", "lost", True)
    assert len(_contacts(tmp_path)) == 1  # the lost call's work is never sent again in this occurrence
    view = lanes.lane_view("promotion")
    assert view is not None and [(task["task"], task["stage"]) for task in view.tasks] == [(1, "select")]
    assert view.tasks[0].get("claimedBy") is None  # handed back: the lane's next run claims it
    assert leases.list_leases(_file_journal(lanes)) == []


def test_the_example_lane_runner_settles_a_resumed_occurrence_whose_task_was_handed_back_partial(
        sqlite_url: str, world: tuple[LifecycleSchedule, PipelineLanes], tmp_path: Path) -> None:
    """The same night as above, written through the engines (a run that claimed, whose call went out, then a
    supervisor's reconcile and abandon), resumed by a tick running examples/lane_runner.sh."""
    schedule, lanes = world
    occurrence, n = _a_run_whose_call_went_out(schedule, lanes)
    gone = {"runner": "r-gone", "confirmedBy": "owner", "evidence": "the run was killed mid-call"}
    schedule.reconcile(occurrence_id=occurrence, confirmation=gone)
    lanes.abandon(lane="promotion", task=n, runner="r-gone", confirmed_by="owner", evidence=gone["evidence"])

    code, lines, err = _lane_runner_tick(sqlite_url, tmp_path, str(LANE_RUNNER))
    assert code == 0, (lines, err)
    [tick] = [line for line in lines if "tick" in line]
    assert (tick["tick"]["kind"], tick["tick"]["occurrence"]["id"]) == ("resumed", occurrence)
    record = schedule.record(occurrence)
    assert record is not None and record.settlement is not None
    assert record.settlement.status == "partial" and record.settlement.reason.startswith("handed back: "), err
    assert [(call.outcome, call.unknown) for call in record.calls] == [("lost", True)]


def test_a_resumed_run_whose_task_went_out_with_unknown_effect_hands_it_back_itself(
        sqlite_url: str, world: tuple[LifecycleSchedule, PipelineLanes], tmp_path: Path) -> None:
    """A repair pass that reconciled the dead segment (its call ended lost) before its lane locks went stale, so
    the task was not yet returned: the resumed run takes the task over, the schedule refuses its work (the
    stage's one call of the occurrence was used, its effect unknown: never sent again), and the run hands the
    task back itself, counted as an abandon, instead of leaving it claimed by a run that settled, for the owner
    to find stalled."""
    schedule, lanes = world
    occurrence, n = _a_run_whose_call_went_out(schedule, lanes)
    schedule.reconcile(occurrence_id=occurrence, confirmation={
        "runner": "r-gone", "confirmedBy": "owner", "evidence": "the run was killed mid-call"})

    tick = _tick(sqlite_url, tmp_path, "resumed", sleep=0)
    out, err = tick.communicate(timeout=180)
    lines = json_lines(out)
    assert tick.returncode == 0, (lines, err + run_logs(lines))
    assert _contacts(tmp_path) == []  # the lost call's work is never sent again
    record = schedule.record(occurrence)
    assert record is not None and record.settlement is not None
    assert record.settlement.status == "partial", (record.settlement, run_logs(lines))
    assert "handed back" in record.settlement.reason
    view = lanes.lane_view("promotion")
    assert view is not None
    [task] = view.tasks
    assert (task["task"], task.get("claimedBy"), task["abandons"]) == (n, None, 1)
    [event] = [e for e in lanes.journal.history("pipeline/lanes") if e.type == "task-abandoned"]
    assert event.data["confirmedBy"] == event.data["runner"] != "r-gone"
    assert "went out in an earlier segment" in event.data["evidence"]


def test_the_example_lane_runner_hands_back_a_task_whose_work_went_out_in_an_earlier_segment(
        sqlite_url: str, world: tuple[LifecycleSchedule, PipelineLanes], tmp_path: Path) -> None:
    schedule, lanes = world
    occurrence, n = _a_run_whose_call_went_out(schedule, lanes)
    schedule.reconcile(occurrence_id=occurrence, confirmation={
        "runner": "r-gone", "confirmedBy": "owner", "evidence": "the run was killed mid-call"})

    code, lines, err = _lane_runner_tick(sqlite_url, tmp_path, str(LANE_RUNNER))
    assert code == 0, (lines, err)
    record = schedule.record(occurrence)
    assert record is not None and record.settlement is not None
    assert record.settlement.status == "partial" and record.settlement.reason.startswith("handed back: "), err
    view = lanes.lane_view("promotion")
    assert view is not None
    [task] = view.tasks
    assert (task["task"], task.get("claimedBy"), task["abandons"]) == (n, None, 1)
    assert leases.list_leases(_file_journal(lanes)) == []
