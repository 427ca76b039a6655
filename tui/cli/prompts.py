"""`factory-schedule prompts new DIR --sign-in EMAIL`: a starter prompt folder for the current commission.

Writes, for every lane of the journal's current commission, the lane.toml `run` reads and one first
prompt per task (a staged lane's task: one per stage), each a start to rewrite; a file that exists
is kept as it is. `factory-schedule check --prompts DIR` then says whether tonight will run.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from factory_schedule.tui.cli.journal import journal_url_of, open_existing, schedule_over
from factory_schedule.tui.cli.options import text
from factory_schedule.tui.cli.output import EXIT_OK, BadInput, printable, say


def _new(args: argparse.Namespace) -> int:
    from factory_schedule.tui.host.prompt_starter import write_starter

    sign_in = args.sign_in.strip()
    if not sign_in:
        raise BadInput("--sign-in: the sign-in the account record names (your subscription's email) is needed")
    view = schedule_over(open_existing(journal_url_of(args))).read()
    if view is None:
        raise BadInput("the journal has no commission yet: record one first (factory-schedule record-commission FILE)")
    folder = Path(os.path.expanduser(args.folder))
    written = write_starter(folder, dict(view.commission), sign_in)
    for path in written:
        say(f"wrote {printable(path)}")
    say(f"{len(written)} files written under {printable(folder)}; rewrite the prompts, then: "
        f"factory-schedule check --prompts {printable(folder)}")
    return EXIT_OK


def register(subcommands: Any) -> None:
    prompts = subcommands.add_parser("prompts", help="a starter prompt folder for the current commission (new)",
                                     description=__doc__)
    commands = prompts.add_subparsers(dest="prompts_command", metavar="new", required=True)
    new = commands.add_parser("new", help="write every lane's lane.toml and first prompts (keeps existing files)",
                              description=__doc__)
    new.add_argument("folder", metavar="DIR", help="the prompt folder (made when missing)")
    new.add_argument("--sign-in", type=text, required=True, metavar="EMAIL",
                     help="the sign-in your account record names, for lane.toml")
    new.set_defaults(handler=_new)
