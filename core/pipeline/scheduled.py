"""The link between a staged lane's run and the schedule: a claim names the run's admitted occurrence.

The four runs (promotion, promotion-reviewer, maturation, maturation-reviewer) are daily portfolio
lanes of the commission (`portfolio/<run>`), admitted by the schedule's `start` like any lane, and
their provider calls go through `admit_call` / `end_call` on that occurrence, so the weekly ceiling
and the account stops hold for them as for discovery. A scheduled run's claim names its occurrence:
it is refused NOT_ADMITTED unless that occurrence is the lane's open one and its running segment
belongs to the claiming runner token. One claim per occurrence: the command ID is
`pipeline/<lane>/claim/occurrence/<occurrence id>`, so a retry replays the task it claimed. After a
deferral, the occurrence's resumed segment (a fresh token) takes over that task while an earlier
segment still holds it (`.../resumed/<token>`): the schedule ended that segment, so the earlier token
cannot report, and the task is not left claimed by a run that is gone.

A run the current commission schedules may claim only that way. An unscheduled claim (no occurrence)
stays for a run the commission does not schedule: by hand, in tests, or for an owner who keeps the
staged lanes off the nightly schedule; such a run makes no provider call through the schedule.

Pure: it reads the schedule's view the service hands it.
"""

from __future__ import annotations

from typing import Any

from ..commission import Commission, commission_digest, lanes_of, pipeline_lane_problem
from ..errors import ScheduleError
from ..identity import PORTFOLIO, is_pipeline_rhythm, parse_occurrence_id, pipeline_lane_of_run
from ..pipeline_settings import PipelineSettings
from ..results import ScheduleView
from .errors import PipelineError


def occurrence_claim_command_id(lane: str, occurrence_id: str) -> str:
    """One claim per admitted occurrence: its ID says the claim is that occurrence's."""
    return f"pipeline/{lane}/claim/occurrence/{occurrence_id}"


def hand_over_command_id(lane: str, occurrence_id: str, runner: str) -> str:
    """A resumed segment's take-over of its occurrence's claimed task: once per segment's token."""
    return f"{occurrence_claim_command_id(lane, occurrence_id)}/resumed/{runner}"


def scheduled_run(lane: str, run: str | None, occurrence: Any) -> tuple[str, str]:
    """(occurrence ID, run) of a scheduled claim: the occurrence must be a staged lane's run of this lane;
    the run, when given, must be the occurrence's. INVALID or WRONG_RUN in one line otherwise."""
    try:
        ref = parse_occurrence_id(occurrence)
    except ScheduleError as error:
        raise PipelineError("INVALID", f"occurrence: {error.message}") from None
    if ref.product != PORTFOLIO or not is_pipeline_rhythm(ref.rhythm):
        raise PipelineError("INVALID", f"occurrence: {ref.id} is not a staged lane's run "
                                       f"(discovery/portfolio/<run>/<date>)")
    if run is not None and run != ref.rhythm:
        raise PipelineError("WRONG_RUN", f"run {run!r} claims with the occurrence of the run {ref.rhythm!r}")
    if pipeline_lane_of_run(ref.rhythm) != lane:
        raise PipelineError("WRONG_RUN", f"the run {ref.rhythm!r} works the {pipeline_lane_of_run(ref.rhythm)} "
                                         f"lane, not {lane}")
    return ref.id, ref.rhythm


def adopted_run(settings: PipelineSettings, lane: str, rhythm: str) -> str:
    """The adopted settings' identity for the role an occurrence's run plays in its lane: the reviewer for a
    `-reviewer` run, else the scheduler. The commission's lane decides the role, so settings adopted before the
    commission scheduled the run, under another name, cannot leave a run the schedule admits every night
    unable to claim (WRONG_RUN) until the owner adopts the new revision's settings."""
    return settings.reviewer(lane) if rhythm.endswith("-reviewer") else settings.scheduler(lane)


def admitted_problem(view: ScheduleView | None, occurrence_id: str, runner: str) -> PipelineError | None:
    """NOT_ADMITTED unless `occurrence_id` is its lane's open occurrence, running for `runner`."""
    if view is None:
        return PipelineError("NOT_ADMITTED", "no commission is recorded: nothing is admitted")
    ref = parse_occurrence_id(occurrence_id)
    lane_state = next((lane for lane in view.lanes if lane.lane == ref.lane), None)
    open_occurrence = lane_state.open if lane_state is not None else None
    if open_occurrence is None or open_occurrence.id != occurrence_id:
        return PipelineError("NOT_ADMITTED", f"{occurrence_id} is not an admitted, open occurrence of {ref.lane}")
    segment = open_occurrence.segments[-1]
    if open_occurrence.state != "running" or segment.ended is not None:
        return PipelineError("NOT_ADMITTED", f"{occurrence_id} is {open_occurrence.state}, not running")
    if segment.runner != runner:
        return PipelineError("NOT_ADMITTED", f"{occurrence_id} runs segment {segment.n} for another runner token")
    return None


def earlier_runners(view: ScheduleView | None, occurrence_id: str, runner: str) -> frozenset[str]:
    """The runner tokens of an occurrence's segments before `runner`'s: the runs whose claim a resumed segment
    may take over, or whose report ended the occurrence's task."""
    occurrence = next((o for o in view.occurrences if o.id == occurrence_id), None) if view is not None else None
    segments = occurrence.segments if occurrence is not None else []
    return frozenset(segment.runner for segment in segments if segment.runner != runner)


def unscheduled_problem(view: ScheduleView | None, run: str) -> PipelineError | None:
    """NOT_ADMITTED when the current commission schedules `run`: such a run claims through its occurrence."""
    if view is None or not is_pipeline_rhythm(run):
        return None
    lane = f"{PORTFOLIO}/{run}"
    # The view's commission is the one the schedule's reader parsed and matched with its digest on this very
    # read: its lanes' IDs are read as they stand, not parsed a second time.
    if any(scheduled.get("lane") == lane for scheduled in view.commission.get("lanes", ())):
        return PipelineError("NOT_ADMITTED", f"the commission schedules the run {run!r} ({lane}): claim with the "
                                             f"occurrence the schedule admitted for your runner token")
    return None


def settings_problem(view: ScheduleView | None, settings: PipelineSettings) -> PipelineError | None:
    """INVALID when settings would name a run the recorded commission schedules other than after its lane's
    rhythm: the settings and the scheduled lanes must never disagree, whichever file the settings came from."""
    if view is None:
        return None
    problem = pipeline_lane_problem(lanes_of(view.commission), settings)
    if problem is None:
        return None
    return PipelineError("INVALID", f"{problem[0]}: {problem[1]} (the recorded commission, revision "
                                    f"{view.commission.get('revision')}, schedules it)")


def recorded_revision_problem(view: ScheduleView | None, commission: Commission) -> PipelineError | None:
    """REVISION unless `commission` is the schedule's current recorded revision, byte for byte: settings come
    only from what the owner recorded, so a stray file can neither change the lanes nor, by its higher number,
    leave the owner's next recorded revision refused as out of order."""
    if view is None:
        return PipelineError("REVISION", "no commission is recorded: record the commission revision first, then "
                                         "adopt its settings")
    current = view.commission.get("revision")
    if commission.revision != current:
        return PipelineError("REVISION", f"revision {commission.revision} is not recorded as the schedule's current "
                                         f"commission (revision {current}); record it first")
    if commission_digest(commission) != commission_digest(view.commission):
        return PipelineError("REVISION", f"this document is not the recorded revision {current}: its content "
                                         f"differs from what the schedule recorded")
    return None
