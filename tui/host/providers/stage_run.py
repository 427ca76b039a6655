"""A staged lane's run through `factory-schedule run`: one task of the lane, one call, one stage report.

The tick admitted the run's occurrence (`portfolio/<run>`); the run claims its lane's next task with
that occurrence (taking the lane's locks as `lanes claim` does), sends that stage's prompt with the task
as context through the lane's provider (`admit_call` first, `end_call` after, like every call), reads
the provider's final answer as the stage's report JSON, reports it (`lanes report`, which releases the
locks) and settles the occurrence. Its prompt folder is `PROMPTS/portfolio/<run>/`: `lane.toml` and, in
the folder of the commission's task (`stage` or `review`), one prompt per stage the run works.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from factory_schedule.core import is_pipeline_rhythm, pipeline_lane_of_run
from factory_schedule.core.pipeline import (
    REVIEW_STAGES,
    STAGES,
    ClaimIdle,
    PipelineError,
    PipelineLanes,
    contract_fields,
)
from factory_schedule.store.leases import LeaseHeldError
from factory_schedule.tui.host.environment import ENV_LEASE_TTL
from factory_schedule.tui.host.heartbeat import Heartbeat
from factory_schedule.tui.host.lane_locks import claim_with_locks, journal_of, release_locks, report_and_release
from factory_schedule.tui.host.providers.prompts import LaneBinding, Unit
from factory_schedule.tui.host.providers.work import SegmentWork, Unrecorded

Emit = Callable[[dict[str, Any]], None]
_FENCED = re.compile(r"^```(?:json)?\s*\n(.*)\n```\s*$", re.S)


def run_of(lane: str) -> str | None:
    """The staged lanes' run a commission lane schedules (`portfolio/promotion` -> promotion), or None."""
    product, _, rhythm = lane.partition("/")
    return rhythm if product == "portfolio" and is_pipeline_rhythm(rhythm) else None


def stages_of(run: str) -> tuple[str, ...]:
    """The stages a run works, in the lane's order: its reviewer's review stages, or every other stage."""
    lane = pipeline_lane_of_run(run)
    reviewing = run.endswith("-reviewer")
    return tuple(stage for stage in STAGES[lane] if (stage in REVIEW_STAGES[lane]) == reviewing)


def lane_stages(lane: str) -> tuple[str, ...] | None:
    """The stages a staged lane's run works (one prompt each), or None for a discovery lane."""
    run = run_of(lane)
    return None if run is None else stages_of(run)


def stage_prompt(prompt: str, lane: str, task: dict[str, Any]) -> str:
    """The stage's prompt, with the claimed task as context and the report it must answer with."""
    fields = ", ".join(contract_fields(lane, str(task["stage"])))
    return (f"{prompt.rstrip()}\n\n---\nYour task in the {lane} lane (JSON):\n"
            f"{json.dumps(task, sort_keys=True)}\n\n"
            f"Answer with the stage's report only: one JSON object with {fields} (the stage's artifact "
            f"contract), and nothing else.\n")


def parse_answer(answer: str | None) -> dict[str, Any]:
    """The provider's final answer as a JSON object (a fenced ```json block is unwrapped); ValueError if not."""
    if answer is None:
        raise ValueError("the provider gave no final answer")
    text = answer.strip()
    fenced = _FENCED.match(text)
    document = json.loads(fenced.group(1) if fenced else text)
    if not isinstance(document, dict):
        raise ValueError("the provider's final answer is not a JSON object")
    return document


DEFAULT_LOCK_TTL_SECONDS = 60.0  # `lanes claim`'s default, when no tick named one


def lock_ttl() -> float:
    """The run's lane locks take the tick's lease TTL (`FACTORY_LEASE_TTL`, what its segment lease has), and
    are heartbeated every third of it while the provider call runs, as the tick heartbeats the segment's: a
    lock gone stale under a live call would read as a dead run in health."""
    try:
        ttl = float(os.environ.get(ENV_LEASE_TTL, DEFAULT_LOCK_TTL_SECONDS))
    except ValueError:
        return DEFAULT_LOCK_TTL_SECONDS
    return ttl if 1.0 <= ttl <= 86_400.0 else DEFAULT_LOCK_TTL_SECONDS


def settle_idle(worker: SegmentWork, reason: str, detail: str) -> None:
    """Settle an occurrence whose claim found nothing to take. Its task handed back by a supervisor (an earlier
    segment's run confirmed gone) was not worked: `partial` when a call of it went out (its effect stays on the
    record), else `unavailable`. Otherwise (nothing to claim, or an earlier segment reported the task) it is
    `completed` when its calls allow, else `partial`."""
    if reason == "occurrence-handed-back":
        worker.settle_first(["partial" if worker.calls_went_out() else "unavailable"], f"handed back: {detail}")
    else:
        worker.settle_first(["completed", "partial"], f"nothing to claim: {reason}")


# The schedule's refusals of a task's call because an earlier segment of the occurrence already sent its work:
# its effect unknown (a call ended lost), performed with an answer this segment never had to report, or the
# stage task's calls of the occurrence used up by it.
SENT_BEFORE = ("unknown-effect", "duplicate-work", "call-bound")


