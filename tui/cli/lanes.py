"""`factory-schedule lanes ...`: the staged promotion and maturation lanes' runner interface.

JSON in and out like the runner contract (`runner.py`): each command prints one JSON object and
exits with a code a shell can branch on. A run claims its lane's next task (`lanes claim`), does
one stage's work, and reports its artifact (`lanes report`); a reviewer run claims review tasks
and reports its review the same way; the owner answers escalations and approval requests.
Input the shell can check exits 2 before the journal is opened, so nothing is written.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
from collections.abc import Callable, Mapping
from typing import Any

from factory_schedule.store import JournalError, leases, open_journal
from factory_schedule.tui.cli.runner import (
    EXIT_BAD_INPUT,
    EXIT_JOURNAL,
    EXIT_LEASE_HELD,
    EXIT_NOT_LEASE_OWNER,
    EXIT_OK,
    EXIT_UNEXPECTED,
    BadInput,
    emit,
    emit_error,
    gather,
    journal_url_of,
    parse_bool,
    read_stdin_json,
    to_jsonable,
)
from factory_schedule.tui.host.clock import SystemClock

EXIT_IDLE = 50  # a claim found nothing this run may take; nothing written
PIPELINE_EXIT_CODES: dict[str, int] = {
    "INVALID": EXIT_BAD_INPUT,
    "CORRUPT": 51,
    "CONFLICT": 52,
    "CONTENDED": 53,
    "LIMIT": 54,
    "NOT_CONFIGURED": 55,
    "REVISION": 56,
    "UNKNOWN_TASK": 57,
    "NOT_OWNER": 58,
    "WRONG_RUN": 59,
    "SELF_REVIEW": 60,
    "CONTRACT": 61,
    "CRITERIA_CHANGED": 62,
    "VERIFIER_REQUIRED": 63,
    "CAP_REACHED": 64,
    "APPROVAL_REQUIRED": 65,
    "STALE": 66,
}


def open_lanes(url: str) -> Any:
    from factory_schedule.core.pipeline import PipelineLanes

    return PipelineLanes(open_journal(url), SystemClock())


def _guarded(work: Callable[[], int]) -> int:
    from factory_schedule.core.pipeline import PipelineError

    try:
        return work()
    except BadInput as error:
        emit_error("INVALID", str(error))
        return EXIT_BAD_INPUT
    except PipelineError as error:
        emit_error(error.code, error.message)
        return PIPELINE_EXIT_CODES.get(error.code, EXIT_UNEXPECTED)
    except leases.LeaseHeldError as error:
        emit_error("LEASE_HELD", str(error), holder=error.holder, age_seconds=error.age_seconds)
        return EXIT_LEASE_HELD
    except leases.LeaseOwnerError as error:
        emit_error("NOT_LEASE_OWNER", str(error), holder=error.holder)
        return EXIT_NOT_LEASE_OWNER
    except JournalError as error:
        emit_error("JOURNAL", str(error))
        return EXIT_JOURNAL


# -- the seed's three lock scopes, on the journal's leases ---------------------------------------------
#
# A worker singleton per lane (`pipeline/<lane>/worker`) is taken before the claim selects a task and
# held until the run's report; each exclusive resource the commission names for the lane
# (`resource/<name>`) likewise; the task lock (`pipeline/<lane>/task/<n>`) from the claim to the report.
# All are create-new, heartbeated by `lanes heartbeat`, stale only after 2 x TTL, released with an owner
# check by `lanes report`, and removed after a supervisor's `lanes abandon` only once stale.

DEFAULT_TTL_SECONDS = 60.0


def worker_scope(lane: str) -> str:
    return f"pipeline/{lane}/worker"


def task_scope(lane: str, task: int) -> str:
    return f"pipeline/{lane}/task/{task}"


def resource_scopes(lanes: Any, lane: str) -> list[str]:
    state = lanes.state()
    return [f"resource/{name}" for name in state.settings.resources(lane)] if state is not None else []


def _take(journal: Any, scope: str, runner: str, ttl: float, info: dict[str, Any]) -> None:
    """Take `scope` for `runner`; a lease the same runner already holds (a retried claim) is heartbeated."""
    now = SystemClock().now()
    try:
        leases.acquire(journal, scope, runner, ttl, now, {**info, "scope": scope})
    except leases.LeaseHeldError as error:
        if error.holder.owner != runner:
            raise
        leases.heartbeat(journal, scope, runner, now)


def _release_own(journal: Any, scopes: list[str], runner: str) -> dict[str, str]:
    """Release each scope the runner holds, checked; what happened to each."""
    released: dict[str, str] = {}
    for scope in scopes:
        holder = leases.get_lease(journal, scope)
        if holder is None:
            released[scope] = "not-held"
        elif holder.owner != runner:
            released[scope] = f"held-by:{holder.owner}"
        else:
            leases.release(journal, scope, runner)
            released[scope] = "released"
    return released


def _claim(args: argparse.Namespace) -> int:
    def work() -> int:
        v = gather(args, {"lane": str, "run": str, "runner": str, "ttl": float, "pid": int},
                   {"lane", "run", "runner"})
        if v["lane"] not in ("promotion", "maturation"):
            raise BadInput(f"--lane: promotion or maturation, got {v['lane']!r}")
        ttl = float(v.get("ttl", DEFAULT_TTL_SECONDS))
        if not 0 < ttl <= 86_400:
            raise BadInput("--ttl: seconds above 0, at most a day")
        lanes = open_lanes(journal_url_of(args))
        journal = lanes.journal
        info = {"runner": v["runner"], "run": v["run"], "lane": v["lane"], "pid": v.get("pid", os.getppid()),
                "host": socket.gethostname(), "command": "lanes claim"}
        held: list[str] = []
        try:
            for scope in [worker_scope(v["lane"]), *resource_scopes(lanes, v["lane"])]:
                _take(journal, scope, v["runner"], ttl, info)
                held.append(scope)
            answer = lanes.claim(lane=v["lane"], run=v["run"], runner=v["runner"])
            if getattr(answer, "kind", "") == "idle":
                _release_own(journal, held, v["runner"])
                emit(answer)
                return EXIT_IDLE
            task = task_scope(v["lane"], answer.result["task"])
            _take(journal, task, v["runner"], ttl, {**info, "task": answer.result["task"]})
            held.append(task)
        except BaseException:
            _release_own(journal, held, v["runner"])
            raise
        emit({**to_jsonable(answer), "leases": held})
        return EXIT_OK

    return _guarded(work)


def _report(args: argparse.Namespace) -> int:
    def work() -> int:
        v = gather(args, REPORT_FIELDS, {"lane", "task", "runner"})
        lanes = open_lanes(journal_url_of(args))
        answer = lanes.report(lane=v["lane"], task=v["task"], runner=v["runner"],
                              report=_json_argument(v.get("report"), "the report"))
        scopes = [task_scope(v["lane"], v["task"]), *resource_scopes(lanes, v["lane"]), worker_scope(v["lane"])]
        released = _release_own(lanes.journal, scopes, v["runner"])
        emit({**to_jsonable(answer), "leases": released})
        lost = [scope for scope, what in released.items() if what.startswith("held-by:")]
        return EXIT_NOT_LEASE_OWNER if lost else EXIT_OK

    return _guarded(work)


def _heartbeat(args: argparse.Namespace) -> int:
    def work() -> int:
        v = gather(args, {"lane": str, "runner": str}, {"lane", "runner"})
        lanes = open_lanes(journal_url_of(args))
        now = SystemClock().now()
        scopes = [worker_scope(v["lane"]), *resource_scopes(lanes, v["lane"])]
        scopes += [lease.scope for lease in leases.list_leases(lanes.journal)
                   if lease.scope.startswith(f"pipeline/{v['lane']}/task/") and lease.owner == v["runner"]]
        beaten = [leases.heartbeat(lanes.journal, scope, v["runner"], now) for scope in scopes]
        emit({"leases": beaten})
        return EXIT_OK

    return _guarded(work)


def _abandon(args: argparse.Namespace) -> int:
    """A dead run's task back to pending: refused while its task lock is inside its recovery window (2 x TTL
    without a heartbeat), then its locks are removed, each only if still stale."""

    def work() -> int:
        fields = {"lane": str, "task": int, "runner": str, "confirmed_by": str, "evidence": str}
        v = gather(args, fields, set(fields))
        lanes = open_lanes(journal_url_of(args))
        journal = lanes.journal
        now = SystemClock().now()
        scopes = [task_scope(v["lane"], v["task"]), *resource_scopes(lanes, v["lane"]), worker_scope(v["lane"])]
        for scope in scopes:
            holder = leases.get_lease(journal, scope)
            if holder is not None and holder.owner == v["runner"] and not leases.stale(holder, now):
                raise leases.LeaseHeldError(holder, now)
        answer = lanes.abandon(lane=v["lane"], task=v["task"], runner=v["runner"],
                               confirmed_by=v["confirmed_by"], evidence=v["evidence"])
        removed = {}
        for scope in scopes:
            holder = leases.get_lease(journal, scope)
            if holder is not None and holder.owner == v["runner"]:
                removed[scope] = "removed" if leases.remove_stale(journal, scope, now) else "kept"
        emit({**to_jsonable(answer), "leases": removed})
        return EXIT_OK

    return _guarded(work)


def _json_argument(value: Any, what: str) -> Any:
    """A JSON document given as a flag's text, or (when absent) on stdin."""
    if value is None:
        return read_stdin_json(what)
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError as error:
            raise BadInput(f"{what} is not JSON: {error}") from None
    return value


