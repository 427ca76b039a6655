"""Adversarial checks of the staged lanes' scheduled claims (review of 'Scheduled like every other run'): a claim
is admitted only while its occurrence runs for the claiming token, replays included; and the lanes' settings
never disagree with the runs the recorded commission schedules. Real journal files, no mocks."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from factory_schedule.core.pipeline import PipelineError, PipelineResult
from tests.core.test_pipeline_scheduled_runs import (
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
    assert caught.value.code == "INVALID", caught.value
    assert world.lanes.journal.head("pipeline/lanes") == before
    occurrence = admitted_promotion(world)
    claimed = world.lanes.claim(lane="promotion", runner="r-promo", occurrence=occurrence)
    assert isinstance(claimed, PipelineResult)
