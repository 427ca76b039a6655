"""The staged lanes' durable counts against what the dashboard draws: health derives open tasks, tasks done,
works completed and parked, gate decisions and waiting approvals from the lanes' own event history and
compares them with the state document the dashboard reads, on a real SQLite journal.

Every command writes its event and its state in one sealed transaction, so the two never drift by
themselves, and pruned lists (16 done tasks kept, 16 history entries) keep their totals beside them. The real
path to a disagreement is an edited state whose seal was recomputed (tests/store/forgery.py: someone who can
write the file and knows the chain's rules): the chain still verifies and the state still reads, so only the
history can tell its numbers false."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from datetime import timedelta
from typing import Any

from factory_schedule.core import LifecycleSchedule, ManualClock
from factory_schedule.core.pipeline import PIPELINE_AGGREGATE, PipelineLanes
from factory_schedule.store import open_journal
from factory_schedule.tui.host.clock import SystemClock
from factory_schedule.tui.host.health import ChainCheck, HealthScope, check_health, read_pipeline_history
from tests.core.pipeline.pipeline_support import (
    Harness,
    Runs,
    adopt,
    claim_next,
    drive_maturation,
    drive_promotion,
    top_n,
)
from tests.core.pipeline.pipeline_support import commission as pipeline_commission
from tests.store.forgery import put_whole_state, reseal_head, stored_state
from tests.tui.runner_support import cli


def _lanes_with_history(url: str) -> Harness:
    """Three promotions (more done tasks than the state keeps), a maturation under way, an abandoned claim and
    an approval request waiting: a real history."""
    clock = ManualClock(SystemClock().now() - timedelta(days=2))
    lanes = PipelineLanes(open_journal(url), clock)
    adopt(lanes, pipeline_commission(threshold=1))
    lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie", "delta"))
    h = Harness(url, clock, lanes)
    runs = Runs()
    go = drive_promotion(h, runs)["decision"]
    for _ in range(2):
        drive_promotion(h, runs, verdict="PARK")
    drive_maturation(h, runs, go=go, until="verify")
    runner, task = claim_next(h, "maturation", runs)
    h.tick()
    lanes.abandon(lane="maturation", task=task["task"], runner=runner, confirmed_by="owner", evidence="gone")
    lanes.request_approval(approval="pub-1", candidate="bravo", action="public-publish", requested_by="run",
                           reason="store listing")
    return h


def _counts_findings(url: str) -> list[Any]:
    journal = open_journal(url)
    report = check_health(journal, LifecycleSchedule(journal, SystemClock()), SystemClock().now(), "this-host",
                          HealthScope(count_history=True))
    assert not report.could_not_check, report.could_not_check
    return [finding for finding in report.findings if finding.kind == "pipeline-counts-disagree"]


def test_a_real_history_with_pruned_lists_agrees_with_the_state_the_dashboard_draws(sqlite_url: str) -> None:
    h = _lanes_with_history(sqlite_url)
    view = h.lanes.lane_view("promotion")
    assert view is not None and view.tasks_done > len(view.done), "the done list was pruned"
    assert _counts_findings(sqlite_url) == []


def test_a_resealed_state_with_false_counts_verifies_and_reads_but_its_history_disagrees(sqlite_url: str) -> None:
    _lanes_with_history(sqlite_url)
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as db:
        text = stored_state(db, PIPELINE_AGGREGATE)
        document = json.loads(text)
        document["promotion"]["tasksDone"] += 2
        document["promotion"]["completed"] = document["promotion"].get("completed", 0) + 1
        put_whole_state(db, PIPELINE_AGGREGATE, json.dumps(document))
        reseal_head(db, PIPELINE_AGGREGATE)
    journal = open_journal(sqlite_url)
    journal.verify(PIPELINE_AGGREGATE)  # the seals still verify
    view = PipelineLanes(journal, SystemClock()).lane_view("promotion")  # and the dashboard draws the forgery
    assert view is not None
    [finding] = _counts_findings(sqlite_url)
    assert finding.severity == "error"
    by_count = {d["count"]: (d["state"], d["history"]) for d in finding.evidence["differences"]}
    assert by_count == {"promotion.tasksDone": (view.tasks_done, view.tasks_done - 2),
                        "promotion.completed": (view.completed, view.completed - 1)}
    assert "Nothing is repaired" in finding.message
    code, report, _err = cli(sqlite_url, "health", "--repair", "--json", "--notify", "")  # counted, never repaired
    assert code == 1 and "pipeline-counts-disagree" in [f["kind"] for f in report["findings"]]
    assert report["repairs"] == []


def _checked(url: str, keep: bool = True) -> list[Any]:
    journal = open_journal(url)
    report = check_health(journal, LifecycleSchedule(journal, SystemClock()), SystemClock().now(), "this-host",
                          HealthScope(chains=ChainCheck(keep=keep), count_history=True))
    assert not report.could_not_check, report.could_not_check
    return [finding for finding in report.findings if finding.kind in ("pipeline-counts-disagree",
                                                                       "journal-chain-broken")]


def _more_history(h: Harness) -> None:
    runs = Runs()
    h.lanes.record_top_n(week="2026-W51", candidates=top_n("echo", "foxtrot"))
    drive_promotion(h, runs, verdict="PARK")


def test_counting_on_from_a_kept_count_gives_the_count_from_the_first_event(sqlite_url: str) -> None:
    h = _lanes_with_history(sqlite_url)
    journal = open_journal(sqlite_url)
    _history, kept = read_pipeline_history(journal)
    assert kept is not None and kept.version == journal.head(PIPELINE_AGGREGATE)
    _more_history(h)
    on_from_kept, counted_on = read_pipeline_history(journal, kept)
    from_first, counted_whole = read_pipeline_history(journal)
    assert on_from_kept is not None and from_first is not None
    assert on_from_kept.counts == from_first.counts and counted_on == counted_whole
    assert counted_on is not None and counted_on.version == journal.head(PIPELINE_AGGREGATE) > kept.version


def test_a_kept_count_whose_event_changed_is_not_counted_on_from(sqlite_url: str) -> None:
    h = _lanes_with_history(sqlite_url)
    journal = open_journal(sqlite_url)
    _history, kept = read_pipeline_history(journal)
    assert kept is not None
    _more_history(h)
    forged = replace(kept, hash="f" * 64, counts=replace(kept.counts, decisions=kept.counts.decisions + 5))
    counted, _kept = read_pipeline_history(journal, forged)
    from_first, _ = read_pipeline_history(journal)
    assert counted is not None and from_first is not None and counted.counts == from_first.counts


def test_a_resealed_state_with_false_counts_is_found_by_a_health_counting_on_from_its_checkpoint(
        sqlite_url: str) -> None:
    h = _lanes_with_history(sqlite_url)
    assert _checked(sqlite_url) == []  # counted from the first event; the count is kept beside the journal
    _more_history(h)
    assert _checked(sqlite_url) == []
    _more_history(h)
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as db:
        text = stored_state(db, PIPELINE_AGGREGATE)
        document = json.loads(text)
        document["promotion"]["tasksDone"] += 2
        put_whole_state(db, PIPELINE_AGGREGATE, json.dumps(document))
        reseal_head(db, PIPELINE_AGGREGATE)
    [finding] = _checked(sqlite_url)
    assert finding.kind == "pipeline-counts-disagree", finding
    assert [d["count"] for d in finding.evidence["differences"]] == ["promotion.tasksDone"]
