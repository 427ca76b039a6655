"""The shape every dashboard form shares: a modal that validates as the owner types, shows what it
will record in a confirm step, calls one core method once the owner confirms, and on a ScheduleError
shows its code and message and stays open.

Nothing is written unless the owner confirms and the core method accepts it: the engine refuses
before it records, so a form never has anything to undo. A form writes at most once: from the
Enter that opens its confirm step until it closes, a further submit does nothing, and it closes once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from enum import Enum
from typing import Any, ClassVar, Final, TypeVar

from rich.text import Text
from textual.app import ComposeResult, ScreenStackError
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.validation import ValidationResult, Validator
from textual.widget import Widget
from textual.widgets import Button, Input, Static, Switch
from textual.widgets.input import Selection

from factory_schedule.core import ScheduleError, load_owner
from factory_schedule.core.pipeline import PipelineError
from factory_schedule.store import JournalError
from factory_schedule.tui.dashboard.daemon_thread import JOURNAL_QUIET_SECONDS, in_daemon_thread
from factory_schedule.tui.dashboard.owner_signing import with_owner_signer
from factory_schedule.tui.dashboard.safety import printable
from factory_schedule.tui.dashboard.screens.confirm import Confirmation, ConfirmStep

T = TypeVar("T")
FORM_WRITE = "form-write"  # the worker group of a form's journal calls
# Whose write a reading shows recorded (`ScheduleForm.written_here`): the last one the form confirmed, or an earlier.
THIS_WRITE: Final = "this write"
EARLIER_WRITE: Final = "an earlier write"


class Failed(Enum):
    """What a form's journal call gives when it failed (and said why): no value a call returns is it."""

    FAILED = "failed"


FAILED: Final = Failed.FAILED


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


class FormSwitch(Switch, inherit_bindings=False):
    """A form's switch: space toggles it; Enter is the form's submit (its confirm step), never a silent toggle."""

    BINDINGS: ClassVar = [
        Binding("space", "toggle_switch", "Toggle", show=False),
        Binding("enter", "screen.submit", "Record", show=False),
    ]


def as_int(value: str) -> int:
    return int(value.strip().replace(" ", "").replace("_", ""))


