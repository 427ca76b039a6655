"""`factory-schedule verify [--json]`: every aggregate's hash chain, checked from its first event.

`health`, the tick and the dashboard check each chain from where the last check ended (the checkpoint beside
the journal), so their cost does not grow with history; an event rewritten before that checkpoint, the rest
of its chain left alone, is found only from the first event. Run this once a week (health warns, `verify-due`,
once the last whole check is more than eight days old). It reads the whole history: seconds on a year's
journal. Each run is recorded beside the journal (when, and what it found) and starts the checkpoints afresh
from what it verified.

It also holds the journal to those checkpoints: a journal set back to an earlier copy (a restored backup, a cut
WAL file, rows deleted) or a chain replaced whole is consistent from its first event, but not the history the
last checks verified, and is reported broken (its checkpoint kept, so every later check says it too) until
`--accept-history` takes the journal's history as it is now: only after you restored or replaced it yourself.

Exit status: 0 every chain verified; 8 a chain breaks (each named, with where); 3 the journal does not
exist, would not open, or its aggregates could not be listed.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "verify", help="check every hash chain from its first event (weekly; exit 0 verified, 8 broken)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="one JSON object instead of text")
    parser.add_argument("--accept-history", action="store_true",
                        help="take the journal's history as it is now, not as earlier checks saw it (after you "
                             "restored a backup or replaced the journal yourself)")
    parser.set_defaults(handler="factory_schedule.tui.cli.verify:verify_chains_command")
