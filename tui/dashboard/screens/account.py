"""Record a sign-in record: the owner's next account record, after a 401 or when one stops being current."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from rich.text import Text
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Input, Label, Select, Static, Switch

from factory_schedule.core import AccountRecord
from factory_schedule.tui.dashboard.reading import Reading
from factory_schedule.tui.dashboard.safety import printable
from factory_schedule.tui.dashboard.screens.base import (
    THIS_WRITE,
    FormSwitch,
    NotBlank,
    PositiveInteger,
    ScheduleForm,
    as_int,
    value_of,
)
from factory_schedule.tui.dashboard.screens.confirm import Confirmation
from factory_schedule.tui.dashboard.words import ago

if TYPE_CHECKING:
    from factory_schedule.core import LifecycleSchedule

ACCOUNTS = ("claude", "chatgpt")


def next_sequence(reading: Reading | None, account: str) -> int:
    if reading is None or reading.view is None:
        return 1
    state = next((a for a in reading.view.accounts if a.account == account), None)
    return 1 if state is None or state.record is None else state.record.sequence + 1


def current_record(reading: Reading | None, account: str) -> AccountRecord | None:
    """The account's record in force, or None before its first."""
    if reading is None or reading.view is None:
        return None
    state = next((a for a in reading.view.accounts if a.account == account), None)
    return None if state is None else state.record


def recorded_by(reading: Reading | None) -> str:
    """Who recorded the journal's newest account record: the owner's own name for themself, or "" (the field
    then says what to type) before any record; a made-up default would be kept in the journal as the owner's."""
    if reading is None or reading.view is None:
        return ""
    records = [state.record for state in reading.view.accounts if state.record is not None]
    return max(records, key=lambda record: record.recorded_at).recorded_by if records else ""


def record_words(reading: Reading | None, account: str) -> Text:
    """What the account's record says now: the sign-in a runner must present, who recorded it and when."""
    record = current_record(reading, account)
    text = Text()
    text.append(f"{account}'s current record: ", style="bold")
    if record is None:
        text.append("no record yet (calls on it are refused until one is recorded)")
        return text
    assert reading is not None
    text.append(printable(f"#{record.sequence}, sign-in {record.sign_in}, overage {'on' if record.overage else 'off'}, "
                          f"recorded by {record.recorded_by} {ago(record.recorded_at, reading.now)}"))
    return text


def overage_words(account: str, overage: bool) -> str:
    if overage:
        return f"on (allowed): no {account} call is admitted while it is on"
    return "off (not allowed): calls are admitted"


