"""Occurrences: the open and recent ones, a detail pane, and `status()` for any ID typed in."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Input, Static

from factory_schedule.core import Occurrence, OccurrenceStatusView, ScheduleError
from factory_schedule.tui.dashboard.reading import Reading
from factory_schedule.tui.dashboard.safety import plain, printable
from factory_schedule.tui.dashboard.widgets.freshness import freshness_words, lease_evidence
from factory_schedule.tui.dashboard.widgets.tables import (
    Cell,
    columns_that_fit,
    current_row_key,
    project,
    set_columns,
    sync_rows,
)
from factory_schedule.tui.dashboard.words import clock_time, state_words, tokens, when

PLACEHOLDER = "occurrence ID, e.g. alpha/basic/2026-12-14 · Enter: its status · Esc: list"
COLUMNS = (
    ("id", "occurrence"),
    ("state", "state"),
    ("segments", "seg"),
    ("calls", "calls"),
    ("debited", "debited"),
)
GIVE_WAY = ("segments", "calls")  # on a narrow terminal: both are in the selected occurrence's detail below


def all_occurrences(reading: Reading) -> list[Occurrence]:
    if reading.view is None:
        return []
    found: list[Occurrence] = []
    for state in reading.view.lanes:
        if state.open is not None:
            found.append(state.open)
        found.extend(state.recent)
    return found


def occurrence_rows(reading: Reading) -> dict[str, tuple[Cell, ...]]:
    rows: dict[str, tuple[Cell, ...]] = {}
    ordered = sorted(all_occurrences(reading), key=lambda o: (o.state == "settled", o.lane, o.date))
    for occurrence in ordered:
        state = state_words(occurrence)
        freshness = freshness_words(reading, occurrence, reading.zone or "UTC")
        if freshness and freshness != "—":
            state = f"{state}, {freshness}"
        rows[occurrence.id] = (
            occurrence.id.removeprefix("discovery/"),
            state,
            Text(str(len(occurrence.segments)), justify="right"),
            Text(str(occurrence.call_count), justify="right"),
            Text(tokens(occurrence.debited), justify="right"),
        )
    return rows


def _grid(*headers: str) -> Table:
    table = Table(box=None, show_edge=False, pad_edge=False, header_style="bold", expand=False)
    for header in headers:
        table.add_column(header, no_wrap=True)
    return table


def _add_row(table: Table, *cells: object) -> None:
    """A row of journal text: every cell printable, none read as markup."""
    table.add_row(*(plain(cell) for cell in cells))


def occurrence_detail(reading: Reading, occurrence: Occurrence) -> Group:
    """Everything the record holds about one occurrence, in local time."""
    zone = reading.zone or "UTC"
    now = reading.now
    parts: list[RenderableType] = []
    title = Text()
    title.append(printable(occurrence.id), style="bold")
    title.append(printable(f"  {state_words(occurrence)}  slot {when(occurrence.slot, now, zone)}"))
    parts.append(title)
    if occurrence.state == "running":
        parts.append(plain(freshness_words(reading, occurrence, zone), style="italic"))
        evidence = lease_evidence(reading, occurrence, zone)
        if evidence:
            parts.append(plain(evidence, style="dim"))
    if occurrence.coalesced is not None:
        c = occurrence.coalesced
        first, last = c.first.removeprefix("discovery/"), c.last.removeprefix("discovery/")
        parts.append(plain(f"coalesced {c.count} missed: {first} … {last}"))
    segments = _grid("seg", "runner", "started", "deadline", "ended")
    for s in occurrence.segments:
        ended = "running" if s.ended is None else f"{s.ended.how} {clock_time(s.ended.at, zone)}"
        window = "" if s.window is None else f" (window closed until {when(s.window.until, now, zone)})"
        _add_row(
            segments,
            f"{s.n} {s.kind}", s.runner, when(s.started_at, now, zone), clock_time(s.deadline, zone),
            ended + window,
        )
    parts.append(Text("\nSegments", style="bold underline"))
    parts.append(segments)
    parts.append(Text("\nCalls", style="bold underline"))
    whole = reading.records.get(occurrence.id, occurrence)  # a settled record's calls are in its settlement event
    if whole.elided is not None:
        parts.append(Text(f"{whole.elided.calls} calls, {tokens(whole.debited)} debited; reading them…", style="dim"))
    elif whole.calls:
        calls = _grid("#", "task", "work", "account", "bound", "debit", "outcome")
        for call in whole.calls:
            outcome: str = "in flight" if call.in_flight else (call.outcome or "")
            if call.unknown:
                outcome += " (unknown effect)"
            if call.unsent:
                outcome += " (unsent)"
            _add_row(
                calls,
                str(call.k), call.task, call.work, call.account, tokens(call.bound), tokens(call.debit), outcome
            )
        parts.append(calls)
    else:
        parts.append(Text("none", style="dim"))
    if occurrence.deferrals:
        parts.append(Text("\nDeferrals", style="bold underline"))
        deferrals = _grid("seg", "reason", "at", "resume at", "runner")
        for d in occurrence.deferrals:
            _add_row(
                deferrals,
                str(d.segment), d.reason, when(d.at, now, zone),
                "a new record" if d.resume_at is None else when(d.resume_at, now, zone), d.runner,
            )
        parts.append(deferrals)
    if occurrence.reconciliations:
        parts.append(Text("\nReconciliations", style="bold underline"))
        for r in occurrence.reconciliations:
            parts.append(
                plain(f"segment {r.segment}: runner {r.runner} confirmed gone by {r.confirmed_by} "
                      f"at {when(r.at, now, zone)}: {r.evidence}")
            )
    parts.append(Text("\nSettlement", style="bold underline"))
    if occurrence.settlement is not None:
        settled = occurrence.settlement
        parts.append(plain(f"{settled.status}: {settled.reason} (by {settled.by}, {when(settled.at, now, zone)})"))
    else:
        parts.append(Text("not settled", style="dim"))
    return Group(*parts)


def status_words(view: OccurrenceStatusView) -> Text:
    text = Text()
    text.append(printable(view.id), style="bold")
    text.append(printable(f"  state {view.state}"))
    if view.status:
        text.append(printable(f", status {view.status}"))
    if view.coalesced_into:
        text.append(printable(f", coalesced into {view.coalesced_into}"))
    return text


class OccurrencesView(Vertical):
    """The list, its detail, and the status field. Typing an ID never runs a command: the field has the focus
    when the view opens (what the owner types here first is an ID), `/` moves back to it, and a printable key
    that is no key of the dashboard's starts the ID there; Escape, Down, or the answer to the lookup moves to
    the list, where the views' keys work again."""

    BINDINGS: ClassVar = [
        # The footer's one key while the field has the focus (it takes every printable key, so the views' keys
        # are not offered): Escape gives them back.
        Binding("escape", "focus_table", "the list and the views' keys", key_display="Esc"),
        Binding("down", "focus_table", "To the list", show=False),  # the field's Down; the list's own moves its cursor
        Binding("slash", "find", "Find an ID", key_display="/", show=False),  # named in the field
    ]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Escape and Down lead out of the field only; on the list, Escape is the dashboard's again."""
        if action == "focus_table":
            return self.query_one("#status-id", Input).has_focus
        return True

    def action_focus_table(self) -> None:
        self.query_one(DataTable).focus()

    def action_find(self) -> None:
        self.query_one("#status-id", Input).focus()

    def on_key(self, event: events.Key) -> None:
        """A printable key bound to nothing, pressed outside the field, is the start of an ID: it goes there."""
        field = self.query_one("#status-id", Input)
        if field.has_focus or not event.is_printable or event.character is None:
            return
        if event.key in self.screen.active_bindings:
            return
        event.stop()
        event.prevent_default()
        field.focus()
        field.insert_text_at_cursor(event.character)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reading: Reading | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="status-bar"):
            yield Input(placeholder=PLACEHOLDER,
                        id="status-id", select_on_focus=False)  # a key that moved here is the ID's start, kept
        yield Static("", id="status-answer", classes="view-caption")
        yield DataTable(id="occurrences-table", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="occurrence-detail-scroll"):
            yield Static("", id="occurrence-detail")

    def on_mount(self) -> None:
        set_columns(self.query_one(DataTable), COLUMNS)
        if self.app.is_headless:
            self.query_one(Input).cursor_blink = False

    def show(self, reading: Reading) -> None:
        self.reading = reading
        self._show_rows()
        self._show_detail()

    def on_resize(self, event: events.Resize) -> None:
        if self.reading is not None:
            self._show_rows()

    def _show_rows(self) -> None:
        """The rows in the columns that fit whole (room kept for the list's scrollbar)."""
        assert self.reading is not None
        rows = occurrence_rows(self.reading)
        table = self.query_one(DataTable)
        shown_columns = columns_that_fit(COLUMNS, rows, self.size.width - 2, GIVE_WAY)
        set_columns(table, shown_columns)
        sync_rows(table, project(rows, COLUMNS, shown_columns))

    def selected(self) -> Occurrence | None:
        if self.reading is None:
            return None
        key = current_row_key(self.query_one(DataTable))
        return next((o for o in all_occurrences(self.reading) if o.id == key), None)

    def selected_running(self) -> str | None:
        occurrence = self.selected()
        return occurrence.id if occurrence is not None and occurrence.state == "running" else None

    def _show_detail(self) -> None:
        detail = self.query_one("#occurrence-detail", Static)
        occurrence = self.selected()
        if occurrence is None or self.reading is None:
            detail.update(Text("No occurrence recorded yet.", style="dim"))
            return
        detail.update(occurrence_detail(self.reading, occurrence))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        answer = self.query_one("#status-answer", Static)
        wanted = event.value.strip()
        if not wanted:
            answer.update("")
            return
        if not wanted.startswith("discovery/"):
            wanted = "discovery/" + wanted
        try:
            view = self.app.schedule.status(wanted)  # type: ignore[attr-defined]
        except ScheduleError as error:
            answer.update(plain(f"{error.code}: {error.message}", style="bold"))
            return
        answer.update(status_words(view))
        table = self.query_one(DataTable)
        if view.id in {key.value for key in table.rows}:
            table.move_cursor(row=table.get_row_index(view.id))
        table.focus()  # the answer is on screen: the views' keys work again
