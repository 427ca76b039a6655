"""A scheduled claim reads the schedule as every read of it does: a stored schedule that breaks any of its rules
(in the claimed lane, in another lane, across lanes or in the commission) is CORRUPT for the claim, in a fresh
process and in one that has read it for a claim before, and nothing is written. Real journal files."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.core import ScheduleError
from factory_schedule.core.commission import Commission
from factory_schedule.core.limits import SCHEDULE_AGGREGATE
from factory_schedule.core.pipeline import PipelineError, PipelineLanes, PipelineResult
from factory_schedule.core.schedule_document import ScheduleState
from factory_schedule.store import open_journal
from tests.core.pipeline.test_pipeline_scheduled_runs import admitted_promotion, make_world
from tests.store.forgery import put_whole_state, reseal_head, stored_state

Edit = Callable[[dict[str, Any]], None]


def _lane(document: dict[str, Any], lane_id: str = "portfolio/promotion") -> dict[str, Any]:
    return next(lane for lane in document["lanes"] if lane["lane"] == lane_id)


def _open_occurrence_of_another_lane(document: dict[str, Any]) -> None:
    _lane(document)["open"]["lane"] = "portfolio/maturation"


def _unknown_transition(document: dict[str, Any]) -> None:
    _lane(document)["open"]["transitions"]["bogus"] = 1


def _transition_from_the_future(document: dict[str, Any]) -> None:
    _lane(document)["open"]["transitions"]["admit"] = 10**6


def _watermark_of_another_occurrence(document: dict[str, Any]) -> None:
    _lane(document)["watermark"]["occurrence"] = "discovery/portfolio/promotion/2026-12-01"


def _commission_not_its_digest(document: dict[str, Any]) -> None:
    document["commission"]["weeklyTokens"] += 1


def _claimed_lane_missing(document: dict[str, Any]) -> None:
    document["lanes"] = [lane for lane in document["lanes"] if lane["lane"] != "portfolio/promotion"]


def _lanes_out_of_order(document: dict[str, Any]) -> None:
    document["lanes"].reverse()


def _account_unknown(document: dict[str, Any]) -> None:
    document["accounts"][0]["account"] = "someone"


def _another_daily_lane_keeps_a_week(document: dict[str, Any]) -> None:
    _lane(document, "alpha/basic")["lastWeek"] = "2026-W49"


def _another_lane_joined_at_no_instant(document: dict[str, Any]) -> None:
    _lane(document, "alpha/basic")["since"] = "yesterday"


def _another_lane_holds_this_occurrence(document: dict[str, Any]) -> None:
    _lane(document, "portfolio/maturation")["open"] = _lane(document)["open"]


def documents_validated(monkeypatch: pytest.MonkeyPatch, model: Any) -> list[object]:
    """Every document `model.model_validate` is given from now on (each check of that model, counted)."""
    validated: list[object] = []
    validate = model.model_validate

    def counted(document: Any, *args: Any, **kwargs: Any) -> Any:
        validated.append(document)
        return validate(document, *args, **kwargs)

    monkeypatch.setattr(model, "model_validate", counted)
    return validated


def _forge_schedule(path: Path, edit: Edit, reseal: bool) -> None:
    with sqlite3.connect(path) as db:
        document = json.loads(stored_state(db, SCHEDULE_AGGREGATE))
        edit(document)
        put_whole_state(db, SCHEDULE_AGGREGATE, json.dumps(document))
        if reseal:
            reseal_head(db, SCHEDULE_AGGREGATE)


@pytest.mark.parametrize("edit", [_open_occurrence_of_another_lane, _unknown_transition, _transition_from_the_future,
                                  _watermark_of_another_occurrence, _commission_not_its_digest, _claimed_lane_missing,
                                  _lanes_out_of_order, _account_unknown, _another_daily_lane_keeps_a_week,
                                  _another_lane_joined_at_no_instant, _another_lane_holds_this_occurrence])
@pytest.mark.parametrize("reseal", [True, False], ids=["resealed-by-a-forger", "hand-edited"])
@pytest.mark.parametrize("process", ["fresh", "warm", "the runner's reader"])
def test_a_claim_on_a_schedule_that_breaks_any_of_its_rules_is_corrupt_and_writes_nothing(
        tmp_path: Path, edit: Edit, reseal: bool, process: str) -> None:
    world = make_world(tmp_path)
    occurrence = admitted_promotion(world)  # by world.schedule, which then holds the state it wrote as checked
    if process == "warm":  # a process that read this schedule for a claim before the edit
        with pytest.raises(PipelineError, match="for another runner token"):
            world.lanes.claim(lane="promotion", runner="someone-else", occurrence=occurrence)
    _forge_schedule(tmp_path / "journal.db", edit, reseal)
    lanes = {"warm": world.lanes,
             "the runner's reader": PipelineLanes(world.lanes.journal, world.clock, schedule=world.schedule),
             "fresh": PipelineLanes(open_journal(f"sqlite:///{tmp_path / 'journal.db'}"), world.clock)}[process]
    before = world.pipeline_head()
    with pytest.raises(ScheduleError) as refused:
        lanes.claim(lane="promotion", runner="r-promo", occurrence=occurrence)
    assert refused.value.code == "CORRUPT" and "\n" not in refused.value.message
    assert world.pipeline_head() == before


def test_a_claim_through_the_runners_reader_checks_nothing_that_reader_checked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner process that started (or read) the segment hands its schedule reader to the lanes: the claim's
    read of the state that reader holds checks nothing again; a reader of its own checks the state."""
    world = make_world(tmp_path)
    occurrence = admitted_promotion(world)
    checked = documents_validated(monkeypatch, ScheduleState)
    shared = PipelineLanes(world.lanes.journal, world.clock, schedule=world.schedule)
    assert isinstance(shared.claim(lane="promotion", runner="r-promo", occurrence=occurrence), PipelineResult)
    assert checked == []
    own = PipelineLanes(world.lanes.journal, world.clock)
    with pytest.raises(PipelineError, match="for another runner token"):
        own.claim(lane="promotion", runner="someone-else", occurrence=occurrence)
    assert checked


