"""The schedule's commands, as a runner calls them: every schedule method as a subcommand, JSON in and JSON out.

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

from factory_schedule.store import leases
from factory_schedule.tui.cli.journal import (
    journal_url_of,
    open_existing,
    schedule_over,
)
from factory_schedule.tui.cli.options import (
    Option,
    gather,
    parse_json,
    read_stdin_json,
)
from factory_schedule.tui.cli.output import (
    EXIT_OK,
    EXIT_REFUSED_OTHER,
    EXIT_REPLAY_NO_DISPATCH,
    EXIT_REPLAY_STILL_RUNNING,
    REFUSAL_EXIT_CODES,
    BadInput,
    answer,
    emit,
)
from factory_schedule.tui.cli.parsers.schedule_commands import ADMIT, DEFER, END, RECONCILE, SETTLE, START
from factory_schedule.tui.host.clock import SystemClock
from factory_schedule.tui.host.tokens import parse_segment_scope

if TYPE_CHECKING:
    from factory_schedule.core import CallAdmission, CallRefusal, LifecycleSchedule

Act = Callable[["LifecycleSchedule", dict[str, Any]], int]


def _on_schedule(options: Sequence[Option], act: Act) -> Callable[[argparse.Namespace], int]:
    """A handler that checks its input first, then opens the (existing) journal and acts on the schedule."""

    def handler(args: argparse.Namespace) -> int:
        values = gather(args, options)
        return act(schedule_over(open_existing(journal_url_of(args))), values)

    return handler


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


def call_end(args: argparse.Namespace) -> int:
    values = gather(args, END)
    report = _report_of(values)  # read before the journal opens: bad JSON writes nothing
    schedule = schedule_over(open_existing(journal_url_of(args)))
    return answer(schedule.end_call(occurrence_id=values["occurrence"], runner=values["runner"],
                                   call=values["call"], report=report))


def _defer(schedule: LifecycleSchedule, v: dict[str, Any]) -> int:
    result = schedule.defer(occurrence_id=v["occurrence"], runner=v["runner"], reason=v["reason"],
                            bound=v.get("bound"), segment=v.get("segment"))
    emit(result)
    return EXIT_OK if result.still_running is None else EXIT_REPLAY_STILL_RUNNING


def _settle(schedule: LifecycleSchedule, v: dict[str, Any]) -> int:
    return answer(schedule.settle(occurrence_id=v["occurrence"], settled_by=v["settled_by"], status=v["status"],
                                 reason=v["reason"]))


def reconcile(args: argparse.Namespace) -> int:
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
    journal = open_existing(journal_url_of(args))
    _refuse_while_heartbeating(journal, v["occurrence"], confirmation.get("runner"))
    return answer(schedule_over(journal).reconcile(occurrence_id=v["occurrence"], confirmation=confirmation))


def _refuse_while_heartbeating(journal: Any, occurrence_id: str, runner: object) -> None:
    """A runner whose segment lease still heartbeats is not dead: confirming it would end its call in flight as
    lost, and the next tick would start a second segment beside it, its provider call paid twice. Refused
    (LEASE_HELD, nothing written) until the lease goes stale (2 x TTL without a heartbeat), as a staged lane's
    `abandon` is; a runner that holds no lease (it never took one, or it was removed) is left to the decision."""
    now = SystemClock().now()
    for lease in leases.list_leases(journal):
        segment = parse_segment_scope(lease.scope)
        if (segment is not None and segment[0] == occurrence_id and lease.owner == runner
                and not leases.stale(lease, now)):
            raise leases.LeaseHeldError(lease, now)


def _start(schedule: LifecycleSchedule, v: dict[str, Any]) -> int:
    return answer(schedule.start(lane=v["lane"], runner=v["runner"]))


def status(args: argparse.Namespace) -> int:
    return answer(schedule_over(open_existing(journal_url_of(args))).status(args.occurrence_id))


def plan(args: argparse.Namespace) -> int:
    return answer({"plan": schedule_over(open_existing(journal_url_of(args))).plan()})


def show(args: argparse.Namespace) -> int:
    return answer({"schedule": schedule_over(open_existing(journal_url_of(args))).read()})


# The commands that check their input first, then act on the schedule.
call_admit = _on_schedule(ADMIT, _admit)
defer = _on_schedule(DEFER, _defer)
settle = _on_schedule(SETTLE, _settle)
start = _on_schedule(START, _start)
