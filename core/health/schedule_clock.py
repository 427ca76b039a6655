"""An occurrence carrying instants from the future: a clock that was ahead admitted or ran it. The schedule's
clock rule is per occurrence, so that occurrence refuses what would change it until the clock passes its latest
instant, and while it is open its lane admits nothing else: the owner hears of it with the instants, to check
the clock that wrote them."""

from __future__ import annotations

from datetime import UTC, datetime

from factory_schedule.core.change import last_instant
from factory_schedule.core.results import ScheduleView
from factory_schedule.core.schedule_document import Occurrence

from .report import Finding
from .staged_lanes import CLOCK_AHEAD_TOLERANCE


def _instants(occurrence: Occurrence) -> dict[str, str]:
    """When things happened to the occurrence, by name: every stamp the schedule's clock rule holds a transition
    to (`change.last_instant`); a deadline is ahead by design and is left out."""
    instants = {"admittedAt": occurrence.admitted_at} if occurrence.admitted_at else {}
    for segment in occurrence.segments:
        instants[f"segment {segment.n} startedAt"] = segment.started_at
        if segment.ended is not None:
            instants[f"segment {segment.n} ended"] = segment.ended.at
    for call in occurrence.calls:
        instants[f"call {call.k} admittedAt"] = call.admitted_at
        if call.ended_at is not None:
            instants[f"call {call.k} endedAt"] = call.ended_at
    return instants


def schedule_clock_ahead_findings(view: ScheduleView, now: datetime) -> list[Finding]:
    now = datetime.fromtimestamp(now.timestamp(), UTC)
    findings: list[Finding] = []
    for occurrence in view.occurrences:
        if last_instant(occurrence) <= now + CLOCK_AHEAD_TOLERANCE:
            continue  # the common case, decided on one parsed stamp: naming every call's stamps costs a re-render
        ahead = {name: instant for name, instant in _instants(occurrence).items()
                 if datetime.fromisoformat(instant) - now > CLOCK_AHEAD_TOLERANCE}
        if not ahead:
            continue
        latest = max(ahead.values(), key=datetime.fromisoformat)
        hours = (datetime.fromisoformat(latest) - now).total_seconds() / 3600
        findings.append(Finding(
            "schedule-clock-ahead", "warning",
            f"{occurrence.id} carries {len(ahead)} instant(s) up to {latest}, {hours:.1f} h ahead of this host's "
            "clock: a clock that was ahead wrote them; what would change this occurrence is refused until the "
            "clock passes them" + (", and its lane admits nothing else meanwhile" if occurrence.state == "running"
                                    else "") + " (check the clocks of the hosts that run the factory)",
            {"occurrence": occurrence.id, "lane": occurrence.lane, "latest": latest, "instants": ahead}))
    return findings
