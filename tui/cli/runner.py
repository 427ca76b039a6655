"""The runner's command line: every schedule method as a subcommand, JSON in and JSON out.

A runner written in any language follows the schedule's contract through these
commands: `call admit` before each provider contact, dispatch only on
`"dispatch": true`, `call end` with the report after, `defer` on a limit or a
sign-in failure, `settle` at the end. Each prints exactly one JSON object on
stdout and exits with a code a shell can branch on (the `EXIT_*` constants, `REFUSAL_EXIT_CODES`
and `ERROR_EXIT_CODES` below).

Arguments come from flags, or from a JSON object on stdin with `--stdin` (keys
are the flag names, with `-` or `_`); a flag wins over the same key on stdin.
Input this shell can check (a missing field, a number that is not one, JSON that
does not parse) exits 2 before the journal is opened, so nothing is written.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import enum
import json
import sys
from collections.abc import Callable, Mapping
from typing import Any

from factory_schedule.store import Journal, JournalError, leases, open_journal
from factory_schedule.tui.host.clock import SystemClock
from factory_schedule.tui.host.paths import default_journal_url

# -- exit codes --------------------------------------------------------------------------

EXIT_OK = 0
EXIT_UNEXPECTED = 1
EXIT_BAD_INPUT = 2
EXIT_JOURNAL = 3
EXIT_LEASE_HELD = 4
EXIT_NOT_LEASE_OWNER = 5
EXIT_REPLAY_NO_DISPATCH = 10

REFUSAL_EXIT_CODES: dict[str, int] = {
    "limited": 20,
    "call-open": 21,
    "deadline": 22,
    "call-bound": 23,
    "unknown-effect": 24,
    "duplicate-work": 25,
    "sign-in-needed": 26,
    "overage-unverified": 27,
    "budget-exhausted": 28,
}
EXIT_REFUSED_OTHER = 29

ERROR_EXIT_CODES: dict[str, int] = {
    "INVALID": EXIT_BAD_INPUT,
    "CORRUPT": 31,
    "CONFLICT": 32,
    "CONTENDED": 33,
    "LIMIT": 34,
    "NOT_COMMISSIONED": 35,
    "REVISION": 36,
    "NOT_A_LANE": 37,
    "UNKNOWN_OCCURRENCE": 38,
    "UNKNOWN_CALL": 39,
    "NOT_RUNNING": 40,
    "NOT_OWNER": 41,
    "CALL_OPEN": 42,
    "SETTLED": 43,
    "STALE": 44,
    "RULE": 45,
}


class BadInput(Exception):
    """Input the shell refuses before it opens the journal."""


# -- output ------------------------------------------------------------------------------


def to_jsonable(value: Any) -> Any:
    """Results as JSON: dataclasses and models become objects, instants ISO 8601 strings."""
    if isinstance(value, _dt.datetime):
        return value.isoformat()
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if hasattr(value, "model_dump"):
        return to_jsonable(value.model_dump(mode="json"))
    if isinstance(value, Mapping):
        return {str(key): to_jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(item) for item in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def emit(document: Any) -> None:
    print(json.dumps(to_jsonable(document), sort_keys=True), flush=True)


def emit_error(code: str, message: str, **extra: Any) -> None:
    emit({"error": code, "message": message, **extra})


# -- input -------------------------------------------------------------------------------


def read_stdin_json(what: str) -> Any:
    text = sys.stdin.read()
    if not text.strip():
        raise BadInput(f"expected {what} as JSON on stdin, got nothing")
    try:
        return json.loads(text)
    except ValueError as error:
        raise BadInput(f"{what} on stdin is not JSON: {error}") from None


def gather(args: argparse.Namespace, fields: Mapping[str, type], required: set[str]) -> dict[str, Any]:
    """The command's fields from its flags, falling back to `--stdin`'s JSON object."""
    from_stdin: dict[str, Any] = {}
    if getattr(args, "stdin", False):
        document = read_stdin_json("the arguments")
        if not isinstance(document, dict):
            raise BadInput("the arguments on stdin must be a JSON object")
        from_stdin = {str(key).replace("-", "_"): item for key, item in document.items()}
        unknown = set(from_stdin) - set(fields)
        if unknown:
            raise BadInput(f"unknown argument(s) on stdin: {', '.join(sorted(unknown))}")
    values: dict[str, Any] = {}
    for name, kind in fields.items():
        value = getattr(args, name, None)
        if value is None:
            value = from_stdin.get(name)
        if value is None:
            if name in required:
                raise BadInput(f"missing --{name.replace('_', '-')}")
            continue
        if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            raise BadInput(f"--{name.replace('_', '-')} must be an integer, got {value!r}")
        if kind is str and not isinstance(value, str):
            raise BadInput(f"--{name.replace('_', '-')} must be a string, got {value!r}")
        values[name] = value
    return values


def parse_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("on", "true", "yes", "1"):
        return True
    if lowered in ("off", "false", "no", "0"):
        return False
    raise argparse.ArgumentTypeError(f"expected on/off, got {text!r}")


# -- running a command -------------------------------------------------------------------


def journal_url_of(args: argparse.Namespace) -> str:
    return getattr(args, "journal", None) or default_journal_url()


def open_schedule(url: str, clock: Any = None, journal: Journal | None = None) -> Any:
    """The schedule over `journal`, or over a journal opened from `url` when none is given.

    A command that also uses the journal itself (the tick and its keeper take leases on it,
    health reads its chain and leases) opens it once and passes it in, so the schedule and
    the leases share one pool of connections; every open also checks the schema in a
    write transaction.
    """
    from factory_schedule.core import LifecycleSchedule

    return LifecycleSchedule(journal if journal is not None else open_journal(url), clock or SystemClock())


def run_guarded(work: Callable[[], int]) -> int:
    """Run `work`, turning every expected failure into one JSON error line and its exit code."""
    from factory_schedule.core import ScheduleError

    try:
        return work()
    except BadInput as error:
        emit_error("INVALID", str(error))
        return EXIT_BAD_INPUT
    except ScheduleError as error:
        emit_error(error.code, error.message)
        return ERROR_EXIT_CODES.get(error.code, EXIT_UNEXPECTED)
    except leases.LeaseHeldError as error:
        emit_error("LEASE_HELD", str(error), holder=error.holder, age_seconds=error.age_seconds)
        return EXIT_LEASE_HELD
    except leases.LeaseOwnerError as error:
        emit_error("NOT_LEASE_OWNER", str(error), holder=error.holder)
        return EXIT_NOT_LEASE_OWNER
    except JournalError as error:
        emit_error("JOURNAL", str(error))
        return EXIT_JOURNAL


def _schedule_command(
    fields: Mapping[str, type], required: set[str], act: Callable[[Any, dict[str, Any], argparse.Namespace], int]
) -> Callable[[argparse.Namespace], int]:
    def handler(args: argparse.Namespace) -> int:
        def work() -> int:
            values = gather(args, fields, required)
            return act(open_schedule(journal_url_of(args)), values, args)

        return run_guarded(work)

    return handler


def _done(result: Any) -> int:
    emit(result)
    return EXIT_OK


# -- the subcommands ---------------------------------------------------------------------

ADMIT_FIELDS = {
    "occurrence": str, "runner": str, "task": str, "work": str, "bound": int, "sign_in": str, "attempt": int,
}


def admission_exit_code(result: Any) -> int:
    if getattr(result, "admitted", False):
        return EXIT_OK if result.dispatch else EXIT_REPLAY_NO_DISPATCH
    return REFUSAL_EXIT_CODES.get(getattr(result, "reason", ""), EXIT_REFUSED_OTHER)


def _admit(schedule: Any, v: dict[str, Any], _args: argparse.Namespace) -> int:
    result = schedule.admit_call(
        occurrence_id=v["occurrence"],
        runner=v["runner"],
        task=v["task"],
        work=v["work"],
        bound=v["bound"],
        sign_in=v["sign_in"],
        attempt=v.get("attempt", 1),
    )
    emit(result)
    return admission_exit_code(result)


def _end(schedule: Any, v: dict[str, Any], args: argparse.Namespace) -> int:
    report = v.get("report")
    if report is None:
        report = read_stdin_json("the call's report")
    elif isinstance(report, str):
        try:
            report = json.loads(report)
        except ValueError as error:
            raise BadInput(f"--report is not JSON: {error}") from None
    if not isinstance(report, dict):
        raise BadInput("a report is a JSON object")
    return _done(schedule.end_call(occurrence_id=v["occurrence"], runner=v["runner"], call=v["call"], report=report))


def _defer(schedule: Any, v: dict[str, Any], _args: argparse.Namespace) -> int:
    return _done(
        schedule.defer(
            occurrence_id=v["occurrence"],
            runner=v["runner"],
            reason=v["reason"],
            bound=v.get("bound"),
            segment=v.get("segment"),
        )
    )


def _settle(schedule: Any, v: dict[str, Any], _args: argparse.Namespace) -> int:
    return _done(
        schedule.settle(
            occurrence_id=v["occurrence"], settled_by=v["settled_by"], status=v["status"], reason=v["reason"]
        )
    )


def _reconcile(schedule: Any, v: dict[str, Any], args: argparse.Namespace) -> int:
    if {"runner", "confirmed_by", "evidence"} <= set(v):
        confirmation = {"runner": v["runner"], "confirmedBy": v["confirmed_by"], "evidence": v["evidence"]}
    elif not set(v) & {"runner", "confirmed_by", "evidence"}:
        confirmation = read_stdin_json("the confirmation")
    else:
        raise BadInput("give --runner, --confirmed-by and --evidence together, or the confirmation JSON on stdin")
    if not isinstance(confirmation, dict):
        raise BadInput("a confirmation is a JSON object")
    return _done(schedule.reconcile(occurrence_id=v["occurrence"], confirmation=confirmation))


def _record_account(schedule: Any, v: dict[str, Any], args: argparse.Namespace) -> int:
    overage = v["overage"]
    if isinstance(overage, str):
        try:
            overage = parse_bool(overage)
        except argparse.ArgumentTypeError as error:
            raise BadInput(f"--overage: {error}") from None
    return _done(
        schedule.record_account(
            account=v["account"],
            sequence=v["sequence"],
            sign_in=v["sign_in"],
            overage=overage,
            recorded_by=v["recorded_by"],
        )
    )


def _read_commission_file(path: str) -> Any:
    try:
        text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()  # noqa: SIM115
    except OSError as error:
        raise BadInput(f"cannot read {path}: {error.strerror}") from None
    try:
        return json.loads(text)
    except ValueError as error:
        raise BadInput(f"{path} is not JSON: {error}") from None


def _record_commission(args: argparse.Namespace) -> int:
    def work() -> int:
        commission = _read_commission_file(args.file)
        return _done(open_schedule(journal_url_of(args)).record_commission(commission))

    return run_guarded(work)


def _start(schedule: Any, v: dict[str, Any], _args: argparse.Namespace) -> int:
    return _done(schedule.start(lane=v["lane"], runner=v["runner"]))


def _status(args: argparse.Namespace) -> int:
    return run_guarded(lambda: _done(open_schedule(journal_url_of(args)).status(args.occurrence_id)))


def _plan(args: argparse.Namespace) -> int:
    return run_guarded(lambda: _done({"plan": open_schedule(journal_url_of(args)).plan()}))


def _show(args: argparse.Namespace) -> int:
    return run_guarded(lambda: _done({"schedule": open_schedule(journal_url_of(args)).read()}))


def _lease_list(args: argparse.Namespace) -> int:
    def work() -> int:
        journal = open_journal(journal_url_of(args))
        now = SystemClock().now()
        return _done(
            {
                "leases": [
                    {**to_jsonable(lease), "stale": leases.stale(lease, now), "stale_at": lease.stale_at}
                    for lease in leases.list_leases(journal)
                ]
            }
        )

    return run_guarded(work)


def _lease_heartbeat(args: argparse.Namespace) -> int:
    def work() -> int:
        journal = open_journal(journal_url_of(args))
        return _done({"lease": leases.heartbeat(journal, args.scope, args.owner, SystemClock().now())})

    return run_guarded(work)


def _lease_release(args: argparse.Namespace) -> int:
    def work() -> int:
        leases.release(open_journal(journal_url_of(args)), args.scope, args.owner)
        return _done({"released": args.scope, "owner": args.owner})

    return run_guarded(work)


# -- registration ------------------------------------------------------------------------


def _add_stdin(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stdin", action="store_true", help="read the arguments as a JSON object on stdin")


def register(subcommands: Any) -> None:
    call = subcommands.add_parser("call", help="admit or end one provider call (runner contract)")
    call_commands = call.add_subparsers(dest="call_command", metavar="admit|end", required=True)

    admit = call_commands.add_parser("admit", help="ask before contacting the provider; dispatch only on dispatch:true")
    admit.add_argument("--occurrence")
    admit.add_argument("--runner")
    admit.add_argument("--task")
    admit.add_argument("--work", help="the work key (one unit of work of the task)")
    admit.add_argument("--bound", type=int, help="the call's token bound")
    admit.add_argument("--sign-in", dest="sign_in", help="the sign-in identity the runner observes")
    admit.add_argument("--attempt", type=int, help="re-send refused work under the same runner with the next attempt")
    _add_stdin(admit)
    admit.set_defaults(handler=_schedule_command(ADMIT_FIELDS, set(ADMIT_FIELDS) - {"attempt"}, _admit))

    end = call_commands.add_parser("end", help="report a call's outcome (the report JSON on stdin or --report)")
    end.add_argument("--occurrence")
    end.add_argument("--runner")
    end.add_argument("--call", type=int)
    end.add_argument("--report", help="the report JSON (default: read from stdin)")
    end.set_defaults(
        handler=_schedule_command(
            {"occurrence": str, "runner": str, "call": int, "report": str}, {"occurrence", "runner", "call"}, _end
        )
    )

    defer = subcommands.add_parser("defer", help="defer the running segment (usage-limit, sign-in-needed, ...)")
    defer.add_argument("--occurrence")
    defer.add_argument("--runner")
    defer.add_argument(
        "--reason", help="usage-limit, budget-exhausted, sign-in-needed, volume-unmounted or logged-out"
    )
    defer.add_argument("--bound", type=int, help="the bound that did not fit (budget-exhausted only)")
    defer.add_argument("--segment", type=int)
    _add_stdin(defer)
    defer_fields = {"occurrence": str, "runner": str, "reason": str, "bound": int, "segment": int}
    defer.set_defaults(handler=_schedule_command(defer_fields, {"occurrence", "runner", "reason"}, _defer))

    settle = subcommands.add_parser("settle", help="settle an occurrence once")
    settle.add_argument("--occurrence")
    settle.add_argument("--settled-by", dest="settled_by")
    settle.add_argument("--status", help="completed, partial, deferred or unavailable")
    settle.add_argument("--reason", help="a short text for the record (at most 200 characters)")
    _add_stdin(settle)
    settle_fields = {"occurrence": str, "settled_by": str, "status": str, "reason": str}
    settle.set_defaults(handler=_schedule_command(settle_fields, set(settle_fields), _settle))

    reconcile = subcommands.add_parser(
        "reconcile", help="confirm a dead runner (flags, or the confirmation JSON on stdin); ends its call as lost"
    )
    reconcile.add_argument("--occurrence")
    reconcile.add_argument("--runner", help="the dead runner's token")
    reconcile.add_argument("--confirmed-by", dest="confirmed_by")
    reconcile.add_argument("--evidence", help="why it is dead")
    reconcile_fields = {"occurrence": str, "runner": str, "confirmed_by": str, "evidence": str}
    reconcile.set_defaults(handler=_schedule_command(reconcile_fields, {"occurrence"}, _reconcile))

    account = subcommands.add_parser("record-account", help="the owner's next record of an account")
    account.add_argument("--account", help="claude or chatgpt")
    account.add_argument("--sequence", type=int)
    account.add_argument("--sign-in", dest="sign_in")
    account.add_argument("--overage", help="on or off (admission needs off)")
    account.add_argument("--recorded-by", dest="recorded_by")
    _add_stdin(account)
    account_fields = {"account": str, "sequence": int, "sign_in": str, "overage": object, "recorded_by": str}
    account.set_defaults(handler=_schedule_command(account_fields, set(account_fields), _record_account))

    commission = subcommands.add_parser("record-commission", help="record the next commission revision")
    commission.add_argument("file", help="the commission JSON file ('-' for stdin)")
    commission.set_defaults(handler=_record_commission)

    start = subcommands.add_parser("start", help="one tick of one lane (prefer `tick`, which also holds leases)")
    start.add_argument("--lane")
    start.add_argument("--runner")
    _add_stdin(start)
    start.set_defaults(handler=_schedule_command({"lane": str, "runner": str}, {"lane", "runner"}, _start))

    status = subcommands.add_parser("status", help="an occurrence's state and status")
    status.add_argument("occurrence_id")
    status.set_defaults(handler=_status)

    plan = subcommands.add_parser("plan", help="what each lane will do next, and when")
    plan.set_defaults(handler=_plan)

    show = subcommands.add_parser("show", help="the whole schedule view as JSON")
    show.set_defaults(handler=_show)

    lease = subcommands.add_parser("lease", help="list, heartbeat or release leases")
    lease_commands = lease.add_subparsers(dest="lease_command", metavar="list|heartbeat|release", required=True)
    lease_commands.add_parser("list", help="every lease, with staleness").set_defaults(handler=_lease_list)
    for name, handler, text in (
        ("heartbeat", _lease_heartbeat, "extend your own lease"),
        ("release", _lease_release, "release your own lease (exit 5 when you do not hold it)"),
    ):
        sub = lease_commands.add_parser(name, help=text)
        sub.add_argument("--scope", required=True)
        sub.add_argument("--owner", required=True)
        sub.set_defaults(handler=handler)
