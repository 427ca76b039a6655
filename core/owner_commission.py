"""Recording a commission revision and adopting the `pipeline` settings it carries: one step for the owner.

The schedule and the staged lanes keep their own records (two aggregates, each with its own receipts),
so the step is two commands: the revision, then its settings. Both are decided before either is
written (the settings' rule is asked first, on the lanes' state now), so a refusal of either writes
nothing; a retry after a crash between the two replays the revision and records the settings. The
revision in force, as this very document, is not recorded again: it may have been recorded before the
journal held an owner key, and the signed retry would be another request under its command ID. A
revision without settings keeps the lanes' settings as they are, so it is refused while those are not
the revision in force's (its settings were lost): nothing would be left to say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from factory_schedule.store import JournalError

from . import owner
from .clock import as_utc
from .commission import Commission, parse_commission
from .errors import invalid
from .pipeline import PipelineLanes, rules
from .pipeline.model import PipelineState
from .results import CommandResult
from .service import LifecycleSchedule


@dataclass(frozen=True)
class CommissionRecorded:
    """The revision's record, and the revision whose pipeline settings the staged lanes hold after it (None
    while they have none)."""

    commission: CommandResult
    settings_revision: int | None


def record_commission(schedule: LifecycleSchedule, commission: Any, *,
                      signer: owner.Signer | None = None) -> CommissionRecorded:
    """Record the next revision and adopt its `pipeline` settings (when it carries them and the lanes hold an
    older revision's); ScheduleError or PipelineError, with nothing written, when either is refused."""
    parsed = parse_commission(commission)
    lanes = PipelineLanes(schedule.journal, schedule.clock)
    state = lanes.state()
    view = schedule.read()
    in_force = None if view is None else view.parsed_commission()
    settings = parsed.pipeline
    if settings is None and in_force is not None:
        _refuse_if_settings_lost(in_force, state, parsed.revision)
    adopt = settings is not None and (state is None or state.settings_revision < parsed.revision)
    if adopt and settings is not None:
        rules.record_settings(state, settings, parsed.revision, as_utc(schedule.clock.now()))
    recorded = _recorded_already(schedule, parsed, in_force) or schedule.record_commission(parsed, signer=signer)
    if adopt:
        try:
            lanes.record_settings(parsed, signer=signer)
        except JournalError as error:  # the revision is recorded: the owner is told, and that a retry completes it
            error.args = (f"commission revision {parsed.revision} is recorded; its settings for the staged lanes may "
                          f"not be (trying again records them, once): {error}",)
            raise
    after = lanes.state()
    return CommissionRecorded(recorded, None if after is None else after.settings_revision)


def _refuse_if_settings_lost(in_force: Commission, state: PipelineState | None, revision: int) -> None:
    """INVALID when the revision in force carries settings the lanes do not hold (they hold an earlier revision's,
    or none): a revision without settings would keep those for good, and health could no longer tell."""
    held = None if state is None else state.settings
    if in_force.pipeline is None or held == in_force.pipeline:
        return
    holding = "none" if state is None else f"revision {state.settings_revision}'s"
    raise invalid(f"revision {in_force.revision}'s settings for the staged lanes were not recorded (the lanes hold "
                  f"{holding}): give revision {revision} `pipeline`, or record revision {in_force.revision} again "
                  "first")


def _recorded_already(schedule: LifecycleSchedule, parsed: Commission,
                      in_force: Commission | None) -> CommandResult | None:
    """The revision's own record when it is the revision in force, as this very document; else None."""
    if in_force is None or in_force != parsed:
        return None
    command_id = f"discovery/commission/{parsed.revision}"
    receipt = schedule.journal.receipt(command_id)
    if receipt is None:  # in force under another command: the schedule's own command says what it is
        return None
    return CommandResult(command_id=command_id, version=receipt.last_version, replayed=True)