class ScheduleForm(ModalScreen[str | None]):
    """Subclasses give `TITLE_TEXT`, `SUBMIT_LABEL`, `fields()`, `confirmation()` and `perform()`."""

    DEFAULT_CLASSES = "form"
    AUTO_FOCUS = "Input"
    BINDINGS: ClassVar = [Binding("escape", "cancel", "Cancel")]
    TITLE_TEXT = ""
    SUBMIT_LABEL = "Record"
    # An owner record (a commission, an account, an approval, an escalation): in a journal that holds an owner
    # key, the confirm step is followed by the passphrase step, and `perform` passes `self.signer`.
    OWNER_RECORD = True

    def __init__(self) -> None:
        super().__init__()
        self.signer: Any = None
        self.in_flight = False  # from the submit that opened the confirm step until the answer is handled
        self.closed = False
        self.nothing_left: str | None = None  # set when another writer decided what this form was for
        self.notice = ""  # what the form's notice says
        # What each write this form confirmed asked to record (`trying`), the last one last: a write that failed may
        # still have landed, so a reading that shows one of them recorded shows this form's own write, not another
        # writer's (`written_here`).
        self.tries: list[Any] = []
        self._own_write_said = ""  # the notice `own_write_landed` gave for the last write, once
        # The last such notice, whichever write it spoke of (what `take_back_own_notice` takes), and whether it knew
        # the record was this form's (not only that it may be).
        self._own_notice: tuple[str, bool] = ("", True)
        self._close_with: tuple[str | None] | None = None  # an answer that came while a screen was over the form
        self._confirming: Confirmation | None = None  # what the confirm step showed the owner
        # Where the keys went before the fields were held, and that field's selection (an Input's).
        self._focus_before_write: tuple[Widget | None, Selection | None] = (None, None)

    def compose(self) -> ComposeResult:
        with Vertical(id="form-body"):
            yield Static(self.TITLE_TEXT, classes="form-title")
            yield from self.header()
            # The fields scroll when the terminal is short; the title, the error and the buttons stay in view.
            with VerticalScroll(id="form-fields"):
                yield from self.fields()
            yield Static("", classes="form-notice", id="form-notice")
            yield Static("", classes="form-error", id="form-error")
            with Horizontal(classes="form-buttons"):
                yield Button("Cancel (Esc)", id="cancel", compact=True)
                yield Button(self.SUBMIT_LABEL, id="submit", variant="primary", compact=True)

    def on_mount(self) -> None:
        """Headless (tests, screenshots): no blinking cursor, so every picture of a form is the same."""
        self.query_one("#form-error", Static).display = False
        self.query_one("#form-notice", Static).display = False
        if self.app.is_headless:
            for field in self.query(Input):
                field.cursor_blink = False

    def header(self) -> Iterable[Widget]:
        """What the form decides, above the scrolling fields, so it stays on screen at any size."""
        return ()

    def fields(self) -> Iterable[Widget]:
        raise NotImplementedError

    def confirmation(self) -> Confirmation:
        """What the write records, in words, for the confirm step. May raise FormProblem."""
        raise NotImplementedError

    def perform(self) -> Callable[[], str]:
        """The confirmed write, its values read from the fields now: a call that makes it through core and
        returns the words to show on success (it may raise ScheduleError, PipelineError or FormProblem). It
        runs off the UI thread (`record_signed`). May itself raise FormProblem."""
        raise NotImplementedError

    def show_error(self, message: str) -> None:
        """Say what is wrong (the line takes no room while nothing is)."""
        error = self.query_one("#form-error", Static)
        error.update(Text(printable(message)))
        error.display = bool(message)

    def show_notice(self, message: str) -> None:
        """Say what changed under the form (another writer moved the journal), or that the journal has not answered
        a write; no room while nothing is to say."""
        self.notice = message
        notice = self.query_one("#form-notice", Static)
        notice.update(Text(printable(message)))
        notice.display = bool(message)

    def first_invalid(self) -> str | None:
        """What the first field that does not hold is missing; that field takes the focus, so what the owner
        types next goes where it is needed."""
        for field in self.query(Input):
            if field.validators:
                result = field.validate(field.value)
                if result is not None and not result.is_valid:
                    field.focus()
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
            self.action_cancel()  # as Esc: never while a confirmed write is on its way
        elif event.button.id == "submit":
            event.stop()
            self.submit()

    def refresh_from(self, reading: Any) -> str | None:
        """Take a newer reading of the journal (another writer moved it); say what changed for this form, in
        words, or None when nothing it shows or records did. A form whose decision is gone sets `nothing_left`."""
        return None

    def trying(self, tried: Any) -> None:
        """`perform` says what its write asks to record, in values a reading shows once it is recorded."""
        self._own_write_said = ""
        if tried in self.tries:
            self.tries.remove(tried)
        self.tries.append(tried)

    @property
    def tried(self) -> Any:
        """What this form's last confirmed write asked to record (None before its first)."""
        return self.tries[-1] if self.tries else None

    def written_here(self, shows: Callable[[Any], bool]) -> str | None:
        """Whose write a reading holds, given `shows` (whether it holds what a write asked): THIS_WRITE when the
        form's last confirmed write's, EARLIER_WRITE when an earlier one's (the owner changed the form after it
        failed), None when none of this form's."""
        if self.tried is not None and shows(self.tried):
            return THIS_WRITE
        return EARLIER_WRITE if any(shows(tried) for tried in self.tries) else None

    @staticmethod
    def writer(written: str | None) -> str:
        """Who recorded what a reading shows, for `refresh_from`'s words, as `written_here` answered it."""
        return "Another writer" if written is None else "This form's earlier write (its answer lost)"

    def own_write_landed(self, what: str, then: str = "Enter replays it, which records nothing twice, and closes the "
                         "form.") -> str | None:
        """What `refresh_from` says, once, when a reading shows what this form's last write asked recorded. While
        the write is on its way: nothing (its answer closes the form). After it failed (its answer lost after the
        commit, or a second command lost after the first): that it landed and what trying again does."""
        return self._said_once(f"{what} is recorded: this form's write landed before it failed. {then}")

    def own_write_may_have_landed(self, what: str) -> str | None:
        """`own_write_landed` for a record whose reading shows only part of what the write asked: it may be this
        form's write or another writer's that asked the same of it."""
        return self._said_once(
            f"{what}, as this form's write asked, after it failed: if that write landed, Enter replays it (nothing is "
            "recorded twice) and closes the form; if another writer's landed first, Enter is refused and nothing is "
            "written.", certain=False)

    def _said_once(self, said: str, certain: bool = True) -> str | None:
        if self.in_flight or self._own_write_said:
            return None
        self._own_write_said, self._own_notice = said, (said, certain)
        return said

    def take_back_own_notice(self, unless_certain: bool = False) -> None:
        """The form now shows something else than the write its notice speaks of (another account): the notice goes.
        `unless_certain`: trying again was refused, which takes back only a notice that could not tell whose the
        record was (it was another writer's); one that knew the write was this form's still holds."""
        said, certain = self._own_notice
        if said and self.notice == said and not (unless_certain and certain):
            self.show_notice("")

    def reading_moved(self, reading: Any) -> None:
        """Another writer moved the journal while the form was open: refresh, say what changed, and take back
        a confirm step showing values that no longer hold."""
        said = self.refresh_from(reading)
        if not said:
            return
        self.show_notice(said)
        if self.nothing_left is not None:
            self.query_one("#submit", Button).disabled = True
        step = self.app.screen
        if self.in_flight and isinstance(step, ConfirmStep):
            step.answer(False)

    def submit(self) -> None:
        """Check the fields, then show the confirm step; nothing is written before the owner confirms."""
        if self.in_flight or self.closed:
            return
        if self.nothing_left is not None:
            self.show_error(self.nothing_left)
            return
        problem = self.first_invalid()
        if problem:
            self.show_error(problem)
            return
        try:
            confirmation = self.confirmation()
        except FormProblem as problem:
            self.show_error(str(problem))
            return
        self.in_flight = True
        self._confirming = confirmation
        self.app.push_screen(ConfirmStep(confirmation), self.confirmed)

    def confirmed(self, record: bool | None) -> None:
        """The confirm step's answer: record once (an owner record signed first, see `OWNER_RECORD`), or go back
        to the form as it was."""
        if not record or self.closed:
            self.in_flight = False
            return
        if self.OWNER_RECORD:
            self.run_worker(self._sign_then_record(), group=FORM_WRITE)
            return
        self.record_signed(None)

    async def _sign_then_record(self) -> None:
        """Whether the journal holds an owner key is read off the UI thread too; then sign and record."""
        app: Any = self.app  # the dashboard's app, with its journal
        owner = await self._off_the_ui_thread(lambda: load_owner(app.journal)[1], "Reading the owner key")
        if owner is not FAILED:
            with_owner_signer(self.app, owner, self.record_signed, self.back_from_passphrase)

    def back_from_passphrase(self) -> None:
        self.in_flight = False

    def record_signed(self, signer: Any) -> None:
        """Record with the owner's signer (None: the journal holds no owner key, or not an owner record)."""
        if self.closed:
            return
        try:
            still = self.confirmation() == self._confirming
        except FormProblem:
            still = False
        if not still:
            # Another writer moved the journal while a screen was over the confirm step (the palette, the passphrase
            # step), so the step was not taken back: the form now holds values the owner never confirmed.
            self.show_error("What this form records changed while it waited for your confirmation (another writer "
                            "moved the journal): nothing was written. Check the form, then press Enter.")
            self.in_flight = False
            return
        self.signer = signer
        try:
            write = self.perform()
        except FormProblem as problem:
            self.show_error(str(problem))
            self.in_flight = False
            return
        self._hold_fields(True)
        self.run_worker(self._record(write), group=FORM_WRITE)

    async def _record(self, write: Callable[[], str]) -> None:
        done = await self._off_the_ui_thread(write, "Recording")
        if done is not FAILED:
            self.close(done)
        elif self.is_attached:
            self._hold_fields(False)

    def _hold_fields(self, held: bool) -> None:
        """While a confirmed write is on its way the fields take no keys: the form shows what the write asked, so a
        reading after an answer that was lost shows the form's own record (an account switched meanwhile would hide
        it). They take keys again when the write fails; when it answers, the form closes."""
        if held:
            focused = self.focused
            self._focus_before_write = (focused, focused.selection if isinstance(focused, Input) else None)
        for field in self.query("Input, Select, Switch, #form-fields Button"):
            field.disabled = held
        if not held:
            (before, selection), self._focus_before_write = self._focus_before_write, (None, None)
            if before is not None and before.is_attached and before.focusable:
                before.focus()
                if isinstance(before, Input) and selection is not None:
                    # As the owner left it, not all selected as a focus by Tab leaves it: set after the focus, which
                    # the app sets later and the field then takes in its own turn.
                    self.app.call_later(before.call_later, setattr, before, "selection", selection)

    async def _off_the_ui_thread(self, call: Callable[[], T], doing: str) -> T | Failed:
        """`call()` on a thread that quitting does not wait for: a journal that stops answering leaves the screen
        answering (the form says how long it has waited) and Ctrl+Q quitting. A refusal or a journal failure (a
        lock held past the retries, a lost server) is said, the form stays open, and FAILED is returned: a
        write's command ID depends only on what it records, so trying again with the same values replays a
        write that did land, never makes it twice."""
        self.show_error("")
        started = time.monotonic()
        waiting: str | None = None  # the notice this call shows, taken back when it answers (not another's)
        answer = asyncio.ensure_future(in_daemon_thread(call, name="journal write"))
        try:
            while not (await asyncio.wait({answer}, timeout=JOURNAL_QUIET_SECONDS))[0]:
                if self.notice in ("", waiting):  # what another writer changed meanwhile is not written over
                    waiting = (f"{doing}: the journal has not answered for {time.monotonic() - started:.0f} s. "
                               "Ctrl+Q quits; trying again with the same values replays a write that landed, never "
                               "makes it twice.")
                    self.show_notice(waiting)
            return answer.result()
        except (ScheduleError, PipelineError) as error:  # refused by the schedule or the staged lanes
            self.show_error(f"{error.code}: {error.message}")
            self.take_back_own_notice(unless_certain=True)  # "if that write landed": it was another writer's
        except FormProblem as problem:
            self.show_error(str(problem))
        except JournalError as error:
            self.show_error(f"The journal failed: {str(error).rstrip('.')}. Enter tries again.")
            # The write may have landed, and a reading taken while it was on its way said nothing of it: read again.
            app: Any = self.app
            app.refresh_reading(force=True)
        finally:
            answer.cancel()
            if waiting is not None and self.notice == waiting and self.is_attached:  # not once the app quits
                self.show_notice("")
        self.in_flight = False
        return FAILED

    def close(self, result: str | None) -> None:
        """Dismiss the form once, whatever arrives after (a second Enter, a replayed answer). While another screen is
        over it (the command palette), the answer waits for the form to be on top again: dismissing now would close
        that screen instead."""
        if self.closed:
            return
        try:
            on_top = self.app.screen is self
        except ScreenStackError:  # the dashboard is closing
            return
        if not on_top:
            self._close_with = (result,)
            return
        self.closed = True
        self.dismiss(result)

    def on_screen_resume(self) -> None:
        if self._close_with is not None:
            (result,), self._close_with = self._close_with, None
            self.close(result)

    def action_submit(self) -> None:
        self.submit()

    def action_cancel(self) -> None:
        if not self.in_flight:
            self.close(None)
        else:  # the form is on screen again: its confirmed write is on its way
            self.notify("The write is on its way: the form closes when the journal answers (Ctrl+Q quits).",
                        timeout=4, markup=False)


class FormProblem(Exception):
    """An input the form itself refuses before asking core (a missing file, bad JSON)."""


def value_of(screen: Widget, selector: str) -> str:
    return screen.query_one(selector, Input).value.strip()
