"""Tonight: every lane with the occurrence it would act on, its state, its plan in words, and the timeline."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from factory_schedule.core import LanePlan, Occurrence
from factory_schedule.tui.dashboard.reading import Reading
from factory_schedule.tui.dashboard.safety import printable
from factory_schedule.tui.dashboard.widgets import unchanged
from factory_schedule.tui.dashboard.widgets.freshness import freshness_words
from factory_schedule.tui.dashboard.widgets.tables import (
    Cell,
    columns_that_fit,
    current_row_key,
    project,
    set_columns,
    sync_rows,
)
from factory_schedule.tui.dashboard.widgets.timeline import Timeline
from factory_schedule.tui.dashboard.words import clock_time, plan_words, state_words

WEEKDAYS = {1: "Mon", 2: "Tue", 3: "Wed", 4: "Thu", 5: "Fri", 6: "Sat", 7: "Sun"}
# The plan (what happens next, and why a lane waits) comes right after the lane and never gives way; on a
# narrow terminal the occurrence, the slot and then the state leave the table whole (the plan's words say
# the state too), and the selected lane's line below the table says all of them in full.
COLUMNS = (
    ("lane", "lane"),
    ("plan", "plan"),
    ("state", "state"),
    ("time", "slot"),
    ("occurrence", "run of"),  # "12-20", "W52": the occurrence's key; a short label keeps it at 120 columns
)
GIVE_WAY = ("occurrence", "time", "state")


def _short_key(key: str) -> str:
    """ "2026-12-20" -> "12-20", "2026-W52" -> "W52": the year is in the header."""
    return key.split("-", 1)[1] if key[:4].isdigit() and "-" in key else key


def _not_yet(plan: LanePlan | None, reading: Reading) -> str:
    """The state of an occurrence the lane has not admitted yet: `due` once its slot has come, else `scheduled`."""
    if plan is None or plan.occurrence_id is None:
        return "—"
    if plan.action == "admit" and plan.at is not None and plan.at <= reading.now:
        return "due"
    return "scheduled"


def _state_with_lease(reading: Reading, occurrence: Occurrence | None, zone: str) -> str:
    """The state, and for a running occurrence whether its runner's lease is fresh."""
    if occurrence is None:
        return "—"
    words = state_words(occurrence)
    freshness = freshness_words(reading, occurrence, zone)
    if freshness.startswith("lease alive"):
        return f"{words}, lease alive"
    if freshness.startswith("lease stale"):
        return f"{words}, lease stale"
    if freshness == "no lease held":
        return f"{words}, no lease"
    return words


def lane_rows(reading: Reading) -> dict[str, tuple[Cell, ...]]:
    zone = reading.zone or "UTC"
    rows: dict[str, tuple[Cell, ...]] = {}
    for lane in reading.lanes:
        state = reading.lane_state(lane.lane)
        occurrence = None if state is None else state.open
        plan = reading.plan_for(lane.lane)
        shown = occurrence
        if plan is not None and plan.occurrence_id:
            occurrence_label = _short_key(plan.occurrence_id.rsplit("/", 1)[-1])
        else:
            occurrence_label = "—" if shown is None else _short_key(shown.key)
        weekday = "" if lane.weekday is None else WEEKDAYS[lane.weekday] + " "
        rows[lane.lane] = (
            lane.lane,
            plan_words(plan, occurrence, reading.now, zone),
            _state_with_lease(reading, shown, zone) if shown is not None else _not_yet(plan, reading),
            f"{weekday}{lane.time}",
            occurrence_label,
        )
    return rows


