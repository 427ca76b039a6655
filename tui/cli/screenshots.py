"""What `screenshots` does: save an SVG of each dashboard view."""

from __future__ import annotations

import argparse

from factory_schedule.tui.dashboard.screenshots import save_screenshots


def screenshots_command(args: argparse.Namespace) -> int:
    for path in save_screenshots(args.out):
        print(path)
    return 0
