"""Tonight's window as a chart: lanes as rows, local time across, slots, segments, deadlines and now.

Pure layout first (`night_rows`), rendering second, so the geometry can be read
and tested without a terminal. Styles come from component classes, which the
stylesheet maps to theme variables.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby
from typing import Any, ClassVar

import pendulum
from pendulum import Date, DateTime
from rich.text import Text
from textual.geometry import Size
from textual.widget import Widget

from factory_schedule.core import Commission, Occurrence, SegmentRecord, lane_occurrence_on
from factory_schedule.tui.dashboard.reading import Reading
from factory_schedule.tui.dashboard.safety import printable
from factory_schedule.tui.dashboard.words import instant

LABEL_WIDTH = 21
# Each kind of bar has its own glyph as well as its colour, so the chart reads without colour too.
GLYPHS = {"window": "─", "running": "█", "done": "▓", "deferred": "░", "interrupted": "╳"}
NIGHT_TURNS_AT_HOUR = 12  # with no lane at all: before local noon the night just begun, after it the coming one
WEEK = 7  # a weekly lane's next window is at most a week away


@dataclass(frozen=True)
class Bar:
    start: DateTime
    end: DateTime
    kind: str  # window, running, done, deferred, interrupted


@dataclass(frozen=True)
class Row:
    lane: str
    slot: DateTime | None
    bars: tuple[Bar, ...]
    deadlines: tuple[DateTime, ...]


def night_of(now: DateTime, zone: str) -> Date:
    local = now.in_timezone(zone)
    day = local.date()
    return day if local.hour < NIGHT_TURNS_AT_HOUR else day.add(days=1)


def night_holding(reading: Reading) -> Date:
    """The night the chart shows: the one whose window (any lane's) holds now or, outside every window, the
    next one to open. A window in the evening is that evening's night, whatever the hour."""
    return night_for(reading.parsed_commission, reading.now, reading.zone or "UTC")


def night_for(commission: Commission | None, now: DateTime, zone: str) -> Date:
    """`night_holding` of a commission at `now`. Every window of a night opens and closes on its own date, so
    each opens after every window of the nights before it: the first night, in order, with a window that
    holds now or is still to open is the night that holds now or has the next window to open."""
    if commission is None or not commission.lanes:
        return night_of(now, zone)
    today = now.in_timezone(zone).date()
    for offset in range(-1, WEEK + 1):
        night = today.add(days=offset)
        for lane in commission.lanes:
            window = lane_occurrence_on(commission, lane.lane, night)
            if window is not None and now < window.closes:  # it holds now (slot <= now) or is still to open
                return night
    return night_of(now, zone)


def _segment_kind(occurrence: Occurrence, segment: SegmentRecord) -> str:
    if segment.ended is None:
        return "running"
    return {"deferred": "deferred", "reconciled": "interrupted"}.get(segment.ended.how, "done")


def night_rows(reading: Reading) -> tuple[Date, list[Row]]:
    """One row per lane of the commission: its window tonight and the segments that ran in it."""
    commission = reading.parsed_commission
    night = night_holding(reading)
    rows: list[Row] = []
    for lane in reading.lanes:
        assert commission is not None  # the lanes are the commission's
        occurrence_tonight = lane_occurrence_on(commission, lane.lane, night)
        bars: list[Bar] = []
        deadlines: list[DateTime] = []
        if occurrence_tonight is not None:
            bars.append(Bar(occurrence_tonight.slot, occurrence_tonight.closes, "window"))
        state = reading.lane_state(lane.lane)
        occurrences = [] if state is None else [o for o in (state.open, *state.recent) if o is not None]
        for occurrence in occurrences:
            for segment in occurrence.segments:
                if str(segment.night) != night.isoformat():
                    continue
                start = instant(segment.started_at)
                end = instant(segment.ended.at) if segment.ended is not None else reading.now
                bars.append(Bar(start, max(start, end), _segment_kind(occurrence, segment)))
                deadlines.append(instant(segment.deadline))
        rows.append(
            Row(
                lane=lane.lane,
                slot=None if occurrence_tonight is None else occurrence_tonight.slot,
                bars=tuple(bars),
                deadlines=tuple(deadlines),
            )
        )
    return night, rows


def span_of(rows: list[Row], night: Date, zone: str, now: DateTime | None = None) -> tuple[DateTime, DateTime]:
    """From a quarter hour before the first slot to an hour after the last slot (or the last deadline,
    or half an hour after now), never past the last close: the part of the night where things happen."""
    starts = [bar.start for row in rows for bar in row.bars]
    ends = [bar.end for row in rows for bar in row.bars] + [d for row in rows for d in row.deadlines]
    if not starts:
        base = pendulum.datetime(night.year, night.month, night.day, 2, tz=zone).in_timezone("UTC")
        return base.subtract(minutes=15), base.add(hours=3)
    first = min(starts).subtract(minutes=15)
    first = first.subtract(minutes=first.in_timezone(zone).minute % 15)
    slots = [row.slot for row in rows if row.slot is not None]
    deadlines = [d for row in rows for d in row.deadlines]
    wanted = max([*(s.add(hours=1) for s in slots), *deadlines, now.add(minutes=30) if now else first])
    last = min(max(ends), wanted)
    return first, max(last, first.add(hours=1))


class Timeline(Widget):
    """Rows of bars in local time; the `now` line moves with the clock."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "timeline--axis",
        "timeline--label",
        "timeline--window",
        "timeline--slot",
        "timeline--running",
        "timeline--done",
        "timeline--deferred",
        "timeline--interrupted",
        "timeline--deadline",
        "timeline--now",
    }

    DEFAULT_CSS = """
    Timeline { height: auto; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reading: Reading | None = None
        self._night: tuple[Date, list[Row], DateTime, DateTime] | None = None  # the reading's night, laid out

    def show(self, reading: Reading) -> None:
        """Lay the reading's night out once (every paint draws it again, and it depends on the reading only);
        a reading that leaves the chart as it is drawn (a command elsewhere, the same minute) draws nothing."""
        height = self.get_content_height(self.size, self.size, self.size.width)
        drawn = self._drawn()
        self.reading = reading
        self._night = None
        if reading.commission is not None:
            night, rows = night_rows(reading)
            self._night = (night, rows, *span_of(rows, night, reading.zone or "UTC", reading.now))
        if self._drawn() != drawn:
            self.refresh(layout=self.get_content_height(self.size, self.size, self.size.width) != height)

    def _drawn(self) -> tuple[Any, ...] | None:
        """Everything `render` draws from, besides the widget's size and styles."""
        if self.reading is None:
            return None
        return self._night, self.reading.now, self.reading.zone, self.reading.commission is not None

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if self.reading is None or self.reading.commission is None:
            return 1
        return len(self.reading.lanes) + 3

    def render(self) -> Text:
        reading = self.reading
        if reading is None or self._night is None:
            return Text("")
        zone = reading.zone or "UTC"
        night, rows, first, last = self._night
        width = max(self.size.width - LABEL_WIDTH - 1, 20)
        total = max((last - first).total_seconds(), 1.0)

        def column(moment: DateTime) -> int:
            return int((moment - first).total_seconds() / total * (width - 1))

        style = self.get_component_rich_style
        styles: dict[str, Any] = {"": ""} | {name: style(name) for name in self.COMPONENT_CLASSES}
        out = Text(no_wrap=True)
        out.append(f"{'night of ' + night.format('ddd D MMM'):<{LABEL_WIDTH}}", style=style("timeline--label"))
        axis = [" "] * width
        hour = first.in_timezone(zone).start_of("hour").add(hours=1)
        while hour <= last:
            col = column(hour.in_timezone("UTC"))
            label = hour.format("HH:mm")
            if col >= 0 and col + len(label) <= width:
                axis[col : col + len(label)] = list(label)
            hour = hour.add(hours=1)
        out.append("".join(axis) + "\n", style=style("timeline--axis"))
        now_col = column(reading.now) if first <= reading.now <= last else None
        for row in rows:
            out.append(f"{printable(row.lane):<{LABEL_WIDTH}}"[:LABEL_WIDTH], style=style("timeline--label"))
            cells: list[tuple[str, str]] = [(" ", "")] * width
            for bar in sorted(row.bars, key=lambda b: b.kind != "window"):
                start, end = max(column(bar.start), 0), min(column(bar.end), width - 1)
                glyph = GLYPHS[bar.kind]
                for col in range(start, max(end, start) + 1):
                    cells[col] = (glyph, f"timeline--{bar.kind}")
            if row.slot is not None and 0 <= column(row.slot) < width:
                cells[column(row.slot)] = ("▶", "timeline--slot")
            for deadline in row.deadlines:
                if 0 <= column(deadline) < width:
                    cells[column(deadline)] = ("┤", "timeline--deadline")
            if now_col is not None:
                glyph, _ = cells[now_col]
                cells[now_col] = (glyph if glyph != GLYPHS["window"] and glyph != " " else "│", "timeline--now")
            if not row.bars:
                note = "no slot tonight"
                cells[: len(note)] = [(ch, "timeline--axis") for ch in note]
            # One span per run of cells of one class, not one per cell: a wide night is thousands of cells,
            # and every span is styled and measured again on each paint.
            for cls, run in groupby(cells, key=lambda cell: cell[1]):
                out.append("".join(glyph for glyph, _ in run), style=styles[cls])
            out.append("\n")
        out.append(" " * LABEL_WIDTH)
        legend = (
            ("▶", "timeline--slot", " slot  "),
            (GLYPHS["window"], "timeline--window", " window  "),
            (GLYPHS["running"], "timeline--running", " running  "),
            (GLYPHS["done"], "timeline--done", " done  "),
            (GLYPHS["deferred"], "timeline--deferred", " deferred  "),
            (GLYPHS["interrupted"], "timeline--interrupted", " interrupted  "),
            ("┤", "timeline--deadline", " deadline  "),
            ("│", "timeline--now", " now " + reading.now.in_timezone(zone).format("HH:mm")),
        )
        for glyph, cls, words in legend:
            out.append(glyph, style=style(cls))
            out.append(words, style=style("timeline--axis"))
        return out
