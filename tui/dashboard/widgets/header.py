"""The header line: the commission revision in force, its zone, the local time, the versions of the
journal's two records (the schedule's and the staged lanes', the numbers a form's toast names), and
where the journal is.

The time shown is the injected clock's, so a demo on a ManualClock shows the
simulated night and a snapshot never shows the wall clock.
"""

from __future__ import annotations

import sys

from rich.text import Text
from textual.widgets import Static

from factory_schedule.tui.dashboard.reading import Reading
from factory_schedule.tui.dashboard.safety import printable
from factory_schedule.tui.dashboard.widgets import unchanged

# The host's own zone, named as the owner knows the machine.
THIS_HOST = "this Mac" if sys.platform == "darwin" else "this host"


def header_text(journal_label: str, reading: Reading | None, host_zone: str | None,
                quiet_seconds: float | None = None, failing_seconds: float | None = None) -> Text:
    """The header's words; `quiet_seconds`: how long the journal has not answered a read, and `failing_seconds`:
    how long every read has failed, each said after its location while it lasts (the views still show the last
    reading)."""
    text = Text(overflow="fold")  # wraps on a narrow terminal: the journal's location is never cut
    text.append(" ")
    if reading is not None:
        commission = reading.commission
        zone = reading.zone or host_zone or "UTC"
        if commission is None:
            text.append("no commission yet", style="italic")
        else:
            text.append(f"revision {printable(commission.get('revision'))}", style="bold")
        text.append(" · ", style="dim")
        text.append(printable(zone))
        if host_zone and commission is not None and host_zone != zone:
            text.append(f" ({THIS_HOST}: {host_zone})", style="bold")
        text.append(" · ", style="dim")
        text.append(reading.now.in_timezone(zone).format("ddd D MMM HH:mm"), style="bold")
        text.append(f" · schedule v{max(reading.head, 0)} · lanes v{max(reading.pipeline_head, 0)} ", style="dim")
    text.append("· journal ", style="dim")
    text.append(printable(journal_label))
    if quiet_seconds is not None:
        text.append(" · ", style="dim")
        text.append(f"the journal has not answered for {quiet_seconds:.0f} s: the views show its last reading; "
                    "Ctrl+Q quits", style="bold reverse")
    if failing_seconds is not None:
        text.append(" · ", style="dim")
        text.append(f"reading the journal has failed for {failing_seconds:.0f} s: the views show its last reading",
                    style="bold reverse")
    return text


class HeaderBar(Static):
    """One line (two or more when the terminal is too narrow for all of it), always visible."""

    DEFAULT_CSS = """
    HeaderBar { height: auto; background: $panel; color: $foreground; }
    """

    def show(self, journal_label: str, reading: Reading | None, host_zone: str | None,
             quiet_seconds: float | None = None, failing_seconds: float | None = None) -> None:
        unchanged.update(self, header_text(journal_label, reading, host_zone, quiet_seconds, failing_seconds))
