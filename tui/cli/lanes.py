"""`factory-schedule lanes ...`: the staged promotion and maturation lanes' runner interface.

JSON in and out like the runner contract (`runner.py`): each command prints one JSON object and
exits with a code a shell can branch on (tui/cli/output.py: 50 for an idle claim, 51-67 for the
pipeline's refusals, 4 and 5 for its locks). A run claims its lane's next task (`lanes claim`),
does one stage's work, and reports its artifact (`lanes report`); a run the commission schedules
claims with the occurrence `tick` admitted for it (`--occurrence`); a reviewer run claims review
tasks and reports its review the same way; the owner answers escalations and approval requests.

Each command's fields are declared once, as `Option`s; `--stdin` takes them as a JSON object,
except where a document comes on stdin (a report, the candidates), as for `call end`. Input the
shell can check exits 2 before the journal is opened, and every command works on an existing
journal (a missing one is refused in one line): nothing is written. Handlers raise; `main` maps
each error to its JSON line and exit code.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from factory_schedule.core.pipeline import ClaimIdle, LaneView, PipelineLanes, PipelineResult, text
from factory_schedule.core.pipeline.lock_scopes import task_scope, task_scope_prefix, worker_scope
from factory_schedule.store import leases
from factory_schedule.tui.cli.journal import journal_url_of, open_existing
from factory_schedule.tui.cli.options import (
    Option,
    gather,
    parse_json,
    read_stdin_json,
)
from factory_schedule.tui.cli.output import (
    EXIT_IDLE,
    EXIT_NOT_LEASE_OWNER,
    EXIT_OK,
    EXIT_REPLAY_NOT_LICENSED,
    BadInput,
    emit,
    to_jsonable,
)
from factory_schedule.tui.cli.parsers.lanes import (
    ABANDON,
    APPROVAL_REQUEST,
    APPROVAL_USE,
    CLAIM,
    HEARTBEAT,
    LANE_NAMES,
    REPORT,
    SHOW,
    TOP_N,
)
from factory_schedule.tui.host.clock import SystemClock
from factory_schedule.tui.host.environment import DEFAULT_LEASE_TTL_SECONDS
from factory_schedule.tui.host.lane_locks import (
    claim_with_locks,
    journal_of,
    report_and_release,
    resource_scopes,
)

Act = Callable[[PipelineLanes, dict[str, Any]], object]


def open_lanes(args: argparse.Namespace) -> PipelineLanes:
    """The lanes over the existing journal `--journal` names, on the system clock."""
    return PipelineLanes(open_existing(journal_url_of(args)), SystemClock())


def _lane_of(values: dict[str, Any]) -> str:
    """The lane, checked before any lock scope is named after it."""
    lane = values["lane"]
    if lane not in LANE_NAMES:
        raise BadInput(f"--lane: promotion or maturation, got {lane!r}")
    return str(lane)


def _document(value: str | None, what: str, flag: str) -> Any:
    """A JSON document given as a flag's text, or (when absent) on stdin."""
    return read_stdin_json(what) if value is None else parse_json(value, flag)


# -- the runs' commands ------------------------------------------------------------------------


def claim(args: argparse.Namespace) -> int:
    v = gather(args, CLAIM)
    lane, runner = _lane_of(v), v["runner"]
    if v.get("run") is None and v.get("occurrence") is None:
        raise BadInput("--run: required without --occurrence (a scheduled run names its occurrence)")
    answer, held = claim_with_locks(open_lanes(args), lane, runner, run=v.get("run"), occurrence=v.get("occurrence"),
                                    ttl=v.get("ttl", DEFAULT_LEASE_TTL_SECONDS), pid=v.get("pid"))
    if isinstance(answer, ClaimIdle):
        emit(answer)
        return EXIT_IDLE
    emit({**to_jsonable(answer), "leases": held})
    return EXIT_OK


