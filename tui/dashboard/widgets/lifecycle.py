"""Lifecycle: the whole factory from discovery's Top-N to the security-approve boundary, and its bottleneck.

One sentence first (core.bottleneck: what holds the factory now and what frees it), then the
flow with a count at each step, then each staged lane (its current candidate, stage, counters
against their caps, reviewer, next run and cooldown), the Top-N, the GO/PIVOT/PARK decisions,
the security-approve requests, and every hold. Everything is text that wraps, so nothing that
matters is cut on a narrow terminal; everything from the journal goes through `printable`.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from factory_schedule.core import parse_instant
from factory_schedule.core.bottleneck import local, next_run
from factory_schedule.core.pipeline import LANES, REVIEW_STAGES, STAGES, eligible
from factory_schedule.tui.dashboard.reading import Reading
from factory_schedule.tui.dashboard.safety import printable
from factory_schedule.tui.dashboard.widgets import unchanged


def _when(instant: str | None, reading: Reading) -> str:
    return "—" if instant is None else local(instant, reading.zone or "UTC")


def bottleneck_line(reading: Reading) -> Text:
    text = Text()
    text.append(printable(reading.bottleneck.sentence), style="bold")
    return text


def gate_counts(state: Any) -> str:
    """The gate's verdicts, and apart from them the candidates the owner parked on an escalation: both are
    parked, by different hands, so the one count never reads against the other."""
    verdicts = " ".join(f"{v} {sum(1 for d in state.decisions if d.verdict == v)}" for v in ("GO", "PIVOT", "PARK"))
    parked = state.promotion.parked + state.maturation.parked
    return verdicts + (f"; {parked} parked by the owner on an escalation" if parked else "")


def flow(reading: Reading) -> Text:
    """Top-N -> promotion -> GO/PIVOT/PARK -> maturation -> release-ready -> security-approve, with counts."""
    state = reading.pipeline
    text = Text()
    if state is None:
        text.append("Top-N → promotion → GO / PIVOT / PARK → maturation → release-ready → security-approve",
                    style="dim")
        return text
    top = state.top_n
    steps: list[tuple[str, str]] = [
        ("Top-N", f"{top.week}: {len(top.candidates)} listed, {len(eligible(state))} eligible" if top else "none yet"),
        ("promotion", f"{len(state.promotion.wip)}/{state.settings.wip('promotion')} held"),
        ("GO / PIVOT / PARK", gate_counts(state)),
        ("maturation", f"{len(state.maturation.wip)}/{state.settings.wip('maturation')} held"),
        ("release-ready", str(sum(1 for h in state.maturation.history if h.outcome == "release-ready"))),
        ("security-approve", f"{sum(1 for a in state.approvals if a.approved is None)} waiting"),
    ]
    for index, (name, count) in enumerate(steps):
        if index:
            text.append(" → ", style="dim")
        text.append(name, style="bold")
        text.append(printable(f" ({count})"))
    return text


def _counters(reading: Reading, lane: str, work: Any) -> str:
    settings = reading.pipeline.settings  # type: ignore[union-attr]
    parts = [f"revisions {work.revisions}/{settings.max_revisions + work.grants}"]
    if lane == "promotion":
        parts.append(f"retries {work.retries}/{settings.max_retries + work.grants}")
    else:
        parts.append(f"slices {work.slices}/{settings.max_slices}")
    if work.grants:
        parts.append(f"{work.grants} granted by the owner")
    return " · ".join(parts)


def _stages(lane: str, current: str | None) -> Text:
    text = Text()
    for index, stage in enumerate(STAGES[lane]):
        if index:
            text.append(" › ", style="dim")
        label = stage + ("*" if stage in REVIEW_STAGES[lane] else "")
        text.append(label, style="bold reverse" if stage == current else "")
    return text


def lane_block(reading: Reading, lane: str) -> Text:
    state = reading.pipeline
    assert state is not None
    record = state.lane(lane)
    settings = state.settings
    text = Text()
    text.append(lane, style="bold")
    cooldown = record.cooldown_until
    cooled = "none" if cooldown is None else (
        f"until {_when(cooldown, reading)}" if reading.now < parse_instant(cooldown)
        else f"ended {_when(cooldown, reading)}")
    zone = reading.zone or "UTC"
    scheduler, reviewer = settings.scheduler(lane), settings.reviewer(lane)
    text.append(printable(
        f"  WIP {len(record.wip)}/{settings.wip(lane)} · scheduler run {scheduler} (next run "
        f"{next_run(scheduler, reading.plans, zone)}) · reviewer run {reviewer} (next run "
        f"{next_run(reviewer, reading.plans, zone)}) · cooldown {cooled}"))
    for work in record.wip:
        task = next((t for t in record.tasks if t.candidate == work.candidate), None)
        text.append("\n  ")
        text.append(printable(f"{work.candidate} ({work.product})"), style="bold")
        text.append(printable(f" at {work.stage}"))
        if work.escalation is not None:
            text.append(printable(f": escalated to the owner, {work.escalation.reason} "
                                  f"(revise {work.escalation.stage} once more, or park: d decides)"), style="bold")
        elif task is not None and task.claimed_by is not None:
            text.append(printable(f": with runner {task.claimed_by} since {_when(task.claimed_at, reading)}"))
        elif task is not None:
            who = settings.reviewer(lane) if task.kind == "review" else settings.scheduler(lane)
            text.append(printable(f": task {task.n} waits for the {who} run"))
        text.append("\n    ")
        text.append(printable(f"{_counters(reading, lane, work)} · since {_when(work.started_at, reading)}"))
        text.append("\n    ")
        text.append_text(_stages(lane, work.escalation.stage if work.escalation else work.stage))
    if not record.wip:
        text.append("\n  ")
        text.append("no current work", style="dim")
        text.append("\n    ")
        text.append_text(_stages(lane, None))
    ended = record.history[-3:]
    if ended:
        text.append("\n  ")
        text.append(printable("ended: " + "; ".join(
            f"{h.candidate} {h.outcome} {_when(h.at, reading)}" for h in reversed(ended))
            + f" ({record.completed} completed, {record.parked} parked)"), style="dim")
    return text


def top_n_block(reading: Reading) -> Text:
    state = reading.pipeline
    assert state is not None
    text = Text()
    text.append("Top-N", style="bold")
    if state.top_n is None:
        text.append("  none recorded yet: the portfolio runs record a week's ranked candidates", style="dim")
        return text
    held = state.held()
    pool = {c.id for c in eligible(state)}
    consumed = set(state.consumed)
    text.append(printable(f"  {state.top_n.week}, recorded {_when(state.top_n.recorded_at, reading)}; "
                          f"promotion activates at {state.settings.threshold} eligible"))
    for candidate_id in state.top_n.candidates:
        record = state.candidate(candidate_id)
        if record is None:
            continue
        status = ("held by a lane" if candidate_id in held else "eligible" if candidate_id in pool
                  else "promoted before" if candidate_id in consumed else "—")
        text.append("\n  ")
        text.append(printable(f"{record.rank}. {candidate_id} ({record.product}): {status}"))
    return text


def decisions_block(reading: Reading) -> Text:
    state = reading.pipeline
    assert state is not None
    text = Text()
    text.append("GO / PIVOT / PARK", style="bold")
    if not state.decisions:
        text.append("  no decision yet", style="dim")
    for decision in state.decisions[-4:]:
        taken = " (maturation took it in)" if decision.consumed else (
            " (waits for maturation)" if decision.verdict == "GO" else "")
        text.append("\n  ")
        text.append(printable(f"#{decision.n} {decision.candidate}: {decision.verdict} "
                              f"{_when(decision.at, reading)}{taken}"))
    return text


def approvals_block(reading: Reading) -> Text:
    state = reading.pipeline
    assert state is not None
    text = Text()
    text.append("Security-approve", style="bold")
    text.append("  public publish, payment/account, external writes and legal risk need the owner's record",
                style="dim")
    for approval in state.approvals[-6:]:
        if approval.approved is None:
            said = "waits for the owner (v approves or denies)"
        elif approval.approved is False:
            said = f"denied by {approval.decided_by}"
        elif approval.used_at is None:
            said = f"approved by {approval.decided_by}, not used yet"
        else:
            said = f"approved by {approval.decided_by}, used by {approval.used_by} {_when(approval.used_at, reading)}"
        text.append("\n  ")
        text.append(printable(f"{approval.id}: {approval.action} of {approval.candidate}, asked by "
                              f"{approval.requested_by} {_when(approval.requested_at, reading)}: {said}"))
    if not state.approvals:
        text.append("\n  no request", style="dim")
    return text


def holds_block(reading: Reading) -> Text:
    holds = reading.bottleneck.holds
    text = Text()
    text.append("Everything that holds the factory now, most pressing first", style="bold")
    for hold in holds:
        text.append("\n  ")
        text.append(printable(f"{hold.kind}: {hold.sentence}"))
    if not holds:
        text.append("\n  nothing", style="dim")
    return text


class LifecycleView(VerticalScroll):
    def compose(self) -> ComposeResult:
        yield Static("", id="lifecycle-bottleneck")
        yield Static("", id="lifecycle-flow", classes="lifecycle-block")
        for lane in LANES:
            yield Static("", id=f"lifecycle-{lane}", classes="lifecycle-block")
        yield Static("", id="lifecycle-top-n", classes="lifecycle-block")
        yield Static("", id="lifecycle-decisions", classes="lifecycle-block")
        yield Static("", id="lifecycle-approvals", classes="lifecycle-block")
        yield Static("", id="lifecycle-holds", classes="lifecycle-block")

    def show(self, reading: Reading) -> None:
        unchanged.update(self.query_one("#lifecycle-bottleneck", Static), bottleneck_line(reading))
        unchanged.update(self.query_one("#lifecycle-flow", Static), flow(reading))
        blocks: dict[str, Text] = {}
        if reading.pipeline is None:
            said = (f"The staged lanes could not be read: {reading.pipeline_problem}" if reading.pipeline_problem
                    else "The promotion and maturation lanes have no settings yet: record a commission revision "
                         "with a `pipeline` member (`factory-schedule record-commission FILE` adopts them).")
            blocks = {"promotion": Text(printable(said), style="bold" if reading.pipeline_problem else "dim")}
        else:
            blocks = {lane: lane_block(reading, lane) for lane in LANES}
            blocks["top-n"] = top_n_block(reading)
            blocks["decisions"] = decisions_block(reading)
            blocks["approvals"] = approvals_block(reading)
        blocks["holds"] = holds_block(reading)
        for name in ("promotion", "maturation", "top-n", "decisions", "approvals", "holds"):
            widget = self.query_one(f"#lifecycle-{name}", Static)
            unchanged.update(widget, blocks.get(name, Text("")))
            widget.display = name in blocks
