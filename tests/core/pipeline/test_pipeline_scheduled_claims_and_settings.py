"""A staged lane's scheduled claim is admitted only while its occurrence runs for the claiming token, replays
included; the lanes adopt settings only from a commission the schedule recorded; and settings adopted before a
run was scheduled never leave it unable to claim. Real journal files, no mocks."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from factory_schedule.core.pipeline import PipelineError, PipelineResult
from tests.core.pipeline.test_pipeline_scheduled_runs import (
    World,
    admitted_promotion,
    make_world,
    refused,
)


@pytest.fixture
def world(tmp_path: Path) -> World:
    return make_world(tmp_path)


@pytest.mark.parametrize("ending", ["settled", "deferred"])
def test_a_claim_whose_segment_has_ended_is_not_admitted_even_as_a_retry(world: World, ending: str) -> None:
    """'refused NOT_ADMITTED unless that occurrence is the lane's open one, running, and its segment is the
    claiming token's': a retry after the segment ended must not hand the task (and, on the command line, the
    lane's locks) back to a run outside its admission."""
    occurrence = admitted_promotion(world)
    claimed = world.lanes.claim(lane="promotion", runner="r-promo", occurrence=occurrence)
    assert isinstance(claimed, PipelineResult)
    if ending == "settled":
        world.schedule.settle(occurrence_id=occurrence, settled_by="r-promo", status="partial", reason="stopped")
    else:
        world.schedule.defer(occurrence_id=occurrence, runner="r-promo", reason="volume-unmounted")
    refused(world, "NOT_ADMITTED", lane="promotion", runner="r-promo", occurrence=occurrence)


def _settings_commission(world: World, revision: int, **pipeline: object) -> dict:
    view = world.schedule.read()
    assert view is not None
    document = copy.deepcopy(dict(view.commission))
    document["revision"] = revision
    document["pipeline"] = {**document["pipeline"], **pipeline}
    return document


def test_the_lanes_adopt_settings_only_from_a_commission_the_schedule_recorded(world: World) -> None:
    """'a run's identity is its rhythm: the settings and the lanes cannot disagree (a mismatch is refused)'. A
    commission file the schedule never recorded, which renames the scheduled promotion run, must not become the
    lanes' settings: the scheduled run `promotion` could then never claim, while nothing tells the owner."""
    stranger = _settings_commission(world, 2, promotionScheduler="promo-by-hand")
    stranger["lanes"] = [lane for lane in stranger["lanes"] if not lane["lane"].startswith("portfolio/promotion")]
    before = world.lanes.journal.head("pipeline/lanes")
    with pytest.raises(PipelineError) as caught:
        world.lanes.record_settings(stranger)
    assert caught.value.code == "REVISION", caught.value
    assert world.lanes.journal.head("pipeline/lanes") == before
    occurrence = admitted_promotion(world)
    claimed = world.lanes.claim(lane="promotion", runner="r-promo", occurrence=occurrence)
    assert isinstance(claimed, PipelineResult)


def test_a_commission_that_schedules_a_run_the_adopted_settings_name_otherwise_never_leaves_it_unable_to_claim(
        tmp_path: Path) -> None:
    """'the settings and the lanes cannot disagree (a mismatch is refused)': lanes settings adopted while no run
    was scheduled (the promotion scheduler named `promo-by-hand`), then a revision that schedules
    portfolio/promotion. Either that revision is refused when recorded (nothing written), or its run claims;
    never a run the schedule admits every night and the lanes refuse WRONG_RUN every night."""
    from factory_schedule.core import (
        SCHEDULE_AGGREGATE,
        LifecycleSchedule,
        ManualClock,
        ScheduleError,
        proposed_commission,
    )
    from factory_schedule.core.pipeline import PipelineLanes
    from factory_schedule.store import open_journal

    journal = open_journal(f"sqlite:///{tmp_path / 'journal.db'}")
    clock = ManualClock("2026-12-06T12:00:00Z")
    schedule, lanes = LifecycleSchedule(journal, clock), PipelineLanes(journal, clock)
    scheduled = proposed_commission(["alpha"], "2026-12-07", 40_000_000, pipeline=True)
    by_hand = copy.deepcopy(scheduled)
    by_hand["lanes"] = [lane for lane in by_hand["lanes"] if not lane["rhythm"].startswith(("promotion", "maturation"))]
    by_hand["pipeline"] = {"promotionScheduler": "promo-by-hand", "threshold": 1}
    schedule.record_commission(by_hand)
    lanes.record_settings(by_hand)
    lanes.record_top_n(week="2026-W49", candidates=[{"candidate": "tiny-tower", "product": "alpha", "rank": 1}])
    scheduled["revision"] = 2
    before = journal.head(SCHEDULE_AGGREGATE)
    try:
        schedule.record_commission(scheduled)
    except ScheduleError as refused:
        assert refused.code == "INVALID"
        assert journal.head(SCHEDULE_AGGREGATE) == before
        return
    clock.set("2026-12-07T02:20:00Z")
    tick = schedule.start(lane="portfolio/promotion", runner="r-promo")
    assert tick.occurrence is not None
    claimed = lanes.claim(lane="promotion", runner="r-promo", occurrence=tick.occurrence.id)
    assert isinstance(claimed, PipelineResult)


def _refused_settings(world: World, document: dict, needle: str) -> None:
    before = world.lanes.journal.head("pipeline/lanes")
    with pytest.raises(PipelineError) as caught:
        world.lanes.record_settings(document)
    assert caught.value.code == "REVISION" and needle in caught.value.message, caught.value
    assert world.lanes.journal.head("pipeline/lanes") == before


def test_a_revision_the_schedule_never_recorded_is_not_adopted_and_cannot_block_the_recorded_one(
        world: World) -> None:
    """'adopts only the settings of a commission revision the schedule recorded': a stray revision 9 is refused,
    so the owner's next recorded revision is still adopted, not refused as 'not after the recorded 9'."""
    _refused_settings(world, _settings_commission(world, 9, threshold=1), "not recorded")
    recorded = _settings_commission(world, 2, threshold=1)
    world.schedule.record_commission(recorded)
    assert world.lanes.record_settings(recorded).result == {"revision": 2}


def test_only_the_schedules_current_revision_is_adopted(world: World) -> None:
    """'... and the current one': once revision 3 is recorded, revision 2's settings (recorded, but replaced)
    are refused, and so is a document under the current number with other settings than the recorded ones."""
    second = _settings_commission(world, 2, threshold=1)
    world.schedule.record_commission(second)
    third = _settings_commission(world, 3, threshold=2)
    world.schedule.record_commission(third)
    _refused_settings(world, second, "revision 2 is not recorded as the schedule's current")
    _refused_settings(world, _settings_commission(world, 3, threshold=3), "not the recorded revision 3")
    assert world.lanes.record_settings(third).result == {"revision": 3}


def test_settings_without_a_recorded_commission_are_refused(tmp_path: Path) -> None:
    from factory_schedule.core import ManualClock
    from factory_schedule.core.pipeline import PipelineLanes
    from factory_schedule.store import open_journal
    from tests.core.pipeline.pipeline_support import commission

    lanes = PipelineLanes(open_journal(f"sqlite:///{tmp_path / 'journal.db'}"), ManualClock("2026-12-06T12:00:00Z"))
    with pytest.raises(PipelineError) as caught:
        lanes.record_settings(commission())
    assert caught.value.code == "REVISION" and "no commission is recorded" in caught.value.message
    assert lanes.state() is None