def report(args: argparse.Namespace) -> int:
    v = gather(args, REPORT)
    lane = _lane_of(v)
    report = _document(v.get("report"), "the report", "--report")  # read before the journal opens
    answer, released = report_and_release(open_lanes(args), lane, v["task"], v["runner"], report)
    emit({**to_jsonable(answer), "leases": released})
    lost = [scope for scope, what in released.items() if what.startswith("held-by:")]
    return EXIT_NOT_LEASE_OWNER if lost else EXIT_OK


def heartbeat(args: argparse.Namespace) -> int:
    v = gather(args, HEARTBEAT)
    lane, runner = _lane_of(v), text("runner", v["runner"])
    lanes = open_lanes(args)
    now = SystemClock().now()
    scopes = [worker_scope(lane), *resource_scopes(lanes, lane)]
    scopes += [lease.scope for lease in leases.list_leases(journal_of(lanes))
               if lease.scope.startswith(task_scope_prefix(lane)) and lease.owner == runner]
    emit({"leases": [leases.heartbeat(journal_of(lanes), scope, runner, now) for scope in scopes]})
    return EXIT_OK


def abandon(args: argparse.Namespace) -> int:
    """A dead run's task back to pending: refused while its task lock is inside its recovery window (2 x TTL
    without a heartbeat), then its locks are removed, each only if still stale."""
    v = gather(args, ABANDON)
    lane, runner = _lane_of(v), v["runner"]
    lanes = open_lanes(args)
    journal = journal_of(lanes)
    now = SystemClock().now()
    scopes = [task_scope(lane, v["task"]), *resource_scopes(lanes, lane), worker_scope(lane)]
    for scope in scopes:
        holder = leases.get_lease(journal, scope)
        if holder is not None and holder.owner == runner and not leases.stale(holder, now):
            raise leases.LeaseHeldError(holder, now)
    partial = [v["partial"]] if v.get("partial") is not None else []
    answer = lanes.abandon(lane=lane, task=v["task"], runner=runner, confirmed_by=v["confirmed_by"],
                           evidence=v["evidence"], partial=partial)
    removed = {}
    for scope in scopes:
        holder = leases.get_lease(journal, scope)
        if holder is not None and holder.owner == runner:
            removed[scope] = "removed" if leases.remove_stale(journal, scope, now) else "kept"
    emit({**to_jsonable(answer), "leases": removed})
    return EXIT_OK


# -- the owner's and the portfolio's commands ----------------------------------------------------


def top_n(args: argparse.Namespace) -> int:
    v = gather(args, TOP_N)
    candidates = _document(v.get("candidates"), "the candidates", "--candidates")  # before the journal opens
    emit(open_lanes(args).record_top_n(week=v["week"], candidates=candidates))
    return EXIT_OK


def _on_lanes(options: Sequence[Option], act: Act) -> Callable[[argparse.Namespace], int]:
    """A handler that checks its input first, then opens the (existing) journal and acts on the lanes."""

    def handler(args: argparse.Namespace) -> int:
        values = gather(args, options)
        emit(act(open_lanes(args), values))
        return EXIT_OK

    return handler


def _approval_request(lanes: PipelineLanes, v: dict[str, Any]) -> PipelineResult:
    return lanes.request_approval(approval=v["approval"], candidate=v["candidate"], action=v["action"],
                                  requested_by=v["requested_by"], reason=v["reason"])


def approval_use(args: argparse.Namespace) -> int:
    """Exit 0 with `"licensed": true` for the use that licenses the action; a replay of it exits 12 with
    `"licensed": false`, so a retried run can tell that the action was already licensed once."""
    v = gather(args, APPROVAL_USE)
    used = open_lanes(args).record_external_action(approval=v["approval"], candidate=v["candidate"],
                                                    action=v["action"], runner=v["runner"])
    emit(used)
    return EXIT_OK if used.licensed else EXIT_REPLAY_NOT_LICENSED


def _show(lanes: PipelineLanes, v: dict[str, Any]) -> dict[str, LaneView | None]:
    return {"lane": lanes.lane_view(v["lane"])}


# -- registration ------------------------------------------------------------------------


approval_request = _on_lanes(APPROVAL_REQUEST, _approval_request)
show = _on_lanes(SHOW, _show)
