"""The ledger: a week of this week or later that has debited above 90 % of its ceiling."""

from __future__ import annotations

from datetime import datetime

import pendulum

from factory_schedule.core.results import ScheduleView
from factory_schedule.core.zones import iso_week_of, local_date_of

from .report import Finding

CEILING_WARNING_FRACTION = 0.9


def ledger_findings(view: ScheduleView, now: datetime) -> list[Finding]:
    week_now = iso_week_of(local_date_of(view.commission["zone"], pendulum.instance(now)))
    findings = []
    for week in view.ledger:
        if week.week < week_now:
            continue
        if week.debited > CEILING_WARNING_FRACTION * week.ceiling:
            findings.append(Finding("week-near-ceiling", "warning",
                                    f"{week.week} has debited {week.debited} of its {week.ceiling} tokens "
                                    f"({100 * week.debited / week.ceiling:.0f} %)",
                                    {"week": week.week, "ceiling": week.ceiling, "debited": week.debited}))
    return findings


