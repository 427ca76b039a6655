"""The staged lanes' clock rule is per candidate, as the schedule's is per occurrence: a write is refused
INVALID only when the clock reads earlier than the last instant recorded on the work it changes (or the
approval it decides). One write from a clock 30 days ahead freezes that candidate alone, never every later
command of both lanes, and health reports the record from the future with its evidence."""

from __future__ import annotations

import tempfile
from datetime import datetime, timedelta
from pathlib import Path

import pendulum
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factory_schedule.core.health import staged_lane_findings
from factory_schedule.core.pipeline import PipelineError, PipelineResult
from tests.core.pipeline.pipeline_support import (
    START,
    Harness,
    lane_view,
    make_harness,
    promotion_report,
    top_n,
    writes_nothing,
)

AHEAD = pendulum.instance(datetime.fromisoformat(START)).add(days=30)
RIGHT = pendulum.instance(datetime.fromisoformat(START)).add(minutes=5)


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    harness = make_harness(tmp_path, promotionWip=2, threshold=1)
    harness.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie", "delta"))
    return harness


def _claim(h: Harness, runner: str) -> dict:
    claimed = h.lanes.claim(lane="promotion", run="promotion", runner=runner)
    assert isinstance(claimed, PipelineResult), claimed
    return claimed.result


def _one_write_from_a_clock_30_days_ahead(h: Harness) -> tuple[dict, dict]:
    """bravo's select claimed at the right time, then charlie's from a clock 30 days ahead; then the clock is
    right again."""
    h.tick()
    bravo = _claim(h, "run-bravo")
    h.clock.set(AHEAD.to_iso8601_string())
    charlie = _claim(h, "run-charlie")
    h.clock.set(RIGHT.to_iso8601_string())
    assert (bravo["candidate"], charlie["candidate"]) == ("bravo", "charlie")
    return bravo, charlie


def test_a_write_from_a_clock_ahead_freezes_only_its_own_candidate(h: Harness) -> None:
    bravo, charlie = _one_write_from_a_clock_30_days_ahead(h)
    # Every other candidate's work, and the owner's records, go on at the right time.
    done = h.lanes.report(lane="promotion", task=bravo["task"], runner="run-bravo",
                          report=promotion_report("select", bravo["task"])).result
    assert done["next"]["stage"] == "evidence"
    h.tick()
    evidence = _claim(h, "run-bravo-2")
    assert evidence["candidate"] == "bravo"
    h.lanes.abandon(lane="promotion", task=evidence["task"], runner="run-bravo-2", confirmed_by="supervisor",
                    evidence="gone")
    h.lanes.request_approval(approval="ap-1", candidate="bravo", action="public-publish", requested_by="run",
                             reason="publish the page")
    h.lanes.decide_approval(approval="ap-1", decided_by="owner", approved=True)
    h.lanes.record_top_n(week="2026-W51", candidates=top_n("bravo", "echo"))
    # charlie's own record is from the future: what changes it waits for the clock, naming why.
    for command in (
            lambda: h.lanes.report(lane="promotion", task=charlie["task"], runner="run-charlie",
                                   report=promotion_report("select", charlie["task"])),
            lambda: h.lanes.abandon(lane="promotion", task=charlie["task"], runner="run-charlie",
                                    confirmed_by="supervisor", evidence="gone")):
        with writes_nothing(h), pytest.raises(PipelineError) as refused:
            command()
        assert refused.value.code == "INVALID"
        assert "charlie" in refused.value.message and AHEAD.format("YYYY-MM-DD") in refused.value.message


def test_an_approval_is_decided_and_used_no_earlier_than_it_was_asked(h: Harness) -> None:
    h.clock.set(AHEAD.to_iso8601_string())
    h.lanes.request_approval(approval="ap-1", candidate="bravo", action="public-publish", requested_by="run",
                             reason="publish the page")
    h.clock.set(RIGHT.to_iso8601_string())
    h.lanes.request_approval(approval="ap-2", candidate="bravo", action="payment-account", requested_by="run",
                             reason="open the account")
    h.lanes.decide_approval(approval="ap-2", decided_by="owner", approved=True)
    with writes_nothing(h), pytest.raises(PipelineError) as refused:
        h.lanes.decide_approval(approval="ap-1", decided_by="owner", approved=True)
    assert refused.value.code == "INVALID" and "ap-1" in refused.value.message


