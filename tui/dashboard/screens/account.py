"""Record a sign-in record: the owner's next account record, after a 401 or when one stops being current."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Input, Label, Select, Switch

from factory_schedule.tui.dashboard.reading import Reading
from factory_schedule.tui.dashboard.screens.base import NotBlank, PositiveInteger, ScheduleForm, as_int, value_of

if TYPE_CHECKING:
    from factory_schedule.core import LifecycleSchedule

ACCOUNTS = ("claude", "chatgpt")


def next_sequence(reading: Reading | None, account: str) -> int:
    if reading is None or reading.view is None:
        return 1
    state = next((a for a in reading.view.accounts if a.account == account), None)
    return 1 if state is None or state.record is None else state.record.sequence + 1


def default_account(reading: Reading | None) -> str:
    """The account a sign-in refusal stopped, else claude."""
    if reading is not None and reading.view is not None:
        for state in reading.view.accounts:
            if state.sign_in_refused_at is not None:
                return state.account
    return "claude"


class RecordAccountForm(ScheduleForm):
    TITLE_TEXT = "Record a sign-in record (schedule.record_account)"
    SUBMIT_LABEL = "Record"

    def __init__(self, schedule: LifecycleSchedule, reading: Reading | None, account: str | None = None) -> None:
        super().__init__()
        self.schedule = schedule
        self.reading = reading
        self.account = account or default_account(reading)

    def fields(self) -> Iterable[Widget]:
        yield Label("Account")
        yield Select([(name, name) for name in ACCOUNTS], value=self.account, allow_blank=False, id="account")
        yield Label("Sequence (the next one)")
        yield Input(
            str(next_sequence(self.reading, self.account)), id="sequence", validators=[PositiveInteger("sequence")]
        )
        yield Label("Sign-in (the identity the runner will present)")
        yield Input(placeholder="e.g. owner@example.com", id="sign-in", validators=[NotBlank("sign-in")])
        yield Label("Recorded by")
        yield Input("owner", id="recorded-by", validators=[NotBlank("recorded by")])
        with Horizontal(classes="switch-row"):
            yield Label("Paid overage allowed  ")
            yield Switch(value=False, id="overage")

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#sign-in", Input).focus()

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.value in ACCOUNTS:
            self.account = str(event.value)
            self.query_one("#sequence", Input).value = str(next_sequence(self.reading, self.account))

    def perform(self) -> str:
        result = self.schedule.record_account(
            account=self.account,
            sequence=as_int(value_of(self, "#sequence")),
            sign_in=value_of(self, "#sign-in"),
            overage=self.query_one("#overage", Switch).value,
            recorded_by=value_of(self, "#recorded-by"),
        )
        said = "Already recorded" if result.replayed else "Recorded"
        return f"{said}: {self.account} record #{value_of(self, '#sequence')} (journal v{result.version})."
