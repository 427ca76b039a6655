"""The runner's command line: every schedule method as a subcommand, JSON in and JSON out.

A runner written in any language follows the schedule's contract through these
commands: `call admit` before each provider contact, dispatch only on
`"dispatch": true`, `call end` with the report after, `defer` on a limit or a
sign-in failure, `settle` at the end. Each prints exactly one JSON object on
stdout and exits with a code a shell can branch on (tui/cli/output.py).

Arguments come from flags, or from a JSON object on stdin with `--stdin` (keys
are the flag names, with `-` or `_`); a flag wins over the same key on stdin.
Each command's fields are declared once, as `Option`s. Input this shell can check
(a missing field, a number that is not one, JSON that does not parse or nests too
deep, text that is not UTF-8) exits 2 before the journal is opened, so nothing is
written.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from factory_schedule.tui.cli.journal import (
    journal_url_of,
    missing_journal,
    open_existing,
    open_or_create,
    schedule_over,
)
from factory_schedule.tui.cli.options import (
    Option,
    add_command,
    gather,
    parse_json,
    read_commission_file,
    read_stdin_json,
)
from factory_schedule.tui.cli.output import (
    EXIT_OK,
    EXIT_REFUSED_OTHER,
    EXIT_REPLAY_NO_DISPATCH,
    EXIT_REPLAY_STILL_RUNNING,
    REFUSAL_EXIT_CODES,
    BadInput,
    emit,
    to_jsonable,
)
from factory_schedule.tui.cli.owner_signing import add_passphrase_option

if TYPE_CHECKING:
    from factory_schedule.core import CallAdmission, CallRefusal, LifecycleSchedule

Act = Callable[["LifecycleSchedule", dict[str, Any]], int]

OCCURRENCE = Option("occurrence", help="the occurrence ID")
RUNNER = Option("runner", help="your runner token (FACTORY_RUNNER)")

ADMIT = (
    OCCURRENCE, RUNNER, Option("task"),
    Option("work", help="the work key (one unit of work of the task)"),
    Option("bound", int, help="the call's token bound"),
    Option("sign_in", help="the sign-in identity the runner observes"),
    Option("attempt", int, required=False, help="re-send refused work under the same runner with the next attempt"),
)
END = (OCCURRENCE, RUNNER, Option("call", int),
       Option("report", required=False, help="the report JSON (default: read from stdin)"))
DEFER = (
    OCCURRENCE, RUNNER,
    Option("reason", help="usage-limit, budget-exhausted, sign-in-needed, volume-unmounted or logged-out"),
    Option("bound", int, required=False, help="the bound that did not fit (budget-exhausted only)"),
    Option("segment", int, required=False),
)
SETTLE = (
    OCCURRENCE, Option("settled_by"), Option("status", help="completed, partial, deferred or unavailable"),
    Option("reason", help="a short text for the record (at most 200 characters)"),
)
RECONCILE = (
    OCCURRENCE, Option("runner", required=False, help="the dead runner's token"),
    Option("confirmed_by", required=False), Option("evidence", required=False, help="why it is dead"),
)
RECORD_ACCOUNT = (
    Option("account", help="claude or chatgpt"), Option("sequence", int), Option("sign_in"),
    Option("overage", bool, help="on or off (admission needs off)"), Option("recorded_by"),
)
START = (Option("lane"), RUNNER)


def _on_schedule(options: Sequence[Option], act: Act) -> Callable[[argparse.Namespace], int]:
    """A handler that checks its input first, then opens the (existing) journal and acts on the schedule."""

    def handler(args: argparse.Namespace) -> int:
        values = gather(args, options)
        return act(schedule_over(open_existing(journal_url_of(args))), values)

    return handler


def _done(result: object) -> int:
    emit(result)
    return EXIT_OK


def admission_exit_code(result: CallAdmission | CallRefusal) -> int:
    if result.admitted:
        return EXIT_OK if result.dispatch else EXIT_REPLAY_NO_DISPATCH
    return REFUSAL_EXIT_CODES.get(result.reason, EXIT_REFUSED_OTHER)


def _admit(schedule: LifecycleSchedule, v: dict[str, Any]) -> int:
    result = schedule.admit_call(
        occurrence_id=v["occurrence"], runner=v["runner"], task=v["task"], work=v["work"], bound=v["bound"],
        sign_in=v["sign_in"], attempt=v.get("attempt", 1),
    )
    emit(result)
    return admission_exit_code(result)


def _report_of(v: dict[str, Any]) -> dict[str, Any]:
    report = v.get("report")
    report = read_stdin_json("the call's report") if report is None else parse_json(report, "--report")
    if not isinstance(report, dict):
        raise BadInput("a report is a JSON object")
    return report


def _end(args: argparse.Namespace) -> int:
    values = gather(args, END)
    report = _report_of(values)  # read before the journal opens: bad JSON writes nothing
    schedule = schedule_over(open_existing(journal_url_of(args)))
    return _done(schedule.end_call(occurrence_id=values["occurrence"], runner=values["runner"],
                                   call=values["call"], report=report))


def _defer(schedule: LifecycleSchedule, v: dict[str, Any]) -> int:
    result = schedule.defer(occurrence_id=v["occurrence"], runner=v["runner"], reason=v["reason"],
                            bound=v.get("bound"), segment=v.get("segment"))
    emit(result)
    return EXIT_OK if result.still_running is None else EXIT_REPLAY_STILL_RUNNING


def _settle(schedule: LifecycleSchedule, v: dict[str, Any]) -> int:
    return _done(schedule.settle(occurrence_id=v["occurrence"], settled_by=v["settled_by"], status=v["status"],
                                 reason=v["reason"]))


def _reconcile(args: argparse.Namespace) -> int:
    v = gather(args, RECONCILE)
    given = {"runner", "confirmed_by", "evidence"} & set(v)
    if len(given) == 3:
        confirmation: Any = {"runner": v["runner"], "confirmedBy": v["confirmed_by"], "evidence": v["evidence"]}
    elif not given:
        confirmation = read_stdin_json("the confirmation")
    else:
        raise BadInput("give --runner, --confirmed-by and --evidence together, or the confirmation JSON on stdin")
    if not isinstance(confirmation, dict):
        raise BadInput("a confirmation is a JSON object")
    schedule = schedule_over(open_existing(journal_url_of(args)))
    return _done(schedule.reconcile(occurrence_id=v["occurrence"], confirmation=confirmation))


def _record_account(args: argparse.Namespace) -> int:
    """The owner's account record, signed with the owner key when the journal holds one."""
    from factory_schedule.tui.cli.owner_signing import owner_signer

    v = gather(args, RECORD_ACCOUNT)
    schedule = schedule_over(open_existing(journal_url_of(args)))
    return _done(schedule.record_account(account=v["account"], sequence=v["sequence"], sign_in=v["sign_in"],
                                         overage=v["overage"], recorded_by=v["recorded_by"],
                                         signer=owner_signer(schedule.journal, args)))


