"""The banner for a journal the dashboard cannot read: the code, the message, and what still works."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from factory_schedule.tui.dashboard.reading import Problem
from factory_schedule.tui.dashboard.safety import printable
from factory_schedule.tui.dashboard.widgets import unchanged


class ProblemBanner(Static):
    """Hidden while the state reads; otherwise says which code, why, and that History still works."""

    def show(self, problem: Problem | None) -> None:
        self.display = problem is not None
        if problem is None:
            unchanged.update(self, "")
            return
        text = Text()
        text.append(f" {printable(problem.code)} ", style="bold reverse")
        text.append(f"  The schedule's state cannot be read: {printable(problem.message)}\n")
        text.append("  Nothing is written from here until it reads again. ")
        text.append("History (h) still shows the journal's events.")
        unchanged.update(self, text)
