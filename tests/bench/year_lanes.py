"""The staged lanes' runs inside the year benchmark (tests/bench/year.py): scheduled like every other run.

`with_runs` adds the four runs to the year's commission as daily portfolio lanes (promotion,
promotion-reviewer, maturation, maturation-reviewer) and the pipeline's settings. The year's ticks
then `start` them like every other lane, at launchd's times for them; `StagedLanes.run_segment` is
what a run's runner does with its admitted occurrence: claim its lane's task with the occurrence,
ask `admit_call` for the one provider call of its stage, report the call (`end_call`), report the
stage's artifact (outcomes from tests/bench/pipeline_year.py's seeded draws) and settle. A call the
schedule refuses (the week's ceiling, an account stop) defers the occurrence as discovery's runners
do; when it resumes, its claim takes over the earlier segment's task (`task-handed-over`) and works it
(were that task reported or returned meanwhile, the claim is answered idle). Every Monday noon the
portfolio records the week's Top-N; the owner answers escalations at noon.

The pipeline's own commands (settings, Top-N, claim, report, abandon, escalation) are timed here, per
30 days, and kept out of the year's schedule figures; the schedule commands the runs make (start,
admit_call, end_call, defer, settle) are the year's like any lane's.
"""

from __future__ import annotations

import random
import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pendulum import Date

from factory_schedule.core import ScheduleError, iso_week_of
from factory_schedule.core.commission import PROPOSED_TASKS
from factory_schedule.core.identity import PIPELINE_RHYTHMS, PORTFOLIO, pipeline_lane_of_run
from factory_schedule.core.limits import SCHEDULE_LIMITS
from factory_schedule.core.pipeline import PIPELINE_AGGREGATE, ClaimIdle, PipelineError, PipelineLanes
from factory_schedule.core.pipeline.model import MAX_STATE_BYTES
from tests.bench.pipeline_year import parked, stage_report

# After the nine Products' basic lanes (the last starts at 04:40), one run every 20 minutes.
RUN_TIMES = dict(zip(PIPELINE_RHYTHMS, ("04:50", "05:10", "05:30", "05:50"), strict=True))
RUN_CLOSES = "07:00"
RUN_DEADLINE_MINUTES = 20
SETTINGS = {"threshold": 2, "cooldownHours": 12}
PERIOD_DAYS = 30
DEFERRAL_FOR_REFUSAL = {"limited": "usage-limit", "sign-in-needed": "sign-in-needed",
                        "budget-exhausted": "budget-exhausted"}


def with_runs(commission: dict[str, Any]) -> dict[str, Any]:
    """The commission with the staged lanes' four runs as its lanes and the pipeline's settings."""
    lanes = [dict(lane) for lane in commission["lanes"]]
    for run in PIPELINE_RHYTHMS:
        lanes.append({"lane": f"{PORTFOLIO}/{run}", "product": PORTFOLIO, "rhythm": run, "time": RUN_TIMES[run],
                      "closes": RUN_CLOSES, "deadlineMinutes": RUN_DEADLINE_MINUTES,
                      "tasks": [dict(task) for task in PROPOSED_TASKS[run]]})
    return {**commission, "lanes": lanes, "pipeline": dict(SETTINGS)}


@dataclass
class LaneFigures:
    """The pipeline's own commands: each one's seconds per 30 days, the largest state, outcomes."""

    each: list[list[float]] = field(default_factory=list)  # every written command's seconds, per 30 days
    by_command: dict[str, list[float]] = field(default_factory=dict)  # every written command's seconds, by name
    largest_state: int = 0
    outcomes: Counter = field(default_factory=Counter)


