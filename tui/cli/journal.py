"""Which journal a command works on, and opening it: an existing one, or (for the few that may) a new one.

Only the commands that start a journal create one: recording the first commission,
the demo, and the dashboard on its first-use default file. Every other command
refuses a journal file that does not exist, in one line, instead of silently
creating an empty journal at a mistyped path (whose `plan` would answer `[]`).
"""

from __future__ import annotations

import argparse
import os
import re
from typing import TYPE_CHECKING

from factory_schedule.core import LifecycleSchedule
from factory_schedule.store import open_journal
from factory_schedule.tui.cli.output import JournalRefused
from factory_schedule.tui.host.clock import SystemClock
from factory_schedule.tui.host.paths import ENV_JOURNAL, default_journal_url, sqlite_file_of

if TYPE_CHECKING:
    from factory_schedule.core import Clock, LifecycleSchedule
    from factory_schedule.store import Journal


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def journal_url_of(args: argparse.Namespace) -> str:
    """`--journal` (before or after the subcommand), else $FACTORY_JOURNAL, else the user data file. A path
    where the URL belongs (no scheme) is refused (exit 3), naming where it came from and the URL it means."""
    flag = getattr(args, "journal", None)
    url = flag or default_journal_url()
    # Anything with a scheme or an `@` (a mistyped URL that may hold a password) is the store's to refuse, masked.
    if _SCHEME.match(url) is None and "@" not in url:
        where = "--journal" if flag else f"${ENV_JOURNAL}"
        raise JournalRefused(f"{where} is {url!r}, a path, not a journal URL: for a SQLite file there, use "
                             f"sqlite:///{os.path.abspath(os.path.expanduser(url))}")
    return url


def named_journal(args: argparse.Namespace) -> bool:
    """Whether the owner named a journal (a flag or $FACTORY_JOURNAL) rather than taking the default file."""
    return bool(getattr(args, "journal", None) or os.environ.get(ENV_JOURNAL))


def missing_journal(url: str) -> str | None:
    """Why `url` names no journal yet (a SQLite file that does not exist), or None."""
    path = sqlite_file_of(url)
    if path is None or os.path.exists(path):
        return None
    return (f"no journal at {path}: check --journal (or $FACTORY_JOURNAL); a journal is started by "
            "recording its first commission (factory-schedule record-commission FILE)")


def open_existing(url: str) -> Journal:
    """The journal at `url`; JournalRefused (exit 3) when its file does not exist, so nothing is created."""
    problem = missing_journal(url)
    if problem is not None:
        raise JournalRefused(problem)
    return open_journal(url)


def open_or_create(url: str) -> Journal:
    """The journal at `url`, created when new: only for the commands that start a journal."""
    return open_journal(url)


def schedule_over(journal: Journal, clock: Clock | None = None) -> LifecycleSchedule:
    """The schedule over an open journal, on the system clock unless another is given.

    A process opens a SQLite journal once and shares it: closing a second handle on
    the same file drops this process's SQLite locks, which would let another process
    checkpoint the WAL from under live connections.
    """
    return LifecycleSchedule(journal, clock or SystemClock())
