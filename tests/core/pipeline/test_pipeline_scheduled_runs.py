"""The staged lanes' runs scheduled like every other run: admitted once by the schedule's `start`, their
provider calls admitted against the same weekly ceiling and account stops, one claim per admitted
occurrence, and every refusal in one line with nothing written. Real journal files, no mocks."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factory_schedule.core import LifecycleSchedule, ManualClock, proposed_commission
from factory_schedule.core.pipeline import PIPELINE_AGGREGATE, PipelineError, PipelineLanes, PipelineResult
from factory_schedule.core.pipeline.scheduled import occurrence_claim_command_id
from factory_schedule.core.results import CallAdmission, CallRefusal
from factory_schedule.store import open_journal
from tests.core.pipeline.pipeline_support import promotion_report

SIGN_IN = "owner@example.com"
NIGHT = "2026-12-07"
PROMOTION_SLOT = f"{NIGHT}T02:20:00Z"  # Europe/London is UTC in December
PROMOTION = f"discovery/portfolio/promotion/{NIGHT}"


@dataclass
class World:
    clock: ManualClock
    schedule: LifecycleSchedule
    lanes: PipelineLanes

    def pipeline_head(self) -> int:
        return self.lanes.journal.head(PIPELINE_AGGREGATE)


def make_world(directory: Path, weekly_tokens: int = 40_000_000, **overrides: Any) -> World:
    journal = open_journal(f"sqlite:///{directory / 'journal.db'}")
    clock = ManualClock("2026-12-06T12:00:00Z")
    schedule = LifecycleSchedule(journal, clock)
    commission = proposed_commission(["alpha"], "2026-12-07", weekly_tokens, pipeline=True)
    commission["pipeline"] |= {"threshold": 1, "cooldownHours": 0, **overrides}
    schedule.record_commission(commission)
    schedule.record_account(account="claude", sequence=1, sign_in=SIGN_IN, overage=False, recorded_by="owner")
    lanes = PipelineLanes(journal, clock)
    lanes.record_settings(commission)
    lanes.record_top_n(week="2026-W49", candidates=[{"candidate": "tiny-tower", "product": "alpha", "rank": 1}])
    return World(clock, schedule, lanes)


@pytest.fixture
def world(tmp_path: Path) -> World:
    return make_world(tmp_path)


@contextmanager
def writes_nothing(world: World) -> Iterator[None]:
    before = world.pipeline_head()
    yield
    assert world.pipeline_head() == before


def refused(world: World, code: str, **claim: Any) -> str:
    with writes_nothing(world), pytest.raises(PipelineError) as caught:
        world.lanes.claim(**claim)
    assert caught.value.code == code, caught.value
    assert "\n" not in caught.value.message
    return caught.value.message


def admitted_promotion(world: World, runner: str = "r-promo") -> str:
    world.clock.set(PROMOTION_SLOT)
    tick = world.schedule.start(lane="portfolio/promotion", runner=runner)
    assert tick.kind == "admitted" and tick.occurrence is not None
    return str(tick.occurrence.id)


def test_a_promotion_run_is_admitted_by_start_and_claims_one_task_with_its_occurrence(world: World) -> None:
    occurrence = admitted_promotion(world)
    assert occurrence == PROMOTION
    claimed = world.lanes.claim(lane="promotion", runner="r-promo", occurrence=occurrence)
    assert isinstance(claimed, PipelineResult)
    assert claimed.command_id == f"pipeline/promotion/claim/occurrence/{PROMOTION}"
    assert claimed.command_id == occurrence_claim_command_id("promotion", PROMOTION)
    assert (claimed.result["stage"], claimed.result["candidate"], claimed.replayed) == ("select", "tiny-tower", False)
    with writes_nothing(world):
        again = world.lanes.claim(lane="promotion", run="promotion", runner="r-promo", occurrence=occurrence)
    assert isinstance(again, PipelineResult)
    assert (again.replayed, again.result) == (True, claimed.result)


def test_a_claim_for_an_occurrence_not_running_for_this_token_is_refused_not_admitted(world: World) -> None:
    world.clock.set(PROMOTION_SLOT)
    assert "is not an admitted, open occurrence" in refused(world, "NOT_ADMITTED", lane="promotion",
                                                            runner="r-promo", occurrence=PROMOTION)
    occurrence = admitted_promotion(world)
    assert refused(world, "NOT_ADMITTED", lane="promotion", runner="someone-else", occurrence=occurrence) == (
        f"{PROMOTION} runs segment 1 for another runner token")
    tomorrow = "discovery/portfolio/promotion/2026-12-08"
    refused(world, "NOT_ADMITTED", lane="promotion", runner="r-promo", occurrence=tomorrow)
    world.schedule.settle(occurrence_id=occurrence, settled_by="r-promo", status="completed", reason="idle")
    assert refused(world, "NOT_ADMITTED", lane="promotion", runner="r-promo", occurrence=occurrence) == (
        f"{PROMOTION} is not an admitted, open occurrence of portfolio/promotion")


def test_a_claim_names_the_occurrence_of_its_own_run_and_lane(world: World) -> None:
    occurrence = admitted_promotion(world)
    assert refused(world, "WRONG_RUN", lane="maturation", runner="r-promo", occurrence=occurrence) == (
        "the run 'promotion' works the promotion lane, not maturation")
    assert refused(world, "WRONG_RUN", lane="promotion", run="promotion-reviewer", runner="r-promo",
                   occurrence=occurrence) == (
        "run 'promotion-reviewer' claims with the occurrence of the run 'promotion'")
    assert refused(world, "INVALID", lane="promotion", runner="r-promo",
                   occurrence=f"discovery/alpha/basic/{NIGHT}").startswith("occurrence: discovery/alpha/basic/")
    assert refused(world, "INVALID", lane="promotion", runner="r-promo",
                   occurrence="discovery/portfolio/promotion/2026-W50").startswith("occurrence: ")


def test_a_scheduled_run_cannot_claim_without_its_occurrence(world: World) -> None:
    admitted_promotion(world)
    assert refused(world, "NOT_ADMITTED", lane="promotion", run="promotion", runner="r-promo").startswith(
        "the commission schedules the run 'promotion' (portfolio/promotion)")


def test_an_unscheduled_claim_stays_for_a_run_the_commission_does_not_schedule(tmp_path: Path) -> None:
    journal = open_journal(f"sqlite:///{tmp_path / 'journal.db'}")
    clock = ManualClock("2026-12-06T12:00:00Z")
    commission = proposed_commission(["alpha"], "2026-12-07", 40_000_000, pipeline=True)
    commission["lanes"] = [lane for lane in commission["lanes"] if not lane["rhythm"].startswith("maturation")]
    commission["pipeline"] |= {"threshold": 1}
    LifecycleSchedule(journal, clock).record_commission(commission)
    lanes = PipelineLanes(journal, clock)
    lanes.record_settings(commission)
    idle = lanes.claim(lane="maturation", run="maturation", runner="by-hand")  # not scheduled: allowed
    assert not isinstance(idle, PipelineResult)
    assert (idle.kind, idle.reason) == ("idle", "no-go")
    with pytest.raises(PipelineError) as caught:
        lanes.claim(lane="promotion", run="promotion", runner="by-hand")  # scheduled: only with its occurrence
    assert caught.value.code == "NOT_ADMITTED"


def _deferred_and_resumed(world: World, occurrence: str, earlier: str, later: str, night: str = "2026-12-08") -> None:
    world.schedule.defer(occurrence_id=occurrence, runner=earlier, reason="volume-unmounted")
    world.clock.set(f"{night}T02:20:00Z")  # a deferred run resumes in a later night's window
    resumed = world.schedule.start(lane="portfolio/promotion", runner=later)
    assert resumed.kind == "resumed" and resumed.occurrence is not None and resumed.occurrence.id == occurrence


def test_a_resumed_segment_takes_over_its_occurrences_claimed_task_never_a_second_task(world: World) -> None:
    occurrence = admitted_promotion(world, runner="r-first")
    first = world.lanes.claim(lane="promotion", runner="r-first", occurrence=occurrence)
    assert isinstance(first, PipelineResult)
    task = first.result["task"]
    _deferred_and_resumed(world, occurrence, "r-first", "r-second")
    taken = world.lanes.claim(lane="promotion", runner="r-second", occurrence=occurrence)
    assert isinstance(taken, PipelineResult) and not taken.replayed
    assert (taken.result["task"], taken.result["resumedFrom"]) == (task, "r-first")
    assert world.lanes.journal.history(PIPELINE_AGGREGATE)[-1].type == "task-handed-over"
    state = world.lanes.state()
    assert state is not None
    held = next(t for t in state.promotion.tasks if t.n == task)
    assert held.claimed_by == "r-second" and len(state.promotion.tasks) == 1
    with writes_nothing(world):  # the resumed runner's retry replays the hand-over
        again = world.lanes.claim(lane="promotion", runner="r-second", occurrence=occurrence)
    assert isinstance(again, PipelineResult) and again.replayed and again.result["task"] == task
    with pytest.raises(PipelineError) as caught:  # the earlier token's segment ended: it cannot report
        world.lanes.report(lane="promotion", task=task, runner="r-first", report={})
    assert caught.value.code in {"NOT_OWNER", "CONTRACT"}
    _deferred_and_resumed(world, occurrence, "r-second", "r-third", night="2026-12-09")  # and from the second
    third = world.lanes.claim(lane="promotion", runner="r-third", occurrence=occurrence)
    assert isinstance(third, PipelineResult) and third.result["resumedFrom"] == "r-second"


def test_a_resumed_segment_whose_task_a_supervisor_handed_back_is_answered_idle_handed_back(world: World) -> None:
    occurrence = admitted_promotion(world, runner="r-first")
    first = world.lanes.claim(lane="promotion", runner="r-first", occurrence=occurrence)
    assert isinstance(first, PipelineResult)
    world.lanes.abandon(lane="promotion", task=first.result["task"], runner="r-first", confirmed_by="owner",
                        evidence="the run is gone")
    _deferred_and_resumed(world, occurrence, "r-first", "r-second")
    with writes_nothing(world):
        idle = world.lanes.claim(lane="promotion", runner="r-second", occurrence=occurrence)
    assert not isinstance(idle, PipelineResult)
    assert (idle.kind, idle.reason) == ("idle", "occurrence-handed-back")
    assert f"claimed task {first.result['task']}" in idle.detail and "pending again" in idle.detail


def test_a_resumed_segment_whose_task_an_earlier_segment_reported_is_answered_idle_reported(world: World) -> None:
    occurrence = admitted_promotion(world, runner="r-first")
    first = world.lanes.claim(lane="promotion", runner="r-first", occurrence=occurrence)
    assert isinstance(first, PipelineResult)
    n = first.result["task"]
    world.lanes.report(lane="promotion", task=n, runner="r-first", report=promotion_report("select", n))
    _deferred_and_resumed(world, occurrence, "r-first", "r-second")
    with writes_nothing(world):
        idle = world.lanes.claim(lane="promotion", runner="r-second", occurrence=occurrence)
    assert not isinstance(idle, PipelineResult)
    assert (idle.kind, idle.reason) == ("idle", "occurrence-reported")
    assert f"reported task {n} (select)" in idle.detail


def test_only_the_running_segments_token_takes_over_a_claimed_task(world: World) -> None:
    occurrence = admitted_promotion(world, runner="r-first")
    assert isinstance(world.lanes.claim(lane="promotion", runner="r-first", occurrence=occurrence), PipelineResult)
    _deferred_and_resumed(world, occurrence, "r-first", "r-second")
    assert refused(world, "NOT_ADMITTED", lane="promotion", runner="r-stranger", occurrence=occurrence)


def test_a_runs_provider_call_is_refused_at_the_weekly_ceiling_discovery_used(tmp_path: Path) -> None:
    world = make_world(tmp_path, weekly_tokens=400_000)
    world.clock.set(f"{NIGHT}T02:00:00Z")
    discovery = world.schedule.start(lane="alpha/basic", runner="r-scan").occurrence
    assert discovery is not None
    call = world.schedule.admit_call(occurrence_id=discovery.id, runner="r-scan", task="scan", work="w",
                                     bound=150_000, sign_in=SIGN_IN)
    assert isinstance(call, CallAdmission)
    world.schedule.end_call(occurrence_id=discovery.id, runner="r-scan", call=call.call,
                            report={"kind": "result", "tokens": 150_000, "output": "ok"})
    occurrence = admitted_promotion(world)
    claimed = world.lanes.claim(lane="promotion", runner="r-promo", occurrence=occurrence)
    assert isinstance(claimed, PipelineResult)
    refusal = world.schedule.admit_call(occurrence_id=occurrence, runner="r-promo", task="stage",
                                        work=f"task-{claimed.result['task']}", bound=300_000, sign_in=SIGN_IN)
    assert isinstance(refusal, CallRefusal)
    assert (refusal.admitted, refusal.reason) == (False, "budget-exhausted")
    fits = world.schedule.admit_call(occurrence_id=occurrence, runner="r-promo", task="stage",
                                     work=f"task-{claimed.result['task']}", bound=250_000, sign_in=SIGN_IN)
    assert fits.admitted and fits.dispatch


def test_a_runs_provider_call_is_refused_while_the_account_is_stopped(world: World) -> None:
    world.clock.set(f"{NIGHT}T02:00:00Z")
    discovery = world.schedule.start(lane="alpha/basic", runner="r-scan").occurrence
    assert discovery is not None
    call = world.schedule.admit_call(occurrence_id=discovery.id, runner="r-scan", task="scan", work="w",
                                     bound=150_000, sign_in=SIGN_IN)
    assert isinstance(call, CallAdmission)
    world.schedule.end_call(occurrence_id=discovery.id, runner="r-scan", call=call.call,
                            report={"kind": "sign-in-needed", "tokens": 0, "httpStatus": 401})
    occurrence = admitted_promotion(world)
    refusal = world.schedule.admit_call(occurrence_id=occurrence, runner="r-promo", task="stage", work="task-1",
                                        bound=300_000, sign_in=SIGN_IN)
    assert isinstance(refusal, CallRefusal)
    assert (refusal.admitted, refusal.reason) == (False, "sign-in-needed")
    world.clock.set(f"{NIGHT}T02:25:00Z")
    world.schedule.record_account(account="claude", sequence=2, sign_in=SIGN_IN, overage=False, recorded_by="owner")
    again = world.schedule.admit_call(occurrence_id=occurrence, runner="r-promo", task="stage", work="task-1",
                                      bound=300_000, sign_in=SIGN_IN)
    assert again.admitted and again.dispatch


# Many runners tick the promotion lane at many moments of a few nights; each that is told it runs
# claims with the occurrence it was given, the others try anyway. Per night: one admission, one claim.
Attempt = st.tuples(st.integers(0, 2), st.integers(0, 200), st.sampled_from(["a", "b", "c", "d", "e"]))


@settings(max_examples=12)
@given(attempts=st.lists(Attempt, min_size=1, max_size=14))
def test_each_nights_run_is_admitted_exactly_once_and_claims_exactly_once(
        attempts: list[tuple[int, int, str]]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        world = make_world(Path(directory))
        admitted: dict[str, str] = {}  # occurrence: the runner the schedule admitted
        claims: dict[str, dict[str, Any]] = {}
        for night, minute, name in sorted(attempts):
            world.clock.set(f"2026-12-{7 + night:02d}T02:20:00Z")
            world.clock.advance(minutes=minute)
            runner = f"r-{night}-{minute}-{name}"
            tick = world.schedule.start(lane="portfolio/promotion", runner=runner)
            occurrence = f"discovery/portfolio/promotion/2026-12-{7 + night:02d}"
            if tick.kind == "admitted":
                assert tick.occurrence is not None and tick.occurrence.id == occurrence
                assert occurrence not in admitted
                admitted[occurrence] = runner
            try:
                answer = world.lanes.claim(lane="promotion", runner=runner, occurrence=occurrence)
            except PipelineError as error:
                assert error.code == "NOT_ADMITTED"
                assert admitted.get(occurrence) != runner or tick.kind != "admitted"
                continue
            assert admitted.get(occurrence) == runner
            if isinstance(answer, PipelineResult):
                assert occurrence not in claims or answer.replayed
                claims.setdefault(occurrence, answer.result)
                assert answer.result == claims[occurrence]
                if not answer.replayed and answer.result["stage"] in ("select", "evidence"):
                    world.lanes.report(lane="promotion", task=answer.result["task"], runner=runner, report={
                        "artifact": f"{occurrence}.md", "sha256": "ab" * 32, "evidence": ["top-n"]})
            open_occurrence = world.schedule.record(occurrence)
            if open_occurrence is not None and open_occurrence.state == "running":
                world.schedule.settle(occurrence_id=occurrence, settled_by=runner, status="completed",
                                      reason="one stage")
        recorded = [event for event in world.lanes.journal.history(PIPELINE_AGGREGATE) if event.type == "task-claimed"]
        assert len(recorded) == len(claims) <= len(admitted)
        assert len({claim["task"] for claim in claims.values()}) == len(claims)  # one task per occurrence
