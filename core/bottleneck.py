"""The factory's current bottleneck, in one sentence: what holds it now, and what frees it.

A pure verdict over what core already reads (the schedule's view and plans, health's findings,
the staged lanes' state) and one clock reading, so the dashboard's Lifecycle and Tonight views
say the same sentence and every case can be tested with plain values.

Every hold is listed (`Bottleneck.holds`), most pressing first; the first is the bottleneck.
The order puts what only the owner can free first (a dead runner: the next tick frees it when
health's evidence is conclusive, else the owner's confirmation; an account stop that blocks every call
on the account: a sign-in, paid overage, no current record; then a closed usage window; an
escalation, a security approval), then the weekly ceiling, then what frees itself at a time (a
usage reset, the cooldown) or when a lane's run next runs (a reviewer's or a scheduler's run: its commission lane's
plan says when; a run the commission does not schedule starts only by hand, and the sentence
says so), then a promotion lane waiting for enough Top-N candidates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pendulum import DateTime

from factory_schedule.core.health import Finding
from factory_schedule.core.identity import PORTFOLIO
from factory_schedule.core.pipeline.model import LANES, PipelineState
from factory_schedule.core.pipeline.rules import eligible, go_backlog_idle
from factory_schedule.core.results import LanePlan, ScheduleView
from factory_schedule.core.schedule_document import at

NOT_SCHEDULED = "not scheduled (the commission has no {lane} lane: the run starts when `lanes claim` is run by hand)"

# Most pressing first: the owner's holds, then the ceiling, then holds that free themselves.
KIND_ORDER = (
    "no-commission", "dead-runner", "sign-in", "account", "provider", "window", "escalation", "approval", "ceiling",
    "usage-reset", "review", "work", "claimed", "go-backlog", "start", "cooldown", "threshold", "no-settings",
)  # fmt: skip


@dataclass(frozen=True)
class Hold:
    """One thing holding part of the factory: `kind` (one of KIND_ORDER), what it holds and what frees it."""

    kind: str
    holds: str
    frees: str

    @property
    def sentence(self) -> str:
        return f"{self.holds}; {self.frees}."


@dataclass(frozen=True)
class Bottleneck:
    holds: tuple[Hold, ...]

    @property
    def current(self) -> Hold | None:
        return self.holds[0] if self.holds else None

    @property
    def sentence(self) -> str:
        """The one sentence both views head with."""
        if not self.holds:
            return "Nothing holds the factory: every lane waits only for its next slot."
        more = len(self.holds) - 1
        tail = f" (and {more} more hold{'s' if more != 1 else ''})" if more else ""
        first = self.holds[0]
        return f"Bottleneck: {first.holds}; {first.frees}{tail}."


def local(instant: str | DateTime, zone: str) -> str:
    """An instant as the owner reads it: weekday, day, month and time in the commission's zone."""
    moment = at(instant) if isinstance(instant, str) else instant
    return moment.in_tz(zone).format("ddd D MMM HH:mm")


def _lane_of(occurrence_id: str) -> str:
    """discovery/gamma/basic/2026-12-20 -> gamma/basic."""
    parts = occurrence_id.split("/")
    return "/".join(parts[1:3]) if len(parts) >= 4 else occurrence_id


def _schedule_holds(view: ScheduleView | None, plans: Sequence[LanePlan], findings: Sequence[Finding],
                    zone: str) -> list[Hold]:
    holds: list[Hold] = []
    for finding in findings:
        if finding.kind == "dead-runner":
            evidence = finding.evidence
            lane = _lane_of(str(evidence.get("occurrence", "?")))
            # Conclusive evidence (health marks it repairable): the reconciler acts on its own next tick.
            frees = (f"the next tick (or `health --repair`) reconciles it and frees {lane}" if finding.repairable
                     else f"the owner's confirmation that it is gone (reconcile) frees {lane}")
            holds.append(Hold("dead-runner",
                              f"{lane}'s runner {evidence.get('runner', '?')} is gone and its lease "
                              "is stale", frees))
    if view is not None:
        for occurrence in view.occurrences:
            if occurrence.state != "deferred" or not occurrence.deferrals:
                continue
            deferral = occurrence.deferrals[-1]
            plan = next((p for p in plans if p.occurrence_id == occurrence.id), None)
            when = f"at {local(plan.at, zone)}" if plan is not None and plan.at is not None else "at its next slot"
            if deferral.reason == "budget-exhausted":
                holds.append(Hold("ceiling", f"{occurrence.lane} has spent the weekly ceiling",
                                  f"the next week's ceiling frees it {when}"))
            elif deferral.reason == "usage-limit":
                account = f"the {deferral.account}" if deferral.account else "a"
                holds.append(Hold("usage-reset", f"{occurrence.lane} hit {account} usage limit",
                                  f"the usage reset frees it; it resumes {when}"))
    return holds