def test_the_lanes_refuse_a_schedule_reader_of_another_journal(tmp_path: Path) -> None:
    """A claim reads the schedule through the reader it is given; one on another journal would let the lanes
    admit claims against a schedule that is not theirs, so it is refused when the lanes are made."""
    (tmp_path / "ours").mkdir()
    (tmp_path / "other").mkdir()
    ours, other = make_world(tmp_path / "ours"), make_world(tmp_path / "other")
    with pytest.raises(ValueError, match="another journal"):
        PipelineLanes(ours.lanes.journal, ours.clock, schedule=other.schedule)
    PipelineLanes(ours.lanes.journal, ours.clock, schedule=ours.schedule)  # its own journal's reader is taken


def _commission_schedules_no_promotion(document: dict[str, Any]) -> None:
    document["commission"]["lanes"] = [lane for lane in document["commission"]["lanes"]
                                       if lane["lane"] != "portfolio/promotion"]


@pytest.mark.parametrize("edit", [_commission_not_its_digest, _commission_schedules_no_promotion,
                                  _lanes_out_of_order, _another_lane_joined_at_no_instant])
@pytest.mark.parametrize("reseal", [True, False], ids=["resealed-by-a-forger", "hand-edited"])
@pytest.mark.parametrize("process", ["fresh", "warm", "the runner's reader"])
def test_an_unscheduled_claim_on_a_schedule_that_breaks_any_of_its_rules_is_corrupt_and_writes_nothing(
        tmp_path: Path, edit: Edit, reseal: bool, process: str) -> None:
    """A claim without an occurrence asks the schedule whether the commission schedules its run: that read checks
    the stored schedule (the commission against its digest included) before the claim reads the lanes it lists."""
    world = make_world(tmp_path)
    if process == "warm":  # a process that read this schedule for a claim before the edit
        with pytest.raises(PipelineError, match="the commission schedules the run"):
            world.lanes.claim(lane="promotion", run="promotion", runner="by-hand")
    _forge_schedule(tmp_path / "journal.db", edit, reseal)
    lanes = {"warm": world.lanes,
             "the runner's reader": PipelineLanes(world.lanes.journal, world.clock, schedule=world.schedule),
             "fresh": PipelineLanes(open_journal(f"sqlite:///{tmp_path / 'journal.db'}"), world.clock)}[process]
    before = world.pipeline_head()
    with pytest.raises(ScheduleError) as refused:
        lanes.claim(lane="promotion", run="promotion", runner="by-hand")
    assert refused.value.code == "CORRUPT" and "\n" not in refused.value.message
    assert world.pipeline_head() == before


def test_an_unscheduled_claim_parses_no_commission_the_schedules_reader_checked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The schedule's reader parses the stored commission and matches it with its digest; an unscheduled claim
    through a reader that holds that check reads the lanes it lists and parses no commission again."""
    world = make_world(tmp_path)
    shared = PipelineLanes(world.lanes.journal, world.clock, schedule=world.schedule)
    world.schedule.read()  # the runner's reader has read (and checked) the schedule
    parsed = documents_validated(monkeypatch, Commission)
    with pytest.raises(PipelineError, match="the commission schedules the run"):
        shared.claim(lane="promotion", run="promotion", runner="by-hand")
    assert parsed == []
