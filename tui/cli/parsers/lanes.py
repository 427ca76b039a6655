"""`factory-schedule lanes ...`: the staged promotion and maturation lanes' runner interface, its commands and
flags (what they do: tui/cli/lanes.py)."""

from __future__ import annotations

from typing import Any

from factory_schedule.tui.cli.options import (
    MAX_PID,
    MAX_SECONDS,
    Option,
    add_command,
    add_passphrase_option,
)
from factory_schedule.tui.host.environment import DEFAULT_LEASE_TTL_SECONDS

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


# Commands whose stdin carries a document (the candidates, a report), so `--stdin` does not take their flags.
STDIN_DOCUMENTS = ("top-n", "report")
# The owner's decisions: signed with the owner key when the journal holds one.
OWNER_DECISIONS = ("escalation", "approval-decide")


def register(subcommands: Any) -> None:
    lanes = subcommands.add_parser("lanes", help="the staged promotion and maturation lanes (runner interface)")
    commands = lanes.add_subparsers(dest="lanes_command", metavar="COMMAND", required=True)
    for name, text, options, handler in (
        ("top-n", "record a week's ranked Top-N (candidates JSON on stdin or --candidates)", TOP_N, "top_n"),
        ("claim", "take the lane's locks and claim its next task (50: none; 4: held)", CLAIM, "claim"),
        ("report", "report a claimed task (report JSON on stdin or --report); releases the run's locks", REPORT,
         "report"),
        ("heartbeat", "extend every lock this run holds on the lane", HEARTBEAT, "heartbeat"),
        ("abandon", "a supervisor confirms a dead run gone once its locks are stale: its task back to pending, or a "
         "revision's failed start (requeued within the repair cap, else escalated)", ABANDON, "abandon"),
        ("escalation", "the owner answers an escalation: revise (one more round) or park", ESCALATION,
         "escalation"),
        ("approval-decide", "the owner's approval record (--approved on) or refusal (--approved off)",
         APPROVAL_DECIDE, "approval_decide"),
        ("approval-request", "ask the owner to approve one external action on a candidate", APPROVAL_REQUEST,
         "approval_request"),
        ("show", "a lane's state: WIP, tasks, counters, history, cooldown, contracts", SHOW, "show"),
        ("approval-use", "record an approved external action before doing it: act only on licensed:true (12: a "
         "replay, licensed once already; 65: no approval)", APPROVAL_USE, "approval_use"),
    ):
        module = "owner_records" if name in OWNER_DECISIONS else "lanes"
        parser = add_command(commands, name, text, options, f"factory_schedule.tui.cli.{module}:{handler}",
                             stdin=name not in STDIN_DOCUMENTS)
        if name in OWNER_DECISIONS:
            add_passphrase_option(parser)