def hand_back(lanes: PipelineLanes, worker: SegmentWork, lane: str, task: dict[str, Any], emit: Emit) -> None:
    """A resumed segment took over a task whose work went out in an earlier segment and is never sent again
    in this occurrence: the run gives the task back itself, as a supervisor would once it was gone (`abandon`,
    counted against the task's retry cap: the lane's next occurrence works it, or the owner past the cap),
    rather than leave it claimed by a run that settled. Then the occurrence settles `partial`: its call went
    out, and its effect stays on the record."""
    segment = worker.segment
    evidence = (f"{segment.occurrence}: the work of task {task['task']} went out in an earlier segment "
                f"({worker.refused}) and is not sent again in it")
    try:
        answer = lanes.abandon(lane=lane, task=task["task"], runner=segment.runner, confirmed_by=segment.runner,
                               evidence=evidence[:500])
        emit({"run": "handed-back", "lane": lane, "task": task["task"], "state": answer.result.get("state")})
        why = f"handed back: task {task['task']} ({task['stage']}): {worker.refused} in an earlier segment"
    except PipelineError as error:  # left claimed, for a supervisor, as any run that ends without its report
        emit({"run": "hand-back-refused", "lane": lane, "task": task["task"], "error": error.code,
              "message": error.message})
        why = f"task {task['task']} ({task['stage']}): {worker.refused}; left claimed ({error.code})"
    release_locks(lanes, lane, segment.runner, task["task"])
    worker.settle_first(["partial"], why)


def work_one_stage(lanes: PipelineLanes, worker: SegmentWork, binding: LaneBinding, run: str, emit: Emit) -> bool:
    """Claim, call, report, settle; the segment is the worker's (admitted for this run's token)."""
    segment = worker.segment
    lane = pipeline_lane_of_run(run)
    ttl = lock_ttl()
    try:
        answer, held = claim_with_locks(lanes, lane, segment.runner, occurrence=segment.occurrence, pid=os.getpid(),
                                        ttl=ttl, command="run")
    except PipelineError as error:
        emit({"run": "claim-refused", "lane": lane, "error": error.code, "message": error.message})
        worker.settle_as("unavailable", f"claim refused: {error.code}: {error.message}")
        return True
    except LeaseHeldError as error:  # another run (the lane's other run) holds a lane lock: nothing was claimed
        emit({"run": "claim-refused", "lane": lane, "error": "LEASE_HELD", "message": str(error)})
        worker.settle_as("unavailable", f"claim refused: LEASE_HELD: {error}")
        return True
    if isinstance(answer, ClaimIdle):
        emit({"run": "idle", "lane": lane, "reason": answer.reason, "detail": answer.detail})
        settle_idle(worker, answer.reason, answer.detail)
        return True
    task = dict(answer.result)
    emit({"run": "claimed", "lane": lane, "task": task["task"], "stage": task["stage"], "locks": held, "ttl": ttl})
    commissioned = binding.tasks[0]  # a run's lane has one task: `stage` or `review`
    unit = next(u for u in commissioned.units if u.work == task["stage"])
    one = Unit(work=f"task-{task['task']}", prompt=stage_prompt(unit.prompt, lane, task), path=unit.path)
    worker.binding = replace(binding, tasks=(replace(commissioned, units=(one,)),))
    beats = [Heartbeat(journal_of(lanes), scope, segment.runner, ttl / 3, lanes.clock.now) for scope in held]
    for beat in beats:
        beat.start()
    try:
        made = worker.one_unit(worker.binding.tasks[0], one)
    except Unrecorded:
        release_locks(lanes, lane, segment.runner, task["task"])
        return False
    finally:
        for beat in beats:
            beat.stop()
    if made is None and segment.ended is None and worker.refused in SENT_BEFORE:
        hand_back(lanes, worker, lane, task, emit)
        return True
    if made is None or made.outcome.kind != "result" or made.outcome.report.get("output") != "ok":
        release_locks(lanes, lane, segment.runner, task["task"])  # the task stays claimed, for a supervisor
        if segment.ended is None:
            worker.settle_as("partial" if made is not None else "unavailable",
                             f"task {task['task']} ({task['stage']}): no clean answer to report")
        return True
    try:
        report = parse_answer(made.outcome.answer)
        done, released = report_and_release(lanes, lane, task["task"], segment.runner, report)
    except (ValueError, PipelineError) as error:
        why = f"{error.code}: {error.message}" if isinstance(error, PipelineError) else str(error)
        emit({"run": "report-refused", "lane": lane, "task": task["task"], "error": why[:500]})
        release_locks(lanes, lane, segment.runner, task["task"])
        worker.settle_as("partial", f"task {task['task']} ({task['stage']}): the answer was not its report")
        return True
    emit({"run": "reported", "lane": lane, "task": task["task"], "stage": task["stage"],
          "next": done.result.get("next"), "outcome": done.result.get("outcome"), "locks": released})
    worker.settle_as("completed", f"task {task['task']} ({task['stage']}) reported")
    return True
