"""`factory-schedule health [--repair] [--json] [--plist PATH] [--grace MINUTES]`.

Exit status: 0 healthy, 1 findings, 2 could not check (no journal at the path,
the journal would not open, or a check failed to run). A journal with no
commission is never healthy: it is most often a mistyped path. `--repair` first
reconciles each dead runner whose process is provably gone from this host and
whose lease had no heartbeat for 2 x TTL (the engine's `reconcile`, confirmed by
health-reconciler@HOST), confirms each staged lane run gone on the same evidence
(`lanes abandon`: an interrupted revision counts as a failed start of its round),
removes leases that guard nothing running any more, and
writes the compact record of each scheduled firing that left none; each is
journaled and listed. It changes no decision a person made. Findings that need
the owner are sent once each to the notifier (`--notify`, $FACTORY_NOTIFY, or a
Mac's notification centre). With a prompt folder (`--prompts` or
$FACTORY_PROMPTS) each lane's prompt binding is checked too: drift is a warning,
and `--repair` records the binding now read only when it reads back whole and
stable; otherwise it records a blocker for the owner. Text output escapes whatever it shows from the journal, and
the `reconcile` line it suggests is shell-quoted.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from factory_schedule.tui.cli.options import minutes
from factory_schedule.tui.cli.parsers.launchd_install import DEFAULT_LABEL
from factory_schedule.tui.host.environment import ENV_PROMPTS

if TYPE_CHECKING:
    pass


DEFAULT_GRACE_MINUTES = 30  # core.health.DEFAULT_GRACE_MINUTES (not imported: `--help` stays light)


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "health", help="the supervisor's check (exit 0 healthy, 1 findings, 2 could not)", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repair", action="store_true",
                        help="reconcile dead runners on conclusive evidence, remove leases that guard nothing, "
                        "record missed firings; each journaled (changes no decision)")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of text")
    parser.add_argument("--notify", metavar="COMMAND",
                        help="tell the owner of each finding that needs them, once, by running COMMAND with the "
                        "text as its last argument (default: $FACTORY_NOTIFY, else osascript on a Mac, else "
                        "none; an empty COMMAND turns it off)")
    parser.add_argument("--plist", metavar="PATH",
                        help="the installed LaunchAgent to compare with the commission "
                        f"(default: ~/Library/LaunchAgents/{DEFAULT_LABEL}.plist when it exists)")
    parser.add_argument("--prompts", metavar="FOLDER",
                        help="the owner's prompt folder: check each lane's prompt binding (source, resolved "
                        "path, normalized snapshot) against the one recorded; --repair records it when read back "
                        f"whole (default: ${ENV_PROMPTS}; none: not checked)")
    parser.add_argument("--grace", type=minutes, default=DEFAULT_GRACE_MINUTES, metavar="MINUTES",
                        help=f"how late a lane may start before it is reported (default {DEFAULT_GRACE_MINUTES})")
    parser.set_defaults(handler="factory_schedule.tui.cli.health:check_health_command")
