"""Health's check and repair of each lane's prompt binding (when the owner names a prompt folder).

The binding health last recorded for a lane (its source, resolved path and normalized
snapshot: `core.health.bindings`) is kept as a `binding-recorded` event on the
journal's `health/repairs` aggregate. Each check reads the lane's folder twice
(`providers.prompts.read_binding`) and lets `judge_binding` decide; a reading that
changed in between is read again once. Drift is a warning finding; a folder that
cannot be read whole, or keeps changing, is a blocker finding (an error) for the
owner.

A repair records the binding now read, only when `judge_binding` allows it (all
three read back together, twice alike). It writes nothing but that event: the
commission, the LaunchAgent's calendar and whether it is loaded (cadence and
enabled state) are never touched. A concurrent writer on the aggregate is a
conflict: the lane is read again and the record retried once; otherwise, and for a
blocker, a `binding-blocked` event is recorded instead (once per distinct blocker).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from factory_schedule.core import ScheduleView
from factory_schedule.core.health import (
    BINDING_BLOCKED,
    BINDING_RECORDED,
    HEALTH_AGGREGATE,
    Finding,
    Repair,
    counted_record,
)
from factory_schedule.core.health.bindings import BindingFinding, BindingRead, judge_binding
from factory_schedule.store import Journal, VersionConflictError
from factory_schedule.tui.host.health_records import append_once
from factory_schedule.tui.host.providers.prompts import read_binding

Reader = Callable[[str, str], BindingRead]


@dataclass(frozen=True)
class BindingJudgement:
    verdict: BindingFinding
    reading: BindingRead
    recorded: BindingRead | None


def commission_lanes(view: ScheduleView | None) -> list[str]:
    lanes = view.commission.get("lanes", []) if view is not None else []
    return [str(lane["lane"]) for lane in lanes if isinstance(lane, dict) and lane.get("lane")]


def recorded_bindings(journal: Journal) -> dict[str, BindingRead]:
    """The binding last recorded for each lane."""
    found: dict[str, BindingRead] = {}
    for event in journal.iter_history(HEALTH_AGGREGATE):
        if event.type == BINDING_RECORDED:
            data = event.data
            found[data["lane"]] = BindingRead(data["lane"], data["source"], data["resolved"], data["snapshot"])
    return found


def check_binding(lane: str, source: str, recorded: BindingRead | None,
                  read: Reader = read_binding) -> BindingJudgement:
    """Two readings judged together; a reading that changed in between is taken again, once."""
    first, second = read(source, lane), read(source, lane)
    verdict = judge_binding(recorded, first, second)
    if verdict.repair == "re-read":
        first, second = read(source, lane), read(source, lane)
        verdict = judge_binding(recorded, first, second, retried=True)
    return BindingJudgement(verdict, first, recorded)


def check_bindings(journal: Journal, lanes: Sequence[str], source: str,
                   read: Reader = read_binding) -> list[BindingJudgement]:
    recorded = recorded_bindings(journal)
    return [check_binding(lane, source, recorded.get(lane), read) for lane in lanes]


def binding_findings(checked: Sequence[BindingJudgement]) -> list[Finding]:
    findings = []
    for item in checked:
        verdict, reading = item.verdict, item.reading
        evidence: dict[str, Any] = {"lane": verdict.lane, "source": reading.source, "resolved": reading.resolved,
                                    "snapshot": reading.snapshot, "verdict": verdict.verdict}
        if item.recorded is not None:
            evidence["recorded"] = {"source": item.recorded.source, "resolved": item.recorded.resolved,
                                    "snapshot": item.recorded.snapshot}
        if verdict.verdict == "drift":
            findings.append(Finding("binding-drift", "warning",
                                    f"{verdict.message}: `health --repair` records the binding now read",
                                    {**evidence, "drifted": list(verdict.drifted)}, repairable=True))
        elif verdict.verdict == "unrecorded":
            findings.append(Finding("binding-unrecorded", "info",
                                    f"{verdict.message}: `health --repair` records it", evidence, repairable=True))
        elif verdict.repair == "blocker":
            findings.append(Finding("binding-blocked", "error", f"{verdict.message}: the owner decides",
                                    {**evidence, "error": reading.error}))
    return findings


def _record_blocker(journal: Journal, lane: str, message: str, extra: dict[str, Any]) -> Repair | None:
    digest = hashlib.sha256(message.encode()).hexdigest()[:16]
    command_id = f"health/binding-blocked/{lane}/{digest}"
    payload = {"lane": lane, "message": message[:300]}
    decide = counted_record(BINDING_BLOCKED, {**payload, **extra}, command_id)
    try:
        recorded = append_once(journal, HEALTH_AGGREGATE, command_id, payload, decide)
    except VersionConflictError:
        return None  # the journal kept changing: the blocker stays a finding, recorded at the next check
    if not recorded:
        return None
    return Repair("recorded-binding-blocker", lane, f"recorded a blocker for {lane}: {message}",
                  {**payload, "command_id": command_id})


def repair_bindings(journal: Journal, lanes: Sequence[str], source: str, by: str, now: datetime,
                    read: Reader = read_binding) -> list[Repair]:
    """Record each lane's binding where `judge_binding` allows it; record a blocker where it does not."""
    repairs: list[Repair] = []
    extra = {"recordedBy": by, "recordedAt": now.isoformat()}
    for lane in lanes:
        for attempt in range(2):
            version = journal.head(HEALTH_AGGREGATE)
            item = check_binding(lane, source, recorded_bindings(journal).get(lane), read)
            verdict, reading = item.verdict, item.reading
            if verdict.repair == "blocker":
                blocker = _record_blocker(journal, lane, verdict.message, extra)
                repairs += [blocker] if blocker is not None else []
                break
            if verdict.repair != "record":
                break
            payload = {"lane": lane, "source": reading.source, "resolved": reading.resolved,
                       "snapshot": reading.snapshot}
            command_id = f"health/binding/{lane}/{version + 1}"
            try:
                append_once(journal, HEALTH_AGGREGATE, command_id, payload,
                            counted_record(BINDING_RECORDED, {**payload, **extra}, command_id), expected=version)
            except VersionConflictError:
                if attempt == 0:
                    continue  # another writer was first: read again and retry once
                blocker = _record_blocker(journal, lane, f"{lane}: the binding could not be recorded: the journal "
                                          "kept changing", extra)
                repairs += [blocker] if blocker is not None else []
                break
            repairs.append(Repair("recorded-binding", lane, f"recorded {lane}'s prompt binding ({verdict.message})",
                                  {**payload, "command_id": command_id}))
            break
    return repairs