def _lanes_on(view: ScheduleView | None, account: str) -> list[str]:
    """The commission's lanes with a task on `account`."""
    if view is None:
        return []
    return sorted(str(lane.get("lane")) for lane in view.commission.get("lanes", [])
                  if any(task.get("account") == account for task in lane.get("tasks", [])))


def account_holds(view: ScheduleView | None, plans: Sequence[LanePlan], findings: Sequence[Finding],
                  zone: str) -> list[Hold]:
    """Every account stop that blocks all calls on its account, from health's account findings: a sign-in
    refusal, paid overage (on in the record, or observed since it), no record or an expired one, a closed
    usage window. Each names the lanes it holds (those waiting on it, else every lane with a task on the
    account) and what frees it; they come before the staged lanes' holds, since no call runs past them."""
    holds: list[Hold] = []
    for finding in findings:
        account = str(finding.evidence.get("account", "?"))
        waiting = sorted(plan.lane for plan in plans if plan.action == "wait" and account in plan.reason)
        held = ", ".join(waiting or _lanes_on(view, account)) or "its lanes"
        if finding.kind == "account-sign-in-needed":
            holds.append(Hold("sign-in", f"{account} refused sign-in, holding {held}",
                              f"the owner signing in again and recording a {account} sign-in record frees it"))
        elif finding.kind == "account-overage-on":
            holds.append(Hold("account", f"{account}'s record has paid overage on, so no {account} call is "
                                         f"admitted, holding {held}",
                              f"a {account} record with overage off frees it"))
        elif finding.kind == "account-overage":
            holds.append(Hold("account", f"paid overage was observed on {account}, holding {held}",
                              f"turning overage off with the provider and recording a new {account} record frees it"))
        elif finding.kind == "account-no-record":
            holds.append(Hold("account", f"{account} has no owner record, holding {held}",
                              f"the owner's first {account} record frees it"))
        elif finding.kind == "account-record-expired":
            holds.append(Hold("account", f"{account}'s owner record has expired, holding {held}",
                              f"a new {account} record frees it"))
        elif finding.kind == "account-window-closed":
            until = str(finding.evidence.get("until", ""))
            reopens = local(until, zone) if until else "its reset"
            holds.append(Hold("window", f"{account}'s usage window is closed until {reopens}, holding {held}",
                              f"the window reopening at {reopens} frees it"))
    return holds


def _lane_cli_holds(findings: Sequence[Finding]) -> list[Hold]:
    """A lane whose CLI is signed out or signed in as another account than the record names (only the owner
    signs it in, or records it), a provider it could not reach, an account a provider's message stopped: each
    holds that lane's nights until the owner acts."""
    holds: list[Hold] = []
    for finding in findings:
        lane = str(finding.evidence.get("lane", "?"))
        if finding.kind == "lane-logged-out":
            holds.append(Hold("sign-in", f"{lane}'s CLI is signed out on the machine that runs it",
                              "the owner signing the CLI in again frees it at the lane's next slot"))
        elif finding.kind == "sign-in-mismatch":
            evidence = finding.evidence
            holds.append(Hold("sign-in", f"{lane}'s CLI is signed in as {evidence.get('observed', '?')}, but the "
                                         f"{evidence.get('account', '?')} record names {evidence.get('recorded', '?')}",
                              "the owner recording the sign-in the machine uses (or signing the CLI in as the recorded "
                              "account) frees it"))
        elif finding.kind == "provider-unreachable":
            holds.append(Hold("provider", f"{lane} could not reach its provider",
                              "the machine's network (or the provider) coming back frees it at the lane's next slot"))
        elif finding.kind == "provider-stopped-account":
            accounts = ", ".join(str(a) for a in finding.evidence.get("accounts", [])) or "its"
            holds.append(Hold("provider", f"the provider stopped {lane}'s {accounts} account",
                              "the owner's plan, spend cap or credits with the provider frees it"))
    return holds


def next_run(run: str, plans: Sequence[LanePlan], zone: str) -> str:
    """When a staged lane's run next runs: its commission lane's plan (`portfolio/<run>`), in words."""
    lane = f"{PORTFOLIO}/{run}"
    plan = next((plan for plan in plans if plan.lane == lane), None)
    if plan is None:
        return NOT_SCHEDULED.format(lane=lane)
    if plan.action == "running":
        return "running now"
    if plan.at is not None:
        return local(plan.at, zone)
    return plan.reason or plan.action


