"""What an empty journal shows: the first thing to do, and the key that does it."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

FIRST_STEPS = Text.assemble(
    ("Nothing is scheduled yet: this journal has no commission.\n\n", "bold"),
    "1. Press ",
    ("c", "bold reverse"),
    " to record a commission: type your Products and the weekly ceiling in tokens (no default), and\n"
    "   the proposed commission (this machine's zone, a 02:00-05:00 window, a 20-minute stagger, full runs\n"
    "   from Thursday, two Products a night, the portfolio rhythms on Sunday) is previewed; or load your own\n"
    "   JSON file. Then confirm.\n",
    "2. Press ",
    ("s", "bold reverse"),
    " to record a sign-in record for claude (and chatgpt if a lane uses it): calls are refused without one.\n",
    "3. In a terminal, run ",
    ("factory-schedule check", "bold"),
    ": it says what tonight still lacks and how to fire the tick at each\n"
    "   lane's time: the command that installs the LaunchAgent on a Mac, the crontab line elsewhere\n"
    "   (docs/guides/unattended.md, section \"The LaunchAgent\").",
)


class FirstSteps(Static):
    def on_mount(self) -> None:
        self.update(FIRST_STEPS)
