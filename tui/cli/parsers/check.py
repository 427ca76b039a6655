"""`factory-schedule check [--prompts DIR] [--plist PATH] [--notify COMMAND] [--rehearse LANE [--yes]]`.

The preflight: whether tonight will run, in a few lines, lane by lane. It checks the commission
(lanes due in the next 24 hours), the account records they are paid from (current at each lane's
slot), each lane's prompts and CLI, the sign-in the runner will observe against the record, the
LaunchAgent that fires the tick, the notifier, and the week's tokens left against tonight's
bounds; each problem comes with the command that fixes it. It asks each CLI only for its sign-in
status (no prompt is sent) and writes nothing.

Exit status: 0 tonight will run (warnings allowed), 1 it will not as it stands, 2 could not check.

`--rehearse LANE` then runs that lane's first unit of work now, through the real CLI, against a
copy of the journal (the real one is not touched): it spends real tokens, so it says so and asks
first (`--yes` answers for you).
"""

from __future__ import annotations

import argparse
from typing import Any

from factory_schedule.tui.host.environment import ENV_PROMPTS


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "check", help="the preflight: will tonight run? each problem with the command that fixes it",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", metavar="DIR",
                        help=f"the prompt folder the runner uses (default: ${ENV_PROMPTS}; none: lanes unchecked)")
    parser.add_argument("--plist", metavar="PATH",
                        help="the installed LaunchAgent (default: ~/Library/LaunchAgents/com.factory-schedule.tick"
                        ".plist when it exists)")
    parser.add_argument("--notify", metavar="COMMAND", help="the notifier to check (default: $FACTORY_NOTIFY)")
    parser.add_argument("--rehearse", metavar="LANE",
                        help="then run LANE's first unit of work now, on a copy of the journal: spends real tokens")
    parser.add_argument("--yes", action="store_true", help="with --rehearse: do not ask before spending tokens")
    parser.set_defaults(handler="factory_schedule.tui.cli.check:check_tonight")