def _pipeline_holds(state: PipelineState, plans: Sequence[LanePlan], now: DateTime, zone: str) -> list[Hold]:
    holds: list[Hold] = []
    settings = state.settings
    for approval in state.approvals:
        if approval.approved is None:
            holds.append(Hold("approval",
                              f"{approval.candidate} waits at security-approve for {approval.action} "
                              f"(approval {approval.id}, asked by {approval.requested_by})",
                              "only the owner's approval record frees it (or a refusal ends the request)"))
    for lane_name in LANES:
        lane = state.lane(lane_name)
        for task in lane.tasks:
            work = lane.work_of(task.candidate)
            at_stage = f"{lane_name}'s {task.candidate} at {task.stage}"
            if task.kind == "owner" and work is not None and work.escalation is not None:
                holds.append(Hold("escalation", f"{lane_name}'s {task.candidate} is escalated to the owner "
                                                f"({work.escalation.reason})",
                                  f"the owner's decision (revise {work.escalation.stage} once more, or park) frees it"))
            elif task.claimed_by is not None:
                since = local(task.claimed_at, zone) if task.claimed_at else "?"
                holds.append(Hold("claimed", f"{at_stage} is with runner {task.claimed_by} since {since}",
                                  "its report frees the next stage"))
            elif task.kind == "review":
                holds.append(Hold("review", f"{at_stage} waits for the reviewer",
                                  f"the {settings.reviewer(lane_name)} run frees it; next run "
                                  f"{next_run(settings.reviewer(lane_name), plans, zone)}"))
            else:
                holds.append(Hold("work", f"{at_stage} waits for its run",
                                  f"the {settings.scheduler(lane_name)} run frees it; next run "
                                  f"{next_run(settings.scheduler(lane_name), plans, zone)}"))
        if len(lane.wip) < settings.wip(lane_name) and lane.cooldown_until is not None \
                and now < at(lane.cooldown_until):
            holds.append(Hold("cooldown", f"{lane_name}'s next selection cools down",
                              f"the cooldown ends {local(lane.cooldown_until, zone)}"))
    cooling = {hold.holds.split("'")[0] for hold in holds if hold.kind == "cooldown"}
    if len(state.promotion.wip) < settings.wip("promotion") and "promotion" not in cooling:
        pool = len(eligible(state))
        full = go_backlog_idle(state, len(state.promotion.wip) + 1)
        if full is not None:
            holds.append(Hold("go-backlog", f"promotion waits: {full.detail.split(';')[0]}",
                              f"maturation ending a work frees it (the {settings.scheduler('maturation')} run; "
                              f"next run {next_run(settings.scheduler('maturation'), plans, zone)}), or a "
                              "commission with a higher maturationWip"))
        elif pool < settings.threshold:
            week = f"the latest Top-N ({state.top_n.week})" if state.top_n else "no Top-N yet"
            holds.append(Hold("threshold", f"promotion has {pool} eligible candidates, {week}",
                              f"a Top-N with at least {settings.threshold} eligible candidates frees it"))
        else:
            holds.append(Hold("start", f"promotion can select from {pool} eligible candidates",
                              f"the {settings.scheduler('promotion')} run starts it; next run "
                              f"{next_run(settings.scheduler('promotion'), plans, zone)}"))
    if len(state.maturation.wip) < settings.wip("maturation") and "maturation" not in cooling:
        held = {work.candidate for work in state.maturation.wip}
        waiting = [d for d in state.decisions if d.verdict == "GO" and not d.consumed and d.candidate not in held]
        if waiting:
            first = min(waiting, key=lambda d: (d.n, d.candidate))
            holds.append(Hold("start", f"maturation's GO #{first.n} ({first.candidate}) waits to be taken in",
                              f"the {settings.scheduler('maturation')} run takes it in; next run "
                              f"{next_run(settings.scheduler('maturation'), plans, zone)}"))
    return holds


def _settings_step(commission: Mapping[str, Any]) -> str:
    """The owner's step that gives the staged lanes their settings, from what the recorded revision carries."""
    revision = commission.get("revision")
    if "pipeline" in commission:  # carried but never adopted: recording that revision again adopts them
        return (f"`factory-schedule record-commission FILE` of the recorded revision {revision} adopts its `pipeline` "
                "settings (the revision itself replays)")
    return "a commission revision with a `pipeline` member starts them (`factory-schedule commission new --pipeline`)"


def find_bottleneck(*, pipeline: PipelineState | None, view: ScheduleView | None, plans: Sequence[LanePlan],
                    findings: Sequence[Finding], now: DateTime, zone: str) -> Bottleneck:
    """Every hold on the factory now, most pressing first (the first is the bottleneck)."""
    holds = _schedule_holds(view, plans, findings, zone) + account_holds(view, plans, findings, zone) \
        + _lane_cli_holds(findings)
    if view is None and pipeline is None:
        holds.append(Hold("no-commission", "nothing is commissioned yet",
                          "the owner's first commission (its lanes, times and weekly ceiling) starts the factory"))
    if pipeline is None:
        if view is not None:
            holds.append(Hold("no-settings", "the promotion and maturation lanes have no settings",
                              _settings_step(view.commission)))
    else:
        holds.extend(_pipeline_holds(pipeline, plans, now, zone))
    order: dict[str, int] = {kind: index for index, kind in enumerate(KIND_ORDER)}
    return Bottleneck(tuple(sorted(holds, key=lambda hold: order[hold.kind])))  # sorted is stable

