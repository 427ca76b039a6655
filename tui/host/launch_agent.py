"""Health's probe of the installed LaunchAgent: read its plist, and ask launchd whether it is loaded.

Only looking: the rules that compare it with what `launchd install` would write
live in core/health/launch_agent.py. The journal URLs are compared here (a SQLite path is
resolved, so `~/factory/journal.db` spelled two ways is one journal) and passed
on with any password masked, since findings are printed and notified.
"""

from __future__ import annotations

import os
import plistlib
import subprocess
import sys
from collections.abc import Callable, Mapping
from typing import Any

from factory_schedule.core.health import LaunchAgentFact
from factory_schedule.tui.host.files import MIB, read_regular
from factory_schedule.tui.host.paths import sqlite_file_of

LoadedProbe = Callable[[str], tuple[bool | None, str | None]]

MAX_PLIST_BYTES = MIB  # a LaunchAgent is a few KiB; anything larger (or not a file) is refused, not read


def launchctl_loaded(label: str) -> tuple[bool | None, str | None]:
    """(loaded, why not checkable): `launchctl print gui/<uid>/<label>` on a Mac; elsewhere not checkable."""
    if sys.platform != "darwin":
        return None, f"launchd runs only on macOS (this host is {sys.platform})"
    try:
        completed = subprocess.run(["launchctl", "print", f"gui/{os.getuid()}/{label}"], capture_output=True,
                                   text=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as error:
        return None, f"launchctl could not be run: {error}"
    return completed.returncode == 0, None


def same_journal(one: str, other: str) -> bool:
    """Whether two journal URLs name the same journal: SQLite files by their resolved path, others as URLs."""
    first, second = sqlite_file_of(one), sqlite_file_of(other)
    if first is not None or second is not None:
        return first is not None and second is not None and (
            os.path.realpath(os.path.expanduser(first)) == os.path.realpath(os.path.expanduser(second)))
    try:
        from sqlalchemy.engine import make_url

        return make_url(one) == make_url(other)
    except Exception:
        return one == other


def _runnable(program: str) -> bool:
    return os.path.isabs(program) and os.path.isfile(program) and os.access(program, os.X_OK)


def _programs(arguments: list[str]) -> list[str]:
    """The programs the agent starts: its first argument, and the runner after `--` (both by absolute path)."""
    programs = arguments[:1]
    if "--" in arguments and arguments.index("--") + 1 < len(arguments):
        programs.append(arguments[arguments.index("--") + 1])
    return programs


def read_launch_agent(path: str, journal_url: str | None, loaded: LoadedProbe = launchctl_loaded) -> LaunchAgentFact:
    """The installed agent as health's rules see it; one that cannot be read says why."""
    from factory_schedule.store.urls import shown_url

    try:
        installed = plistlib.loads(read_regular(path, MAX_PLIST_BYTES))
    except (OSError, plistlib.InvalidFileException, ValueError) as error:
        return LaunchAgentFact(path, None, str(error))
    if not isinstance(installed, dict):
        return LaunchAgentFact(path, None, "its top level is not a dictionary")
    have: Any = installed.get("StartCalendarInterval", [])
    have = [have] if isinstance(have, dict) else list(have) if isinstance(have, list) else []
    arguments = installed.get("ProgramArguments")
    arguments = [str(item) for item in arguments] if isinstance(arguments, list) else []
    environment = installed.get("EnvironmentVariables")
    environment = environment if isinstance(environment, Mapping) else {}
    named = environment.get("FACTORY_JOURNAL")
    named = named if isinstance(named, str) and named else None
    label = installed.get("Label")
    label = label if isinstance(label, str) and label else os.path.basename(path).removesuffix(".plist")
    is_loaded, problem = loaded(label)
    return LaunchAgentFact(
        path=path,
        intervals=tuple(item for item in have if isinstance(item, dict)),
        label=label,
        program_arguments=tuple(arguments),
        journal_shown=shown_url(named) if named else None,
        journal_expected=shown_url(journal_url) if journal_url else None,
        same_journal=None if named is None else (journal_url is not None and same_journal(named, journal_url)),
        missing_programs=tuple(program for program in _programs(arguments) if not _runnable(program)),
        loaded=is_loaded,
        loaded_problem=problem,
    )
