"""The staged lanes' four runs as commission lanes: their shape, their stagger order, the proposal,
and one-line refusals of a commission that gets them wrong (nothing written)."""

from __future__ import annotations

import copy
import itertools
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.core import LifecycleSchedule, ManualClock, proposed_commission
from factory_schedule.core.commission import (
    WINDOW_CLOSES,
    commission_digest,
    commission_document,
    commission_json_schema,
    parse_commission,
)
from factory_schedule.core.errors import ScheduleError
from factory_schedule.core.identity import PIPELINE_RHYTHMS
from factory_schedule.core.limits import SCHEDULE_AGGREGATE
from factory_schedule.store import open_journal


def _minutes(wall: str) -> int:
    hour, minute = wall.split(":")
    return int(hour) * 60 + int(minute)


def _proposal(products: int = 1, stagger: int = 20, pipeline: bool = True) -> dict[str, Any]:
    return proposed_commission([f"p{i}" for i in range(products)], "2026-12-07", 40_000_000,
                               stagger_minutes=stagger, pipeline=pipeline)


def _refusal(document: dict[str, Any]) -> str:
    with pytest.raises(ScheduleError) as caught:
        parse_commission(document)
    assert caught.value.code == "INVALID"
    assert "\n" not in caught.value.message
    return caught.value.message


def _lane(document: dict[str, Any], lane: str) -> dict[str, Any]:
    return next(entry for entry in document["lanes"] if entry["lane"] == lane)


@pytest.mark.parametrize(("products", "stagger"), [(1, 20), (5, 20), (9, 12), (3, 5), (2, 30)])
def test_the_proposed_runs_follow_discovery_in_the_seeds_order_one_stagger_apart(products: int, stagger: int) -> None:
    document = _proposal(products, stagger)
    parse_commission(document)
    basics = [lane for lane in document["lanes"] if lane["rhythm"] == "basic"]
    runs = [lane for lane in document["lanes"] if lane["rhythm"] in PIPELINE_RHYTHMS]
    assert [lane["lane"] for lane in runs] == [f"portfolio/{run}" for run in PIPELINE_RHYTHMS]
    starts = [_minutes(lane["time"]) for lane in runs]
    assert starts[0] == max(_minutes(lane["time"]) for lane in basics) + stagger
    assert [later - earlier for earlier, later in itertools.pairwise(starts)] == [stagger] * 3
    for lane in runs:
        assert "weekday" not in lane  # daily, like basic
        assert lane["deadlineMinutes"] == stagger  # a run's calls end before the next run starts
        assert _minutes(lane["time"]) + lane["deadlineMinutes"] <= _minutes(WINDOW_CLOSES)
        assert _minutes("02:00") <= _minutes(lane["time"]) < _minutes(WINDOW_CLOSES)
    assert document["pipeline"]["promotionScheduler"] == "promotion"


def test_a_proposal_without_the_pipeline_is_discoverys_alone_and_keeps_its_digest() -> None:
    plain = _proposal(pipeline=False)
    assert "pipeline" not in plain
    assert not [lane for lane in plain["lanes"] if lane["rhythm"] in PIPELINE_RHYTHMS]
    assert _proposal(pipeline=False) == proposed_commission(["p0"], "2026-12-07", 40_000_000)
    with_runs = _proposal()
    stripped = copy.deepcopy(with_runs)
    del stripped["pipeline"]
    stripped["lanes"] = [lane for lane in stripped["lanes"] if lane["rhythm"] not in PIPELINE_RHYTHMS]
    assert commission_digest(stripped) == commission_digest(plain)
    assert commission_document(plain) == plain


def test_a_proposal_whose_runs_cannot_end_by_the_close_is_refused_in_one_line() -> None:
    with pytest.raises(ScheduleError) as caught:
        _proposal(products=6, stagger=20)
    assert caught.value.code == "INVALID"
    assert caught.value.message.startswith("stagger_minutes: 6 Products and the staged lanes' 4 runs")


def _swap_times(document: dict[str, Any], first: str, second: str) -> dict[str, Any]:
    changed = copy.deepcopy(document)
    a, b = _lane(changed, first), _lane(changed, second)
    a["time"], b["time"] = b["time"], a["time"]
    return changed


def test_runs_out_of_the_seeds_order_are_refused_in_one_line() -> None:
    message = _refusal(_swap_times(_proposal(), "portfolio/promotion", "portfolio/promotion-reviewer"))
    assert message == ("lanes: portfolio/promotion-reviewer at 02:20 must start after portfolio/promotion at 02:40 "
                       "(the order is promotion, promotion-reviewer, maturation, maturation-reviewer)")
    message = _refusal(_swap_times(_proposal(), "portfolio/maturation-reviewer", "portfolio/maturation"))
    assert message.startswith("lanes: portfolio/maturation-reviewer at 03:00 must start after portfolio/maturation")


def test_a_run_before_a_basic_lane_is_refused_discovery_comes_first() -> None:
    document = _proposal(products=2)
    _lane(document, "portfolio/promotion")["time"] = "02:10"
    assert _refusal(document) == ("lanes: portfolio/promotion at 02:10 must start after every basic lane "
                                  "(p1/basic starts at 02:20): discovery comes first")


def test_a_run_needs_the_pipeline_settings_and_the_settings_must_name_it() -> None:
    document = _proposal()
    del document["pipeline"]
    assert _refusal(document) == ("pipeline: the lane portfolio/promotion schedules a staged lanes' run; "
                                  "add the pipeline settings")
    document = _proposal()
    document["pipeline"]["maturationReviewer"] = "mat-review"
    assert _refusal(document) == ("pipeline: maturationReviewer is 'mat-review', but the lane "
                                  "portfolio/maturation-reviewer schedules the run 'maturation-reviewer': name the "
                                  "run after its lane's rhythm")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"weekday": 3}, "lanes[5].weekday: a promotion lane runs every day and takes no weekday"),
        ({"product": "p0", "lane": "p0/promotion"},
         "lanes[5].rhythm: a Product has only basic and full; promotion belongs to portfolio"),
        ({"lane": "portfolio/promotion-review"},
         "lanes[5].lane: 'portfolio/promotion-review' is not '<product>/<rhythm>'"),
        ({"tasks": []}, "lanes[5].tasks: Tuple should have at least 1 item after validation, not 0"),
    ],
)
def test_a_malformed_run_lane_is_refused_naming_its_field(change: dict[str, Any], expected: str) -> None:
    document = _proposal()
    assert document["lanes"][5]["lane"] == "portfolio/promotion"
    document["lanes"][5].update(change)
    assert _refusal(document).startswith(expected)


def test_a_bad_commission_with_runs_writes_nothing(tmp_path: Path) -> None:
    journal = open_journal(f"sqlite:///{tmp_path / 'journal.db'}")
    schedule = LifecycleSchedule(journal, ManualClock("2026-12-06T12:00:00Z"))
    schedule.record_commission(_proposal(pipeline=False))
    before = journal.head(SCHEDULE_AGGREGATE)
    bad = _swap_times({**_proposal(), "revision": 2}, "portfolio/promotion", "portfolio/maturation")
    with pytest.raises(ScheduleError) as caught:
        schedule.record_commission(bad)
    assert caught.value.code == "INVALID"
    assert journal.head(SCHEDULE_AGGREGATE) == before


def test_the_json_schema_knows_the_runs_rhythms() -> None:
    lane = commission_json_schema()["$defs"]["Lane"]["properties"]
    assert set(PIPELINE_RHYTHMS) <= set(lane["rhythm"]["enum"])
    assert "promotion-reviewer" in lane["lane"]["pattern"]
