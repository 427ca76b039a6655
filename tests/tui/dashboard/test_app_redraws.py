"""What a reading leaves as it is, the dashboard does not draw again; what it changes, it draws.

A line (a `Static`) is updated only when its new content draws differently from what it holds; a table's row
given exactly as last time is left alone, and any other row, or every row once the table's columns changed or
it lost them, is drawn from its cells. The footer's keys come composed in their compact style.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import DataTable, Static
from textual.widgets._footer import FooterKey  # not exported by textual.widgets; the footer's one key

from factory_schedule.tui.dashboard.widgets import tables
from factory_schedule.tui.dashboard.widgets.footer import KeysFooter
from factory_schedule.tui.dashboard.widgets.tables import set_columns, sync_rows
from factory_schedule.tui.dashboard.widgets.unchanged import same

from .test_app_journeys import SIZE, cell, make_app, reading_of, synchronously

COLUMNS = (("name", "name"), ("state", "state"))


class OneTable(App[None]):
    def compose(self) -> ComposeResult:
        yield DataTable(id="table")


@asynccontextmanager
async def one_table() -> AsyncIterator[tuple[DataTable, Pilot[None]]]:
    """A table with the name and state columns, on screen."""
    app = OneTable()
    async with app.run_test() as pilot:
        table = app.query_one(DataTable)
        set_columns(table, COLUMNS)
        yield table, pilot


def shown_rows(table: DataTable) -> dict[str, tuple[str, ...]]:
    return {str(key.value): tuple(getattr(value, "plain", str(value)) for value in table.get_row(key))
            for key in table.rows}


def counting_shown(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every cell `sync_rows` draws through `shown`, in order."""
    drawn: list[Any] = []
    real = tables.shown

    def shown(cell: Any) -> Text:
        drawn.append(cell)
        return real(cell)

    monkeypatch.setattr(tables, "shown", shown)
    return drawn


@pytest.mark.parametrize("left, right", [
    (Text("a"), Text("b")),
    (Text("a", style="bold"), Text("a")),
    (Text.assemble(("a", "bold"), "b"), Text("ab")),
    (Text("a", justify="right"), Text("a")),
    (Text("a", no_wrap=True), Text("a")),
    (Text("a"), "a"),
    ("a", "b"),
])
def test_content_that_draws_differently_is_not_the_same(left: Any, right: Any) -> None:
    assert not same(left, right) and not same(right, left)


def test_content_that_draws_alike_is_the_same() -> None:
    assert same("a", "a")
    assert same(Text.assemble(("a", "bold"), "b", justify="right"), Text.assemble(("a", "bold"), "b", justify="right"))


@synchronously
async def test_a_reading_that_leaves_a_line_as_it_is_does_not_draw_it_again(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await app.views_up()
        await pilot.pause()
        # every line of words (an occurrence's detail is a Rich group of tables: drawn on each reading)
        lines = [widget for widget in app.query(Static) if isinstance(widget.content, str | Text) and widget.content]
        assert len(lines) > 10
        drawn = [(widget, widget.visual) for widget in lines]
        app.apply_reading(app.read_now())
        await pilot.pause()
        assert [widget for widget, visual in drawn if widget.visual is not visual] == []


@synchronously
async def test_a_reading_that_changes_a_line_draws_it(demo_url: str) -> None:
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        header = app.query_one("#header", Static)
        before = reading_of(app).head
        assert f"schedule v{before} " in str(header.render())
        app.schedule.record_account(
            account="chatgpt", sequence=2, sign_in="x@factory.example", overage=False, recorded_by="owner"
        )
        app.refresh_reading(force=True)
        await pilot.pause()
        assert reading_of(app).head > before
        assert f"schedule v{reading_of(app).head} " in str(header.render())
        assert cell(app, "#accounts-table", "chatgpt", "sequence") == "#2"


@synchronously
async def test_a_row_given_as_last_time_is_not_drawn_again(monkeypatch: pytest.MonkeyPatch) -> None:
    drawn = counting_shown(monkeypatch)
    async with one_table() as (table, pilot):
        sync_rows(table, {"a": ("a", Text("open", style="bold")), "b": ("b", "settled")})
        assert len(drawn) == 4
        sync_rows(table, {"a": ("a", Text("open", style="bold")), "b": ("b", "settled")})
        await pilot.pause()
        assert len(drawn) == 4
        assert shown_rows(table) == {"a": ("a", "open"), "b": ("b", "settled")}


@synchronously
async def test_a_row_whose_cell_changed_shows_its_new_text() -> None:
    async with one_table() as (table, pilot):
        sync_rows(table, {"a": ("a", "open"), "b": ("b", "settled")})
        sync_rows(table, {"a": ("a", "open"), "b": ("b", "settled")})
        sync_rows(table, {"a": ("a", Text("open", style="bold")), "b": ("b", "failed"), "c": ("c", "due")})
        await pilot.pause()
        assert shown_rows(table) == {"a": ("a", "open"), "b": ("b", "failed"), "c": ("c", "due")}
        assert table.get_cell("a", "state").style == "bold"


@synchronously
async def test_rows_are_drawn_again_once_the_table_lost_them_or_its_columns_changed() -> None:
    async with one_table() as (table, pilot):
        rows = {"a": ("a", "open"), "b": ("b", "settled")}
        sync_rows(table, rows)
        set_columns(table, COLUMNS[:1])  # a narrower terminal: the rows are cleared with the columns
        set_columns(table, COLUMNS)  # and back, before the next reading
        sync_rows(table, rows)
        assert shown_rows(table) == {"a": ("a", "open"), "b": ("b", "settled")}
        table.clear()
        sync_rows(table, rows)
        await pilot.pause()
        assert shown_rows(table) == {"a": ("a", "open"), "b": ("b", "settled")}


@synchronously
async def test_a_compact_footers_keys_are_composed_compact(demo_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Textual's key sets its compact class from its `compact` watcher once mounted, which styles it a second
    time before the first paint: the footer's keys have the class when the watcher first runs."""
    had_it: list[bool] = []
    watch = FooterKey._watch_compact

    def watched(key: FooterKey, compact: bool) -> None:
        had_it.append(key.has_class("-compact"))
        watch(key, compact)

    monkeypatch.setattr(FooterKey, "_watch_compact", watched)
    app = make_app(demo_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.query_one(KeysFooter).compact
        keys = app.query(FooterKey)
        assert len(keys) > 5 and all(key.has_class("-compact") for key in keys)
        assert len(had_it) >= len(keys) and all(had_it)
