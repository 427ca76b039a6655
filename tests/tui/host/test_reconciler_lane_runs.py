"""The health reconciler over the staged lanes' runs, with real processes: a lane run whose process is killed
and whose locks had no heartbeat for 2 x TTL is confirmed gone by `health --repair` (the tick's repair pass is
the same function) through the lanes' own `abandon`, journaled with its evidence: an ordinary task returns to
pending as itself, an interrupted revision is a failed start of its reserved round. A live run's claim and
locks are never touched."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from typing import Any

import pendulum
import pytest

from factory_schedule.core import ManualClock
from factory_schedule.core.pipeline import PIPELINE_AGGREGATE, PipelineLanes
from factory_schedule.store import leases, open_journal
from factory_schedule.tui.cli.main import main
from factory_schedule.tui.host.process_identity import this_host
from factory_schedule.tui.host.reconciler import removal_records
from tests.core.pipeline.pipeline_support import (
    Harness,
    Runs,
    adopt,
    claim_next,
    commission,
    drive_promotion,
    promotion_report,
    top_n,
)

TTL = 0.2


def promotion_harness(url: str, monkeypatch: pytest.MonkeyPatch) -> Harness:
    """Promotion configured and driven by an in-process engine whose clock runs an hour behind the host's, so
    the command line's later readings (the system clock) come after it."""
    monkeypatch.delenv("FACTORY_NOTIFY", raising=False)
    clock = ManualClock(pendulum.now("UTC").subtract(hours=1))
    lanes = PipelineLanes(open_journal(url), clock)
    adopt(lanes, commission(maxRevisions=2))
    lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    return Harness(url, clock, lanes)


