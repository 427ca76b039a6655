"""The runner's segment loop over a real journal in this process, with the journal failing on purpose.

The schedule is the real one over a SQLite file; a thin wrapper makes some of its
calls raise the journal's own error (a busy or unreachable database) to show that a
report is retried until it is recorded, that a lost admission answer is never
taken as a licence to send, and that a report the journal never takes is not
dropped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pendulum
import pytest

from factory_schedule.core import LifecycleSchedule
from factory_schedule.store import JournalError, open_journal
from factory_schedule.tui.host.clock import SystemClock
from factory_schedule.tui.host.providers.calls import make_call
from factory_schedule.tui.host.providers.prompts import load_lane
from factory_schedule.tui.host.providers.work import Retry, Segment, SegmentWork
from tests.tui.provider_support import FAKE_LANE_ENV, FAKES
from tests.tui.runner_support import commission_due_now

RUNNER = "r-0123456789ab"
NO_WAIT = Retry(report_attempts=5, sleep=lambda _seconds: None)


class Failing:
    """The real schedule, whose `method` raises JournalError the first `times` calls (after doing it, if `after`)."""

    def __init__(self, schedule: LifecycleSchedule, method: str, times: int, after: bool = False) -> None:
        self.schedule = schedule
        self.method = method
        self.left = times
        self.after = after

    def __getattr__(self, name: str) -> Any:
        real = getattr(self.schedule, name)
        if name != self.method:
            return real

        def failing(**kwargs: Any) -> Any:
            if self.left <= 0:
                return real(**kwargs)
            self.left -= 1
            if self.after:
                real(**kwargs)
            raise JournalError("database is locked")

        return failing


@pytest.fixture
def schedule(sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LifecycleSchedule:
    monkeypatch.setenv("FAKE_PROVIDER_LOG", str(tmp_path / "contacts.log"))
    schedule = LifecycleSchedule(open_journal(sqlite_url), SystemClock())
    schedule.record_commission(commission_due_now())
    schedule.record_account(account="claude", sequence=1, sign_in="owner@example.com", overage=False,
                            recorded_by="owner")
    return schedule


def started(schedule: LifecycleSchedule) -> str:
    tick = schedule.start(lane="alpha/basic", runner=RUNNER)
    assert tick.kind == "admitted" and tick.occurrence is not None
    return str(tick.occurrence.id)


def binding(tmp_path: Path, *transcripts: str, bound: int = 150_000) -> Any:
    folder = tmp_path / "prompts" / "alpha" / "basic"
    (folder / "scan").mkdir(parents=True)
    (folder / "lane.toml").write_text(f'provider = "claude"\nsign_in = "owner@example.com"\nbound = {bound}\n'
                                      f'executable = "{FAKES / "claude"}"\ntimeout_minutes = 0.05\n' + FAKE_LANE_ENV)
    for i, name in enumerate(transcripts, start=1):
        (folder / "scan" / f"unit-{i}.md").write_text(f"Unit {i}. [transcript: {name}]")
    tasks = [{"task": "scan", "account": "claude", "maxCalls": 4, "callBound": 150_000}]
    return load_lane(tmp_path / "prompts", "alpha/basic", tasks)


def work(schedule: Any, occurrence: str, lane: Any) -> tuple[bool, list[dict[str, Any]], Segment]:
    lines: list[dict[str, Any]] = []
    segment = Segment(occurrence=occurrence, runner=RUNNER, sign_in="owner@example.com")
    recorded = SegmentWork(schedule, lane, segment, lines.append, retry=NO_WAIT).run()
    return recorded, lines, segment


def contacts(tmp_path: Path) -> list[str]:
    log = tmp_path / "contacts.log"
    return [json.loads(line)["prompt"] for line in log.read_text().splitlines()] if log.exists() else []


def calls_of(schedule: LifecycleSchedule, occurrence: str) -> list[Any]:
    record = schedule.settled_records().get(occurrence)
    if record is None:
        view = schedule.read()
        assert view is not None
        [record] = [o for o in view.occurrences if o.id == occurrence]
    return list(record.calls)


def test_a_report_the_journal_refuses_for_a_while_is_retried_until_it_is_recorded(
        schedule: LifecycleSchedule, tmp_path: Path) -> None:
    occurrence = started(schedule)
    recorded, _lines, segment = work(Failing(schedule, "end_call", times=3), occurrence, binding(tmp_path, "normal"))
    assert recorded is True
    assert [(c.outcome, c.debit) for c in calls_of(schedule, occurrence)] == [("ok", 3000)]
    assert segment.ended == {"run": "settled", "status": "completed", "reason": "every unit of work was asked for"}


def test_a_report_the_journal_never_takes_is_printed_and_the_segment_left_to_a_supervisor(
        schedule: LifecycleSchedule, tmp_path: Path) -> None:
    occurrence = started(schedule)
    recorded, lines, segment = work(Failing(schedule, "end_call", times=99), occurrence, binding(tmp_path, "normal"))
    assert recorded is False
    [unrecorded] = [line for line in lines if line["run"] == "unrecorded"]
    assert unrecorded["report"] == {"kind": "result", "tokens": 3000, "output": "ok", "observation": {
        **unrecorded["report"]["observation"], "status": "allowed"}}
    [call] = calls_of(schedule, occurrence)
    assert call.ended_at is None and segment.ended is None  # still in flight: health and reconcile take over


def test_an_admission_whose_answer_was_lost_is_ended_lost_and_never_sent(
        schedule: LifecycleSchedule, tmp_path: Path) -> None:
    occurrence = started(schedule)
    lane = binding(tmp_path, "normal", "normal")
    recorded, lines, _segment = work(Failing(schedule, "admit_call", times=1, after=True), occurrence, lane)
    assert recorded is True
    assert [(c.work, c.outcome) for c in calls_of(schedule, occurrence)] == [("unit-1", "lost"), ("unit-2", "ok")]
    assert contacts(tmp_path) == ["Unit 2. [transcript: normal]"]  # unit 1 never went out, and never will
    assert [line["run"] for line in lines][:1] == ["lost-in-flight"]


def test_a_bound_that_does_not_fit_the_week_defers_budget_exhausted(
        sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_PROVIDER_LOG", str(tmp_path / "contacts.log"))
    schedule = LifecycleSchedule(open_journal(sqlite_url), SystemClock())
    schedule.record_commission(commission_due_now(weekly_tokens=100_000))
    schedule.record_account(account="claude", sequence=1, sign_in="owner@example.com", overage=False,
                            recorded_by="owner")
    occurrence = started(schedule)
    recorded, lines, segment = work(schedule, occurrence, binding(tmp_path, "normal"))
    assert recorded is True
    assert [line["reason"] for line in lines if line["run"] == "refused"] == ["budget-exhausted"]
    assert segment.ended == {"run": "deferred", "reason": "budget-exhausted"}
    assert contacts(tmp_path) == []


def test_no_call_is_left_running_past_the_segments_deadline(
        schedule: LifecycleSchedule, tmp_path: Path) -> None:
    occurrence = started(schedule)
    view = schedule.read()
    assert view is not None
    [record] = [o for o in view.occurrences if o.id == occurrence]
    two_seconds_before = pendulum.parse(record.segments[-1].deadline).timestamp() - 2  # type: ignore[union-attr]
    asked: list[float] = []

    def make(*args: Any, **kwargs: Any) -> Any:
        asked.append(args[4])  # the call's timeout
        return make_call(*args, **kwargs)

    segment = Segment(occurrence=occurrence, runner=RUNNER, sign_in="owner@example.com")
    SegmentWork(schedule, binding(tmp_path, "hang"), segment, lambda _line: None, make=make, retry=NO_WAIT,
                clock=lambda: two_seconds_before).run()
    assert asked == [2.0]  # the lane's 3 s timeout, cut to the 2 s left before the deadline
    assert [c.outcome for c in calls_of(schedule, occurrence)] == ["lost"]


@pytest.mark.parametrize("how", ["settle", "settle_as"])
def test_a_settlement_reason_cut_at_a_space_still_settles_the_segment(schedule: LifecycleSchedule, how: str) -> None:
    """A reason is cut to the engine's 200 characters with no whitespace left at the cut: one whose 200th
    character is a space (a long prompt-folder path, a long refusal message) settles the segment, never is
    refused INVALID with the runner crashed and its segment left running."""
    occurrence = started(schedule)
    lines: list[dict[str, Any]] = []
    worker = SegmentWork(schedule, None, Segment(occurrence=occurrence, runner=RUNNER, sign_in=""), lines.append)
    why = "prompt folder unusable: " + "x" * 175 + " and more words past the cut"
    assert why[199] == " "
    if how == "settle":
        worker.settle(why)
    else:
        worker.settle_as("unavailable", why)
    settled = schedule.record(occurrence)
    assert settled is not None and settled.settlement is not None
    assert settled.settlement.reason == why[:199]
