"""`factory-schedule screenshots`: the README's and the docs' pictures, one SVG per view and form, of the demo."""

from __future__ import annotations

import argparse
from typing import Any


def _screenshots(args: argparse.Namespace) -> int:
    from factory_schedule.tui.dashboard.screenshots import save_screenshots

    for path in save_screenshots(args.out):
        print(path)
    return 0


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser("screenshots", help="save an SVG of each dashboard view (for the docs)")
    parser.add_argument("--out", default="screenshots", metavar="FOLDER", help="where to write them (screenshots/)")
    parser.set_defaults(handler=_screenshots)
