"""What the staged lanes' owner forms share: the decision form's shape (the evidence, what else waits, a choice
checked as it is typed, who decides), and a refusal shown with its code.

The forms call `PipelineLanes`' own methods (the ones a runner, a reviewer or the CLI's `lanes`
commands call); a `PipelineError` is shown as `CODE: message` and the form stays open, and since
the engine refuses before it records, nothing was written.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from rich.text import Text
from textual.containers import VerticalScroll
from textual.validation import ValidationResult, Validator
from textual.widget import Widget
from textual.widgets import Input, Label, Static

from factory_schedule.core.pipeline import PipelineState
from factory_schedule.tui.dashboard.reading import Reading
from factory_schedule.tui.dashboard.safety import printable
from factory_schedule.tui.dashboard.screens.base import FormProblem, NotBlank, ScheduleForm, value_of


class OneOf(Validator):
    """The typed value must be one of `choices` (the engine's own words)."""

    def __init__(self, what: str, choices: tuple[str, ...]) -> None:
        super().__init__()
        self.what = what
        self.choices = choices

    def validate(self, value: str) -> ValidationResult:
        if value.strip() in self.choices:
            return self.success()
        return self.failure(f"{self.what}: {' or '.join(self.choices)}")


def reading_pipeline(reading: Reading | None) -> PipelineState | None:
    return None if reading is None else reading.pipeline


class OwnerDecisionForm(ScheduleForm):
    """An owner's decision on the staged lanes: the request (`request()`), its evidence (`evidence()`) in a region
    of its own that scrolls, what else waits (`others()`), one of `DECISIONS` typed and checked, any
    `more_fields()`, and who decides; the decision field has the focus.

    The request and the decision field are both on screen at any size: only the evidence scrolls."""

    SUBMIT_LABEL = "Record the decision"
    DECISIONS: ClassVar[tuple[str, ...]] = ()

    def request(self) -> Text:
        """What the owner decides, in one or two lines."""
        raise NotImplementedError

    def evidence(self) -> Text:
        raise NotImplementedError

    def others(self) -> list[str]:
        raise NotImplementedError

    def more_fields(self) -> Iterable[Widget]:
        return ()

    def header(self) -> Iterable[Widget]:
        yield Static(self.request(), id="decision-request")
        with VerticalScroll(classes="evidence", id="decision-evidence"):
            yield Static(self.evidence(), id=f"{self.EVIDENCE_ID}")
            others = self.others()
            if others:
                yield Static(Text(printable(f"Also waiting: {', '.join(others)}"), style="dim"))

    EVIDENCE_ID = "evidence"

    def fields(self) -> Iterable[Widget]:
        choices = " or ".join(self.DECISIONS)
        yield Label(f"Decision ({choices})")
        yield Input("", placeholder=choices, id="decision", validators=[OneOf("decision", self.DECISIONS)],
                    compact=True)
        yield from self.more_fields()
        yield Label("Decided by")
        yield Input("owner", id="decided-by", validators=[NotBlank("decided by")], compact=True)

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#decision", Input).focus()

    def decision(self) -> str:
        """The typed decision, one of `DECISIONS` (refused in the form's words otherwise)."""
        decision = value_of(self, "#decision")
        if decision not in self.DECISIONS:
            raise FormProblem(f"decision: {' or '.join(self.DECISIONS)}")
        return decision