def record_changes(record: AccountRecord | None, sign_in: str, overage: bool) -> tuple[str, ...]:
    """How a new record differs from the one in force, in words."""
    if record is None:
        return ("the account's first record: its lanes' calls are admitted from then on",)
    changes = [f"replaces record #{record.sequence}"]
    if record.sign_in != sign_in:
        changes.append(f"sign-in {record.sign_in} → {sign_in} (a runner presenting the old one is refused)")
    else:
        changes.append(f"sign-in unchanged ({sign_in})")
    if record.overage != overage:
        changes.append(f"paid overage {'on' if record.overage else 'off'} → {'on' if overage else 'off'}")
    return tuple(changes)


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

    def header(self) -> Iterable[Widget]:
        with Horizontal(classes="form-row"):
            yield Label("Account ", classes="inline")
            yield Select([(name, name) for name in ACCOUNTS], value=self.account, allow_blank=False, id="account",
                         compact=True)
        yield Static(record_words(self.reading, self.account), id="current-record")

    def fields(self) -> Iterable[Widget]:
        yield Label("Sign-in (the identity the runner will present)")
        yield Input(self._current_sign_in(), placeholder="the identity the provider account signs in with",
                    id="sign-in", validators=[NotBlank("sign-in")], compact=True)
        yield Static("", id="sign-in-warning", classes="form-warning")
        yield Label("Sequence (the next one)")
        yield Input(str(next_sequence(self.reading, self.account)), id="sequence",
                    validators=[PositiveInteger("sequence")], compact=True)
        yield Label("Recorded by (who you are, kept in the journal)")
        yield Input(printable(recorded_by(self.reading)), id="recorded-by", validators=[NotBlank("recorded by")],
                    placeholder="your name or handle: it is kept with the record", compact=True)
        with Horizontal(classes="switch-row"):
            yield Label("Paid overage allowed (space toggles)  ", classes="inline")
            yield FormSwitch(value=False, id="overage")
            yield Label("  off", classes="inline", id="overage-word")  # the switch's state in words, not colour only

    def _current_sign_in(self) -> str:
        record = current_record(self.reading, self.account)
        return "" if record is None else printable(record.sign_in)

    def _warn_if_another_identity(self) -> None:
        """A record whose sign-in differs from the current one makes every runner presenting the old one refused."""
        record = current_record(self.reading, self.account)
        typed = value_of(self, "#sign-in")
        warning = self.query_one("#sign-in-warning", Static)
        if record is None or not typed or typed == printable(record.sign_in):
            warning.display = False
            warning.update("")
            return
        warning.display = True
        warning.update(Text(printable(
            f"This sign-in differs from {self.account}'s current one ({record.sign_in}): once recorded, a runner "
            "presenting the old identity is refused."), style="bold"))

    def on_input_changed(self, event: Input.Changed) -> None:
        super().on_input_changed(event)
        if event.input.id == "sign-in":
            self._warn_if_another_identity()

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#sign-in-warning", Static).display = False
        self.query_one("#sign-in", Input).focus()

    def on_switch_changed(self, event: Switch.Changed) -> None:
        self.query_one("#overage-word", Label).update("  ON: no call is admitted" if event.value else "  off")

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.value in ACCOUNTS:
            if event.value != self.account:
                self.take_back_own_notice()  # it spoke of the other account's record
            self.account = str(event.value)
            self.query_one("#sequence", Input).value = str(next_sequence(self.reading, self.account))
            self.query_one("#current-record", Static).update(record_words(self.reading, self.account))
            self.query_one("#sign-in", Input).value = self._current_sign_in()
            self._warn_if_another_identity()

    def refresh_from(self, reading: Reading) -> str | None:
        """Another record for this account landed: the sequence moves to the next one, the current record and the
        sign-in (unless the owner typed another) follow it."""
        before, after = current_record(self.reading, self.account), current_record(reading, self.account)
        if before == after:
            self.reading = reading
            return None
        recorded = None if after is None else (self.account, after.sequence, after.sign_in, after.overage,
                                                after.recorded_by)
        written = self.written_here(lambda tried: tried == recorded)
        if after is not None and written == THIS_WRITE:
            # The form keeps what it showed (the record it replaces too), so trying again replays this record.
            return self.own_write_landed(f"{self.account} record #{after.sequence}")
        self.reading = reading
        typed = value_of(self, "#sign-in")
        self.query_one("#current-record", Static).update(record_words(reading, self.account))
        self.query_one("#sequence", Input).value = str(next_sequence(reading, self.account))
        if before is None or typed == printable(before.sign_in):
            self.query_one("#sign-in", Input).value = self._current_sign_in()
        self._warn_if_another_identity()
        if after is None:
            return f"{self.account}'s record changed while this form was open."
        return (f"{self.writer(written)} recorded {self.account} record #{after.sequence} (by {after.recorded_by}) "
                f"while this form was open: the form now starts from it (sequence {after.sequence + 1}).")

    def confirmation(self) -> Confirmation:
        account, overage = self.account, self.query_one("#overage", Switch).value
        sequence, sign_in = as_int(value_of(self, "#sequence")), value_of(self, "#sign-in")
        return Confirmation(
            title=f"Record {account}'s sign-in record #{sequence}",
            values=(("account", account), ("sequence", f"#{sequence}"), ("sign-in", sign_in),
                    ("paid overage", overage_words(account, overage)),
                    ("recorded by", value_of(self, "#recorded-by"))),
            changes=record_changes(current_record(self.reading, account), sign_in, overage),
            consequence=(f"Paid overage ON: no {account} call is admitted while this record is in force, so every "
                         f"lane on {account} stops until a record with overage off.") if overage else None,
            confirm_label="Record with overage on" if overage else "Record",
        )

    def perform(self) -> Callable[[], str]:
        account, sequence, signer = self.account, value_of(self, "#sequence"), self.signer
        sign_in, recorded_by = value_of(self, "#sign-in"), value_of(self, "#recorded-by")
        overage, number = self.query_one("#overage", Switch).value, as_int(sequence)
        self.trying((account, number, sign_in, overage, recorded_by))

        def write() -> str:
            result = self.schedule.record_account(account=account, sequence=number, sign_in=sign_in, overage=overage,
                                                  recorded_by=recorded_by, signer=signer)
            said = "Already recorded" if result.replayed else "Recorded"
            return f"{said}: {account} record #{sequence} (schedule v{result.version})."
        return write