@pytest.fixture
def harness(sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> Harness:
    return promotion_harness(sqlite_url, monkeypatch)


def _command(url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str) -> Any:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    capsys.readouterr()
    code = main(["--journal", url, *args])
    lines = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    return code, json.loads(lines[-1])


def _run_process() -> subprocess.Popen[bytes]:
    """A lane run's process: a real one, whose pid its claim records, in a session of its own as the tick
    starts every runner (a session with live processes keeps the run alive)."""
    return subprocess.Popen(["sleep", "60"], stdin=subprocess.DEVNULL, start_new_session=True)


def _claim_as(h: Harness, capsys, monkeypatch, process: subprocess.Popen[bytes], runner: str) -> int:
    code, claimed = _command(h.url, capsys, monkeypatch, "lanes", "claim", "--lane", "promotion", "--run",
                             "promotion", "--runner", runner, "--ttl", f"{TTL:g}", "--pid", str(process.pid))
    assert code == 0, claimed
    return claimed["result"]["task"]


def _kill(process: subprocess.Popen[bytes]) -> None:
    process.kill()
    process.wait()
    time.sleep(2 * TTL + 0.3)  # past 2 x TTL without a heartbeat


def _events(url: str) -> list[Any]:
    return open_journal(url).history(PIPELINE_AGGREGATE)


def test_a_killed_lane_run_is_confirmed_gone_by_the_next_health_repair_and_its_task_returns_to_pending(
        harness: Harness, capsys, monkeypatch):
    drive_promotion(harness, Runs(), until="evidence")
    process = _run_process()
    task = _claim_as(harness, capsys, monkeypatch, process, "run-killed")
    _kill(process)
    code, report = _command(harness.url, capsys, monkeypatch, "health", "--json")
    assert code == 1
    assert "dead-lane-run" in {f["kind"] for f in report["findings"]}
    _code, report = _command(harness.url, capsys, monkeypatch, "health", "--repair", "--json")
    kinds = [repair["kind"] for repair in report["repairs"]]
    assert kinds == ["reconciled-dead-lane-run", "removed-stale-lease", "removed-stale-lease"], report["repairs"]
    event = _events(harness.url)[-1]
    assert event.type == "task-abandoned" and event.data["task"] == task
    assert event.data["confirmedBy"] == f"health-reconciler@{this_host()}"
    assert str(process.pid) in event.data["evidence"]
    journal = open_journal(harness.url)
    assert leases.list_leases(journal) == []
    assert {record["scope"] for record in removal_records(journal)} == {
        "pipeline/promotion/worker", f"pipeline/promotion/task/{task}"}
    again = _run_process()
    try:
        assert _claim_as(harness, capsys, monkeypatch, again, "run-next") == task, "the same task, as itself"
    finally:
        again.kill()
        again.wait()
    assert "dead-lane-run" not in {f["kind"] for f in
                                   _command(harness.url, capsys, monkeypatch, "health", "--json")[1]["findings"]}


def _rejected_brief(harness: Harness) -> int:
    """Drive promotion to its review and reject the brief: a revision task waits. The review task's number."""
    runs = Runs()
    drive_promotion(harness, runs, until="review")
    reviewer, review = claim_next(harness, "promotion", runs)
    harness.tick()
    harness.lanes.review(lane="promotion", task=review["task"], runner=reviewer,
                         report=promotion_report("review", review["task"], review="reject"))
    return int(review["task"])


def test_a_killed_revision_run_is_a_failed_start_of_its_round_never_a_fresh_repair(harness: Harness, capsys,
                                                                                    monkeypatch):
    review = _rejected_brief(harness)
    process = _run_process()
    task = _claim_as(harness, capsys, monkeypatch, process, "run-reviser")
    _kill(process)
    _code, report = _command(harness.url, capsys, monkeypatch, "health", "--repair", "--json")
    [reconciled] = [r for r in report["repairs"] if r["kind"] == "reconciled-dead-lane-run"]
    assert "failed start 1" in reconciled["message"]
    event = _events(harness.url)[-1]
    assert event.type == "repair-start-failed" and event.data["outcome"] == "requeued"
    assert (event.data["task"], event.data["parent"]) == (task, review)
    state = PipelineLanes(open_journal(harness.url), ManualClock(pendulum.now("UTC"))).state()
    assert state is not None
    requeued = state.promotion.task(task)
    assert requeued is not None and requeued.claimed_by is None
    assert requeued.revision is not None and requeued.revision.failed_starts == 1


def test_a_live_lane_run_without_heartbeats_keeps_its_claim_and_its_locks(harness: Harness, capsys, monkeypatch):
    drive_promotion(harness, Runs(), until="evidence")
    process = _run_process()
    try:
        task = _claim_as(harness, capsys, monkeypatch, process, "run-hung")
        time.sleep(2 * TTL + 0.3)
        before = len(_events(harness.url))
        _code, report = _command(harness.url, capsys, monkeypatch, "health", "--repair", "--json")
        assert report["repairs"] == []
        assert {f["kind"] for f in report["findings"]} >= {"run-hung"}  # alive, its locks stale: told to the owner
        assert len(_events(harness.url)) == before
        assert len(leases.list_leases(open_journal(harness.url))) == 2
        state = PipelineLanes(open_journal(harness.url), ManualClock(pendulum.now("UTC"))).state()
        assert state is not None and state.promotion.task(task).claimed_by == "run-hung"  # type: ignore[union-attr]
    finally:
        process.kill()
        process.wait()


def test_a_supervisor_abandoning_a_revision_by_hand_keeps_the_partial_output_it_names(harness: Harness, capsys,
                                                                                       monkeypatch):
    _rejected_brief(harness)
    process = _run_process()
    task = _claim_as(harness, capsys, monkeypatch, process, "run-by-hand")
    _kill(process)
    code, answer = _command(harness.url, capsys, monkeypatch, "lanes", "abandon", "--lane", "promotion", "--task",
                            str(task), "--runner", "run-by-hand", "--confirmed-by", "owner", "--evidence",
                            "checked: its process is gone", "--partial", "drafts/brief-half.md")
    assert code == 0 and answer["result"]["state"] == "pending" and answer["result"]["failedStarts"] == 1
    assert set(answer["leases"].values()) == {"removed"}
    event = _events(harness.url)[-1]
    assert (event.type, event.data["partial"], event.data["confirmedBy"]) == (
        "repair-start-failed", ["drafts/brief-half.md"], "owner")
