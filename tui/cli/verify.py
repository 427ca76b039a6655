"""What `verify` does: check every aggregate's hash chain from its first event and against the checkpoints earlier
checks left, and start the checkpoints afresh from what verified."""

from __future__ import annotations

import argparse
from typing import Any

from factory_schedule.tui.cli.journal import journal_url_of, open_existing
from factory_schedule.tui.cli.output import EXIT_CHAIN_BROKEN, EXIT_JOURNAL, EXIT_OK, emit, printable, say
from factory_schedule.tui.host import chain_checkpoint
from factory_schedule.tui.host.clock import SystemClock
from factory_schedule.tui.host.health import held_to_checkpoints, verify_chains


def verify_chains_command(args: argparse.Namespace) -> int:
    url = journal_url_of(args)
    journal = open_existing(url)
    could_not: list[str] = []
    earlier = {} if args.accept_history else chain_checkpoint.read_checkpoints(journal, url)
    verified, problems = verify_chains(journal, None, could_not)
    set_back = held_to_checkpoints(journal, earlier)
    for name, problem in set_back.items():  # consistent from its first event, but not what was checked before
        verified.pop(name, None)
        problems.setdefault(name, problem)
    at = SystemClock().now()
    unwritten = [] if could_not else [  # a check that could not list every aggregate is not a whole one
        finding.message for finding in chain_checkpoint.remember(url, earlier, verified, problems, at,
                                                                 whole=True, set_back=set_back)]
    code = EXIT_CHAIN_BROKEN if problems else EXIT_JOURNAL if could_not else EXIT_OK
    if args.json:
        document: dict[str, Any] = {
            "verified": code == EXIT_OK, "at": at.isoformat(),
            "chains": {name: point.version for name, point in verified.items()},
            "problems": problems, "could_not_check": could_not, "unrecorded": unwritten, "exit": code}
        emit(document)
        return code
    for name, point in sorted(verified.items()):
        say(f"verified: {printable(name)} through event {point.version}")
    for name, problem in sorted(problems.items()):  # the store's words start with the chain's name
        say(f"broken: {printable(problem if problem.startswith(f'{name}:') else f'{name}: {problem}')}")
    for problem in could_not:
        say(f"could not check: {printable(problem)}")
    for message in unwritten:
        say(f"not recorded: {printable(message)}")
    if code == EXIT_OK:
        say(f"every hash chain verified from its first event ({at.isoformat()})")
    return code
