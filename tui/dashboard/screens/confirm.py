"""The confirm step every form's write passes through: what will be recorded, value by value, how it
differs from the record in force, and, for what cannot be undone or changes the schedule, the
consequence in words.

A form builds a `Confirmation` from its fields and shows it in a `ConfirmStep`; the form calls
its core method only when the owner confirms there. An ordinary write has its Record button
focused, so Enter on the form and Enter here records it. A write with a consequence is a second
look: the Back button has the focus, so the Enter that opened it cannot also record it; the
owner moves to the confirm button (Tab, or the arrow keys) and presses it.

A step answers once: a second Enter while its answer is on the way does nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from factory_schedule.tui.dashboard.safety import printable


@dataclass(frozen=True)
class Confirmation:
    """What one write records (`values`, every one, in words), what it changes from the record in force
    (`changes`), and `consequence`: set when the write cannot be undone or changes the schedule."""

    title: str
    values: tuple[tuple[str, str], ...]
    changes: tuple[str, ...] = ()
    consequence: str | None = None
    confirm_label: str = "Record"

    @property
    def second_look(self) -> bool:
        return self.consequence is not None


def confirmation_text(confirmation: Confirmation) -> Table:
    """The values and the changes as one grid the owner reads top to bottom."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    for name, value in confirmation.values:
        grid.add_row(Text(printable(name)), Text(printable(value)))
    if confirmation.changes:
        grid.add_row(Text(""), Text(""))
        for n, change in enumerate(confirmation.changes):
            grid.add_row(Text("Changes" if n == 0 else ""), Text(printable(change)))
    return grid


class ConfirmStep(ModalScreen[bool]):
    """Show a `Confirmation`; answer True (record it) or False (back to the form, which stays as it was)."""

    DEFAULT_CLASSES = "form confirm"
    BINDINGS: ClassVar = [
        Binding("escape", "back", "Back to the form"),
        Binding("left,right", "other_button", "The other button", show=False),
    ]

    def __init__(self, confirmation: Confirmation) -> None:
        super().__init__()
        self.confirmation = confirmation
        self.answered = False

    def compose(self) -> ComposeResult:
        confirmation = self.confirmation
        with Vertical(id="form-body"):
            yield Static(Text(printable(confirmation.title)), classes="form-title", id="confirm-title")
            if confirmation.consequence is not None:
                yield Static(Text(printable(confirmation.consequence)), classes="confirm-consequence",
                             id="confirm-consequence")
            with VerticalScroll(id="confirm-values"):
                yield Static(confirmation_text(confirmation))
            if confirmation.second_look:  # its Enter goes back: said, or it reads as a write that did nothing
                yield Static(Text(f"Enter goes back; Tab, then Enter: {printable(confirmation.confirm_label)}.",
                                  style="dim"), id="confirm-how")
            with Horizontal(classes="form-buttons"):
                yield Button("Back (Esc)", id="back", compact=True)
                yield Button(confirmation.confirm_label, id="confirm", compact=True,
                             variant="error" if confirmation.second_look else "primary")

    def on_mount(self) -> None:
        self.query_one("#back" if self.confirmation.second_look else "#confirm", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.answer(event.button.id == "confirm")

    def action_back(self) -> None:
        self.answer(False)

    def action_other_button(self) -> None:
        self.focus_next(Button)

    def answer(self, record: bool) -> None:
        if self.answered:
            return
        self.answered = True
        self.dismiss(record)