def _command(fields: Mapping[str, type], required: set[str],
             act: Callable[[Any, dict[str, Any]], Any]) -> Callable[[argparse.Namespace], int]:
    def handler(args: argparse.Namespace) -> int:
        def work() -> int:
            values = gather(args, fields, required)
            answer = act(open_lanes(journal_url_of(args)), values)
            emit(answer)
            return EXIT_IDLE if getattr(answer, "kind", "") == "idle" else EXIT_OK

        return _guarded(work)

    return handler


def _settings(args: argparse.Namespace) -> int:
    def work() -> int:
        try:
            text = open(args.file, encoding="utf-8").read() if args.file != "-" else read_stdin_raw()  # noqa: SIM115
        except OSError as error:
            raise BadInput(f"cannot read {args.file}: {error.strerror}") from None
        try:
            commission = json.loads(text)
        except ValueError as error:
            raise BadInput(f"{args.file} is not JSON: {error}") from None
        emit(open_lanes(journal_url_of(args)).record_settings(commission))
        return EXIT_OK

    return _guarded(work)


def read_stdin_raw() -> str:
    import sys

    return sys.stdin.read()


def _decide_approval(lanes: Any, v: dict[str, Any]) -> Any:
    approved = v["approved"]
    if isinstance(approved, str):
        try:
            approved = parse_bool(approved)
        except argparse.ArgumentTypeError as error:
            raise BadInput(f"--approved: {error}") from None
    return lanes.decide_approval(approval=v["approval"], decided_by=v["decided_by"], approved=approved)


