"""The `lease` commands: list every lease with its staleness, heartbeat or release one's own."""

from __future__ import annotations

import argparse

from factory_schedule.store import leases
from factory_schedule.tui.cli.journal import journal_url_of, open_existing
from factory_schedule.tui.cli.output import BadInput, answer, to_jsonable
from factory_schedule.tui.host.clock import SystemClock
from factory_schedule.tui.host.tokens import parse_segment_scope


def _not_a_segment(scope: str) -> None:
    """A segment's lease is its tick's: the owner it names is the runner's ID, which `lease list` shows anyone, so
    a release by name would let any process drop a live runner's lease and then `reconcile` it (a second segment
    beside it, its call paid twice); a heartbeat by name would keep a dead one's lease fresh forever."""
    if parse_segment_scope(scope) is not None:
        raise BadInput(f"{scope} is a segment's lease, held by its tick: it ends with its runner, or goes stale "
                       "and is reconciled (`factory-schedule reconcile`, or the tick's repair)")


def lease_list(args: argparse.Namespace) -> int:
    journal = open_existing(journal_url_of(args))
    now = SystemClock().now()
    return answer({"leases": [{**to_jsonable(lease), "stale": leases.stale(lease, now), "stale_at": lease.stale_at}
                             for lease in leases.list_leases(journal)]})


def lease_heartbeat(args: argparse.Namespace) -> int:
    _not_a_segment(args.scope)
    journal = open_existing(journal_url_of(args))
    return answer({"lease": leases.heartbeat(journal, args.scope, args.owner, SystemClock().now())})


def lease_release(args: argparse.Namespace) -> int:
    _not_a_segment(args.scope)
    leases.release(open_existing(journal_url_of(args)), args.scope, args.owner)
    return answer({"released": args.scope, "owner": args.owner})


# -- registration ------------------------------------------------------------------------
