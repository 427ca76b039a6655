"""Approve or deny a security-approve request: `PipelineLanes.decide_approval`, with its evidence shown.

The evidence is what the journal holds for the candidate: the request (action, who asked,
when, why), the GO decision it came from (criteria and the exit verifier's artifact), its
release-readiness, and the tasks of both lanes still kept for it with who did each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text

from factory_schedule.core.bottleneck import local
from factory_schedule.core.pipeline import PipelineLanes
from factory_schedule.tui.dashboard.reading import Reading
from factory_schedule.tui.dashboard.safety import printable
from factory_schedule.tui.dashboard.screens.base import THIS_WRITE, value_of
from factory_schedule.tui.dashboard.screens.confirm import Confirmation
from factory_schedule.tui.dashboard.screens.pipeline_base import OwnerDecisionForm, reading_pipeline

DECISIONS = ("approve", "deny")


def pending_approvals(reading: Reading | None) -> list[Any]:
    state = reading_pipeline(reading)
    return [] if state is None else [a for a in state.approvals if a.approved is None]


ACTION_WORDS = {
    "public-publish": "publish {candidate} in public",
    "payment-account": "make a payment or account change for {candidate}",
    "external-write": "write outside the factory for {candidate}",
    "legal-risk": "take a legal-risk action for {candidate}",
}


def action_words(action: str, candidate: str) -> str:
    """What an approved external action lets a runner do, in words."""
    return ACTION_WORDS.get(action, action + " for {candidate}").format(candidate=candidate)


def approval_request(reading: Reading, approval: Any) -> Text:
    """The request the owner decides: the action, the candidate, who asked, when and why."""
    zone = reading.zone or "UTC"
    text = Text()
    text.append(printable(f"{approval.id}: {approval.action} of {approval.candidate}"), style="bold")
    text.append("\n")
    text.append(printable(f"asked by {approval.requested_by} {local(approval.requested_at, zone)}: "
                          f"{approval.reason}"))
    return text


def approval_evidence(reading: Reading, approval: Any) -> Text:
    """What the journal holds for the candidate: the gate decision, the lanes' outcomes and kept tasks."""
    state = reading.pipeline
    assert state is not None
    zone = reading.zone or "UTC"
    text = Text()
    for decision in state.decisions:
        if decision.candidate == approval.candidate:
            if text:
                text.append("\n")
            text.append(printable(f"gate decision #{decision.n}: {decision.verdict} {local(decision.at, zone)}, "
                                  f"criteria {decision.criteria[:12]}…, exit verifier's artifact "
                                  f"{decision.verifier_artifact[:12]}…"))
    for lane in ("promotion", "maturation"):
        record = state.lane(lane)
        for entry in record.history:
            if entry.candidate == approval.candidate:
                text.append("\n" if text else "")
                text.append(printable(f"{lane}: {entry.outcome} {local(entry.at, zone)}"))
        done = [d for d in record.done if d.candidate == approval.candidate]
        if done:
            text.append("\n" if text else "")
            text.append(printable(f"{lane} tasks kept: " + ", ".join(f"{d.stage} by {d.by}" for d in done)))
    text.append("\n" if text else "")
    text.append("Approving records the owner's approval for this one action, used once; denying ends the "
                "request. Nothing external happens here.", style="dim")
    return text


class ApprovalForm(OwnerDecisionForm):
    TITLE_TEXT = "Approve or deny a security-approve request (lanes.decide_approval)"
    DECISIONS = DECISIONS
    EVIDENCE_ID = "approval-evidence"

    def __init__(self, lanes: PipelineLanes, reading: Reading, approval_id: str | None = None) -> None:
        super().__init__()
        self.lanes = lanes
        self.reading = reading
        pending = pending_approvals(reading)
        self.approval = next((a for a in pending if a.id == approval_id), pending[0])

    def request(self) -> Text:
        return approval_request(self.reading, self.approval)

    def evidence(self) -> Text:
        return approval_evidence(self.reading, self.approval)

    def others(self) -> list[str]:
        return [a.id for a in pending_approvals(self.reading) if a.id != self.approval.id]

    def refresh_from(self, reading: Reading) -> str | None:
        """The request was decided elsewhere (another dashboard, the CLI): nothing is left to decide here."""
        self.reading = reading
        if any(a.id == self.approval.id for a in pending_approvals(reading)) or self.nothing_left:
            return None
        state = reading.pipeline
        decided = next((a for a in state.approvals if a.id == self.approval.id), None) if state else None
        how = "decided" if decided is None else (
            f"{'approved' if decided.approved else 'denied'} by {decided.decided_by}")
        recorded = None if decided is None else (decided.id, decided.approved, decided.decided_by)
        written = self.written_here(lambda tried: tried == recorded)
        if written == THIS_WRITE:
            return self.own_write_landed(f"The decision on {self.approval.id} ({how})")
        self.nothing_left = f"{self.approval.id} was {how}: there is nothing left to decide."
        return f"{self.writer(written)} {how.split(' by ')[0]} {self.approval.id} while this form was open ({how})."

    def confirmation(self) -> Confirmation:
        approval, approved = self.approval, self.decision() == "approve"
        values = (("request", approval.id), ("action", approval.action), ("candidate", approval.candidate),
                  ("decision", "approve" if approved else "deny"), ("decided by", value_of(self, "#decided-by")))
        if not approved:
            return Confirmation(title=f"Deny {approval.action} of {approval.candidate}", values=values,
                                changes=("the request ends; nothing external happens",), confirm_label="Deny")
        return Confirmation(
            title=f"Approve {approval.action} of {approval.candidate}",
            values=values,
            changes=("the request is approved, for one use",),
            consequence=(f"A runner may then {action_words(approval.action, approval.candidate)}, once. What it "
                         "does outside the factory cannot be taken back from here."),
            confirm_label=f"Approve {approval.action}",
        )

    def perform(self) -> Callable[[], str]:
        approved = self.decision() == "approve"
        approval, decided_by, signer = self.approval, value_of(self, "#decided-by"), self.signer
        self.trying((approval.id, approved, decided_by))

        def write() -> str:
            result = self.lanes.decide_approval(approval=approval.id, decided_by=decided_by, approved=approved,
                                                signer=signer)
            verb = "Approved" if approved else "Denied"
            said = "Already recorded: " + verb.lower() if result.replayed else verb
            return f"{said} {approval.action} of {approval.candidate} ({approval.id}; lanes v{result.version})."
        return write