def test_health_reports_a_staged_lane_record_from_the_future_with_its_evidence(h: Harness) -> None:
    _bravo, charlie = _one_write_from_a_clock_30_days_ahead(h)
    state = h.lanes.state()
    assert state is not None
    now = datetime.fromisoformat(h.clock.now().isoformat())
    findings = [f for f in staged_lane_findings(state, now, stall_after=timedelta(hours=24))
                if f.kind == "pipeline-clock-ahead"]
    [finding] = findings
    assert finding.severity == "warning"
    assert (finding.evidence["lane"], finding.evidence["candidate"]) == ("promotion", "charlie")
    assert finding.evidence["latest"].startswith(AHEAD.format("YYYY-MM-DD"))
    assert set(finding.evidence["instants"]) == {"startedAt", f"task {charlie['task']} enqueuedAt",
                                                 f"task {charlie['task']} claimedAt"}
    assert "charlie" in finding.message and "ahead" in finding.message
    # Nothing at the right time is reported.
    view = lane_view(h.lanes, "promotion")
    assert {w["candidate"] for w in view.wip} == {"bravo", "charlie"}


@settings(max_examples=25)
@given(steps=st.lists(st.tuples(st.sampled_from(("bravo", "charlie")), st.sampled_from(("claim", "abandon")),
                                st.integers(-120, 60 * 24 * 30)), min_size=1, max_size=14))
def test_a_write_is_refused_for_the_clock_exactly_when_it_reads_before_its_own_candidates_latest_instant(
        steps: list[tuple[str, str, int]]) -> None:
    """Random claims and abandons of two candidates' tasks at random clock readings (minutes from a base, up to
    30 days ahead). A model keeps the instants each candidate's record carries (its start and first task's
    enqueueing, its claim until an abandon clears it): a write is refused INVALID exactly when its reading is
    earlier than the latest of its own candidate's, whatever the other candidate carries."""
    with tempfile.TemporaryDirectory() as folder:
        h = make_harness(Path(folder), promotionWip=2, threshold=1, maxRetries=10)
        h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
        base = RIGHT
        h.clock.set(base.to_iso8601_string())
        first = [_claim(h, f"first-{k}") for k in range(2)]  # both works started at the base, then handed back
        for k, claimed in enumerate(first):
            h.lanes.abandon(lane="promotion", task=claimed["task"], runner=f"first-{k}", confirmed_by="s",
                            evidence="e")
        tasks = {task["candidate"]: task["task"] for task in lane_view(h.lanes, "promotion").tasks}
        carried: dict[str, dict[str, pendulum.DateTime]] = {c: {"start": base} for c in tasks}
        holder: dict[str, str | None] = dict.fromkeys(tasks)
        for k, (candidate, action, minutes) in enumerate(steps):
            now = base.add(minutes=minutes)
            h.clock.set(now.to_iso8601_string())
            if action == "claim":  # the oldest pending task is the one claimed
                pending = sorted((n, c) for c, n in tasks.items() if holder[c] is None)
                if not pending:
                    continue
                candidate = pending[0][1]
            elif holder[candidate] is None:
                continue  # only a claimed task is abandoned
            late = now < max(carried[candidate].values())
            try:
                if action == "claim":
                    runner = f"run-{k}"
                    answer = h.lanes.claim(lane="promotion", run="promotion", runner=runner)
                    assert isinstance(answer, PipelineResult) and answer.result["candidate"] == candidate
                    holder[candidate], carried[candidate]["claimed"] = runner, now
                else:
                    h.lanes.abandon(lane="promotion", task=tasks[candidate], runner=holder[candidate],
                                    confirmed_by="s", evidence="e")
                    holder[candidate] = None
                    carried[candidate].pop("claimed")
            except PipelineError as error:
                assert error.code == "INVALID" and late, (error, candidate, action, minutes)
                continue
            assert not late, (candidate, action, minutes)
