"""One reading of the journal: everything the dashboard shows, read together off the UI thread.

The poll worker builds a `Reading` whenever the journal's head moved (or the
minute did, since plans are relative to now) and hands it to the screen, which
only renders. A state that will not parse is not an exception here: it becomes
a `Problem` with its code, and the History page is still read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from pendulum import DateTime

from factory_schedule.core import SCHEDULE_AGGREGATE, ScheduleError
from factory_schedule.core.bottleneck import Bottleneck, find_bottleneck
from factory_schedule.core.pipeline import PIPELINE_AGGREGATE, PipelineLanes, PipelineState
from factory_schedule.store import Checkpoint, Event, Journal, JournalError, leases
from factory_schedule.tui.host.health import AlreadyRead, ChainCheck, HealthScope, check_health, read_pipeline

if TYPE_CHECKING:
    from factory_schedule.core import Commission, Lane, LanePlan, LaneState, LifecycleSchedule, Occurrence, ScheduleView
    from factory_schedule.core.health import HealthReport
    from factory_schedule.store.leases import Lease

HISTORY_PAGE_SIZE = 50


@dataclass(frozen=True)
class Problem:
    """Why the schedule could not be read: a ScheduleError code or the journal's own failure."""

    code: str
    message: str


@dataclass(frozen=True)
class HistoryPage:
    before: int | None  # None: the newest page
    events: tuple[Event, ...]
    head: int

    @property
    def newest(self) -> int:
        return self.events[0].version if self.events else 0

    @property
    def oldest(self) -> int:
        return self.events[-1].version if self.events else 0


@dataclass(frozen=True)
class Reading:
    head: int
    now: DateTime
    view: ScheduleView | None = None  # None before the first commission
    plans: tuple[LanePlan, ...] = ()
    problem: Problem | None = None
    history: HistoryPage | None = None
    leases: tuple[Lease, ...] | None = None  # None: leases are not available in this build
    health: HealthReport | None = None  # None: not checked (an incomplete reading, no state) or failed (health_problem)
    health_problem: str | None = None
    records: dict[str, Occurrence] = field(default_factory=dict)  # whole records of the settled ones, calls included
    extras: dict[str, Any] = field(default_factory=dict)
    pipeline: PipelineState | None = None  # the staged lanes; None before their settings, or unreadable
    pipeline_head: int = 0  # the staged lanes' version: a commit there is news to the dashboard too
    pipeline_problem: str | None = None  # why the staged lanes could not be read (their code and message)

    @cached_property
    def bottleneck(self) -> Bottleneck:
        """What holds the factory now, and what frees it: the Lifecycle and Tonight views' first sentence."""
        findings = () if self.health is None else self.health.findings
        return find_bottleneck(pipeline=self.pipeline, view=self.view, plans=self.plans, findings=findings,
                               now=self.now, zone=self.zone or "UTC")

    @property
    def commission(self) -> dict[str, Any] | None:  # JSON: the commission document
        return None if self.view is None else self.view.commission

    @cached_property
    def lanes(self) -> tuple[Lane, ...]:
        """The commission's lanes, parsed once per reading (every view row asks for them)."""
        commission = self.parsed_commission
        return () if commission is None else tuple(commission.lanes)

    @cached_property
    def parsed_commission(self) -> Commission | None:
        """The commission the schedule's reader parsed and matched with its digest, not validated again."""
        return None if self.view is None else self.view.parsed_commission()

    @property
    def zone(self) -> str | None:
        commission = self.commission
        return None if commission is None else commission.get("zone")

    def plan_for(self, lane: str) -> LanePlan | None:
        return next((plan for plan in self.plans if plan.lane == lane), None)

    def lane_state(self, lane: str) -> LaneState | None:
        if self.view is None:
            return None
        return next((state for state in self.view.lanes if state.lane == lane), None)


def read_history(journal: Journal, before: int | None) -> HistoryPage:
    head = journal.head(SCHEDULE_AGGREGATE)
    events = journal.history_desc(SCHEDULE_AGGREGATE, before=before, limit=HISTORY_PAGE_SIZE)
    return HistoryPage(before=before, events=tuple(events), head=head)


def read_leases(journal: Journal) -> tuple[Lease, ...] | None:
    try:
        return tuple(leases.list_leases(journal))
    except Exception:
        return None


def read_health(journal: Journal, schedule: LifecycleSchedule, now: DateTime, host: str,
                since: Mapping[str, Checkpoint] | None = None,
                already_read: AlreadyRead | None = None) -> tuple[HealthReport | None, str | None]:
    try:
        scope = HealthScope(chains=ChainCheck(since=since, keep=True), already_read=already_read)
        return check_health(journal, schedule, now, host, scope), None
    except Exception as error:  # the check is advisory; the dashboard keeps running
        return None, f"{type(error).__name__}: {error}"


def take_reading(
    journal: Journal,
    schedule: LifecycleSchedule,
    now: DateTime,
    history_before: int | None,
    *,
    host: str,
    complete: bool = True,
    health_since: Mapping[str, Checkpoint] | None = None,
    staged: PipelineLanes | None = None,
) -> Reading:
    """Read head, state, plans, a History page, leases and health; never raises for a bad state.

    A reading that is not `complete` (the polling dashboard's first, painted at once) skips the health
    check, which reads every event once, and the calls of the settled records. `staged` is the staged lanes'
    reader the dashboard keeps across readings, as it keeps `schedule`: an unchanged state is not checked again.
    """
    try:
        head = journal.head(SCHEDULE_AGGREGATE)
    except Exception as error:
        return Reading(head=-1, now=now, problem=Problem("UNREADABLE", f"{type(error).__name__}: {error}"))
    try:
        history = read_history(journal, history_before)
    except Exception:
        history = None
    try:
        view = schedule.read()
        plans = tuple(schedule.plan()) if view is not None else ()
        # A settled record is kept without its calls; the detail pane shows them from its settlement event.
        records = schedule.settled_records() if view is not None and complete else {}
    except ScheduleError as error:
        return Reading(head=head, now=now, problem=Problem(error.code, error.message), history=history)
    except JournalError as error:
        return Reading(head=head, now=now, problem=Problem("CORRUPT", str(error)), history=history)
    except Exception as error:
        return Reading(
            head=head, now=now, problem=Problem("UNREADABLE", f"{type(error).__name__}: {error}"), history=history
        )
    pipeline, unreadable = read_pipeline(journal, now, staged)  # the reading health's own check makes
    pipeline_problem = None if unreadable is None else f"{unreadable[0]}: {unreadable[1]}"
    health, health_problem = (None, None)
    if complete and view is not None:  # health judges the same view and lanes' state, read once
        health, health_problem = read_health(journal, schedule, now, host, health_since,
                                             AlreadyRead(view, pipeline, unreadable))
    try:
        pipeline_head = journal.head(PIPELINE_AGGREGATE)
    except Exception:
        pipeline_head = -1
    return Reading(
        head=head,
        now=now,
        view=view,
        plans=plans,
        history=history,
        leases=read_leases(journal),
        health=health,
        health_problem=health_problem,
        records=records,
        pipeline=pipeline,
        pipeline_head=pipeline_head,
        pipeline_problem=pipeline_problem,
    )
