"""The staged lanes (promotion and maturation): a candidate's revision, retry or slice counter at its cap; a
lane stalled for longer than its owner's `stallHours` despite claimable work (a pending task, or free WIP past
its cooldown with eligible Top-N candidates or an untaken GO); a security-approve request or an escalation
waiting for the owner; a record carrying instants from the future (a clock that was ahead wrote it); and settings
older than the commission in force asks for (its revision recorded, its settings' command lost)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pendulum

from factory_schedule.core.pipeline.errors import PipelineError
from factory_schedule.core.pipeline.rules import eligible, go_backlog_idle, record_settings

from .report import Finding

if TYPE_CHECKING:
    from factory_schedule.core.commission import Commission
    from factory_schedule.core.pipeline.model import PipelineState

CLOCK_AHEAD_TOLERANCE = timedelta(minutes=5)  # a staged-lane instant further ahead was written by a wrong clock


def staged_lane_findings(state: PipelineState, now: datetime, stall_after: timedelta,
                         locked: frozenset[str] = frozenset()) -> list[Finding]:
    """Counters at their caps, lanes stalled despite eligible work, and what waits for the owner."""
    return [*cap_findings(state), *stall_findings(state, now, stall_after, locked), *owner_wait_findings(state),
            *clock_ahead_findings(state, now)]


def settings_behind_findings(commission: Commission, state: PipelineState | None, now: datetime) -> list[Finding]:
    """The commission in force carries settings for the staged lanes that they do not hold. Recording a revision
    is two commands (the revision, then its settings: `owner_commission`); when the second is lost, the lanes
    go on under the settings of an earlier revision, or with none, and nothing else says so. Lanes that hold the
    very settings asked for (only their revision number behind) run as asked: nothing is reported. Recording the
    same revision again records its settings, when the lanes' rule admits them now (asked here, as that command
    would ask it: a lower WIP than the lanes hold waits until their work ends)."""
    settings = commission.pipeline
    if settings is None or (state is not None and state.settings == settings):
        return []
    held = None if state is None else state.settings_revision
    if held is not None and held >= commission.revision:
        return []
    holding = "hold none" if held is None else f"still hold revision {held}'s"
    try:
        record_settings(state, settings, commission.revision, pendulum.instance(now))
        when = ""
    except PipelineError as refused:
        when = (f". They cannot be recorded now ({refused.code}: {refused.message}): until then, the lanes run as "
                "they are")
    return [Finding(
        "pipeline-settings-behind", "error",
        f"commission revision {commission.revision} carries settings for the staged lanes, but they {holding}: its "
        f"settings were not recorded after it. Record revision {commission.revision} again (`factory-schedule "
        "record-commission FILE`, FILE its document as `factory-schedule show` prints it under "
        "`.schedule.commission`, or load that file in the dashboard's commission form): it records its settings"
        + when,
        {"revision": commission.revision, "held_revision": held})]


def _pipeline_records(state: PipelineState) -> list[tuple[str, dict[str, Any], dict[str, str]]]:
    """Every record of the staged lanes that carries instants: (what it is, whose, its instants by name)."""
    records: list[tuple[str, dict[str, Any], dict[str, str]]] = []
    for lane in (state.promotion, state.maturation):
        for work in lane.wip:
            instants = {"startedAt": work.started_at}
            if work.escalation is not None:
                instants["escalation.at"] = work.escalation.at
            for task in lane.tasks:
                if task.candidate == work.candidate:
                    instants[f"task {task.n} enqueuedAt"] = task.enqueued_at
                    if task.claimed_at is not None:
                        instants[f"task {task.n} claimedAt"] = task.claimed_at
            records.append((f"{lane.lane}'s {work.candidate}", {"lane": lane.lane, "candidate": work.candidate},
                            instants))
        ended = {f"task {done.n} doneAt": done.done_at for done in lane.done}
        ended.update({f"{entry.candidate} ended at": entry.at for entry in lane.history})
        records.append((f"{lane.lane}'s done tasks and history", {"lane": lane.lane}, ended))
    for approval in state.approvals:
        stamps = {"requestedAt": approval.requested_at, "decidedAt": approval.decided_at, "usedAt": approval.used_at}
        records.append((f"approval {approval.id}", {"approval": approval.id},
                        {name: instant for name, instant in stamps.items() if instant is not None}))
    if state.top_n is not None:
        records.append((f"the Top-N of {state.top_n.week}", {"week": state.top_n.week},
                        {"recordedAt": state.top_n.recorded_at}))
    records.append(("the gate decisions", {}, {f"decision {d.n} at": d.at for d in state.decisions}))
    return records


def clock_ahead_findings(state: PipelineState, now: datetime) -> list[Finding]:
    """A staged-lane record carrying an instant later than this host's clock (past a small tolerance): a clock
    that was ahead wrote it. The lanes' clock rule is per record, so that record alone (a candidate's work, an
    approval) refuses what would change it until the clock passes its latest instant; the finding names the
    record and its instants from the future, so the owner can check the clock that wrote them."""
    now = datetime.fromtimestamp(now.timestamp(), UTC)
    findings: list[Finding] = []
    for what, whose, instants in _pipeline_records(state):
        ahead = {name: instant for name, instant in instants.items()
                 if _instant_of(instant) - now > CLOCK_AHEAD_TOLERANCE}
        if not ahead:
            continue
        latest = max(ahead.values(), key=_instant_of)
        hours = (_instant_of(latest) - now).total_seconds() / 3600
        findings.append(Finding(
            "pipeline-clock-ahead", "warning",
            f"{what} carries {len(ahead)} instant(s) up to {latest}, {hours:.1f} h ahead of this host's clock: a "
            "clock that was ahead wrote them; what would change this record is refused INVALID until the clock "
            "passes them (check the clocks of the hosts that run the lanes)",
            {**whose, "record": what, "latest": latest, "instants": ahead}))
    return findings


def cap_findings(state: PipelineState) -> list[Finding]:
    """Each candidate's revision, retry and slice counters at or past their caps (a warning: the next reject
    or failure escalates it to the owner), and a lane whose WIP is full (information: it admits no new work
    until one ends). Revisions and retries count the owner's granted rounds in their cap, as the rules do."""
    settings = state.settings
    findings: list[Finding] = []
    for lane in (state.promotion, state.maturation):
        wip_cap = settings.wip(lane.lane)
        if len(lane.wip) >= wip_cap:
            findings.append(Finding(
                "lane-wip-full", "info",
                f"{lane.lane} holds {len(lane.wip)} of its {wip_cap} WIP: no new work until one ends",
                {"lane": lane.lane, "counter": "wip", "value": len(lane.wip), "cap": wip_cap}))
        for work in lane.wip:
            counters = [("revisions", work.revisions, settings.max_revisions + work.grants),
                        ("retries", work.retries, settings.max_retries + work.grants)]
            if lane.lane == "maturation":
                counters.append(("slices", work.slices, settings.max_slices))
            for counter, value, cap in counters:
                if value >= cap:
                    findings.append(Finding(
                        "lane-counter-at-cap", "warning",
                        f"{lane.lane}'s {work.candidate} has {counter} {value} of its cap {cap}"
                        + (" (past it)" if value > cap else "") + f" at {work.stage}",
                        {"lane": lane.lane, "candidate": work.candidate, "stage": work.stage, "counter": counter,
                         "value": value, "cap": cap}))
    return findings


