"""`factory-schedule screenshots`: the README's and the docs' pictures, one SVG per view and form, of the demo."""

from __future__ import annotations

from typing import Any


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser("screenshots", help="save an SVG of each dashboard view (for the docs)")
    parser.add_argument("--out", default="screenshots", metavar="FOLDER", help="where to write them (screenshots/)")
    parser.set_defaults(handler="factory_schedule.tui.cli.screenshots:screenshots_command")
