"""Keyed, in-place table updates: a refresh never loses the owner's cursor or scroll.

Rows are keyed by a stable ID (an occurrence, a week, an event version); a refresh
adds the rows that appeared, removes the ones that left, updates only the cells
whose text changed, and then puts the cursor back on the row key it was on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import CellDoesNotExist, RowDoesNotExist

Cell = str | Text


def _plain(value: Any) -> str:
    return value.plain if isinstance(value, Text) else str(value)


def _same(left: Any, right: Any) -> bool:
    if isinstance(left, Text) and isinstance(right, Text):
        return left.plain == right.plain and left.spans == right.spans and left.style == right.style
    return _plain(left) == _plain(right) and type(left) is type(right)


def ensure_columns(table: DataTable, columns: Sequence[tuple[str, str]]) -> None:
    """Add (key, label) columns once; a table's columns never change after that."""
    if not table.columns:
        for key, label in columns:
            table.add_column(label, key=key)


def current_row_key(table: DataTable) -> str | None:
    if table.row_count == 0:
        return None
    try:
        row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
    except CellDoesNotExist:
        return None
    return row_key.value


def sync_rows(
    table: DataTable,
    rows: Mapping[str, Sequence[Cell]],
    *,
    sort_column: str | None = None,
    sort_key: Callable[[Any], Any] | None = None,
    reverse: bool = False,
) -> None:
    """Make `table` show exactly `rows` (key -> cells in column order), in place.

    New rows are appended; when `sort_column` is given the rows are re-sorted by it
    (through `sort_key`) after an addition. The cursor stays on the row key it was on.
    """
    keep = current_row_key(table)
    column_keys = list(table.columns.keys())
    present = {key.value for key in table.rows if key.value is not None}  # every row here has a key
    for gone in present - set(rows):
        table.remove_row(gone)
    added = False
    for key, cells in rows.items():
        if key in present:
            for column_key, value in zip(column_keys, cells, strict=False):
                try:
                    old = table.get_cell(key, column_key)
                except (CellDoesNotExist, RowDoesNotExist):
                    old = None
                if old is None or not _same(old, value):
                    table.update_cell(key, column_key, value, update_width=True)
        else:
            table.add_row(*cells, key=key)
            added = True
    if sort_column is not None and added:
        table.sort(sort_column, key=sort_key, reverse=reverse)
    if keep is not None and keep in rows:
        try:
            index = table.get_row_index(keep)
        except RowDoesNotExist:
            return
        if index != table.cursor_row:
            table.move_cursor(row=index, animate=False, scroll=False)
