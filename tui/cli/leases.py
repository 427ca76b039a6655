"""The `lease` commands: list every lease with its staleness, heartbeat or release one's own."""

from __future__ import annotations

import argparse

from factory_schedule.store import leases
from factory_schedule.tui.cli.journal import journal_url_of, open_existing
from factory_schedule.tui.cli.output import answer, to_jsonable
from factory_schedule.tui.host.clock import SystemClock


def lease_list(args: argparse.Namespace) -> int:
    journal = open_existing(journal_url_of(args))
    now = SystemClock().now()
    return answer({"leases": [{**to_jsonable(lease), "stale": leases.stale(lease, now), "stale_at": lease.stale_at}
                             for lease in leases.list_leases(journal)]})


def lease_heartbeat(args: argparse.Namespace) -> int:
    journal = open_existing(journal_url_of(args))
    return answer({"lease": leases.heartbeat(journal, args.scope, args.owner, SystemClock().now())})


def lease_release(args: argparse.Namespace) -> int:
    leases.release(open_existing(journal_url_of(args)), args.scope, args.owner)
    return answer({"released": args.scope, "owner": args.owner})


# -- registration ------------------------------------------------------------------------
