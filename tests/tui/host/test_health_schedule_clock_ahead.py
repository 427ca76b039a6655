"""A clock that jumps ahead and back: what it wrote into the schedule carries instants from the future, and
the occurrence it admitted holds its lane until the clock catches up. Health names that record with its
instants, and the owner is told once."""

from __future__ import annotations

from typing import Any

from factory_schedule.core import ManualClock
from factory_schedule.tui.host import health
from factory_schedule.tui.host.notify import NEEDS_OWNER, finding_key

from .test_health import _commissioned

AHEAD = "2027-01-07T02:00:00Z"
RIGHT = "2026-12-07T02:01:00Z"


def _ahead_findings(world: tuple[Any, Any, ManualClock]) -> list[health.Finding]:
    journal, schedule, clock = world
    report = health.check_health(journal, schedule, clock.now(), "this-host", health.HealthScope(chains=None),
                                 alive=lambda _pid: False)
    return [f for f in report.findings if f.kind == "schedule-clock-ahead"]


def test_an_occurrence_admitted_by_a_clock_ahead_is_a_finding_with_its_instants_told_once(
    world: tuple[Any, Any, ManualClock],
) -> None:
    _journal, schedule, clock = world
    _commissioned(world)
    clock.set(RIGHT)
    assert _ahead_findings(world) == []
    clock.set(AHEAD)
    admitted = schedule.start(lane="alpha/basic", runner="r-ahead")
    assert admitted.kind == "admitted"
    assert _ahead_findings(world) == []  # at its own time nothing is ahead
    clock.set(RIGHT)
    assert schedule.start(lane="alpha/basic", runner="r-right").kind != "admitted"  # the lane waits for it
    [finding] = _ahead_findings(world)
    assert finding.severity == "warning" and finding.kind in NEEDS_OWNER
    assert finding.evidence["occurrence"] == admitted.occurrence.id
    assert finding.evidence["latest"].startswith("2027-01-07")
    assert set(finding.evidence["instants"]) == {"admittedAt", "segment 1 startedAt"}
    assert admitted.occurrence.id in finding.message and "ahead" in finding.message
    clock.set("2026-12-07T03:30:00Z")
    [later] = _ahead_findings(world)
    assert finding_key(later) == finding_key(finding)  # told once while the clock catches up


def test_a_call_admitted_by_a_runner_whose_clock_is_ahead_is_a_finding(
    world: tuple[Any, Any, ManualClock],
) -> None:
    """The segment started at the right time; its runner's clock, half an hour ahead, admitted a call. Every later
    transition of the occurrence (the call's end, a deferral, the settle) is refused until the clock passes that
    instant, so health names it as it names an admission from the future."""
    _journal, schedule, clock = world
    _commissioned(world)
    clock.set(RIGHT)
    started = schedule.start(lane="alpha/basic", runner="r-1")
    assert started.kind == "admitted"
    clock.set("2026-12-07T02:40:00Z")
    admission = schedule.admit_call(occurrence_id=started.occurrence.id, runner="r-1", task="scan", work="w",
                                    bound=1000, sign_in="me")
    assert admission.admitted
    clock.set("2026-12-07T02:05:00Z")
    [finding] = _ahead_findings(world)
    assert set(finding.evidence["instants"]) == {"call 1 admittedAt"}
    assert finding.evidence["latest"].startswith("2026-12-07T02:40")
