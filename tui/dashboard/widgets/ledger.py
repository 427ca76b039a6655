"""Ledger: each week kept, its ceiling, what is debited, what remains, and the calls in flight debiting it."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from factory_schedule.core import Call, Occurrence
from factory_schedule.tui.dashboard.reading import Reading
from factory_schedule.tui.dashboard.safety import printable
from factory_schedule.tui.dashboard.widgets import unchanged
from factory_schedule.tui.dashboard.widgets.tables import Cell, ensure_columns, sync_rows
from factory_schedule.tui.dashboard.words import clock_time, tokens

COLUMNS = (
    ("week", "week"),
    ("ceiling", "ceiling"),
    ("debited", "debited"),
    ("remaining", "remaining"),
    ("bar", "used"),
    ("flight", "in flight"),
)
BAR_WIDTH = 12  # with the percentage beside it; every column, in flight too, fits at 80 columns
NEAR_CEILING = 0.9


def bar(debited: int, ceiling: int, width: int = BAR_WIDTH) -> Text:
    share = 0.0 if ceiling <= 0 else min(debited / ceiling, 1.0)
    filled = round(share * width)
    text = Text()
    text.append("█" * filled, style="bold" if share >= NEAR_CEILING else "")
    text.append("░" * (width - filled), style="dim")
    text.append(f" {share * 100:5.1f}%", style="bold" if share >= NEAR_CEILING else "")
    return text


def flights(reading: Reading) -> list[tuple[Occurrence, Call]]:
    if reading.view is None:
        return []
    return [
        (state.open, state.open.call_in_flight)
        for state in reading.view.lanes
        if state.open is not None and state.open.call_in_flight is not None
    ]


def week_rows(reading: Reading) -> dict[str, tuple[Cell, ...]]:
    assert reading.view is not None  # shown once a commission is recorded
    in_flight = flights(reading)
    rows: dict[str, tuple[Cell, ...]] = {}
    for week in reading.view.ledger:
        week_flights = [call for _, call in in_flight if call.week == week.week]
        flight_text = "—" if not week_flights else f"{len(week_flights)} ({tokens(sum(c.debit for c in week_flights))})"
        rows[week.week] = (
            week.week,
            Text(tokens(week.ceiling), justify="right"),
            Text(tokens(week.debited), justify="right"),
            Text(tokens(max(week.ceiling - week.debited, 0)), justify="right"),
            bar(week.debited, week.ceiling),
            flight_text,
        )
    return rows


def flight_lines(reading: Reading) -> Text:
    zone = reading.zone or "UTC"
    text = Text()
    calls = flights(reading)
    if not calls:
        text.append("No call in flight: nothing is debited at its bound right now.", style="dim")
        return text
    text.append("Calls in flight, each debited at its bound until it ends:\n", style="bold")
    for occurrence, call in calls:
        text.append(printable(
            f"  {call.week}  {occurrence.id.removeprefix('discovery/')} call {call.k} {call.task} "
            f"bound {tokens(call.bound)} since {clock_time(call.admitted_at, zone)}"
        ) + "\n")
    return text


class LedgerView(Vertical):
    def compose(self) -> ComposeResult:
        yield Static("", id="ledger-caption", classes="view-caption")
        yield DataTable(id="ledger-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="ledger-flights")

    def on_mount(self) -> None:
        ensure_columns(self.query_one(DataTable), COLUMNS)

    def show(self, reading: Reading) -> None:
        if reading.view is None or reading.commission is None:
            return
        ceiling = reading.commission.get("weeklyTokens")
        unchanged.update(
            self.query_one("#ledger-caption", Static),
            f"Weekly ceiling in the commission: {tokens(ceiling)} tokens. A week's ceiling is fixed at its first call."
        )
        sync_rows(
            self.query_one(DataTable), week_rows(reading), sort_column="week", sort_key=str, reverse=True
        )
        unchanged.update(self.query_one("#ledger-flights", Static), flight_lines(reading))
