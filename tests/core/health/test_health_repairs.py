"""The reconciler's plan as a pure rule: which repairs the evidence licenses, over any lease, heartbeat
and process state. No journal, process or clock: the facts are plain values."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st

from factory_schedule.core.health import HealthFacts, LeaseFact, plan_repairs

from .test_health_rules import HOST, NOW, OCCURRENCE, _running, _view

SCOPE = f"segment/{OCCURRENCE}/1"


def _lease(ago: float, ttl: float = 60, alive: bool | None = False, owner: str = "r-1",
           recycled: bool = False) -> LeaseFact:
    return LeaseFact(scope=SCOPE, owner=owner, ttl_seconds=ttl, heartbeat_at=NOW - timedelta(seconds=ago),
                     info={"pid": 4242, "host": HOST if alive is not None else "elsewhere", "runner": owner},
                     segment=(OCCURRENCE, 1), worker=False, process_alive=alive, pid_recycled=recycled)


def test_a_dead_runner_is_reconciled_as_the_supervisor_then_its_lease_removed() -> None:
    reconcile, remove = plan_repairs(HealthFacts(now=NOW, host=HOST, view=_view(_running()), leases=(_lease(121),)))
    assert (reconcile.action, reconcile.occurrence, remove.action, remove.scope) == (
        "reconcile", OCCURRENCE, "remove-lease", SCOPE)
    assert reconcile.confirmation is not None
    assert reconcile.confirmation["confirmedBy"] == f"health-reconciler@{HOST}"
    assert reconcile.confirmation["runner"] == "r-1" and "4242" in reconcile.confirmation["evidence"]


def test_a_recycled_pid_is_evidence_of_a_dead_runner_and_says_so() -> None:
    [reconcile, _remove] = plan_repairs(HealthFacts(now=NOW, host=HOST, view=_view(_running()),
                                                    leases=(_lease(121, recycled=True),)))
    assert reconcile.confirmation is not None and "now names another process" in reconcile.confirmation["evidence"]


def test_an_ended_segment_only_loses_its_lease() -> None:
    [remove] = plan_repairs(HealthFacts(now=NOW, host=HOST, view=_view(None), leases=(_lease(121),)))
    assert remove.action == "remove-lease"


def test_a_heartbeat_from_the_future_over_a_running_segment_stays_the_owners() -> None:
    assert plan_repairs(HealthFacts(now=NOW, host=HOST, view=_view(_running()), leases=(_lease(-1e5),))) == ()


@given(ago=st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), ttl=st.floats(min_value=0.5, max_value=3600),
       alive=st.sampled_from([True, False, None]), running=st.booleans())
def test_no_repair_is_ever_planned_from_ttl_alone_or_over_a_live_or_unseen_process(
    ago: float, ttl: float, alive: bool | None, running: bool
) -> None:
    lease = _lease(ago, ttl=ttl, alive=alive)
    plans = plan_repairs(HealthFacts(now=NOW, host=HOST, view=_view(_running() if running else None),
                                     leases=(lease,)))
    stale = lease.heartbeat_at + timedelta(seconds=2 * ttl) < NOW
    future = lease.heartbeat_at - NOW > timedelta(seconds=ttl)
    if alive is not False or not (stale or future):
        assert plans == ()
    actions = [plan.action for plan in plans]
    if "reconcile" in actions:
        assert running and stale and not future and actions == ["reconcile", "remove-lease"]
    if running and future:
        assert "reconcile" not in actions and "remove-lease" not in actions


def _other_lease(scope: str, worker: bool = False) -> LeaseFact:
    return LeaseFact(scope=scope, owner="run-1", ttl_seconds=60, heartbeat_at=NOW - timedelta(seconds=1000),
                     info={"pid": 4242, "host": HOST}, segment=None, worker=worker, process_alive=False)


def test_the_reconciler_acts_only_on_the_scopes_it_understands() -> None:
    """A pipeline's worker, task or resource lock is no lease of the tick's: its process may be a step
    between runs, so it is reported and left to `lanes abandon`, never removed by health."""
    others = tuple(_other_lease(scope) for scope in ("pipeline/promotion/worker", "pipeline/promotion/task/1",
                                                      "resource/gpu", "something-else"))
    facts = HealthFacts(now=NOW, host=HOST, view=_view(None), leases=(*others, _other_lease("worker", True)))
    assert [(plan.action, plan.scope) for plan in plan_repairs(facts)] == [("remove-lease", "worker")]


def test_a_lease_of_a_scope_health_does_not_own_is_reported_as_the_owners_never_repairable() -> None:
    from factory_schedule.core.health import lease_findings

    [finding] = lease_findings((_other_lease("pipeline/promotion/worker"),), _view(None), NOW, HOST)
    assert not finding.repairable and "lanes abandon" in finding.message