def _record_commission(args: argparse.Namespace) -> int:
    """Record the next revision and adopt the `pipeline` settings it carries; the one runner command that may
    start a journal.

    A journal that does not exist yet is created only for a first revision the rules accept: the rule
    is asked first, on no state, so a refused first record (a revision 2, a mistyped zone) leaves no
    file behind, and the commands after it keep saying there is no journal.
    """
    commission = read_commission_file(args.file)
    url = journal_url_of(args)
    if missing_journal(url) is not None:
        _refuse_unless_a_first_record(commission)
    from factory_schedule.core.owner_commission import record_commission
    from factory_schedule.tui.cli.owner_signing import owner_signer

    schedule = schedule_over(open_or_create(url))
    recorded = record_commission(schedule, commission, signer=owner_signer(schedule.journal, args))
    return _done({**to_jsonable(recorded.commission), "settings_revision": recorded.settings_revision})


def _refuse_unless_a_first_record(commission: Any) -> None:
    """Raise the rules' own refusal when `commission` cannot start a journal now."""
    from factory_schedule.core import parse_commission
    from factory_schedule.core.records import record_commission
    from factory_schedule.tui.host.clock import SystemClock

    record_commission(None, parse_commission(commission), SystemClock().now())


def _start(schedule: LifecycleSchedule, v: dict[str, Any]) -> int:
    return _done(schedule.start(lane=v["lane"], runner=v["runner"]))