def lane_line(reading: Reading, lane_id: str) -> Text:
    """The selected lane in full, wrapped as wide as the screen: its plan, then the occurrence and its state."""
    zone = reading.zone or "UTC"
    lane = next((lane for lane in reading.lanes if lane.lane == lane_id), None)
    if lane is None:
        return Text("")
    state = reading.lane_state(lane_id)
    occurrence = None if state is None else state.open
    plan = reading.plan_for(lane_id)
    text = Text()
    text.append(printable(lane_id), style="bold")
    text.append(": ")
    text.append(printable(plan_words(plan, occurrence, reading.now, zone)), style="bold")
    occurrence_id = plan.occurrence_id if plan is not None and plan.occurrence_id else None
    if occurrence is not None:
        occurrence_id = occurrence.id
        freshness = freshness_words(reading, occurrence, zone)
        said = state_words(occurrence) + (f", {freshness}" if freshness and freshness != "—" else "")
    else:
        said = _not_yet(plan, reading)
    if occurrence_id:
        text.append(printable(f" · {occurrence_id.removeprefix('discovery/')} {said}"))
    return text


def calls_in_flight(reading: Reading) -> Text:
    assert reading.view is not None  # shown once a commission is recorded
    zone = reading.zone or "UTC"
    text = Text()
    flights = [
        (state.open, state.open.call_in_flight)
        for state in reading.view.lanes
        if state.open is not None and state.open.call_in_flight is not None
    ]
    if not flights:
        text.append("No call in flight.", style="dim")
        return text
    text.append(f"{len(flights)} call{'s' if len(flights) != 1 else ''} in flight: ", style="bold")
    text.append(printable(
        "; ".join(
            f"{occ.id.removeprefix('discovery/')} {call.task} #{call.k} since {clock_time(call.admitted_at, zone)}"
            for occ, call in flights
        )
    ))
    return text


def bottleneck_and_health(reading: Reading) -> Text:
    """The factory's bottleneck (the Lifecycle view's first sentence), then how many findings Health has."""
    text = Text()
    text.append(printable(reading.bottleneck.sentence), style="bold")
    if reading.view is None:
        return text  # health checks a commissioned journal only
    if reading.health is not None:
        count = len(reading.health.findings)
        errors = sum(1 for finding in reading.health.findings if finding.severity == "error")
        said = "Health: no findings." if not count else (
            f"Health: {count} finding{'s' if count != 1 else ''}"
            + (f", {errors} of them error{'s' if errors != 1 else ''}" if errors else "") + " (e shows them).")
    elif reading.health_problem is not None:
        said = f"Health could not check: {reading.health_problem}"
    else:
        said = "Health: checking."
    text.append(" " + printable(said))
    return text


class TonightView(VerticalScroll):
    def compose(self) -> ComposeResult:
        yield Static("", id="tonight-bottleneck")
        yield DataTable(id="tonight-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="tonight-why", classes="view-caption")
        yield Static("", id="tonight-flights", classes="view-caption")
        yield Timeline(id="timeline")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reading: Reading | None = None

    def on_mount(self) -> None:
        set_columns(self.query_one(DataTable), COLUMNS)

    def on_resize(self, event: events.Resize) -> None:
        if self.reading is not None and self.reading.view is not None:
            self._show_rows(lane_rows(self.reading))

    def _show_rows(self, rows: dict[str, tuple[Cell, ...]]) -> None:
        """The rows in the columns that fit whole (room kept for the view's scrollbar)."""
        table = self.query_one(DataTable)
        shown_columns = columns_that_fit(COLUMNS, rows, self.size.width - 2, GIVE_WAY)
        set_columns(table, shown_columns)
        sync_rows(table, project(rows, COLUMNS, shown_columns))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_selected()

    def _show_selected(self) -> None:
        why = self.query_one("#tonight-why", Static)
        key = current_row_key(self.query_one(DataTable))
        unchanged.update(why, Text("") if self.reading is None or key is None else lane_line(self.reading, key))

    def show(self, reading: Reading) -> None:
        self.reading = reading
        unchanged.update(self.query_one("#tonight-bottleneck", Static), bottleneck_and_health(reading))
        if reading.view is None:
            sync_rows(self.query_one(DataTable), {})
            unchanged.update(self.query_one("#tonight-flights", Static), "")
            self._show_selected()
            return
        self._show_rows(lane_rows(reading))
        self._show_selected()
        unchanged.update(self.query_one("#tonight-flights", Static), calls_in_flight(reading))
        self.query_one(Timeline).show(reading)
