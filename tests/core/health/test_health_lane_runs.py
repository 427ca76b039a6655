"""The reconciler's rule for the staged lanes' runs, pure: a run is confirmed gone only when every lock it
holds is stale past 2 x TTL and its process is provably gone from this host, over a state that reads; then
each task it still claims is abandoned as the supervisor (before its locks go), and locks of a run that
claims nothing guard nothing. Anything less stays the owner's finding."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st

from factory_schedule.core.health import HealthFacts, LeaseFact, judge, plan_repairs
from tests.core.pipeline.pipeline_support import Runs, claim_next, drive_promotion, make_harness, top_n

HOST = "this-mac"
_SHARED: list = []


def _claimed(tmp_path):
    """A real promotion state whose evidence task is claimed by `run-N`: (state, runner, task, now)."""
    h = make_harness(tmp_path)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    runs = Runs()
    drive_promotion(h, runs, until="evidence")
    runner, task = claim_next(h, "promotion", runs)
    return h.lanes.state(), runner, task["task"], h.clock.now()


def _lock(scope: str, owner: str, now, ago: float = 300, ttl: float = 60, alive: bool | None = False) -> LeaseFact:
    return LeaseFact(scope=scope, owner=owner, ttl_seconds=ttl, heartbeat_at=now - timedelta(seconds=ago),
                     info={"pid": 4242, "host": HOST, "runner": owner}, segment=None, worker=False,
                     process_alive=alive)


def _locks(runner: str, task: int, now, **kwargs) -> tuple[LeaseFact, ...]:
    return (_lock("pipeline/promotion/worker", runner, now, **kwargs),
            _lock(f"pipeline/promotion/task/{task}", runner, now, **kwargs))


def test_a_dead_lane_run_is_confirmed_gone_as_the_supervisor_before_its_locks_are_removed(tmp_path):
    state, runner, task, now = _claimed(tmp_path)
    plans = plan_repairs(HealthFacts(now=now, host=HOST, pipeline=state, leases=_locks(runner, task, now)))
    assert [(p.action, p.scope) for p in plans] == [
        ("abandon-task", f"pipeline/promotion/task/{task}"), ("remove-lease", "pipeline/promotion/worker"),
        ("remove-lease", f"pipeline/promotion/task/{task}")]
    abandon = plans[0]
    assert (abandon.lane, abandon.task, abandon.owner) == ("promotion", task, runner)
    assert abandon.confirmation is not None
    assert abandon.confirmation["confirmedBy"] == f"health-reconciler@{HOST}" and "4242" in abandon.confirmation[
        "evidence"]
    assert all(p.after == runner for p in plans[1:]), "its locks wait for the abandon"
    [finding] = [f for f in judge(HealthFacts(now=now, host=HOST, pipeline=state,
                                              leases=_locks(runner, task, now))).findings
                 if f.kind == "dead-lane-run"]
    assert finding.repairable and finding.evidence["claimed"] == [{"lane": "promotion", "task": task,
                                                                   "stage": "evidence"}]


def test_the_locks_of_a_lane_run_that_claims_nothing_are_removed_without_an_abandon(tmp_path):
    state, _runner, _task, now = _claimed(tmp_path)
    plans = plan_repairs(HealthFacts(now=now, host=HOST, pipeline=state,
                                     leases=(_lock("resource/browser", "run-gone", now),)))
    assert [(p.action, p.after) for p in plans] == [("remove-lease", None)]


def test_no_lane_run_is_confirmed_gone_over_a_state_that_does_not_read(tmp_path):
    _state, runner, task, now = _claimed(tmp_path)
    facts = HealthFacts(now=now, host=HOST, pipeline=None, pipeline_problem=("CORRUPT", "bad"),
                        leases=_locks(runner, task, now))
    assert plan_repairs(facts) == ()
    assert {f.kind for f in judge(facts).findings} >= {"stale-lease", "pipeline-unreadable"}


@given(ages=st.tuples(st.floats(-1e5, 1e5, allow_nan=False), st.floats(-1e5, 1e5, allow_nan=False)),
       alive=st.tuples(st.sampled_from([True, False, None]), st.sampled_from([True, False, None])))
def test_a_lane_run_stays_the_owners_unless_every_lock_is_stale_and_its_process_provably_gone(
        tmp_path_factory, ages, alive):
    if not _SHARED:  # one real state for every example (built once; hypothesis reruns the body)
        _SHARED.append(_claimed(tmp_path_factory.mktemp("lane-runs")))
    state, runner, task, now = _SHARED[0]
    locks = (_lock("pipeline/promotion/worker", runner, now, ago=ages[0], alive=alive[0]),
             _lock(f"pipeline/promotion/task/{task}", runner, now, ago=ages[1], alive=alive[1]))
    plans = plan_repairs(HealthFacts(now=now, host=HOST, pipeline=state, leases=locks))
    conclusive = all(a is False for a in alive) and all(age > 120 for age in ages)
    assert bool(plans) == conclusive
    if plans:
        assert plans[0].action == "abandon-task"