def _show(lanes: Any, v: dict[str, Any]) -> Any:
    view = lanes.lane_view(v["lane"])
    return {"lane": view}


REPORT_FIELDS = {"lane": str, "task": int, "runner": str, "report": object}
SUBCOMMANDS: list[tuple[str, str, dict[str, type], set[str], Callable[[Any, dict[str, Any]], Any]]] = [
    ("top-n", "record a week's ranked Top-N (candidates JSON on stdin or --candidates)",
     {"week": str, "candidates": object}, {"week"},
     lambda lanes, v: lanes.record_top_n(week=v["week"],
                                         candidates=_json_argument(v.get("candidates"), "the candidates"))),
    ("escalation", "the owner answers an escalation: revise (one more round) or park",
     {"lane": str, "task": int, "decided_by": str, "decision": str, "reason": str},
     {"lane", "task", "decided_by", "decision", "reason"},
     lambda lanes, v: lanes.decide_escalation(lane=v["lane"], task=v["task"], decided_by=v["decided_by"],
                                              decision=v["decision"], reason=v["reason"])),
    ("approval-request", "ask the owner to approve one external action on a candidate",
     {"approval": str, "candidate": str, "action": str, "requested_by": str, "reason": str},
     {"approval", "candidate", "action", "requested_by", "reason"},
     lambda lanes, v: lanes.request_approval(approval=v["approval"], candidate=v["candidate"], action=v["action"],
                                             requested_by=v["requested_by"], reason=v["reason"])),
    ("approval-decide", "the owner's approval record (--approved on) or refusal (--approved off)",
     {"approval": str, "decided_by": str, "approved": object}, {"approval", "decided_by", "approved"},
     _decide_approval),
    ("approval-use", "record an approved external action before doing it (exit 65 without approval)",
     {"approval": str, "candidate": str, "action": str, "runner": str},
     {"approval", "candidate", "action", "runner"},
     lambda lanes, v: lanes.record_external_action(approval=v["approval"], candidate=v["candidate"],
                                                   action=v["action"], runner=v["runner"])),
    ("show", "a lane's state: WIP, tasks, counters, history, cooldown, contracts",
     {"lane": str}, {"lane"}, _show),
]


def register(subcommands: Any) -> None:
    lanes = subcommands.add_parser("lanes", help="the staged promotion and maturation lanes (runner interface)")
    commands = lanes.add_subparsers(dest="lanes_command", metavar="COMMAND", required=True)
    settings = commands.add_parser("settings", help="adopt a commission revision's pipeline settings")
    settings.add_argument("file", help="the commission JSON file ('-' for stdin)")
    settings.set_defaults(handler=_settings)
    claim = commands.add_parser("claim", help="take the lane's locks and claim its next task (50: none; 4: held)")
    report = commands.add_parser("report", help="report a claimed task (report JSON on stdin or --report); "
                                                "releases the run's locks")
    heartbeat = commands.add_parser("heartbeat", help="extend every lock this run holds on the lane")
    abandon = commands.add_parser("abandon", help="a supervisor returns a dead run's task to pending, once its "
                                                  "locks are stale")
    for parser, fields, handler in (
        (claim, ("lane", "run", "runner", "ttl", "pid"), _claim),
        (report, ("lane", "task", "runner", "report"), _report),
        (heartbeat, ("lane", "runner"), _heartbeat),
        (abandon, ("lane", "task", "runner", "confirmed_by", "evidence"), _abandon),
    ):
        for field in fields:
            kind = {"task": int, "pid": int, "ttl": float}.get(field)
            parser.add_argument(f"--{field.replace('_', '-')}", dest=field, type=kind)
        parser.add_argument("--stdin", action="store_true", help="read the arguments as a JSON object on stdin")
        parser.set_defaults(handler=handler)
    for name, text, fields, required, act in SUBCOMMANDS:
        parser = commands.add_parser(name, help=text)
        for field in fields:
            parser.add_argument(f"--{field.replace('_', '-')}", dest=field,
                                type=int if fields[field] is int else None)
        parser.add_argument("--stdin", action="store_true", help="read the arguments as a JSON object on stdin")
        parser.set_defaults(handler=_command(fields, required, act))