class StagedLanes:
    """The runs' runner and the portfolio's and owner's pipeline records, over the year's journal and clock.

    `year` is tests/bench/year.py's Year: its schedule, clock, `timed` (the year's figures), and
    `sampling_seconds` (time kept out of the year's figures, where the pipeline's own commands go)."""

    def __init__(self, year: Any, journal: Any, sign_in: str) -> None:
        self.year = year
        self.sign_in = sign_in
        # The uncounted journal (the year counts its own), and the year's schedule as the runner's reader: a run's
        # claim reads the schedule through the reader that started its segment, as `factory-schedule run` does.
        self.lanes = PipelineLanes(journal, year.clock, schedule=year.schedule)
        self.rng = random.Random(f"{year.seed}/staged-lanes")
        self.figures = LaneFigures()
        self.day = 0

    @staticmethod
    def schedules(lane: str) -> bool:
        product, _, rhythm = lane.partition("/")
        return product == PORTFOLIO and rhythm in PIPELINE_RHYTHMS

    def pipeline(self, call: Callable[..., Any], **kwargs: Any) -> Any:
        """A pipeline command, timed into this 30 days' figures and out of the year's."""
        period = self.day // PERIOD_DAYS
        while len(self.figures.each) <= period:
            self.figures.each.append([])
        head = self.lanes.journal.head(PIPELINE_AGGREGATE)
        started = time.perf_counter()
        try:
            return call(**kwargs)
        finally:
            spent = time.perf_counter() - started
            self.year.sampling_seconds += spent  # kept out of the schedule's figures
            if self.lanes.journal.head(PIPELINE_AGGREGATE) != head:
                self.figures.each[period].append(spent)
                self.figures.by_command.setdefault(call.__name__, []).append(spent)
                self.sample()

    def sample(self) -> None:
        _version, text = self.lanes.journal.load_text(PIPELINE_AGGREGATE)
        if text is not None:
            self.figures.largest_state = max(self.figures.largest_state, len(text.encode("utf-8")))

    # -- the owner's and the portfolio's records -------------------------------------------------

    def setup(self, commission: dict[str, Any]) -> None:
        self.pipeline(self.lanes.record_settings, commission=commission)

    def noon(self, date: Date) -> None:
        """Monday: the week's Top-N (two new candidates, last week's two, one more); the owner answers
        any escalation waiting for them."""
        self.day = (date - self.year.first_day).days
        week = iso_week_of(date)
        if date.isoweekday() == 1 or self.day == 0:
            index = self.day // 7
            names = [f"c{index:03d}-{i}" for i in range(2)] + [f"c{index - 1:03d}-{i}" for i in range(2) if index]
            names.append(f"c{index:03d}-x")
            candidates = [{"candidate": name, "product": "alpha", "rank": rank, "evidence": [f"evidence/{name}.md"]}
                          for rank, name in enumerate(names, start=1)]
            self.pipeline(self.lanes.record_top_n, week=week, candidates=candidates)
        for lane in ("promotion", "maturation"):
            view = self.lanes.lane_view(lane)
            waiting = [task for task in view.tasks if task["kind"] == "owner"] if view is not None else []
            for task in waiting:
                decision = self.rng.choice(("revise", "park"))
                self.pipeline(self.lanes.decide_escalation, lane=lane, task=task["task"], decided_by="owner",
                              decision=decision, reason="the owner's call")
                self.figures.outcomes[f"{lane}:owner {decision}"] += 1

    # -- a run ----------------------------------------------------------------------------------

    def run_segment(self, runner: str, occurrence: Any) -> None:
        """One run's admitted segment: one claim, one call, one report, then settle (or defer)."""
        year, schedule = self.year, self.year.schedule
        run = occurrence.lane.partition("/")[2]
        lane = pipeline_lane_of_run(run)
        try:
            claimed = self.pipeline(self.lanes.claim, lane=lane, runner=runner, occurrence=occurrence.id)
            if isinstance(claimed, ClaimIdle):
                self.figures.outcomes[f"{run}:idle {claimed.reason}"] += 1
                handed_back = claimed.reason == "occurrence-handed-back"  # not worked: never completed
                year.settle(occurrence.id, runner, "partial" if handed_back else "completed",
                            f"nothing to claim: {claimed.reason}")
                return
            task = claimed.result
            call_task = year.lanes[occurrence.lane].tasks[0]
            answer = year.timed(lambda: schedule.admit_call(
                occurrence_id=occurrence.id, runner=runner, task=call_task.task, work=f"task-{task['task']}",
                bound=call_task.call_bound, sign_in=self.sign_in))
            if not answer.admitted:
                self.figures.outcomes[f"{run}:refused {answer.reason}"] += 1
                year.figures.outcomes[f"refused {answer.reason}"] += 1  # the schedule's refusal, like any lane's
                if answer.reason in DEFERRAL_FOR_REFUSAL:
                    bound = call_task.call_bound if answer.reason == "budget-exhausted" else None
                    year.defer(occurrence.id, runner, DEFERRAL_FOR_REFUSAL[answer.reason], bound)
                else:
                    year.settle(occurrence.id, runner, "partial", f"stopped: {answer.reason}")
                return
            tokens = call_task.call_bound * self.rng.randint(20, 70) // 100
            year.timed(lambda: schedule.end_call(occurrence_id=occurrence.id, runner=runner, call=answer.call,
                                                 report={"kind": "result", "tokens": tokens, "output": "ok"}))
            report = stage_report(self.lanes, lane, task, self.rng.random())
            try:
                done = self.pipeline(self.lanes.report, lane=lane, task=task["task"], runner=runner, report=report)
            except PipelineError as error:  # GO on a failed verification: the reviewer parks it instead
                if error.code != "VERIFIER_REQUIRED":
                    raise
                done = self.pipeline(self.lanes.report, lane=lane, task=task["task"], runner=runner,
                                     report=parked(lane, report))
            if done.result["outcome"]:
                self.figures.outcomes[f"{lane}:{done.result['outcome']}"] += 1
            self.figures.outcomes[f"{run}:reported {task['stage']}"] += 1
            year.settle(occurrence.id, runner, "completed", f"task {task['task']} ({task['stage']}) reported")
        except ScheduleError as error:
            year.figures.errors[f"runner {error.code}"] += 1

    # -- the report -----------------------------------------------------------------------------

    def print_report(self) -> None:
        figures = self.figures
        print()
        print("staged lanes (tests/bench/year_lanes.py): the four runs as commission lanes")
        kept = {key: value for key, value in sorted(figures.outcomes.items()) if ":" in key}
        print(f"  outcomes: {kept}")
        print(f"  largest pipeline state: {figures.largest_state:,} bytes (limit {MAX_STATE_BYTES:,}); "
              f"the schedule's limit is {SCHEDULE_LIMITS.max_state_bytes:,} bytes")
        periods = [(index, times) for index, times in enumerate(figures.each) if times]
        if not periods:
            return
        base = 1000 * statistics.median(periods[0][1])
        print(f"  a pipeline command that wrote, per {PERIOD_DAYS} days: mean and median ms (the median beside the "
              f"first {PERIOD_DAYS} days' median, {base:.2f} ms; a mean moves with the machine's load spikes):")
        for index, times in periods:
            mean, median = 1000 * statistics.fmean(times), 1000 * statistics.median(times)
            print(f"    days {index * PERIOD_DAYS + 1:>3}-{(index + 1) * PERIOD_DAYS:<3} {len(times):>5} commands "
                  f"{mean:>7.2f} ms mean {median:>7.2f} ms median  {median / base:>5.2f}x")
        print("  by command, over the run: " + ", ".join(
            f"{name} {len(times)} x {1000 * statistics.fmean(times):.2f} ms mean, "
            f"{1000 * statistics.median(times):.2f} median" for name, times in sorted(figures.by_command.items())))

