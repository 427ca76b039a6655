"""What `dashboard` does (and no subcommand at all): open the live dashboard on a journal."""

from __future__ import annotations

import argparse
import sys
import threading

from factory_schedule.store import JournalError, shown_url
from factory_schedule.tui.cli.journal import journal_url_of, missing_journal, named_journal
from factory_schedule.tui.cli.output import EXIT_BAD_INPUT, printable
from factory_schedule.tui.cli.parsers.dashboard import DEFAULT_POLL_SECONDS
from factory_schedule.tui.dashboard.app import SystemClock, build_app
from factory_schedule.tui.dashboard.owner_signing import DEFAULT_OWNER_MINUTES, OwnerSigning
from factory_schedule.tui.host.clock import host_zone

# How long opening the journal may take before the command says what it waits for: the dashboard draws nothing
# until the journal answers, and a PostgreSQL server that does not answer is given up only after its connect timeout.
OPENING_NOTICE_SECONDS = 1.0


def _say_still_opening(journal_url: str) -> None:
    # A server's wait ends at Ctrl+C; SQLite's busy wait on a locked file does not (it ends when SQLite gives up).
    stop = "" if journal_url.startswith("sqlite") else " (Ctrl+C stops waiting)"
    print(f"factory-schedule: still opening the journal {printable(shown_url(journal_url))} after "
          f"{OPENING_NOTICE_SECONDS:.0f} s{stop}", file=sys.stderr, flush=True)


def open_dashboard(journal_url: str, poll: float = DEFAULT_POLL_SECONDS, owner_minutes: float | None = None) -> int:
    """Run the dashboard until the owner quits; 2 when the journal cannot be opened."""
    minutes = DEFAULT_OWNER_MINUTES if owner_minutes is None else owner_minutes
    notice = threading.Timer(OPENING_NOTICE_SECONDS, _say_still_opening, (journal_url,))
    notice.daemon = True
    notice.start()
    try:
        app = build_app(journal_url, SystemClock(), poll, host_zone(), owner_signing=OwnerSigning(minutes=minutes))
    except JournalError as error:
        failed: JournalError | None = error
    else:
        failed = None
    finally:
        notice.cancel()
        notice.join()  # a notice being printed ends before the error or the dashboard's first frame
    if failed is not None:
        print(f"factory-schedule: {printable(failed)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    app.run()
    return 0


def dashboard_command(args: argparse.Namespace) -> int:
    url = journal_url_of(args)
    missing = missing_journal(url) if named_journal(args) else None
    if missing is not None:
        print(f"factory-schedule: {printable(missing)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return open_dashboard(url, getattr(args, "poll", DEFAULT_POLL_SECONDS), getattr(args, "owner_minutes", None))
