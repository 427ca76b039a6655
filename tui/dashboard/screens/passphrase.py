"""The owner's passphrase, asked when an owner form is confirmed in a journal that holds an owner key.

One field, masked; Enter opens the key (a wrong passphrase says so and stays), Esc goes back to the form
with nothing written. The forms call it through the app's `with_owner_signer`, so each form only says it
records an owner decision; what the passphrase opens stays in this process's memory for the few minutes
the owner chose (`factory-schedule --owner-minutes`), never written, never in the environment.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from factory_schedule.tui.terminal_text import printable


class PassphraseStep(ModalScreen[Any]):
    """Answers the unlocked signer, or None when the owner goes back."""

    DEFAULT_CLASSES = "form confirm"
    BINDINGS: ClassVar = [Binding("escape", "back", "Back to the form")]

    def __init__(self, unlock: Callable[[str], Any], why: str) -> None:
        super().__init__()
        self.unlock = unlock
        self.why = why
        self.answered = False

    def compose(self) -> ComposeResult:
        with Vertical(id="form-body"):
            yield Static("Owner passphrase", classes="form-title", id="passphrase-title")
            yield Static(Text(printable(self.why)), id="passphrase-why")
            yield Input(password=True, id="passphrase", placeholder="the passphrase of your owner key")
            yield Static("", classes="form-error", id="passphrase-error")

    def on_mount(self) -> None:
        self.query_one("#passphrase-error", Static).display = False
        self.query_one("#passphrase", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        field = self.query_one("#passphrase", Input)
        try:
            signer = self.unlock(field.value)
        except Exception as error:  # a wrong passphrase or an unreadable key file: said, and asked again
            field.value = ""
            shown = self.query_one("#passphrase-error", Static)
            shown.update(Text(printable(str(error))))
            shown.display = True
            return
        field.value = ""
        self._answer(signer)

    def action_back(self) -> None:
        self._answer(None)

    def _answer(self, signer: Any) -> None:
        if not self.answered:
            self.answered = True
            self.dismiss(signer)
