"""`factory-schedule health --json` over a real SQLite journal whose staged lanes wait for the owner: each
wait is a finding, told to the owner once through the notifier they configure (a fake notifier script
records its arguments), and a corrupt pipeline state is an error finding, never a failed check."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.core import LifecycleSchedule, ManualClock
from factory_schedule.core.pipeline import PipelineLanes, PipelineResult
from factory_schedule.store import open_journal
from factory_schedule.tui.host.clock import SystemClock
from tests.core.pipeline.pipeline_support import (
    Harness,
    Runs,
    adopt,
    claim_next,
    drive_maturation,
    drive_promotion,
    lane_view,
    promotion_report,
    top_n,
)
from tests.core.pipeline.pipeline_support import commission as pipeline_commission
from tests.tui.runner_support import cli, fake_notifier, notifications


def _harness(url: str, **pipeline: Any) -> Harness:
    clock = ManualClock(SystemClock().now() - timedelta(hours=2))  # recent: nothing stalls yet
    lanes = PipelineLanes(open_journal(url), clock)
    adopt(lanes, pipeline_commission(**pipeline))
    schedule = LifecycleSchedule(lanes.journal, clock)
    for account in ("claude", "chatgpt"):  # signed in: only the staged lanes' findings are left to tell
        schedule.record_account(account=account, sequence=1, sign_in="owner@example.com", overage=False,
                                recorded_by="owner")
    lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    return Harness(url, clock, lanes)


@pytest.fixture
def notifier(tmp_path: Path) -> tuple[str, Path]:
    return fake_notifier(tmp_path)


def _notified_once(url: str, kind: str, notifier: tuple[str, Path]) -> dict[str, Any]:
    command, log = notifier
    code, report, err = cli(url, "health", "--json", "--notify", command, NOTIFY_LOG=str(log))
    assert code == 1, err
    [finding] = [f for f in report["findings"] if f["kind"] == kind]
    assert [notice["kind"] for notice in report["notified"]] == [kind]
    _code, again, _ = cli(url, "health", "--json", "--notify", command, NOTIFY_LOG=str(log))
    assert again["notified"] == [] and len(notifications(log)) == 1
    return finding


def test_a_waiting_security_approve_request_is_told_to_the_owner_once(
    sqlite_url: str, notifier: tuple[str, Path]
) -> None:
    h = _harness(sqlite_url)
    runs = Runs()
    drive_maturation(h, runs, go=drive_promotion(h, runs)["decision"])
    h.lanes.request_approval(approval="publish-1", candidate="bravo", action="public-publish",
                             requested_by="run-pub", reason="ship it")
    finding = _notified_once(sqlite_url, "security-approve-waiting", notifier)
    assert finding["evidence"]["approval"] == "publish-1"
    [[text]] = notifications(notifier[1])
    assert "bravo waits at security-approve for public-publish" in text


def test_an_escalation_waiting_for_the_owner_is_told_once(sqlite_url: str, notifier: tuple[str, Path]) -> None:
    h = _harness(sqlite_url, maxRevisions=1)
    runs = Runs()
    drive_promotion(h, runs, until="review")
    for _ in range(2):  # reject the brief twice: the second is past maxRevisions 1
        runner, task = claim_next(h, "promotion", runs)
        h.lanes.review(lane="promotion", task=task["task"], runner=runner,
                       report=promotion_report("review", task["task"], review="reject"))
        if lane_view(h.lanes, "promotion").tasks[0]["stage"] == "brief":
            runner, task = claim_next(h, "promotion", runs)
            h.lanes.report(lane="promotion", task=task["task"], runner=runner,
                           report=promotion_report("brief", task["task"]))
    finding = _notified_once(sqlite_url, "escalation-waiting", notifier)
    assert finding["evidence"]["candidate"] == "bravo"
    assert "lane-counter-at-cap" in [f["kind"] for f in cli(sqlite_url, "health", "--json")[1]["findings"]]


def test_a_staged_lane_record_written_by_a_clock_30_days_ahead_is_told_to_the_owner_once_and_holds_only_itself(
        sqlite_url: str, notifier: tuple[str, Path]) -> None:
    h = _harness(sqlite_url, promotionWip=2, threshold=1)
    right = h.clock.now()
    h.clock.set((right + timedelta(days=30)).isoformat())
    ahead = h.lanes.claim(lane="promotion", run="promotion", runner="run-ahead")  # bravo, from the future
    h.clock.set((right + timedelta(minutes=1)).isoformat())
    finding = _notified_once(sqlite_url, "pipeline-clock-ahead", notifier)
    assert (finding["evidence"]["lane"], finding["evidence"]["candidate"]) == ("promotion", "bravo")
    assert isinstance(ahead, PipelineResult)
    assert finding["evidence"]["latest"][:10] == (right + timedelta(days=30)).isoformat()[:10]
    # The other candidate's work goes on at the right time, through the command line's own clock.
    code, claimed, err = cli(sqlite_url, "lanes", "claim", "--lane", "promotion", "--run", "promotion",
                             "--runner", "run-right")
    assert code == 0 and claimed["result"]["candidate"] == "charlie", (claimed, err)


def test_a_corrupt_pipeline_state_is_an_error_finding_of_health(sqlite_url: str) -> None:
    _harness(sqlite_url)
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as db:  # a hand edit of the stored state
        db.execute("update state_parts set text = replace(text, 'bravo', 'bogus') where aggregate = ?",
                   ("pipeline/lanes",))  # the state's parts: its head holds only their manifest
    code, report, err = cli(sqlite_url, "health", "--json")
    assert code == 1, err
    [finding] = [f for f in report["findings"] if f["kind"] == "pipeline-unreadable"]
    assert finding["severity"] == "error" and finding["evidence"]["code"] == "CORRUPT"
    assert report["could_not_check"] == []


def test_a_lane_stalled_past_the_owners_stall_hours_is_told_to_the_owner_once(
    sqlite_url: str, notifier: tuple[str, Path]
) -> None:
    h = _harness(sqlite_url, stallHours=1)  # its review was enqueued about two hours ago; nobody claimed it
    drive_promotion(h, Runs(), until="review")
    finding = _notified_once(sqlite_url, "lane-stalled", notifier)
    assert finding["evidence"]["stall_hours"] == 1 and finding["evidence"]["stage"] == "review"


def test_the_default_stall_hours_do_not_call_two_hours_a_stall(sqlite_url: str) -> None:
    h = _harness(sqlite_url)
    drive_promotion(h, Runs(), until="review")
    _code, report, _err = cli(sqlite_url, "health", "--json")
    assert "lane-stalled" not in [f["kind"] for f in report["findings"]]


def test_a_corrupt_pipeline_state_is_told_to_the_owner_once(sqlite_url: str, notifier: tuple[str, Path]) -> None:
    _harness(sqlite_url)
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as db:
        db.execute("update state_parts set text = replace(text, 'bravo', 'bogus') where aggregate = ?",
                   ("pipeline/lanes",))  # the state's parts: its head holds only their manifest
    command, log = notifier
    code, report, err = cli(sqlite_url, "health", "--json", "--notify", command, NOTIFY_LOG=str(log))
    assert code == 1, err
    # The edited state no longer matches what its last event sealed: its chain breaks too, named.
    assert sorted(notice["kind"] for notice in report["notified"]) == ["journal-chain-broken", "pipeline-unreadable"]
    [finding] = [f for f in report["findings"] if f["kind"] == "pipeline-unreadable"]
    assert finding["evidence"]["code"] == "CORRUPT"
    [chain] = [f for f in report["findings"] if f["kind"] == "journal-chain-broken"]
    assert chain["evidence"]["aggregate"] == "pipeline/lanes"
    _code, again, _ = cli(sqlite_url, "health", "--json", "--notify", command, NOTIFY_LOG=str(log))
    assert again["notified"] == [] and len(notifications(log)) == 2
    assert any("the staged lanes' state does not read" in text for [text] in notifications(log))
