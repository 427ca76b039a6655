"""What `demo` does: build a demo journal and open the dashboard on it, live."""

from __future__ import annotations

import argparse
import socket
import sys
import tempfile  # here and below, not at the top: every command builds this module's parser
from pathlib import Path

from factory_schedule.store import JournalError, shown_url
from factory_schedule.tui.cli.output import printable
from factory_schedule.tui.dashboard.app import ScheduleApp
from factory_schedule.tui.dashboard.owner_signing import OwnerSigning
from factory_schedule.tui.host.demo import LiveSimulation, build_demo, protect_demo


def demo_journal_url() -> str:
    folder = Path(tempfile.mkdtemp(prefix="factory-schedule-demo-"))
    return f"sqlite:///{folder / 'journal.db'}"


def open_demo(args: argparse.Namespace) -> int:

    url = getattr(args, "journal", None) or demo_journal_url()
    host = socket.gethostname()
    shown = printable(shown_url(url))  # a PostgreSQL URL's password stays off the terminal, and so does an ESC
    print(f"Building the demo journal at {shown} (two simulated weeks through the real engine)...", file=sys.stderr)
    try:
        driver = build_demo(url, host=host)
    except (JournalError, ValueError) as error:
        print(f"factory-schedule demo: {printable(error)}", file=sys.stderr)
        return 2
    key_path = Path(tempfile.mkdtemp(prefix="factory-schedule-demo-key-")) / "owner-key.json"
    passphrase = protect_demo(driver, key_path)
    print(f"The demo's owner key: {key_path}; its passphrase (the forms ask for it): {passphrase}", file=sys.stderr)
    if args.build_only:
        print(shown)
        return 0
    driver.go_live()
    simulation = LiveSimulation(driver, speed=args.speed)
    app = ScheduleApp(driver.journal, driver.journal.where, driver.clock, poll_interval=0.5, host=host,
                      owner_signing=OwnerSigning(key_path, hint=f"(The demo's passphrase: {passphrase})"))
    simulation.start()
    try:
        app.run()
    finally:
        simulation.stop()
    print(f"The demo journal stays at {shown}", file=sys.stderr)
    return 0
