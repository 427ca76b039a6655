"""A task claimed by a staged lane's run that ended its occurrence without reporting it (a lost call, an answer
that was not its report: the run settles `partial`) stalls its lane: the run gave back its locks, the task stays
claimed by its token, and every later night's run is idle `claimed` (a run that only deferred is taken over by its
occurrence's resumed segment instead). Health must tell the owner once that lasts past `stallHours`.
Real journal file, real locks, no mocks."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

from factory_schedule.core.pipeline import PipelineResult
from factory_schedule.store import Journal
from factory_schedule.tui.host.health import HealthScope, check_health
from factory_schedule.tui.host.lane_locks import claim_with_locks, release_locks
from factory_schedule.tui.host.process_identity import this_host
from tests.core.pipeline.test_pipeline_scheduled_runs import admitted_promotion, make_world


def test_a_task_claimed_by_a_run_that_ended_without_its_report_stalls_its_lane(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    occurrence = admitted_promotion(world)
    claimed, held = claim_with_locks(world.lanes, "promotion", "r-promo", occurrence=occurrence, pid=os.getpid())
    assert isinstance(claimed, PipelineResult) and held
    task = claimed.result["task"]
    # The run cannot go on (here: its answer was not its report): it gives back its locks and ends its
    # occurrence `partial`, so no later segment of it takes the task over.
    release_locks(world.lanes, "promotion", "r-promo", task)
    world.schedule.settle(occurrence_id=occurrence, settled_by="r-promo", status="partial",
                          reason=f"task {task}: the answer was not its report")
    world.clock.set("2026-12-08T02:20:00Z")  # the next night's run: idle, the task stays claimed
    next_night = world.schedule.start(lane="portfolio/promotion", runner="r-next")
    assert next_night.kind == "admitted" and next_night.occurrence is not None
    idle = world.lanes.claim(lane="promotion", runner="r-next", occurrence=next_night.occurrence.id)
    assert not isinstance(idle, PipelineResult)
    later = world.clock.now() + timedelta(hours=2)  # more than stallHours (24) after the claim
    journal = world.lanes.journal
    assert isinstance(journal, Journal)  # the store's class: health reads its leases too
    report = check_health(journal, world.schedule, later, this_host(), HealthScope(chains=None))
    stalled = [f for f in report.findings if f.kind == "lane-stalled" and f.evidence.get("task") == task]
    assert stalled, [(f.kind, f.message) for f in report.findings]
    assert "r-promo" in stalled[0].message and "lanes abandon" in stalled[0].message
