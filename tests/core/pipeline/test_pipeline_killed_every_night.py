"""A staged run killed every night mid-call, against the abandon cap: each night the schedule admits the
promotion run, the run claims the same task and its call goes out, and the supervisor confirms the run gone
(the schedule's reconcile ends the call lost, the lanes' abandon hands the task back). After `maxRetries`
returns the task escalates to the owner: the next night's run is idle, so the task is not sent again, and its
bound is debited once per night it went out, never more. Real journal file, no mocks."""

from __future__ import annotations

from pathlib import Path

from factory_schedule.core import SCHEDULE_AGGREGATE
from factory_schedule.core.pipeline import PipelineResult
from factory_schedule.store import Journal
from tests.core.pipeline.test_pipeline_scheduled_runs import SIGN_IN, World, make_world

MAX_RETRIES = 2
BOUND = 150_000
LANE = "portfolio/promotion"


def _tonight(world: World, day: int) -> str:
    """The night's first tick: it resumes last night's interrupted run (whose run settles what its lost call
    supports: the task was handed back) and admits tonight's; tonight's occurrence ID."""
    world.clock.set(f"2026-12-{day:02d}T02:20:00Z")
    started = world.schedule.start(lane=LANE, runner=f"r-{day}")
    if started.kind == "resumed":
        assert started.occurrence is not None
        world.schedule.settle(occurrence_id=started.occurrence.id, settled_by=f"r-{day}", status="partial",
                              reason="handed back: its call went out with unknown effect")
        started = world.schedule.start(lane=LANE, runner=f"r-{day}-tonight")
    assert started.kind == "admitted" and started.occurrence is not None, started
    return str(started.occurrence.id)


def test_a_staged_run_killed_every_night_escalates_after_the_cap_and_is_never_sent_again(tmp_path: Path) -> None:
    world = make_world(tmp_path, maxRetries=MAX_RETRIES)
    tasks, answers = set(), []
    for day in range(7, 7 + MAX_RETRIES + 1):
        occurrence = _tonight(world, day)
        runner = f"r-{day}-tonight" if day > 7 else f"r-{day}"
        claimed = world.lanes.claim(lane="promotion", runner=runner, occurrence=occurrence)
        assert isinstance(claimed, PipelineResult), claimed
        task = claimed.result["task"]
        tasks.add(task)
        assert world.schedule.admit_call(occurrence_id=occurrence, runner=runner, task="stage", work=f"task-{task}",
                                         bound=BOUND, sign_in=SIGN_IN).admitted
        world.clock.set(f"2026-12-{day:02d}T02:50:00Z")  # killed mid-call; health confirms it gone
        evidence = f"runner {runner} gone, its locks stale past 2 x TTL"
        world.schedule.reconcile(occurrence_id=occurrence, confirmation={
            "runner": runner, "confirmedBy": "health-reconciler@host", "evidence": evidence})
        answers.append(world.lanes.abandon(lane="promotion", task=task, runner=runner,
                                           confirmed_by="health-reconciler@host", evidence=evidence).result)
    assert len(tasks) == 1  # the same task, handed back, each night
    assert [answer["state"] for answer in answers] == ["pending"] * MAX_RETRIES + ["escalated"], answers

    for day in (7 + MAX_RETRIES + 1, 7 + MAX_RETRIES + 2):  # the nights after the cap: the owner decides
        occurrence = _tonight(world, day)
        runner = f"r-{day}-tonight" if day == 7 + MAX_RETRIES + 1 else f"r-{day}"
        idle = world.lanes.claim(lane="promotion", runner=runner, occurrence=occurrence)
        assert not isinstance(idle, PipelineResult) and idle.reason == "awaiting-owner", idle
        world.schedule.settle(occurrence_id=occurrence, settled_by=runner, status="completed", reason="idle")

    journal = world.schedule.journal
    assert isinstance(journal, Journal)
    history = list(journal.iter_history(SCHEDULE_AGGREGATE))
    sent = [event.data for event in history if event.type == "call-admitted"]
    [task] = tasks
    assert [call["work"] for call in sent] == [f"task-{task}"] * (MAX_RETRIES + 1)  # once a night, then never
    assert sum(call["bound"] for call in sent) == BOUND * (MAX_RETRIES + 1)
