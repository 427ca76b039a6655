"""What `check` does: the preflight, each problem with the command that fixes it; then, if asked, a rehearsal."""

from __future__ import annotations

import argparse
import os

from factory_schedule.core.preflight import headline, preflight
from factory_schedule.store import open_journal
from factory_schedule.tui.cli.health import installed_agent
from factory_schedule.tui.cli.journal import journal_url_of, missing_journal
from factory_schedule.tui.cli.output import EXIT_OK, EXIT_WILL_NOT_RUN, printable, say
from factory_schedule.tui.cli.rehearse import prepared_rehearsal, rehearse
from factory_schedule.tui.host.clock import SystemClock
from factory_schedule.tui.host.environment import ENV_PROMPTS
from factory_schedule.tui.host.preflight import gather
from factory_schedule.tui.host.process_identity import this_host

MARKS = {"ok": "ok  ", "warn": "warn", "no": "NO  "}


def check_tonight(args: argparse.Namespace) -> int:
    url = journal_url_of(args)
    prompts = args.prompts if args.prompts is not None else os.environ.get(ENV_PROMPTS) or None
    rehearsal = prepared_rehearsal(url, args.rehearse, prompts) if args.rehearse else None  # before the slow probes
    journal = None if missing_journal(url) is not None else open_journal(url)
    facts = gather(journal, SystemClock().now(), this_host(), prompts, args.plist or installed_agent(), args.notify)
    result = preflight(facts)
    say(headline(result))
    for line in result.lines:
        say(f"  {MARKS[line.mark]} {printable(line.subject)}: {printable(line.text)}")
        if line.fix and line.mark != "ok":
            say(f"        fix: {printable(line.fix)}")
    if rehearsal is not None:
        return rehearse(rehearsal, args.yes)
    return EXIT_OK if result.ready else EXIT_WILL_NOT_RUN
