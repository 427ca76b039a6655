"""A GO backlog holds promotion idle, never an error: the lanes keep at most 31 gate decisions that maturation
still needs (GOs not taken in, and the ones its work holds), so promotion starts no work that could not record
its GO (`go-backlog`, nothing written), the bottleneck sentence names it, and maturation ending a work frees it."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pendulum
import pytest

from factory_schedule.core.bottleneck import find_bottleneck
from factory_schedule.core.health import staged_lane_findings
from factory_schedule.core.pipeline import PipelineResult
from factory_schedule.core.pipeline.model import MAX_DECISIONS
from tests.core.pipeline.pipeline_support import (
    Harness,
    Runs,
    drive_maturation,
    drive_promotion,
    make_harness,
    promotion_report,
    top_n,
)


def _week(k: int) -> str:
    return f"{2026 + k // 50}-W{k % 50 + 1:02d}"


@pytest.fixture
def backlog(tmp_path: Path) -> tuple[Harness, Runs]:
    """Promotion driven to GO 31 times while maturation took nothing in: the most the lanes keep."""
    h = make_harness(tmp_path, threshold=1)
    runs = Runs()
    for k in range(MAX_DECISIONS - 1):
        h.lanes.record_top_n(week=_week(k), candidates=top_n(f"cand-{k}"))
        assert drive_promotion(h, runs)["outcome"] == "go"
    h.lanes.record_top_n(week=_week(MAX_DECISIONS), candidates=top_n("one-more"))
    return h, runs


def test_a_full_go_backlog_holds_promotions_next_selection_idle_and_the_bottleneck_names_it(
        backlog: tuple[Harness, Runs]) -> None:
    h, _runs = backlog
    before = h.head()
    idle = h.lanes.claim(lane="promotion", run="promotion", runner="run-next")
    assert not isinstance(idle, PipelineResult)
    assert idle.reason == "go-backlog" and "31 GO decisions" in idle.detail
    assert h.head() == before
    state = h.lanes.state()
    assert state is not None
    bottleneck = find_bottleneck(pipeline=state, view=None, plans=[], findings=[],
                                 now=pendulum.instance(h.clock.now()), zone="UTC")
    assert not [hold for hold in bottleneck.holds if hold.kind == "start" and hold.holds.startswith("promotion")]
    [hold] = [hold for hold in bottleneck.holds if hold.kind == "go-backlog"]
    assert "31 GO decisions" in hold.holds and "maturation" in hold.frees
    # Held by the backlog, promotion's run is not stalled (maturation's waiting GO is what health tells).
    later = datetime.fromisoformat(h.clock.now().isoformat()) + timedelta(days=3)
    stalled = [f.evidence["lane"] for f in staged_lane_findings(state, later, timedelta(hours=24))
               if f.kind == "lane-stalled"]
    assert stalled == ["maturation"]


def test_maturation_ending_a_work_frees_the_backlog_and_promotion_starts_again(backlog: tuple[Harness, Runs]) -> None:
    h, runs = backlog
    assert drive_maturation(h, runs, go=1)["outcome"] == "release-ready"
    claimed = h.lanes.claim(lane="promotion", run="promotion", runner="run-next")
    assert isinstance(claimed, PipelineResult) and claimed.result["candidate"] == "one-more"
    n = claimed.result["task"]
    h.lanes.report(lane="promotion", task=n, runner="run-next", report=promotion_report("select", n))
    assert drive_promotion(h, runs)["outcome"] == "go"  # its GO is recorded, never LIMIT
