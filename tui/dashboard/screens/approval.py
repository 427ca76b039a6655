"""Approve or deny a security-approve request: `PipelineLanes.decide_approval`, with its evidence shown.

The evidence is what the journal holds for the candidate: the request (action, who asked,
when, why), the GO decision it came from (criteria and the exit verifier's artifact), its
release-readiness, and the tasks of both lanes still kept for it with who did each.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static

from factory_schedule.core.bottleneck import local
from factory_schedule.tui.dashboard.reading import Reading
from factory_schedule.tui.dashboard.safety import printable
from factory_schedule.tui.dashboard.screens.base import value_of
from factory_schedule.tui.dashboard.screens.pipeline_base import OwnerDecisionForm, reading_pipeline, through_engine

DECISIONS = ("approve", "deny")


def pending_approvals(reading: Reading | None) -> list[Any]:
    state = reading_pipeline(reading)
    return [] if state is None else [a for a in state.approvals if a.approved is None]


def approval_evidence(reading: Reading, approval: Any) -> Text:
    state = reading.pipeline
    assert state is not None
    zone = reading.zone or "UTC"
    text = Text()
    text.append(printable(f"{approval.id}: {approval.action} of {approval.candidate}"), style="bold")
    text.append("\n")
    text.append(printable(f"asked by {approval.requested_by} {local(approval.requested_at, zone)}: "
                          f"{approval.reason}"))
    for decision in state.decisions:
        if decision.candidate == approval.candidate:
            text.append("\n")
            text.append(printable(f"gate decision #{decision.n}: {decision.verdict} {local(decision.at, zone)}, "
                                  f"criteria {decision.criteria[:12]}…, exit verifier's artifact "
                                  f"{decision.verifier_artifact[:12]}…"))
    for lane in ("promotion", "maturation"):
        record = state.lane(lane)
        for entry in record.history:
            if entry.candidate == approval.candidate:
                text.append("\n")
                text.append(printable(f"{lane}: {entry.outcome} {local(entry.at, zone)}"))
        done = [d for d in record.done if d.candidate == approval.candidate]
        if done:
            text.append("\n")
            text.append(printable(f"{lane} tasks kept: " + ", ".join(f"{d.stage} by {d.by}" for d in done)))
    text.append("\n")
    text.append("Approving records the owner's approval for this one action, used once; denying ends the "
                "request. Nothing external happens here.", style="dim")
    return text


class ApprovalForm(OwnerDecisionForm):
    TITLE_TEXT = "Approve or deny a security-approve request (lanes.decide_approval)"
    DECISIONS = DECISIONS

    def __init__(self, lanes: Any, reading: Reading, approval_id: str | None = None) -> None:
        super().__init__()
        self.lanes = lanes
        self.reading = reading
        pending = pending_approvals(reading)
        self.approval = next((a for a in pending if a.id == approval_id), pending[0])

    def evidence(self) -> Widget:
        return Static(approval_evidence(self.reading, self.approval), id="approval-evidence")

    def others(self) -> list[str]:
        return [a.id for a in pending_approvals(self.reading) if a.id != self.approval.id]

    def perform(self) -> str:
        approved = self.decision() == "approve"
        result = through_engine(lambda: self.lanes.decide_approval(
            approval=self.approval.id, decided_by=value_of(self, "#decided-by"), approved=approved))
        verb = "Approved" if approved else "Denied"
        return (f"{verb} {self.approval.action} of {self.approval.candidate} ({self.approval.id}, "
                f"journal v{result.version}).")
