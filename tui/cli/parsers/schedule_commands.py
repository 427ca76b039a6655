"""The schedule's commands' flags, as a runner calls them: every schedule method as a subcommand, JSON in and JSON
out (what they do: tui/cli/schedule_commands.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from factory_schedule.tui.cli.options import (
    Option,
    add_command,
    add_passphrase_option,
)

if TYPE_CHECKING:
    pass


OCCURRENCE = Option("occurrence", help="the occurrence ID")


RUNNER = Option("runner", help="your runner token (FACTORY_RUNNER)")


ADMIT = (
    OCCURRENCE, RUNNER, Option("task"),
    Option("work", help="the work key (one unit of work of the task)"),
    Option("bound", int, low=1, help="the call's token bound"),
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
    Option("account", help="claude or chatgpt"), Option("sequence", int, low=1), Option("sign_in"),
    Option("overage", bool, help="on or off (admission needs off)"), Option("recorded_by"),
)


START = (Option("lane"), RUNNER)


# The handler modules beside the schedule's: the leases', and the owner's signed records (which alone load the owner
# key's cryptography, so `plan` and `call admit` do not).
LEASES = "factory_schedule.tui.cli.leases"
OWNER_RECORDS = "factory_schedule.tui.cli.owner_records"


def _handled_by(function: str) -> str:
    return f"factory_schedule.tui.cli.schedule_commands:{function}"


def register(subcommands: Any) -> None:
    call = subcommands.add_parser("call", help="admit or end one provider call (runner contract)")
    calls = call.add_subparsers(dest="call_command", metavar="admit|end", required=True)
    add_command(calls, "admit", "ask before contacting the provider; dispatch only on dispatch:true", ADMIT,
             _handled_by("call_admit"))
    add_command(calls, "end", "report a call's outcome (the report JSON on stdin or --report)", END,
                _handled_by("call_end"), stdin=False)
    add_command(subcommands, "defer", "defer the running segment (usage-limit, sign-in-needed, ...)", DEFER,
             _handled_by("defer"))
    add_command(subcommands, "settle", "settle an occurrence once", SETTLE, _handled_by("settle"))
    add_command(subcommands, "reconcile",
             "confirm a dead runner (flags, or the confirmation JSON on stdin); ends its call as lost; refused "
             "(LEASE_HELD) while its segment lease heartbeats",
             RECONCILE, _handled_by("reconcile"), stdin=False)
    account = add_command(subcommands, "record-account", "the owner's next record of an account", RECORD_ACCOUNT,
                          f"{OWNER_RECORDS}:record_account")
    add_passphrase_option(account)
    commission = add_command(subcommands, "record-commission",
                          "record the next commission revision (the first one starts the journal)", (),
                          f"{OWNER_RECORDS}:record_commission_command", stdin=False)
    commission.add_argument("file", help="the commission JSON file ('-' for stdin)")
    add_passphrase_option(commission)
    add_command(subcommands, "start", "one tick of one lane (prefer `tick`, which also holds leases)", START,
             _handled_by("start"))
    status = add_command(subcommands, "status", "an occurrence's state and status", (), _handled_by("status"),
                         stdin=False)
    status.add_argument("occurrence_id")
    add_command(subcommands, "plan", "what each lane will do next, and when", (), _handled_by("plan"), stdin=False)
    add_command(subcommands, "show", "the whole schedule view as JSON", (), _handled_by("show"), stdin=False)

    lease = subcommands.add_parser("lease", help="list, heartbeat or release leases")
    lease_commands = lease.add_subparsers(dest="lease_command", metavar="list|heartbeat|release", required=True)
    add_command(lease_commands, "list", "every lease, with staleness", (), f"{LEASES}:lease_list", stdin=False)
    owner_options = (Option("scope"), Option("owner"))
    for name, handler, text in (
        ("heartbeat", f"{LEASES}:lease_heartbeat", "extend your own lease"),
        ("release", f"{LEASES}:lease_release", "release your own lease (exit 5 when you do not hold it)"),
    ):
        sub = lease_commands.add_parser(name, help=text, description=text)
        for option in owner_options:
            sub.add_argument(option.flag, dest=option.name, required=True)
        sub.set_defaults(handler=handler)
