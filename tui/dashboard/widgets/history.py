"""History: the journal's events, newest first, a page at a time, live on the newest page."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Static

from factory_schedule.tui.dashboard.reading import HISTORY_PAGE_SIZE, HistoryPage
from factory_schedule.tui.dashboard.widgets import unchanged
from factory_schedule.tui.dashboard.widgets.tables import ensure_columns, sync_rows

COLUMNS = (("version", "v"), ("type", "event"), ("command", "command"), ("summary", "what"))


def summary(data: dict[str, Any], command: str = "", width: int = 90) -> str:
    """The event's data, shortened: the fields a person scans for first.

    A value the command ID already shows (the occurrence of `.../call/3/end`) is left out: the row
    has one line, and repeating the command there pushed the reason or outcome off the screen."""
    preferred = ("occurrence", "occurrenceId", "id", "lane", "runner", "reason", "outcome", "status", "account")
    parts = []
    for key in preferred:
        value = data.get(key)
        if isinstance(value, dict):
            value = value.get("id")
        if value is not None and not isinstance(value, dict | list) and str(value) not in command:
            parts.append(f"{key}={value}")
    text = " ".join(parts) if parts else json.dumps(data, sort_keys=True, separators=(",", ":"))
    return text if len(text) <= width else text[: width - 1] + "…"


class HistoryView(Vertical):
    """Newest page follows the journal live; older pages stay where the owner put them."""

    # Named in the caption ("] for older", "[ for newer") and the keys panel, not the footer: with
    # them the footer's keys ran past 120 columns.
    BINDINGS: ClassVar = [
        Binding("right_square_bracket", "older", "Older page", show=False),
        Binding("left_square_bracket", "newer", "Newer page", show=False),
    ]

    class PageWanted(Message):
        """Ask the app to read the page of events before `before` (None: newest)."""

        def __init__(self, before: int | None) -> None:
            super().__init__()
            self.before = before

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.page: HistoryPage | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="history-where", classes="view-caption")
        table: DataTable = DataTable(id="history-table", cursor_type="row", zebra_stripes=True)
        yield table

    def on_mount(self) -> None:
        ensure_columns(self.query_one(DataTable), COLUMNS)

    def show(self, page: HistoryPage | None) -> None:
        table = self.query_one(DataTable)
        caption = self.query_one("#history-where", Static)
        if page is None:
            unchanged.update(caption, "The journal's events cannot be read.")
            sync_rows(table, {})
            return
        self.page = page
        rows = {
            str(event.version): (
                Text(str(event.version), justify="right"),
                event.type,
                event.command_id,
                summary(event.data, event.command_id),
            )
            for event in page.events
        }
        sync_rows(table, rows, follow_top=page.before is None)  # newest first; the live page follows the newest
        if not page.events:
            unchanged.update(caption, "No events yet: the journal is empty.")
            return
        where = "newest page, live" if page.before is None else "an older page ([ for newer)"
        unchanged.update(
            caption,
            f"Events {page.newest}–{page.oldest} of {page.head}, newest first · {where}"
            + (" · ] for older" if page.oldest > 1 else "")
        )

    def action_older(self) -> None:
        if self.page is not None and self.page.oldest > 1:
            self.post_message(self.PageWanted(self.page.oldest))

    def action_newer(self) -> None:
        if self.page is None or self.page.before is None:
            return
        before = self.page.newest + HISTORY_PAGE_SIZE + 1
        self.post_message(self.PageWanted(None if before > self.page.head else before))
