"""`factory-schedule demo`: two weeks of a simulated factory, then the dashboard on it, live.

The demo journal is built by driving the real engine (see tui/host/demo.py); the
simulation then keeps going on a thread with the clock accelerated, so the views
move. The journal is a new file in a temporary folder unless `--journal` names a
new one (the demo starts a journal; it is one of the commands that may create one).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from factory_schedule.tui.cli.options import positive_number
from factory_schedule.tui.cli.output import printable

DEFAULT_SPEED = 60.0


def demo_journal_url() -> str:
    import tempfile  # here and below, not at the top: every command builds this module's parser

    folder = Path(tempfile.mkdtemp(prefix="factory-schedule-demo-"))
    return f"sqlite:///{folder / 'journal.db'}"


def _demo(args: argparse.Namespace) -> int:
    import socket

    from factory_schedule.store import JournalError, shown_url
    from factory_schedule.tui.dashboard.app import ScheduleApp
    from factory_schedule.tui.dashboard.owner_signing import OwnerSigning
    from factory_schedule.tui.host.demo import LiveSimulation, build_demo, protect_demo

    url = getattr(args, "journal", None) or demo_journal_url()
    host = socket.gethostname()
    shown = printable(shown_url(url))  # a PostgreSQL URL's password stays off the terminal, and so does an ESC
    print(f"Building the demo journal at {shown} (two simulated weeks through the real engine)...", file=sys.stderr)
    try:
        driver = build_demo(url, host=host)
    except (JournalError, ValueError) as error:
        print(f"factory-schedule demo: {printable(error)}", file=sys.stderr)
        return 2
    import tempfile

    key_path = Path(tempfile.mkdtemp(prefix="factory-schedule-demo-key-")) / "owner-key.json"
    passphrase = protect_demo(driver, key_path)
    print(f"The demo's owner key: {key_path}; its passphrase (the forms ask for it): {passphrase}", file=sys.stderr)
    if args.build_only:
        print(shown)
        return 0
    driver.go_live()
    simulation = LiveSimulation(driver, speed=args.speed)
    app = ScheduleApp(driver.journal, driver.journal.where, driver.clock, poll_interval=0.5, host=host,
                      owner_signing=OwnerSigning(key_path))
    simulation.start()
    try:
        app.run()
    finally:
        simulation.stop()
    print(f"The demo journal stays at {shown}", file=sys.stderr)
    return 0


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser("demo", help="build a demo journal and open the dashboard on it, live",
                                    description=__doc__)
    parser.add_argument(
        "--speed", type=positive_number, default=DEFAULT_SPEED, metavar="N",
        help=f"simulated seconds per real second (default {DEFAULT_SPEED:g}: a minute a second)",
    )
    parser.add_argument("--build-only", action="store_true", help="build the journal, print its URL, and exit")
    parser.set_defaults(handler=_demo)
