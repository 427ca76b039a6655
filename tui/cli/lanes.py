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
each error to its JSON line and exit code. The engine and the journal load inside the handlers,
so `--help` stays light.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from factory_schedule.tui.cli.journal import journal_url_of, open_existing
from factory_schedule.tui.cli.options import (
    MAX_PID,
    MAX_SECONDS,
    Option,
    add_command,
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
from factory_schedule.tui.cli.owner_signing import add_passphrase_option
from factory_schedule.tui.host.environment import DEFAULT_LEASE_TTL_SECONDS

Act = Callable[[Any, dict[str, Any]], Any]
LANE_NAMES = ("promotion", "maturation")
MIN_LOCK_TTL_SECONDS = 0.001  # the store's floor: a shorter TTL rounds to 0 ms, stale the moment it is taken

LANE = Option("lane", help="promotion or maturation")
TASK = Option("task", int, help="the task's number in its lane", low=1)
RUNNER = Option("runner", help="your run's token")

CLAIM = (LANE, Option("run", required=False,
                      help="the run's identity (the lane's scheduler or reviewer run); with --occurrence, its run"),
         RUNNER,
         Option("occurrence", required=False,
                help="a scheduled run's admitted occurrence ($FACTORY_OCCURRENCE): one claim per occurrence"),
         Option("ttl", float, required=False, low=MIN_LOCK_TTL_SECONDS, high=MAX_SECONDS,
                help=f"the locks' TTL in seconds (default {DEFAULT_LEASE_TTL_SECONDS:g})"),
         Option("pid", int, required=False, low=1, high=MAX_PID,
                help="the run's pid, recorded on its locks (default: the caller's)"))
REPORT = (LANE, TASK, RUNNER, Option("report", required=False, help="the report JSON (default: read from stdin)"))
HEARTBEAT = (LANE, RUNNER)
ABANDON = (LANE, TASK, Option("runner", help="the dead run's token"), Option("confirmed_by"),
           Option("evidence", help="why the run is dead"),
           Option("partial", required=False, help="where the dead run's partial output is (a revision task keeps "
                                                  "the reference)"))
TOP_N = (Option("week", help="the ISO week, YYYY-Www"),
         Option("candidates", required=False, help="the ranked candidates JSON (default: read from stdin)"))
ESCALATION = (LANE, TASK, Option("decided_by"), Option("decision", help="revise (one more round) or park"),
              Option("reason"))
APPROVAL_REQUEST = (Option("approval", help="the approval's ID"), Option("candidate"), Option("action"),
                    Option("requested_by"), Option("reason"))
APPROVAL_DECIDE = (Option("approval"), Option("decided_by"), Option("approved", bool, help="on or off"))
APPROVAL_USE = (Option("approval"), Option("candidate"), Option("action"), RUNNER)
SHOW = (LANE,)


def _open_lanes(args: argparse.Namespace) -> Any:
    """The lanes over the existing journal `--journal` names, on the system clock."""
    from factory_schedule.core.pipeline import PipelineLanes
    from factory_schedule.tui.host.clock import SystemClock

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


def _claim(args: argparse.Namespace) -> int:
    from factory_schedule.tui.host.lane_locks import claim_with_locks

    v = gather(args, CLAIM)
    lane, runner = _lane_of(v), v["runner"]
    if v.get("run") is None and v.get("occurrence") is None:
        raise BadInput("--run: required without --occurrence (a scheduled run names its occurrence)")
    answer, held = claim_with_locks(_open_lanes(args), lane, runner, run=v.get("run"), occurrence=v.get("occurrence"),
                                    ttl=v.get("ttl", DEFAULT_LEASE_TTL_SECONDS), pid=v.get("pid"))
    if getattr(answer, "kind", "") == "idle":
        emit(answer)
        return EXIT_IDLE
    emit({**to_jsonable(answer), "leases": held})
    return EXIT_OK


def _report(args: argparse.Namespace) -> int:
    from factory_schedule.tui.host.lane_locks import report_and_release

    v = gather(args, REPORT)
    lane = _lane_of(v)
    report = _document(v.get("report"), "the report", "--report")  # read before the journal opens
    answer, released = report_and_release(_open_lanes(args), lane, v["task"], v["runner"], report)
    emit({**to_jsonable(answer), "leases": released})
    lost = [scope for scope, what in released.items() if what.startswith("held-by:")]
    return EXIT_NOT_LEASE_OWNER if lost else EXIT_OK


def _heartbeat(args: argparse.Namespace) -> int:
    from factory_schedule.core.pipeline import text
    from factory_schedule.core.pipeline.lock_scopes import task_scope_prefix, worker_scope
    from factory_schedule.store import leases
    from factory_schedule.tui.host.clock import SystemClock
    from factory_schedule.tui.host.lane_locks import resource_scopes

    v = gather(args, HEARTBEAT)
    lane, runner = _lane_of(v), text("runner", v["runner"])
    lanes = _open_lanes(args)
    now = SystemClock().now()
    scopes = [worker_scope(lane), *resource_scopes(lanes, lane)]
    scopes += [lease.scope for lease in leases.list_leases(lanes.journal)
               if lease.scope.startswith(task_scope_prefix(lane)) and lease.owner == runner]
    emit({"leases": [leases.heartbeat(lanes.journal, scope, runner, now) for scope in scopes]})
    return EXIT_OK


def _abandon(args: argparse.Namespace) -> int:
    """A dead run's task back to pending: refused while its task lock is inside its recovery window (2 x TTL
    without a heartbeat), then its locks are removed, each only if still stale."""
    from factory_schedule.core.pipeline.lock_scopes import task_scope, worker_scope
    from factory_schedule.store import leases
    from factory_schedule.tui.host.clock import SystemClock
    from factory_schedule.tui.host.lane_locks import resource_scopes

    v = gather(args, ABANDON)
    lane, runner = _lane_of(v), v["runner"]
    lanes = _open_lanes(args)
    journal = lanes.journal
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


def _owner_decision(options: Sequence[Option], act: Callable[[Any, dict[str, Any], Any], Any]
                    ) -> Callable[[argparse.Namespace], int]:
    """An owner decision's handler: its input checked first, then signed with the owner key when the journal
    holds one (the passphrase from the terminal or --passphrase-fd)."""
    from factory_schedule.tui.cli.owner_signing import owner_signer

    def handler(args: argparse.Namespace) -> int:
        values = gather(args, options)
        lanes = _open_lanes(args)
        emit(act(lanes, values, owner_signer(lanes.journal, args)))
        return EXIT_OK

    return handler


def _top_n(args: argparse.Namespace) -> int:
    v = gather(args, TOP_N)
    candidates = _document(v.get("candidates"), "the candidates", "--candidates")  # before the journal opens
    emit(_open_lanes(args).record_top_n(week=v["week"], candidates=candidates))
    return EXIT_OK


def _on_lanes(options: Sequence[Option], act: Act) -> Callable[[argparse.Namespace], int]:
    """A handler that checks its input first, then opens the (existing) journal and acts on the lanes."""

    def handler(args: argparse.Namespace) -> int:
        values = gather(args, options)
        emit(act(_open_lanes(args), values))
        return EXIT_OK

    return handler


def _escalation(lanes: Any, v: dict[str, Any], signer: Any) -> Any:
    return lanes.decide_escalation(lane=v["lane"], task=v["task"], decided_by=v["decided_by"],
                                   decision=v["decision"], reason=v["reason"], signer=signer)


def _approval_request(lanes: Any, v: dict[str, Any]) -> Any:
    return lanes.request_approval(approval=v["approval"], candidate=v["candidate"], action=v["action"],
                                  requested_by=v["requested_by"], reason=v["reason"])


def _approval_decide(lanes: Any, v: dict[str, Any], signer: Any) -> Any:
    return lanes.decide_approval(approval=v["approval"], decided_by=v["decided_by"], approved=v["approved"],
                                 signer=signer)


def _approval_use(args: argparse.Namespace) -> int:
    """Exit 0 with `"licensed": true` for the use that licenses the action; a replay of it exits 12 with
    `"licensed": false`, so a retried run can tell that the action was already licensed once."""
    v = gather(args, APPROVAL_USE)
    used = _open_lanes(args).record_external_action(approval=v["approval"], candidate=v["candidate"],
                                                    action=v["action"], runner=v["runner"])
    emit(used)
    return EXIT_OK if used.licensed else EXIT_REPLAY_NOT_LICENSED


def _show(lanes: Any, v: dict[str, Any]) -> Any:
    return {"lane": lanes.lane_view(v["lane"])}


# -- registration ------------------------------------------------------------------------


def register(subcommands: Any) -> None:
    lanes = subcommands.add_parser("lanes", help="the staged promotion and maturation lanes (runner interface)")
    commands = lanes.add_subparsers(dest="lanes_command", metavar="COMMAND", required=True)
    add_command(commands, "top-n", "record a week's ranked Top-N (candidates JSON on stdin or --candidates)", TOP_N,
             _top_n, stdin=False)
    add_command(commands, "claim", "take the lane's locks and claim its next task (50: none; 4: held)", CLAIM, _claim)
    add_command(commands, "report", "report a claimed task (report JSON on stdin or --report); releases the run's "
                                 "locks", REPORT, _report, stdin=False)
    add_command(commands, "heartbeat", "extend every lock this run holds on the lane", HEARTBEAT, _heartbeat)
    add_command(commands, "abandon", "a supervisor confirms a dead run gone once its locks are stale: its task back "
                "to pending, or a revision's failed start (requeued within the repair cap, else escalated)",
                ABANDON, _abandon)
    owner_decisions: tuple[tuple[str, str, Sequence[Option], Callable[[Any, dict[str, Any], Any], Any]], ...] = (
        ("escalation", "the owner answers an escalation: revise (one more round) or park", ESCALATION,
         _escalation),
        ("approval-decide", "the owner's approval record (--approved on) or refusal (--approved off)",
         APPROVAL_DECIDE, _approval_decide),
    )
    for name, text, options, decide in owner_decisions:
        add_passphrase_option(add_command(commands, name, text, options, _owner_decision(options, decide)))
    for name, text, shown, act in (
        ("approval-request", "ask the owner to approve one external action on a candidate", APPROVAL_REQUEST,
         _approval_request),
        ("show", "a lane's state: WIP, tasks, counters, history, cooldown, contracts", SHOW, _show),
    ):
        add_command(commands, name, text, shown, _on_lanes(shown, act))
    add_command(commands, "approval-use", "record an approved external action before doing it: act only on "
                "licensed:true (12: a replay, licensed once already; 65: no approval)", APPROVAL_USE, _approval_use)
