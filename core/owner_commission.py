"""Recording a commission revision and adopting the `pipeline` settings it carries: one step for the owner.

The schedule and the staged lanes keep their own records (two aggregates, each with its own receipts),
so the step is two commands: the revision, then its settings. Both are decided before either is
written (the settings' rule is asked first, on the lanes' state now), so a refusal of either writes
nothing; a retry after a crash between the two replays the revision and records the settings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import owner
from .clock import as_utc
from .commission import parse_commission
from .pipeline import PipelineLanes, rules
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
    settings = parsed.pipeline
    adopt = settings is not None and (state is None or state.settings_revision < parsed.revision)
    if adopt and settings is not None:
        rules.record_settings(state, settings, parsed.revision, as_utc(schedule.clock.now()))
    recorded = schedule.record_commission(parsed, signer=signer)
    if adopt:
        lanes.record_settings(parsed, signer=signer)
    after = lanes.state()
    return CommissionRecorded(recorded, None if after is None else after.settings_revision)
