"""`factory-schedule demo`: two weeks of a simulated factory, then the dashboard on it, live.

The demo journal is built by driving the real engine (see tui/host/demo.py); the
simulation then keeps going on a thread with the clock accelerated, so the views
move. The journal is a new file in a temporary folder unless `--journal` names a
new one (the demo starts a journal; it is one of the commands that may create one).
"""

from __future__ import annotations

from typing import Any

from factory_schedule.tui.cli.options import positive_number

DEFAULT_SPEED = 60.0


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser("demo", help="build a demo journal and open the dashboard on it, live",
                                    description=__doc__,
                                    journal_help="a new journal URL to build the demo in (default: a new file in a "
                                                 "temporary folder; never $FACTORY_JOURNAL)")
    parser.add_argument(
        "--speed", type=positive_number, default=DEFAULT_SPEED, metavar="N",
        help=f"simulated seconds per real second (default {DEFAULT_SPEED:g}: a minute a second)",
    )
    parser.add_argument("--build-only", action="store_true", help="build the journal, print its URL, and exit")
    parser.set_defaults(handler="factory_schedule.tui.cli.demo:open_demo")