def _status(args: argparse.Namespace) -> int:
    return _done(schedule_over(open_existing(journal_url_of(args))).status(args.occurrence_id))


def _plan(args: argparse.Namespace) -> int:
    return _done({"plan": schedule_over(open_existing(journal_url_of(args))).plan()})


def _show(args: argparse.Namespace) -> int:
    return _done({"schedule": schedule_over(open_existing(journal_url_of(args))).read()})


def _lease_list(args: argparse.Namespace) -> int:
    from factory_schedule.store import leases
    from factory_schedule.tui.host.clock import SystemClock

    journal = open_existing(journal_url_of(args))
    now = SystemClock().now()
    return _done({"leases": [{**to_jsonable(lease), "stale": leases.stale(lease, now), "stale_at": lease.stale_at}
                             for lease in leases.list_leases(journal)]})


def _lease_heartbeat(args: argparse.Namespace) -> int:
    from factory_schedule.store import leases
    from factory_schedule.tui.host.clock import SystemClock

    journal = open_existing(journal_url_of(args))
    return _done({"lease": leases.heartbeat(journal, args.scope, args.owner, SystemClock().now())})


def _lease_release(args: argparse.Namespace) -> int:
    from factory_schedule.store import leases

    leases.release(open_existing(journal_url_of(args)), args.scope, args.owner)
    return _done({"released": args.scope, "owner": args.owner})


# -- registration ------------------------------------------------------------------------


def register(subcommands: Any) -> None:
    call = subcommands.add_parser("call", help="admit or end one provider call (runner contract)")
    calls = call.add_subparsers(dest="call_command", metavar="admit|end", required=True)
    add_command(calls, "admit", "ask before contacting the provider; dispatch only on dispatch:true", ADMIT,
             _on_schedule(ADMIT, _admit))
    add_command(calls, "end", "report a call's outcome (the report JSON on stdin or --report)", END, _end,
             stdin=False)
    add_command(subcommands, "defer", "defer the running segment (usage-limit, sign-in-needed, ...)", DEFER,
             _on_schedule(DEFER, _defer))
    add_command(subcommands, "settle", "settle an occurrence once", SETTLE, _on_schedule(SETTLE, _settle))
    add_command(subcommands, "reconcile",
             "confirm a dead runner (flags, or the confirmation JSON on stdin); ends its call as lost",
             RECONCILE, _reconcile, stdin=False)
    account = add_command(subcommands, "record-account", "the owner's next record of an account", RECORD_ACCOUNT,
                          _record_account)
    add_passphrase_option(account)
    commission = add_command(subcommands, "record-commission",
                          "record the next commission revision (the first one starts the journal)", (),
                          _record_commission, stdin=False)
    commission.add_argument("file", help="the commission JSON file ('-' for stdin)")
    add_passphrase_option(commission)
    add_command(subcommands, "start", "one tick of one lane (prefer `tick`, which also holds leases)", START,
             _on_schedule(START, _start))
    status = add_command(subcommands, "status", "an occurrence's state and status", (), _status, stdin=False)
    status.add_argument("occurrence_id")
    add_command(subcommands, "plan", "what each lane will do next, and when", (), _plan, stdin=False)
    add_command(subcommands, "show", "the whole schedule view as JSON", (), _show, stdin=False)

    lease = subcommands.add_parser("lease", help="list, heartbeat or release leases")
    lease_commands = lease.add_subparsers(dest="lease_command", metavar="list|heartbeat|release", required=True)
    add_command(lease_commands, "list", "every lease, with staleness", (), _lease_list, stdin=False)
    owner_options = (Option("scope"), Option("owner"))
    for name, handler, text in (
        ("heartbeat", _lease_heartbeat, "extend your own lease"),
        ("release", _lease_release, "release your own lease (exit 5 when you do not hold it)"),
    ):
        sub = lease_commands.add_parser(name, help=text, description=text)
        for option in owner_options:
            sub.add_argument(option.flag, dest=option.name, required=True)
        sub.set_defaults(handler=handler)
