"""What `prompts new` does: write a starter prompt folder for the current commission."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from factory_schedule.tui.cli.journal import journal_url_of, open_existing, schedule_over
from factory_schedule.tui.cli.output import EXIT_OK, BadInput, printable, say
from factory_schedule.tui.host.prompt_starter import write_starter


def new_prompts(args: argparse.Namespace) -> int:
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