def _instant_of(text: str) -> datetime:
    """A stored instant (`2026-12-07T02:00:00.000Z`) as a plain aware datetime, comparable with any other."""
    return datetime.fromisoformat(text)


def stall_findings(state: PipelineState, now: datetime, stall_after: timedelta,
                   locked: frozenset[str] = frozenset()) -> list[Finding]:
    """A lane with a run-claimable task pending, or with free WIP, its cooldown over and eligible work to
    start (enough Top-N candidates for promotion, an untaken GO for maturation), and nothing claimed for
    longer than `stall_after` since that work became claimable. A task claimed longer than that by a run that
    holds none of the lanes' locks (`locked`: their owners) stalls it too: that run ended without its report
    (a refused or lost call, an answer that was not its report), and only a supervisor's `lanes abandon`
    returns the task. The owner's own tasks never stall a lane here: they are their own findings."""
    settings = state.settings
    now = datetime.fromtimestamp(now.timestamp(), UTC)  # plain, whatever datetime class the shell passed
    findings: list[Finding] = []
    for lane in (state.promotion, state.maturation):
        for task in lane.tasks:
            if task.kind == "owner" or task.claimed_by in locked:
                continue
            if task.claimed_by is not None:
                claimed_at = task.claimed_at or task.enqueued_at
                if now - _instant_of(claimed_at) > stall_after:
                    findings.append(Finding(
                        "lane-stalled", "warning",
                        f"{lane.lane}'s task {task.n} ({task.candidate} at {task.stage}) is claimed by "
                        f"{task.claimed_by} since {claimed_at}, which holds none of the lane's locks: its run ended "
                        f"without its report; after checking its artifacts, return it with `factory-schedule lanes "
                        f"abandon --lane {lane.lane} --task {task.n} --runner {task.claimed_by}`",
                        {"lane": lane.lane, "task": task.n, "candidate": task.candidate, "stage": task.stage,
                         "runner": task.claimed_by, "since": claimed_at,
                         "stall_hours": stall_after.total_seconds() / 3600}))
                continue
            waiting = now - _instant_of(task.enqueued_at)
            if waiting > stall_after:
                findings.append(Finding(
                    "lane-stalled", "warning",
                    f"{lane.lane}'s task {task.n} ({task.candidate} at {task.stage}) has waited since "
                    f"{task.enqueued_at} with nothing claiming it: is its {task.kind} run scheduled?",
                    {"lane": lane.lane, "task": task.n, "candidate": task.candidate, "stage": task.stage,
                     "since": task.enqueued_at, "stall_hours": stall_after.total_seconds() / 3600}))
        if len(lane.wip) >= settings.wip(lane.lane):
            continue
        free_since: list[str] = []
        if lane.cooldown_until is not None:
            if now < _instant_of(lane.cooldown_until):
                continue
            free_since.append(lane.cooldown_until)
        if lane.lane == "promotion":
            pool = len(eligible(state))
            if state.top_n is None or pool < settings.threshold:
                continue
            if go_backlog_idle(state, len(lane.wip) + 1) is not None:
                continue  # held by the GO backlog, which waits for maturation: not a stall of its run
            free_since.append(state.top_n.recorded_at)
            what = f"{pool} eligible Top-N candidates"
        else:
            held = {work.candidate for work in lane.wip}
            waiting_go = [d for d in state.decisions if d.verdict == "GO" and not d.consumed
                          and d.candidate not in held]
            if not waiting_go:
                continue
            first = min(waiting_go, key=lambda d: d.n)
            free_since.append(first.at)
            what = f"GO #{first.n} ({first.candidate})"
        since = max(free_since, key=_instant_of)
        if now - _instant_of(since) > stall_after:
            findings.append(Finding(
                "lane-stalled", "warning",
                f"{lane.lane} has free WIP and {what} since {since}, but nothing has started: is its "
                f"{settings.scheduler(lane.lane)} run scheduled?",
                {"lane": lane.lane, "since": since, "stall_hours": stall_after.total_seconds() / 3600}))
    return findings


def owner_wait_findings(state: PipelineState) -> list[Finding]:
    """A security-approve request with no decision, and an escalation waiting for the owner's decision:
    only the owner frees either, so each is told to them (tui/host/notify.py)."""
    findings: list[Finding] = []
    for approval in state.approvals:
        if approval.approved is None:
            findings.append(Finding(
                "security-approve-waiting", "warning",
                f"{approval.candidate} waits at security-approve for {approval.action} (approval {approval.id}, "
                f"asked by {approval.requested_by}): approve or deny it",
                {"approval": approval.id, "candidate": approval.candidate, "action": approval.action,
                 "requested_at": approval.requested_at}))
    for lane in (state.promotion, state.maturation):
        for work in lane.wip:
            if work.escalation is not None:
                findings.append(Finding(
                    "escalation-waiting", "warning",
                    f"{lane.lane}'s {work.candidate} is escalated to the owner at {work.escalation.stage} "
                    f"({work.escalation.reason}): revise once more, or park it",
                    {"lane": lane.lane, "candidate": work.candidate, "stage": work.escalation.stage,
                     "at": work.escalation.at}))
    return findings


