"""Decide an escalation: `PipelineLanes.decide_escalation`, the owner's answer after a reviewer's reject cap
(or a build's retry cap): `revise` grants one more round of the escalated stage, `park` ends the work.

This is also the owner's only way to park a candidate: the engine has no owner park (nor any
unpark) outside an escalation, and the owner has none by design, so the dashboard offers none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Input, Label

from factory_schedule.core.bottleneck import local
from factory_schedule.core.pipeline import PipelineLanes
from factory_schedule.tui.dashboard.reading import Reading
from factory_schedule.tui.dashboard.safety import printable
from factory_schedule.tui.dashboard.screens.base import EARLIER_WRITE, THIS_WRITE, NotBlank, value_of
from factory_schedule.tui.dashboard.screens.confirm import Confirmation
from factory_schedule.tui.dashboard.screens.pipeline_base import OwnerDecisionForm, reading_pipeline

DECISIONS = ("revise", "park")


def open_escalations(reading: Reading | None) -> list[tuple[str, Any, Any]]:
    """(lane, task, work) of each escalation waiting for the owner."""
    state = reading_pipeline(reading)
    if state is None:
        return []
    found = []
    for lane in ("promotion", "maturation"):
        record = state.lane(lane)
        for task in record.tasks:
            work = record.work_of(task.candidate)
            if task.kind == "owner" and work is not None and work.escalation is not None:
                found.append((lane, task, work))
    return found


def decided_task(reading: Reading, lane: str, n: int) -> Any:
    """The lane's done record of task `n`, while the staged lanes keep it (None otherwise)."""
    state = reading_pipeline(reading)
    return None if state is None else next((done for done in state.lane(lane).done if done.n == n), None)


def escalation_request(reading: Reading, lane: str, task: Any, work: Any) -> Text:
    """The escalation the owner decides: the lane's task, the candidate, when and why it was escalated."""
    zone = reading.zone or "UTC"
    text = Text()
    text.append(printable(f"{lane} task {task.n}: {work.candidate} ({work.product})"), style="bold")
    text.append("\n")
    text.append(printable(f"escalated {local(work.escalation.at, zone)}: {work.escalation.reason}"))
    return text


def escalation_evidence(reading: Reading, lane: str, task: Any, work: Any) -> Text:
    """The counters against their cap and every artifact the work kept, with who made it."""
    state = reading.pipeline
    assert state is not None
    settings = state.settings
    escalation = work.escalation
    text = Text()
    if escalation.abandons:  # an abandoned task past its retry cap
        text.append(printable(f"its run confirmed gone {escalation.abandons} times; retry cap {settings.max_retries}"))
    else:
        counter = "retries" if escalation.stage == "prototype" else "revisions"
        cap = (settings.max_retries if counter == "retries" else settings.max_revisions) + work.grants
        text.append(printable(f"{counter} {getattr(work, counter)}/{cap}, {work.grants} granted by the owner "
                              "before"))
    for artifact in work.artifacts:
        text.append("\n")
        text.append(printable(f"{artifact.stage} (task {artifact.task}) by {artifact.runner}: {artifact.artifact}"))
    text.append("\n")
    grant = "sent once more" if escalation.abandons else "counted as a grant"
    text.append(printable(f"revise: one more {escalation.stage} round ({grant}); park: the work ends "
                          "(no unpark: a parked candidate is never selected again)"), style="dim")
    return text


class EscalationForm(OwnerDecisionForm):
    TITLE_TEXT = "Decide an escalation (lanes.decide_escalation)"
    DECISIONS = DECISIONS
    EVIDENCE_ID = "escalation-evidence"

    def __init__(self, lanes: PipelineLanes, reading: Reading, task: int | None = None) -> None:
        super().__init__()
        self.lanes = lanes
        self.reading = reading
        found = open_escalations(reading)
        self.lane, self.escalated, self.work = next((e for e in found if e[1].n == task), found[0])

    def request(self) -> Text:
        return escalation_request(self.reading, self.lane, self.escalated, self.work)

    def evidence(self) -> Text:
        return escalation_evidence(self.reading, self.lane, self.escalated, self.work)

    def others(self) -> list[str]:
        return [f"{lane} task {t.n} ({w.candidate})" for lane, t, w in open_escalations(self.reading)
                if t.n != self.escalated.n]

    def more_fields(self) -> Iterable[Widget]:
        yield Label("Reason (kept in the journal)")
        yield Input("", id="reason", validators=[NotBlank("reason", longest=300)], compact=True)

    def refresh_from(self, reading: Reading) -> str | None:
        """The escalation was decided elsewhere: nothing is left to decide here."""
        self.reading = reading
        if any(t.n == self.escalated.n for _lane, t, _w in open_escalations(reading)) or self.nothing_left:
            return None
        task = f"{self.lane} task {self.escalated.n} ({self.work.candidate})"
        done = decided_task(reading, self.lane, self.escalated.n)
        # A task's done record keeps who decided and whether another round was enqueued (revise) or not (park), not
        # the reason: what it shows may be this form's write or another writer's with another reason.
        shown = None if done is None else (done.by, "park" if done.enqueued is None else "revise")
        written = self.written_here(lambda tried: tried == shown)
        if written == THIS_WRITE:
            return self.own_write_may_have_landed(f"{task} was decided {self.tried[1]} by {done.by}")
        self.nothing_left = f"{task} was decided: there is nothing left to decide."
        if written == EARLIER_WRITE:
            return (f"{task} was decided while this form was open, as an earlier write of this form asked (its answer "
                    "lost) or by another writer.")
        return f"Another writer decided {task} while this form was open."

    def confirmation(self) -> Confirmation:
        decision, work = self.decision(), self.work
        values = (("task", f"{self.lane} task {self.escalated.n}"), ("candidate", f"{work.candidate} ({work.product})"),
                  ("decision", decision), ("reason", value_of(self, "#reason")),
                  ("decided by", value_of(self, "#decided-by")))
        if decision == "revise":
            grant = "sent once more" if work.escalation.abandons else "counted as a grant"
            return Confirmation(title=f"Grant {work.candidate} one more {work.escalation.stage} round",
                                values=values, changes=(f"one more {work.escalation.stage} round ({grant})",),
                                confirm_label="Revise")
        return Confirmation(
            title=f"Park {work.candidate}",
            values=values,
            changes=(f"{work.candidate}'s work in {self.lane} ends",),
            consequence=f"{work.candidate} is never selected again: there is no unpark.",
            confirm_label=f"Park {work.candidate}",
        )

    def perform(self) -> Callable[[], str]:
        decision, lane, task, candidate = self.decision(), self.lane, self.escalated.n, self.work.candidate
        decided_by, reason, signer = value_of(self, "#decided-by"), value_of(self, "#reason"), self.signer
        self.trying((decided_by, decision))

        def write() -> str:
            result = self.lanes.decide_escalation(lane=lane, task=task, decided_by=decided_by, decision=decision,
                                                  reason=reason, signer=signer)
            outcome = result.result.get("outcome")
            said = "parked" if outcome == "park" else f"back to {result.result['next']['stage']}"
            if result.replayed:
                said = f"already recorded: {said}"
            return f"{candidate}: {said} ({lane} task {task}; lanes v{result.version})."
        return write
