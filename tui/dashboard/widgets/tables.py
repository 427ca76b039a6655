"""Keyed, in-place table updates: a refresh never loses the owner's cursor or scroll.

Rows are keyed by a stable ID (an occurrence, a week, an event version); a refresh
adds the rows that appeared, removes the ones that left, updates only the cells
whose text changed, and then puts the cursor back on the row key it was on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any
from weakref import WeakKeyDictionary

from rich.cells import cell_len
from rich.text import Text
from textual.coordinate import Coordinate
from textual.widgets import DataTable
from textual.widgets.data_table import CellDoesNotExist, RowDoesNotExist

from factory_schedule.tui.dashboard.safety import plain, safe_text
from factory_schedule.tui.dashboard.widgets.unchanged import same

Cell = str | Text
CELL_PADDING = 2  # a DataTable draws one blank cell either side of each column

# Each table's rows as `sync_rows` last drew them (the cells it was given, before `shown`), with the table's
# columns then. A reading redraws every table, and nearly all of the 700 or so cells of a year's journal are
# the ones the tables show: a row given exactly as last time is left alone rather than drawn through `shown`
# and compared with the table's cells one by one, which was the largest part of applying a reading after one
# command. Only `sync_rows` writes a table's cells, so a row the table still holds under the same columns shows
# what it was last given; a table whose columns changed, or a row it no longer holds, is drawn whole, and a
# sync that fails part-way leaves no record.
_given: WeakKeyDictionary[DataTable, tuple[tuple[Any, ...], dict[str, tuple[Cell, ...]]]] = WeakKeyDictionary()


def shown(cell: Any) -> Text:
    """A cell as the table will draw it: a Text of printable characters, so a string from the journal is
    never read as markup (DataTable parses a plain `str` cell as Rich markup) nor reaches the terminal raw."""
    return safe_text(cell) if isinstance(cell, Text) else plain(cell)


def _plain(value: Any) -> str:
    return value.plain if isinstance(value, Text) else str(value)


def ensure_columns(table: DataTable, columns: Sequence[tuple[str, str]]) -> None:
    """Add (key, label) columns once; a table's columns never change after that."""
    if not table.columns:
        for key, label in columns:
            table.add_column(label, key=key)


def columns_that_fit(
    columns: Sequence[tuple[str, str]], rows: Mapping[str, Sequence[Cell]], width: int, give_way: Sequence[str],
) -> tuple[tuple[str, str], ...]:
    """The columns whose longest cell (or label) fits whole in `width` cells: the columns named in `give_way`
    leave, in its order, until the rest fit. A column is left out rather than cut, so every column on screen
    reads in full; what a left-out column says is in the view's line about the selected row."""
    widths = {key: cell_len(label) for key, label in columns}
    for cells in rows.values():
        for (key, _label), cell in zip(columns, cells, strict=False):
            widths[key] = max(widths[key], cell_len(_plain(cell)))
    kept = list(columns)
    leaving = [key for key in give_way if key in widths]
    while leaving and sum(widths[key] + CELL_PADDING for key, _label in kept) > width:
        gone = leaving.pop(0)
        kept = [column for column in kept if column[0] != gone]
    return tuple(kept)


def set_columns(table: DataTable, columns: Sequence[tuple[str, str]]) -> None:
    """Show exactly these (key, label) columns; changing them clears the rows (`sync_rows` puts them back)."""
    if [key.value for key in table.columns] == [key for key, _label in columns]:
        return
    table.clear(columns=True)
    for key, label in columns:
        table.add_column(label, key=key)


def project(
    rows: Mapping[str, Sequence[Cell]], columns: Sequence[tuple[str, str]], shown_columns: Sequence[tuple[str, str]],
) -> dict[str, tuple[Cell, ...]]:
    """Each row's cells of the shown columns only, in their order."""
    index = {key: n for n, (key, _label) in enumerate(columns)}
    return {row: tuple(cells[index[key]] for key, _label in shown_columns) for row, cells in rows.items()}


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
    follow_top: bool = False,
) -> None:
    """Make `table` show exactly `rows` (key -> cells in column order), in place, in their order.

    When `sort_column` is given the rows are re-sorted by it (through `sort_key`) after an
    addition; otherwise the table keeps the order of `rows`, so a row that appears later
    takes its place instead of the bottom. The cursor stays on the row key it was on, except
    that with `follow_top` a cursor on the first row stays on the first row (a live list,
    newest first). A table scrolled to its top stays there, so rows added above are seen.
    Every cell is drawn through `shown`.
    """
    columns = tuple(table.columns)
    given = _given.pop(table, None)
    before = given[1] if given is not None and given[0] == columns else {}
    keep = current_row_key(table)
    on_top_row = table.row_count > 0 and table.cursor_row == 0
    scrolled_to_top = table.scroll_y == 0
    column_keys = list(table.columns.keys())
    present = {key.value for key in table.rows if key.value is not None}
    for gone in present - set(rows):
        table.remove_row(gone)
    added = False
    for key, row in rows.items():
        cells = tuple(row)
        if key in present:
            last = before.get(key)
            if last is not None and len(last) == len(cells) and all(map(same, last, cells)):
                continue  # drawn from these very cells, and no one else writes them
            for column_key, value in zip(column_keys, map(shown, cells), strict=False):
                try:
                    old = table.get_cell(key, column_key)
                except (CellDoesNotExist, RowDoesNotExist):
                    old = None
                if old is None or not same(old, value):
                    table.update_cell(key, column_key, value, update_width=True)
        else:
            table.add_row(*map(shown, cells), key=key)
            added = True
    if sort_column is not None:
        if added:
            table.sort(sort_column, key=sort_key, reverse=reverse)
    else:
        _keep_order(table, rows)
    if follow_top and on_top_row and table.row_count:
        keep = table.coordinate_to_cell_key(Coordinate(0, 0)).row_key.value
    _given[table] = (columns, {key: tuple(cells) for key, cells in rows.items()})
    if keep is not None and keep in rows:
        try:
            index = table.get_row_index(keep)
        except RowDoesNotExist:
            return
        if index != table.cursor_row:
            table.move_cursor(row=index, animate=False, scroll=False)
    if scrolled_to_top:
        # Moving the cursor scrolls it into view after the refresh; a table that was at its top stays
        # there (new rows above the cursor are what the owner should see) while the cursor is in view.
        table.call_after_refresh(_back_to_top, table)


def _back_to_top(table: DataTable) -> None:
    visible_rows = table.scrollable_content_region.height - (1 if table.show_header else 0)
    if table.cursor_row < visible_rows:
        table.scroll_to(y=0, animate=False)


def _keep_order(table: DataTable, rows: Mapping[str, Sequence[Cell]]) -> None:
    """Put the table's rows in the order of `rows` (sorting by each row's text: sort gets no row key)."""
    wanted = list(rows)
    if [row.key.value for row in table.ordered_rows] == wanted:
        return
    position = {tuple(shown(cell).plain for cell in cells): index for index, cells in enumerate(rows.values())}
    table.sort(key=lambda values: position.get(tuple(_plain(value) for value in values), len(position)))
