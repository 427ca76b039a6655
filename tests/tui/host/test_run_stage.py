"""`factory-schedule run` for a staged lane's run under `tick`: claim with the admitted occurrence, one call
through the fake `claude` (admitted and ended like every call), the provider's final answer reported as the
stage's report, the occurrence settled. Real processes over a real journal file."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pendulum
import pytest

from factory_schedule.core import LifecycleSchedule
from factory_schedule.core.pipeline import PipelineLanes
from factory_schedule.store import leases
from factory_schedule.tui.host.providers.stage_run import parse_answer, stage_prompt, stages_of
from tests.tui.provider_support import fake_path
from tests.tui.runner_support import CLI, REPO, cli_env, json_lines, run_logs

from .test_run import runner_lines, write_lane
from .test_tick_lane_runs import _file_journal, promotion_run_world

TRANSCRIPTS = REPO / "tests" / "fakes" / "transcripts"
SELECT_REPORT = {"artifact": "promotion/tiny-tower/select.md", "sha256": "ab" * 32, "evidence": ["top-n"]}


def _transcripts(folder: Path, answer: str, sleep: float = 0.0) -> Path:
    """The `normal` Claude transcript whose result text is `answer`, as transcript `stage` (after `sleep`
    seconds of a call that is still running)."""
    (folder / "claude").mkdir(parents=True)
    lines = [f"#sleep {sleep:g}"] if sleep else []
    for line in (TRANSCRIPTS / "claude" / "normal.jsonl").read_text().splitlines():
        if '"type":"result"' in line:
            event = json.loads(line)
            event["result"] = answer
            line = json.dumps(event)
        lines.append(line)
    (folder / "claude" / "stage.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def _prompts(folder: Path) -> Path:
    stages = {f"{stage}.md": f"Work the {stage} stage. [transcript: stage]\n" for stage in stages_of("promotion")}
    write_lane(folder, "portfolio/promotion", 'provider = "claude"\nsign_in = "owner@example.com"\n'
               'bound = 150000\ntimeout_minutes = 0.5\n', {"stage": stages})
    return folder


@pytest.fixture
def world(sqlite_url: str) -> tuple[LifecycleSchedule, PipelineLanes]:
    return promotion_run_world(sqlite_url)


def _tick_run(url: str, tmp_path: Path, answer: str, sleep: float = 0.0,
              watch: Callable[[], None] | None = None) -> tuple[int, list[dict[str, Any]], str]:
    """A tick (lease TTL 1 s) running `run` for the promotion run; `watch` is called every 0.1 s meanwhile."""
    environment = cli_env(url, FAKE_PROVIDER_LOG=str(tmp_path / "contacts.log"),
                          FAKE_TRANSCRIPTS=str(_transcripts(tmp_path / "transcripts", answer, sleep)))
    environment["PATH"] = fake_path(environment["PATH"])
    tick = subprocess.Popen([*CLI, "--journal", url, "tick", "--ttl", "1", "--lane", "portfolio/promotion", "--",
                             *CLI, "run", "--prompts", str(_prompts(tmp_path / "prompts"))],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment, cwd=REPO)
    try:
        while watch is not None and tick.poll() is None:
            watch()
            time.sleep(0.1)
        out, err = tick.communicate(timeout=180)
    finally:
        if tick.poll() is None:
            tick.kill()
    lines = json_lines(out)
    return tick.returncode, lines, err + run_logs(lines)  # the runner's own output is in its run's log


def _contacts(tmp_path: Path) -> list[str]:
    log = tmp_path / "contacts.log"
    return [json.loads(line)["prompt"] for line in log.read_text().splitlines()] if log.exists() else []


def test_run_claims_the_runs_task_sends_its_stage_prompt_and_reports_the_answer(
        sqlite_url: str, world: tuple[LifecycleSchedule, PipelineLanes], tmp_path: Path) -> None:
    schedule, lanes = world
    code, lines, err = _tick_run(sqlite_url, tmp_path, "```json\n" + json.dumps(SELECT_REPORT) + "\n```")
    assert code == 0, (lines, err)
    [started] = [line for line in lines if "tick" in line]
    occurrence = started["tick"]["occurrence"]["id"]
    steps = [line["run"] for line in runner_lines(err)]
    assert steps == ["started", "claimed", "call", "reported", "settled"], err
    [claimed] = [line for line in runner_lines(err) if line["run"] == "claimed"]
    assert claimed["ttl"] == 1  # the tick's lease TTL
    [prompt] = _contacts(tmp_path)
    assert prompt == "Work the select stage. [transcript: stage]"  # the fake logs a prompt's first line
    record = schedule.record(occurrence)
    assert record is not None and record.settlement is not None
    assert (record.settlement.status, record.settlement.reason) == ("completed", "task 1 (select) reported")
    assert [(call.task, call.work, call.outcome) for call in record.calls] == [("stage", "task-1", "ok")]
    view = lanes.lane_view("promotion")
    assert view is not None and [task["stage"] for task in view.done] == ["select"]
    assert [task["stage"] for task in view.tasks] == ["evidence"]
    assert leases.list_leases(_file_journal(lanes)) == []


def test_a_runs_lane_locks_are_heartbeated_through_a_provider_call_longer_than_their_recovery_window(
        sqlite_url: str, world: tuple[LifecycleSchedule, PipelineLanes], tmp_path: Path) -> None:
    _schedule, lanes = world
    journal = _file_journal(lanes)
    seen: list[str] = []

    def no_lane_lock_goes_stale() -> None:
        now = pendulum.now("UTC")
        for lease in leases.list_leases(journal):
            if lease.scope.startswith("pipeline/"):
                assert not leases.stale(lease, now), f"{lease.scope} went stale under a live call"
                seen.append(lease.scope)

    code, lines, err = _tick_run(sqlite_url, tmp_path, "```json\n" + json.dumps(SELECT_REPORT) + "\n```",
                                 sleep=3.5, watch=no_lane_lock_goes_stale)  # 2 x TTL is 2 s
    assert code == 0, (lines, err)
    assert [line["run"] for line in runner_lines(err)][-2:] == ["reported", "settled"], err
    assert len(seen) > 20, seen  # watched through the call, not only before or after it


def test_an_answer_that_is_not_the_stages_report_settles_partial_and_leaves_the_task_claimed(
        sqlite_url: str, world: tuple[LifecycleSchedule, PipelineLanes], tmp_path: Path) -> None:
    schedule, lanes = world
    code, lines, err = _tick_run(sqlite_url, tmp_path, json.dumps({"artifact": "x.md"}))
    assert code == 0, (lines, err)
    refused = [line for line in runner_lines(err) if line["run"] == "report-refused"]
    assert len(refused) == 1 and refused[0]["error"].startswith("CONTRACT"), err
    [started] = [line for line in lines if "tick" in line]
    record = schedule.record(started["tick"]["occurrence"]["id"])
    assert record is not None and record.settlement is not None and record.settlement.status == "partial"
    view = lanes.lane_view("promotion")
    assert view is not None and view.done == [] and view.tasks[0].get("claimedBy") is not None
    assert leases.list_leases(_file_journal(lanes)) == []  # a supervisor may abandon it once the run is gone


def test_run_check_wants_one_prompt_per_stage_the_run_works(
        sqlite_url: str, world: tuple[LifecycleSchedule, PipelineLanes], tmp_path: Path) -> None:
    prompts = _prompts(tmp_path / "prompts")
    (prompts / "portfolio" / "promotion" / "stage" / "brief.md").unlink()
    environment = cli_env(sqlite_url)
    environment["PATH"] = fake_path(environment["PATH"])
    done = subprocess.run([*CLI, "--journal", sqlite_url, "run", "--check", "--lane", "portfolio/promotion",
                           "--prompts", str(prompts)], capture_output=True, text=True, env=environment, cwd=REPO,
                          timeout=60)
    assert done.returncode == 2
    [line] = json_lines(done.stdout)
    assert line["error"].endswith("no prompt for stage 'brief' (one file per stage: select.md, evidence.md, "
                                  "brief.md, prototype.md, verify.md)")


def test_the_stages_a_run_works_and_its_prompt_and_answer() -> None:
    assert stages_of("promotion") == ("select", "evidence", "brief", "prototype", "verify")
    assert stages_of("promotion-reviewer") == ("review", "decide")
    assert stages_of("maturation") == ("intake", "boundary", "slice", "verify", "iterate")
    assert stages_of("maturation-reviewer") == ("review", "release")
    prompt = stage_prompt("Decide.", "promotion", {"task": 7, "stage": "decide", "candidate": "c"})
    assert "verdict, criteriaSha256, verifierArtifactSha256" in prompt and '"task": 7' in prompt
    assert parse_answer('```json\n{"a": 1}\n```') == {"a": 1} == parse_answer(' {"a": 1} ')
    for bad in (None, "[1]", "not json"):
        with pytest.raises(ValueError):
            parse_answer(bad)


def test_a_run_whose_lane_lock_is_held_settles_unavailable_and_sends_nothing(
        sqlite_url: str, world: tuple[LifecycleSchedule, PipelineLanes], tmp_path: Path) -> None:
    """A staged lane's run whose lane lock another run holds (the lane's reviewer run still working: scheduler
    and reviewer share the lane's worker singleton) ends its segment like any refused claim: settled
    `unavailable`, nothing sent, the task left unclaimed; never an exit with its segment left running for a
    supervisor to reconcile (`lanes claim` exits 4 there, and examples/lane_runner.sh settles)."""
    schedule, lanes = world
    journal = _file_journal(lanes)
    leases.acquire(journal, "pipeline/promotion/worker", "rev-still-working", 600, pendulum.now("UTC"),
                   {"runner": "rev-still-working", "lane": "promotion"})
    code, lines, err = _tick_run(sqlite_url, tmp_path, json.dumps(SELECT_REPORT))
    [started] = [line for line in lines if "tick" in line]
    record = schedule.record(started["tick"]["occurrence"]["id"])
    assert record is not None and record.settlement is not None, (code, lines, err)
    assert record.settlement.status == "unavailable"
    assert _contacts(tmp_path) == []
    view = lanes.lane_view("promotion")
    assert view is not None and all(task.get("claimedBy") is None for task in view.tasks)
