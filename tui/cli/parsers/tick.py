"""`factory-schedule tick [--lane L] [--ttl SECONDS] -- COMMAND [ARGS]`: what the LaunchAgent fires.

First it checks the journal's hash chains from where the last check ended: on a
broken one (a journal set back to an earlier copy has lost the decisions made
since, and acting on it would make them again) it prints one `{"chain_broken":
...}` line each and a `{"not_started": ...}` line, tells the owner, and exits 8,
with nothing repaired or started.

Under the journal's `worker` lease the tick then runs the health reconciler's
repair pass (a dead runner reconciled on conclusive evidence, leases that guard
nothing removed, each journaled; one `{"repaired": ...}` line each), then calls
`start` for every lane of the current commission (or just `--lane`), each with a
fresh runner token, and prints one JSON line per lane with what `start` answered. The worker lease guards the
tick's own decisions (the starts) and is released as soon as they are made,
before any runner runs: runners are fenced by their token (the schedule answers a
running segment only to its runner) and by their segment lease, and a runner may
work for hours while the next lane's tick must still be able to fire.

Then, for each admission or resumption, it takes the segment's lease and runs
COMMAND with FACTORY_JOURNAL, FACTORY_OCCURRENCE, FACTORY_RUNNER and
FACTORY_SEGMENT (also FACTORY_LANE, FACTORY_LEASE_SCOPE, FACTORY_LEASE_TTL) in its
environment, heartbeating every TTL/3; all admitted segments run at once. The
runner's stdout and stderr go to its bounded log file under the state folder
(`<journal file>.runs/`), never to the tick's terminal; its exit status and first
error and warning lines are recorded in the journal and shown escaped in its
`segment_run` line. It counts as failed only when its exit status, its output and
its segment's record agree (health's rule).

With `--detach` (what the LaunchAgent runs) each admitted segment gets a keeper
process (`tick-segment`) in a session of its own that does the same, and the tick
returns after a short observation window (`--observe`, default 5 s): launchd never
starts a job while its last run is still running, so a tick that waited for a
two-hour runner would swallow the next lanes' times. In that window it checks
that each keeper stays the same process (pid and start time) and holds its
segment's lease, and prints one `{"keeper_observed": ...}` line each; only a
keeper that exited non-zero leaving its segment running counts as failed (exit 6).
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from factory_schedule.tui.cli.options import lease_ttl_seconds, segment_number
from factory_schedule.tui.host.environment import DEFAULT_LEASE_TTL_SECONDS

DEFAULT_OBSERVE_SECONDS = 5.0
MAX_OBSERVE_SECONDS = 300.0


def _observation_window(value: str) -> float:
    """0 (do not watch) up to five minutes: the tick waits that long before launchd sees it return."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {value!r}") from None
    if not (math.isfinite(number) and 0 <= number <= MAX_OBSERVE_SECONDS):
        raise argparse.ArgumentTypeError(f"expected 0 to {MAX_OBSERVE_SECONDS:g} seconds, got {value!r}")
    return number


def register(subcommands: Any) -> None:
    tick = subcommands.add_parser(
        "tick",
        help="start the lanes due and run COMMAND for each admitted segment (what the LaunchAgent fires)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    tick.add_argument("--lane", help="start only this lane (default: every lane of the current commission)")
    tick.add_argument(
        "--ttl",
        type=lease_ttl_seconds,
        default=DEFAULT_LEASE_TTL_SECONDS,
        help="lease TTL in seconds; heartbeats every TTL/3, stale after 2 x TTL "
        f"(default {DEFAULT_LEASE_TTL_SECONDS:g})",
    )
    tick.add_argument(
        "--detach",
        action="store_true",
        help="start each admitted segment's runner under a keeper process of its own and return at once "
        "(what the LaunchAgent uses: launchd never runs a second tick while the first still runs)",
    )
    tick.add_argument(
        "--observe",
        type=_observation_window,
        default=DEFAULT_OBSERVE_SECONDS,
        metavar="SECONDS",
        help="with --detach: watch each keeper this long after starting it, and report whether the same "
        f"process holds its segment's lease (`keeper_observed`; 0 skips; default {DEFAULT_OBSERVE_SECONDS:g})",
    )
    tick.add_argument("tick_command", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS]")
    tick.set_defaults(handler="factory_schedule.tui.cli.tick:tick")

    keeper = subcommands.add_parser(
        "tick-segment",
        help="hold one admitted segment's lease while its runner runs (what `tick --detach` starts)",
    )
    keeper.add_argument("--lane", required=True)
    keeper.add_argument("--occurrence", required=True)
    keeper.add_argument("--segment", type=segment_number, required=True)
    keeper.add_argument("--runner", required=True, help="the token the segment was admitted to")
    keeper.add_argument("--ttl", type=lease_ttl_seconds, default=DEFAULT_LEASE_TTL_SECONDS)
    keeper.add_argument("tick_command", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS]")
    keeper.set_defaults(handler="factory_schedule.tui.cli.tick:keep_segment")
