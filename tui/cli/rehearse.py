"""`factory-schedule check --rehearse LANE`: the lane's first unit of work, now, through the real CLI.

It spends real tokens, so it says what it will send and asks first (`--yes` answers for the owner; with
no terminal to ask and no `--yes`, it sends nothing). The work runs on a rehearsal journal
(tui/host/rehearsal.py), exactly as `run` works a segment; the owner's journal is only read.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from factory_schedule.core import ScheduleView
from factory_schedule.tui.cli.journal import open_existing, schedule_over
from factory_schedule.tui.cli.output import EXIT_NOT_CONFIRMED, EXIT_OK, BadInput, printable, say
from factory_schedule.tui.cli.run import work_segment
from factory_schedule.tui.host.clock import SystemClock
from factory_schedule.tui.host.providers import prompts as bindings
from factory_schedule.tui.host.providers.prompts import LaneBinding
from factory_schedule.tui.host.providers.stage_run import lane_stages
from factory_schedule.tui.host.providers.work import Segment
from factory_schedule.tui.host.rehearsal import admit_now, first_unit_binding, open_rehearsal


def _confirmed(question: str, yes: bool) -> bool:
    say(question)
    if yes:
        say("--yes: going on.")
        return True
    if not sys.stdin.isatty():
        say("not asked: no terminal to answer on (give --yes to go on without asking); nothing was sent")
        return False
    answer = input("Send it? [y/N] ").strip().lower()
    return answer in ("y", "yes")


@dataclass(frozen=True)
class Rehearsal:
    """What a rehearsal will send: the lane, the journal's view it copies, the first unit's binding."""

    lane: str
    view: ScheduleView
    binding: LaneBinding


def prepared_rehearsal(url: str, lane: str, prompts: str | None) -> Rehearsal:
    """The rehearsal of `lane`, or BadInput saying why there can be none (no prompt folder, no commission, a lane
    the commission or the folder does not have): `check` asks this before its preflight's slow probes."""
    if not prompts:
        raise BadInput("--rehearse needs the prompt folder: --prompts DIR (or $FACTORY_PROMPTS)")
    view = schedule_over(open_existing(url)).read()
    if view is None:
        raise BadInput("the journal has no commission yet: nothing to rehearse")
    folder = Path(os.path.expanduser(prompts))
    try:
        binding = bindings.load_lane(folder, lane, bindings.lane_tasks(dict(view.commission), lane),
                                     stages=lane_stages(lane))
    except bindings.BindingError as error:
        raise BadInput(f"cannot rehearse {lane}: {error}") from None
    return Rehearsal(lane, view, first_unit_binding(binding))


def rehearse(rehearsal: Rehearsal, yes: bool) -> int:
    lane, view, binding = rehearsal.lane, rehearsal.view, rehearsal.binding
    task = binding.tasks[0]
    what = f"task {task.task}, {'its claimed stage' if lane_stages(lane) else 'unit ' + task.units[0].work}"
    question = (f"Rehearsal of {lane}: {what}, sent now through {binding.provider} ({binding.executable}). This is a "
                f"real call: it spends real tokens from your {task.account} subscription (up to {task.bound:,}). "
                "Your journal is not written; the rehearsal keeps its own.")
    if not _confirmed(printable(question), yes):
        return EXIT_NOT_CONFIRMED
    schedule, rehearsal_url = open_rehearsal(view, lane, SystemClock())
    occurrence, runner = admit_now(schedule, lane)
    code = work_segment(schedule, binding, Segment(occurrence=occurrence, runner=runner, sign_in=""), lane)
    say(printable(f"rehearsal journal: {rehearsal_url} (factory-schedule --journal {rehearsal_url} show)"))
    return EXIT_OK if code == EXIT_OK else code
