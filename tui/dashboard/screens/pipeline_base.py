"""What the staged lanes' owner forms share: a choice checked as it is typed, and a refusal shown with its code.

The forms call `PipelineLanes`' own methods (the ones a runner, a reviewer or the CLI's `lanes`
commands call); a `PipelineError` is shown as `CODE: message` and the form stays open, and since
the engine refuses before it records, nothing was written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.validation import ValidationResult, Validator

from factory_schedule.core.pipeline import PipelineError, PipelineResult
from factory_schedule.tui.dashboard.screens.base import FormProblem


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


def through_engine(call: Callable[[], PipelineResult]) -> PipelineResult:
    """Run one PipelineLanes call; a refusal becomes the form's `CODE: message` (nothing was written)."""
    try:
        return call()
    except PipelineError as error:
        raise FormProblem(f"{error.code}: {error.message}") from None


def reading_pipeline(reading: Any) -> Any | None:
    return None if reading is None else reading.pipeline
