"""The owner's dashboard: a live Textual app over the schedule's journal.

It reads through `core.LifecycleSchedule` and acts only through the same methods
a runner calls. A worker polls `journal.head()` off the UI thread; a new head (or a new
minute, since plans are relative to now) produces one `Reading`, which every view
renders in place. No repaint happens while a form is open.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeVar

from textual import events, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widget import MountError, Widget
from textual.widgets import DataTable, Input, TabbedContent, TabPane
from textual.worker import Worker, WorkerState

from factory_schedule.core import SCHEDULE_AGGREGATE, Clock, LifecycleSchedule
from factory_schedule.core.pipeline import PIPELINE_AGGREGATE, PipelineLanes
from factory_schedule.store import Checkpoint, Journal, open_journal
from factory_schedule.tui.dashboard.daemon_thread import JOURNAL_QUIET_SECONDS, in_daemon_thread
from factory_schedule.tui.dashboard.owner_signing import OwnerSigning
from factory_schedule.tui.dashboard.palette import DashboardCommands
from factory_schedule.tui.dashboard.reading import Reading, take_reading
from factory_schedule.tui.dashboard.safety import printable
from factory_schedule.tui.dashboard.screens.account import RecordAccountForm
from factory_schedule.tui.dashboard.screens.approval import ApprovalForm, pending_approvals
from factory_schedule.tui.dashboard.screens.base import FORM_WRITE, ScheduleForm
from factory_schedule.tui.dashboard.screens.commission import CommissionForm
from factory_schedule.tui.dashboard.screens.confirm import Confirmation, ConfirmStep
from factory_schedule.tui.dashboard.screens.escalation import EscalationForm, open_escalations
from factory_schedule.tui.dashboard.screens.reconcile import ReconcileForm, running_occurrences
from factory_schedule.tui.dashboard.widgets.accounts import AccountsView
from factory_schedule.tui.dashboard.widgets.banner import ProblemBanner
from factory_schedule.tui.dashboard.widgets.empty import FirstSteps
from factory_schedule.tui.dashboard.widgets.footer import KeysFooter
from factory_schedule.tui.dashboard.widgets.header import HeaderBar
from factory_schedule.tui.dashboard.widgets.health import HealthView
from factory_schedule.tui.dashboard.widgets.history import HistoryView
from factory_schedule.tui.dashboard.widgets.ledger import LedgerView
from factory_schedule.tui.dashboard.widgets.lifecycle import LifecycleView
from factory_schedule.tui.dashboard.widgets.occurrences import OccurrencesView
from factory_schedule.tui.dashboard.widgets.tonight import TonightView
from factory_schedule.tui.host import chain_checkpoint
from factory_schedule.tui.host.clock import SystemClock
from factory_schedule.tui.host.health import repair

VIEWS: tuple[tuple[str, str, str], ...] = (
    ("tonight", "Tonight", "t"),
    ("lifecycle", "Lifecycle", "p"),
    ("occurrences", "Occurrences", "o"),
    ("ledger", "Ledger", "l"),
    ("accounts", "Accounts", "a"),
    ("history", "History", "h"),
    ("health", "Health", "e"),
)
T = TypeVar("T")
READ_FAILURE_NOTICE_SECONDS = 6.0  # how long the notice that reading the journal fails stays; then it is said again


def _retrieve_outcome(reading: asyncio.Future[Any]) -> None:
    """Take a finished read's error, if any, so that a read whose poll was cancelled and not followed (the app
    quit) is not reported as an error never retrieved."""
    if not reading.cancelled():
        reading.exception()


HIDDEN_VIEWS: dict[str, type[Widget]] = {
    "lifecycle": LifecycleView,
    "occurrences": OccurrencesView,
    "ledger": LedgerView,
    "accounts": AccountsView,
    "history": HistoryView,
    "health": HealthView,
}


class ScheduleApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "factory-schedule"
    COMMANDS: ClassVar = App.COMMANDS | {DashboardCommands}
    BINDINGS: ClassVar = [
        *(Binding(key, f"show_view('{view}')", label) for view, label, key in VIEWS),
        Binding("s", "record_account", "Sign-in"),
        Binding("r", "reconcile", "Confirm"),  # confirm an interrupted runner (reconcile); short: the footer is full
        Binding("c", "record_commission", "Commission"),
        # The staged lanes' owner forms: named in the Lifecycle view, the palette and the keys panel (footer is full).
        Binding("v", "decide_approval", "Approve or deny", show=False),
        Binding("d", "decide_escalation", "Decide an escalation", show=False),
        Binding("question_mark", "toggle_keys", "Keys", key_display="?"),
        Binding("f1", "toggle_keys", "Keys", show=False),
        Binding("escape", "hide_keys", "Hide the keys", show=False),
        Binding("q", "quit", "Quit", show=False),  # a form's or the status field's q is typed, not a quit
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),
    ]

    def __init__(
        self,
        journal: Journal,
        journal_label: str,
        clock: Clock,
        poll_interval: float | None,
        host_zone: str | None = None,
        host: str | None = None,
        owner_signing: OwnerSigning | None = None,
    ) -> None:
        super().__init__()
        self.host = host or socket.gethostname()
        self.owner_signing = owner_signing or OwnerSigning()
        self.journal = journal
        self.journal_label = journal_label  # the header's name for the journal: never its password
        self.clock = clock
        self.schedule = LifecycleSchedule(journal, clock)
        self.lanes = PipelineLanes(journal, clock)  # the staged lanes: the owner's forms call the runners' methods
        self._staged = PipelineLanes(journal, clock)  # the readings' reader of them, kept as `schedule` is
        self.poll_interval = poll_interval
        self.host_zone = host_zone
        self.reading: Reading | None = None
        self._reading: asyncio.Future[Any] | None = None  # the last read started off the UI thread (`_read`)
        self._reading_started = 0.0  # when it started (`time.monotonic()`)
        self._quiet_seconds: float | None = None  # how long that read has gone unanswered, once it is too long
        # Since when (`time.monotonic()`) every read has failed: said in one notice at a time and in the header.
        self._failing_since: float | None = None
        self._failure_said_at: float | None = None  # when its notice was last given
        self.history_before: int | None = None
        self._view_after_form: str | None = None  # a view shown from under a form: its table takes the keys after
        self._pending: Reading | None = None
        self._seen: tuple[int, int, str, int | None] | None = None
        self._verified: Mapping[str, Checkpoint] | None = None  # how far it has checked each hash chain
        self._checkpoint_stamp: tuple[int, int, int] | None = None  # the checkpoint file as its last check left it
        self._poll_timer: Timer | None = None
        self._hidden_views: asyncio.Task[None] | None = None  # mounting the views behind the other tabs
        self._views_up: list[Widget] = []  # those of them whose mount has finished, in the tabs' order

    # -- layout --------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield HeaderBar(id="header")
        yield ProblemBanner(id="banner")
        yield FirstSteps(id="first-steps")
        with TabbedContent(initial="tonight", id="views"):
            with TabPane("Tonight", id="tonight"):
                yield TonightView(id="tonight-view")
            for view, label, _key in VIEWS[1:]:
                yield TabPane(label, id=view)  # its view is mounted once the first reading is on screen
        # Every shown key fits at 120 columns only without the palette's entry, which Textual docks over
        # the last keys; ctrl+p is in the keys panel (? or F1) and the documentation. Narrower (80 columns,
        # a new terminal's size), the views' keys leave the footer, so the owner's forms and ? stay on it:
        # the tab row names the views, and ? lists their keys.
        yield KeysFooter(spare_keys=[key for _view, _label, key in VIEWS], compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one(ProblemBanner).display = False
        self.query_one(FirstSteps).display = False
        self._show_header()
        self._focus_table_of("tonight")  # the arrow keys move through tonight's lanes from the start
        self.refresh_reading(force=True)

    # -- reading the journal -------------------------------------------------------------

    def _key(self, head: int, pipeline_head: int) -> tuple[int, int, str, int | None]:
        return (head, pipeline_head, self.clock.now().format("YYYY-MM-DDTHH:mm"), self.history_before)

    def read_now(self, complete: bool = True) -> Reading:
        """One reading. The hash chain is checked from where the last reading left it, so a redraw
        after one command checks one command's events, not the journal's whole history."""
        # From what this dashboard verified last while the checkpoint file is the one its own check left (reading
        # the file again costs a re-render tens of milliseconds on a year's journal); from the file once another
        # check rewrote it (health, the tick, `verify --accept-history`), so an older checkpoint is never written
        # back over the one the owner accepted.
        stamp = chain_checkpoint.file_stamp(self.journal.url)
        since = self._verified if stamp is not None and stamp == self._checkpoint_stamp else None
        reading = take_reading(self.journal, self.schedule, self.clock.now(), self.history_before, host=self.host,
                               complete=complete, health_since=since, staged=self._staged)
        if reading.health is not None and reading.health.verified is not None:
            self._verified = reading.health.verified
            self._checkpoint_stamp = chain_checkpoint.file_stamp(self.journal.url)
        return reading

    def refresh_reading(self, force: bool = False) -> None:
        """Read again: on this thread without polling (tests), else through the poll worker."""
        if force:
            self._seen = None
        if self.poll_interval is None:
            reading = self.read_now()
            self._seen = self._key(reading.head, reading.pipeline_head)
            self.apply_reading(reading)
        else:
            if self._poll_timer is not None:
                self._poll_timer.stop()
                self._poll_timer = None
            self.poll()

    @work(exclusive=True, exit_on_error=False, group="poll")
    async def poll(self) -> None:
        """Read head; read everything else only when it (or the minute, or the page) changed.

        The reads run off the UI thread, on threads that quitting does not wait for (`in_daemon_thread`: a
        journal may stop answering); what they read is applied here, on the UI thread, so a read abandoned at
        quit or by a newer poll touches no widget. A cancelled poll arms nothing: what cancelled it (a newer
        poll, or quitting) decides what follows."""
        cancelled = False
        try:
            key = await self._read(self._journal_key)
            self._reads_answer()
            if key != self._seen:
                if self._verified is None:
                    # First paint first: the whole chain is checked on the read right after it, once the
                    # screen has drawn the first reading (the check would otherwise take the CPU from it).
                    # Asked for in the same call as the paint, so it is that refresh's, not a later one's.
                    first = await self._read(lambda: self.read_now(complete=False))
                    painted = asyncio.Event()
                    self._apply_then(first, painted.set)
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(painted.wait(), timeout=5)
                reading = await self._read(self.read_now)
                self._seen = self._key(reading.head, reading.pipeline_head)
                self.apply_reading(reading)
        except asyncio.CancelledError:
            cancelled = True
            raise
        finally:
            if not cancelled:
                self._arm_poll()

    async def _read(self, read: Callable[[], T]) -> T:
        """`read()` off the UI thread, one read at a time: a poll that starts while an earlier poll's read still
        runs (that poll was cancelled: a forced refresh, a form closed) waits for it first. So a journal that
        stops answering holds one thread and one connection however often the owner refreshes, and the first
        whole chain check runs once, not once per refresh."""
        earlier = self._reading
        if earlier is not None and not earlier.done():
            await self._answer_of(earlier, self._reading_started)
        reading = asyncio.ensure_future(in_daemon_thread(read, name="journal reading"))
        reading.add_done_callback(_retrieve_outcome)
        self._reading, self._reading_started = reading, time.monotonic()
        return await self._answer_of(reading, self._reading_started)

    async def _answer_of(self, reading: asyncio.Future[T], started: float) -> T:
        """The answer of the read that started at `started`, awaited without cancelling the read (a cancelled poll
        leaves it to the next). While it has not come for `JOURNAL_QUIET_SECONDS`, the header says for how long:
        a journal that stopped answering is otherwise invisible, the screen keeps its last reading."""
        while not (await asyncio.wait({reading}, timeout=1.0))[0]:
            if time.monotonic() - started >= JOURNAL_QUIET_SECONDS:
                self._show_quiet(time.monotonic() - started)
        self._show_quiet(None)
        return reading.result()

    def _show_quiet(self, seconds: float | None) -> None:
        if seconds is None and self._quiet_seconds is None:
            return
        self._quiet_seconds = seconds
        self._show_header()

    def _show_header(self) -> None:
        """The header as it stands, on the first screen (also while a form is over it, for when the form closes), and
        never after the dashboard has closed its screens."""
        failing = None if self._failing_since is None else time.monotonic() - self._failing_since
        for header in self.screen_stack[0].query(HeaderBar) if self.screen_stack else ():
            header.show(self.journal_label, self.reading, self.host_zone, self._quiet_seconds, failing)

    def _reads_answer(self) -> None:
        """A read answered: reading no longer fails (the header stops saying so)."""
        if self._failing_since is not None:
            self._failing_since = self._failure_said_at = None
            self._show_header()

    def _journal_key(self) -> tuple[int, int, str, int | None]:
        return self._key(self.journal.head(SCHEDULE_AGGREGATE), self.journal.head(PIPELINE_AGGREGATE))

    def _apply_then(self, reading: Reading, drawn: Callable[[], object]) -> None:
        """Apply a reading and call `drawn` after the refresh that draws it."""
        self.apply_reading(reading)
        self.call_after_refresh(drawn)

    def _arm_poll(self) -> None:
        """Arm the next read after the last one finished; one timer at most, so reads never pile up.

        The first poll to finish has drawn its readings (health's too, unless reading failed): the views behind
        the other tabs start mounting after the refresh that shows them."""
        if self._poll_timer is not None:
            self._poll_timer.stop()
            self._poll_timer = None
        if self.poll_interval is not None and self.is_running:
            self._poll_timer = self.set_timer(self.poll_interval, self.poll, name="poll")
            if self._hidden_views is None:
                self.call_after_refresh(self._start_hidden_views)
            self._show_held_back()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A poll that failed is said in one notice at a time: while the server is away every poll fails, and a notice
        each would stack over the screen. The header says for how long reading has failed, until a read answers; the
        notice is said again once it is gone, since a form covers the header."""
        if event.worker.group == "poll" and event.state == WorkerState.ERROR:
            now = time.monotonic()
            if self._failing_since is None:
                self._failing_since = now
            said = self._failure_said_at
            if said is None or now - said >= READ_FAILURE_NOTICE_SECONDS:
                # Said again once its notice is gone: a form covers the header, and the notices show over it.
                self._failure_said_at = now
                lasted = "" if now == self._failing_since else f" (for {now - self._failing_since:.0f} s)"
                self.notify(printable(f"Reading the journal failed{lasted}: {event.worker.error}"), severity="error",
                            timeout=READ_FAILURE_NOTICE_SECONDS, markup=False)
            self._show_header()

    def apply_reading(self, reading: Reading) -> None:
        """Render a reading in every view, unless a form is open (then render when it closes, and hand the
        form the reading: it refreshes what it shows and says what another writer changed)."""
        if isinstance(self.screen, ModalScreen):
            self._pending = reading
            for form in self.screen_stack:
                if isinstance(form, ScheduleForm):
                    form.reading_moved(reading)  # a form open over a moved journal refreshes and says what moved
            return
        self._pending = None
        self.reading = reading
        with self.batch_update():
            self._show_header()
            self.query_one(ProblemBanner).show(reading.problem)
            empty = reading.problem is None and reading.view is None
            self.query_one(FirstSteps).display = empty
            if reading.problem is None:
                self.query_one(TonightView).show(reading)
            self._show_hidden_views(reading)
        if self._hidden_views is None and self.poll_interval is None:  # polling, the first poll's end starts them
            self.call_after_refresh(self._start_hidden_views)

    def _start_hidden_views(self) -> None:
        """Start mounting the views behind the other tabs, without waiting for them."""
        if self._hidden_views is None:
            self._hidden_views = asyncio.create_task(self._mount_hidden_views())

    async def views_up(self) -> None:
        """Mount the views behind the other tabs (once) and return when every one of them is up.

        They start once the first readings are on screen (the polling dashboard's first poll: its first
        reading, then health's), or sooner when the owner asks for one of them (its key, or a click on its tab).
        Composing and styling six views with their tables takes about a quarter of the first paint, and
        while they mount they hold the UI thread that also draws health's reading; nobody sees them before
        they press a key.
        """
        self._start_hidden_views()
        assert self._hidden_views is not None
        await asyncio.shield(self._hidden_views)

    async def _mount_hidden_views(self) -> None:
        for view, make in HIDDEN_VIEWS.items():
            widget = make(id=f"{view}-view")
            try:
                await self.query_one(f"#{view}", TabPane).mount(widget)
            except (MountError, NoMatches):  # the owner quit before the views behind the tabs were up
                return
            if not self.is_running:  # the owner quit while it mounted: its table may be gone already
                return
            self._views_up.append(widget)
            if self.reading is not None:  # what every other view shows, even under a form or the palette
                with self.batch_update():
                    self._show_in(widget, self.reading)

    def _show_hidden_views(self, reading: Reading) -> None:
        """Show a reading in the views behind the other tabs that are up (none before the first paint).

        A view is up once its mount has finished (its table has its columns): a reading that arrives while
        the views are still mounting shows in those that are up, and each later one shows the newest
        reading as it comes up."""
        for view in self._views_up:
            self._show_in(view, reading)

    @staticmethod
    def _show_in(view: Widget, reading: Reading) -> None:
        if isinstance(view, HistoryView):
            view.show(reading.history)
            return
        # The staged lanes (Lifecycle) read even when the schedule does not.
        reads = isinstance(view, LifecycleView) or reading.problem is None
        if reads and isinstance(view, LifecycleView | OccurrencesView | LedgerView | AccountsView | HealthView):
            view.show(reading)

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        """A tab clicked before the views behind the tabs are up starts their mount (a key waits for it)."""
        if event.pane.id != "tonight":
            self._start_hidden_views()

    def on_history_view_page_wanted(self, message: HistoryView.PageWanted) -> None:
        self.history_before = message.before
        self.refresh_reading(force=True)

    # -- keys --------------------------------------------------------------------------

    def action_toggle_keys(self) -> None:
        """F1 or ?: the keys panel (Textual's HelpPanel, as the palette's Keys command shows it)."""
        if self.screen.query("HelpPanel"):
            self.action_hide_help_panel()
        else:
            self.action_show_help_panel()

    def action_hide_keys(self) -> None:
        self.action_hide_help_panel()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Escape hides the keys panel only while it is open; otherwise it is the focused widget's.

        The views' single keys never act under a form (Textual stops the binding chain at a modal screen)
        nor while a text field has the focus (it consumes every printable key)."""
        if action == "hide_keys":
            return bool(self.screen.query("HelpPanel"))
        return True

    def on_key(self, event: events.Key) -> None:
        """A printable key that no widget took while a text field has the focus is that field's.

        Keys typed in one burst after a key that moves the focus (`o` and a pasted occurrence ID) were routed
        to the widget that had the focus when they arrived; none of them is lost, and none runs as a key."""
        field = self.screen.focused
        if isinstance(field, Input) and event.is_printable and event.character is not None:
            event.stop()
            event.prevent_default()
            field.insert_text_at_cursor(event.character)

    # -- views ---------------------------------------------------------------------------

    async def action_show_view(self, view: str) -> None:
        await self.views_up()
        self.query_one(TabbedContent).active = view
        self._focus_table_of(view)

    def _focus_table_of(self, view: str) -> None:
        """The arrow keys move through the view's table from the start; on Occurrences the ID field has the
        focus instead, so an ID typed right after `o` is typed, never run key by key.

        The focus moves before the view key's action returns (`Widget.focus` would move it only after the keys
        already queued): a key typed fast after `o` reaches the field, not the view that had the focus."""
        pane = self.query_one(f"#{view}", TabPane)
        chosen: Widget | None = next(iter(pane.query("#status-id")), None) or next(iter(pane.query(DataTable)), None)
        if chosen is None:
            chosen = next(iter(pane.query(LifecycleView)), None)  # no table: its text scrolls with the arrow keys
        if chosen is None:
            return
        if chosen.screen is not self.screen:  # under a form (the palette's Show): the keys stay with the form, and
            self._view_after_form = view  # go to this view's table when it closes
            return
        if isinstance(chosen, Input):
            chosen.clear()  # `o` starts a new lookup: what an earlier one left is not the start of this ID
        self.screen.set_focus(chosen)

    # -- forms ---------------------------------------------------------------------------

    @property
    def newest_reading(self) -> Reading | None:
        """The newest reading read: the one held back while a screen is over the views, else the one they show.
        A form starts from it, also one opened from the palette over another form (the views still show the older
        reading then): a form built on an older reading offers a record's next sequence another writer has taken."""
        return self._pending if self._pending is not None else self.reading

    def _show_held_back(self) -> None:
        """Show a reading held back while a screen was open over the views, once none is.

        A form shows it as it closes (`_after_form`); the command palette has no such hook, so the end of
        each poll and the opening of each form show it: a form is never built on an older reading than one
        already read (it would offer a record's next sequence that another writer has taken)."""
        if self._pending is not None and not isinstance(self.screen, ModalScreen):
            self.apply_reading(self._pending)

    def _after_form(self, result: Any) -> None:
        """A form closed: show what it did, render what arrived meanwhile, and read again. A write that answers as
        the dashboard closes has no screen left to show it on (it landed; the journal keeps it)."""
        if not self.screen_stack:
            return
        if result is not None:
            self.notify(printable(result), timeout=4, markup=False)
        view, self._view_after_form = self._view_after_form, None
        if view is not None and not isinstance(self.screen, ModalScreen):
            self._focus_table_of(view)
        if self._pending is not None:
            self.apply_reading(self._pending)
        self.refresh_reading(force=True)

    def _form_write_on_its_way(self) -> bool:
        """Whether a form's confirmed write (or Health's repairs) is on its way, said in a toast: no other form opens
        over it (from the palette) until it answers. Should its answer be lost, a form opened over it would read the
        record it made as another writer's and offer the next one."""
        confirmed = any(isinstance(screen, ScheduleForm) and screen.in_flight for screen in self.screen_stack)
        if not confirmed and not any(worker.group == FORM_WRITE and not worker.is_finished for worker in self.workers):
            return False
        self.notify("A write is on its way (a form's, or Health's repairs): other forms open once it answers (Ctrl+Q "
                    "quits).", timeout=4, markup=False)
        return True

    def action_record_account(self, account: str | None = None) -> None:
        if self._form_write_on_its_way():
            return
        self._show_held_back()
        self.push_screen(RecordAccountForm(self.schedule, self.newest_reading, account=account), self._after_form)

    def action_reconcile(self, occurrence_id: str | None = None) -> None:
        if self._form_write_on_its_way():
            return
        self._show_held_back()
        reading = self.newest_reading
        running = running_occurrences(reading)
        if reading is None or not running:
            self.notify("No occurrence is running: there is no runner to confirm.", severity="warning")
            return
        listed = next(iter(self.query(OccurrencesView)), None)  # None until the first reading is on screen
        chosen = occurrence_id or (listed.selected_running() if listed else None) or running[0].id
        self.push_screen(ReconcileForm(self.schedule, reading, chosen, self.make_health_repairs), self._after_form)

    def make_health_repairs(self) -> list[str]:
        """The repairs `factory-schedule health --repair` makes (a released lease removed, a dead runner
        reconciled on conclusive evidence, a missed firing recorded), each journaled; what was done, in words."""
        return [done.message for done in repair(self.journal, self.schedule, self.clock.now(), self.host)]

    def action_make_health_repairs(self) -> None:
        """Health's x: what `health --repair` does, from the dashboard, once the owner confirms the repairs."""
        if self._form_write_on_its_way():
            return
        self._show_held_back()
        reading = self.newest_reading
        health = None if reading is None else reading.health
        due = [finding.message for finding in (health.findings if health is not None else ())
               if getattr(finding, "repairable", False)]
        if not due:
            self.notify("Nothing to repair.", timeout=4)
            return
        confirmation = Confirmation(
            title="Make the repairs of health --repair",
            values=tuple((f"finding {n}", message) for n, message in enumerate(due, start=1)),
            changes=("each repair is journaled: a runner proven dead is reconciled, a lease that guards nothing is "
                     "removed, a missed firing is recorded",),
            confirm_label="Repair",
        )
        self.push_screen(ConfirmStep(confirmation), self._repair_confirmed)

    def _repair_confirmed(self, confirmed: bool | None) -> None:
        if confirmed:
            self.run_worker(self._repair(), group=FORM_WRITE)

    async def _repair(self) -> None:
        """The repairs, off the UI thread as a form's write is: a journal that stops answering leaves the screen
        answering and Ctrl+Q quitting (the poll's header notice says it has not answered)."""
        try:
            done = await in_daemon_thread(self.make_health_repairs, name="health repair")
        except Exception as error:  # a journal that cannot be read: say so, keep running
            self.notify(printable(f"The repair failed: {error}"), severity="error", markup=False)
            return
        said = "; ".join(done) if done else "Nothing to repair."
        self.notify(printable(said), timeout=6, markup=False)
        self.refresh_reading(force=True)

    def action_decide_approval(self) -> None:
        if self._form_write_on_its_way():
            return
        self._show_held_back()
        reading = self.newest_reading
        if reading is None or not pending_approvals(reading):
            self.notify("No security-approve request waits for the owner.", severity="warning")
            return
        self.push_screen(ApprovalForm(self.lanes, reading), self._after_form)

    def action_decide_escalation(self) -> None:
        if self._form_write_on_its_way():
            return
        self._show_held_back()
        reading = self.newest_reading
        if reading is None or not open_escalations(reading):
            self.notify("No escalation waits for the owner.", severity="warning")
            return
        self.push_screen(EscalationForm(self.lanes, reading), self._after_form)

    def action_record_commission(self) -> None:
        if self._form_write_on_its_way():
            return
        self._show_held_back()
        self.push_screen(CommissionForm(self.schedule, self.newest_reading, self.host_zone), self._after_form)


def build_app(
    journal_url: str,
    clock: Clock,
    poll_interval: float | None,
    host_zone: str | None = None,
    *,
    journal: Journal | None = None,
    host: str | None = None,
    journal_label: str | None = None,
    owner_signing: OwnerSigning | None = None,
) -> ScheduleApp:
    """The dashboard over the journal at `journal_url`, reading time from `clock`.

    `poll_interval` None reads only on mount and after a form (tests); otherwise the
    worker polls `journal.head()` that often. Pass `journal` when this process has
    already opened it (a process opens a SQLite journal once); `host` names this
    machine for the health check, and `journal_label` replaces the journal's URL (any password
    masked) in the header (tests and screenshots fix both so the pictures do not depend on the
    machine).
    """
    if journal is None:
        journal = open_journal(journal_url)
    return ScheduleApp(journal, journal_label or journal.where, clock, poll_interval, host_zone, host, owner_signing)


__all__ = ["VIEWS", "ScheduleApp", "SystemClock", "build_app"]
