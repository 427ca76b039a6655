"""The security-approve boundary: an external action is requested, decided by the owner (never by its
requester) and used once, by the run that records it."""

from __future__ import annotations

from pendulum import DateTime

from ..schedule_document import at
from .errors import PipelineError
from .model import (
    MAX_APPROVALS,
    Approval,
    PipelineState,
)
from .rules import PipelineChange, approval_instants, copy_with, instant_after, write_instant


def use_approvals(state: PipelineState, candidate: str, actions: tuple[str, ...], runner: str,
                   stamp: str) -> tuple[Approval, ...]:
    approvals = list(state.approvals)
    for action in actions:
        index = next((i for i, a in enumerate(approvals) if a.candidate == candidate and a.action == action
                      and a.approved is True and a.used_at is None), None)
        if index is None:
            raise PipelineError("APPROVAL_REQUIRED", f"{action} for {candidate} needs the owner's approval record "
                                                     "(security-approve); nothing was written")
        instant_after(f"approval {approvals[index].id}", approval_instants(approvals[index]), at(stamp))
        approvals[index] = copy_with(approvals[index], used_at=stamp, used_by=runner)
    return tuple(approvals)


def request_approval(state: PipelineState, approval_id: str, candidate: str, action: str, requested_by: str,
                     reason: str, now: DateTime) -> PipelineChange:
    if any(a.id == approval_id for a in state.approvals):
        raise PipelineError("STALE", f"approval {approval_id} was already requested (under another request)")
    stamp = write_instant(now)
    approval = Approval(id=approval_id, candidate=candidate, action=action,  # type: ignore[arg-type]
                        requested_by=requested_by, requested_at=stamp, reason=reason)
    approvals = [*state.approvals, approval]
    while len(approvals) > MAX_APPROVALS:  # the oldest settled record (used or refused) leaves first
        gone = next((a for a in approvals if a.used_at is not None or a.approved is False), None)
        if gone is None:
            raise PipelineError("LIMIT", f"{MAX_APPROVALS} approval requests are open")
        approvals.remove(gone)
    new = copy_with(state, approvals=tuple(approvals), updated_at=stamp)
    return PipelineChange("approval-requested", approval.doc(), new, {"approval": approval.doc()})


def decide_approval(state: PipelineState, approval_id: str, decided_by: str, approved: bool,
                    now: DateTime) -> PipelineChange:
    approval = next((a for a in state.approvals if a.id == approval_id), None)
    if approval is None:
        raise PipelineError("UNKNOWN_TASK", f"no approval request {approval_id}")
    if approval.approved is not None:
        raise PipelineError("STALE", f"approval {approval_id} was already decided")
    if decided_by == approval.requested_by:
        raise PipelineError("SELF_DECIDED", f"approval {approval_id} was requested by {decided_by}, who may not "
                                            f"decide it; nothing was written")
    stamp = instant_after(f"approval {approval_id}", approval_instants(approval), now)
    decided = copy_with(approval, decided_by=decided_by, decided_at=stamp, approved=approved)
    new = copy_with(state, approvals=tuple(decided if a.id == approval_id else a for a in state.approvals),
               updated_at=stamp)
    return PipelineChange("approval-decided", decided.doc(), new, {"approval": decided.doc()})


def record_external_action(state: PipelineState, approval_id: str, candidate: str, action: str, runner: str,
                           now: DateTime) -> PipelineChange:
    approval = next((a for a in state.approvals if a.id == approval_id), None)
    if (approval is None or approval.candidate != candidate or approval.action != action
            or approval.approved is not True or approval.used_at is not None):
        raise PipelineError("APPROVAL_REQUIRED", f"{action} for {candidate} needs an unused owner approval record "
                                                 f"({approval_id} is not one); nothing was written")
    stamp = instant_after(f"approval {approval_id}", approval_instants(approval), now)
    used = copy_with(approval, used_at=stamp, used_by=runner)
    new = copy_with(state, approvals=tuple(used if a.id == approval_id else a for a in state.approvals),
               updated_at=stamp)
    return PipelineChange("external-action-recorded", used.doc(), new, {"approval": used.doc()})
