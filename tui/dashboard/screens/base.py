"""The shape every dashboard form shares: a modal that validates as the owner types,
calls one core method, and on a ScheduleError shows its code and message and stays open.

Nothing is written unless the core method accepts it: the engine refuses before it
records, so a form never has anything to undo.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.validation import ValidationResult, Validator
from textual.widget import Widget
from textual.widgets import Button, Input, Static

from factory_schedule.core import ScheduleError
from factory_schedule.tui.dashboard.safety import printable


class NotBlank(Validator):
    def __init__(self, what: str, longest: int = 200) -> None:
        super().__init__()
        self.what = what
        self.longest = longest

    def validate(self, value: str) -> ValidationResult:
        text = value.strip()
        if not text:
            return self.failure(f"{self.what}: needed")
        if len(text) > self.longest:
            return self.failure(f"{self.what}: at most {self.longest} characters")
        return self.success()


class PositiveInteger(Validator):
    def __init__(self, what: str, smallest: int = 1) -> None:
        super().__init__()
        self.what = what
        self.smallest = smallest

    def validate(self, value: str) -> ValidationResult:
        text = value.strip().replace(" ", "").replace("_", "")
        if not text.isdigit():
            return self.failure(f"{self.what}: a whole number is needed")
        if int(text) < self.smallest:
            return self.failure(f"{self.what}: at least {self.smallest}")
        return self.success()


def as_int(value: str) -> int:
    return int(value.strip().replace(" ", "").replace("_", ""))


class ScheduleForm(ModalScreen[str | None]):
    """Subclasses give `TITLE_TEXT`, `SUBMIT_LABEL`, `fields()` and `perform()`."""

    DEFAULT_CLASSES = "form"
    AUTO_FOCUS = "Input"
    BINDINGS: ClassVar = [Binding("escape", "cancel", "Cancel")]
    TITLE_TEXT = ""
    SUBMIT_LABEL = "Record"

    def compose(self) -> ComposeResult:
        with Vertical(id="form-body"):
            yield Static(self.TITLE_TEXT, classes="form-title")
            # The fields scroll when the terminal is short; the title, the error and the buttons stay in view.
            with VerticalScroll(id="form-fields"):
                yield from self.fields()
            yield Static("", classes="form-error", id="form-error")
            with Horizontal(classes="form-buttons"):
                yield Button("Cancel (Esc)", id="cancel")
                yield Button(self.SUBMIT_LABEL, id="submit", variant="primary")

    def on_mount(self) -> None:
        """Headless (tests, screenshots): no blinking cursor, so every picture of a form is the same."""
        self.query_one("#form-error", Static).display = False
        if self.app.is_headless:
            for field in self.query(Input):
                field.cursor_blink = False

    def fields(self) -> Iterable[Widget]:
        raise NotImplementedError

    def perform(self) -> str:
        """Call the core method; return the words to show on success. May raise ScheduleError."""
        raise NotImplementedError

    def show_error(self, message: str) -> None:
        """Say what is wrong (the line takes no room while nothing is)."""
        error = self.query_one("#form-error", Static)
        error.update(Text(printable(message)))
        error.display = bool(message)

    def first_invalid(self) -> str | None:
        for field in self.query(Input):
            if field.validators:
                result = field.validate(field.value)
                if result is not None and not result.is_valid:
                    return "; ".join(result.failure_descriptions)
        return None

    def on_input_changed(self, event: Input.Changed) -> None:
        """Validate the field being typed in; the others are checked when the owner submits."""
        if not event.input.has_focus:
            return
        if event.validation_result is not None and not event.validation_result.is_valid:
            self.show_error("; ".join(event.validation_result.failure_descriptions))
        else:
            self.show_error("")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "cancel":
            event.stop()
            self.dismiss(None)
        elif event.button.id == "submit":
            event.stop()
            self.submit()

    def submit(self) -> None:
        problem = self.first_invalid()
        if problem:
            self.show_error(problem)
            return
        try:
            done = self.perform()
        except ScheduleError as error:
            self.show_error(f"{error.code}: {error.message}")
            return
        except FormProblem as problem:
            self.show_error(str(problem))
            return
        self.dismiss(done)

    def action_cancel(self) -> None:
        self.dismiss(None)


class FormProblem(Exception):
    """An input the form itself refuses before asking core (a missing file, bad JSON)."""


def value_of(screen: Widget, selector: str) -> str:
    return screen.query_one(selector, Input).value.strip()
