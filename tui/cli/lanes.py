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
from collections.abc import Callable, Mapping
from typing import Any

from factory_schedule.store import JournalError, open_journal
from factory_schedule.tui.cli.runner import (
    EXIT_BAD_INPUT,
    EXIT_JOURNAL,
    EXIT_OK,
    EXIT_UNEXPECTED,
    BadInput,
    emit,
    emit_error,
    gather,
    journal_url_of,
    parse_bool,
    read_stdin_json,
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
    except JournalError as error:
        emit_error("JOURNAL", str(error))
        return EXIT_JOURNAL


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
    ("claim", "claim the lane's next task for this run (exit 50: nothing to claim)",
     {"lane": str, "run": str, "runner": str}, {"lane", "run", "runner"},
     lambda lanes, v: lanes.claim(lane=v["lane"], run=v["run"], runner=v["runner"])),
    ("report", "report a claimed task's artifact or review (report JSON on stdin or --report)",
     REPORT_FIELDS, {"lane", "task", "runner"},
     lambda lanes, v: lanes.report(lane=v["lane"], task=v["task"], runner=v["runner"],
                                   report=_json_argument(v.get("report"), "the report"))),
    ("abandon", "a supervisor returns a dead run's claimed task to pending",
     {"lane": str, "task": int, "runner": str, "confirmed_by": str, "evidence": str},
     {"lane", "task", "runner", "confirmed_by", "evidence"},
     lambda lanes, v: lanes.abandon(lane=v["lane"], task=v["task"], runner=v["runner"],
                                    confirmed_by=v["confirmed_by"], evidence=v["evidence"])),
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
    for name, text, fields, required, act in SUBCOMMANDS:
        parser = commands.add_parser(name, help=text)
        for field in fields:
            parser.add_argument(f"--{field.replace('_', '-')}", dest=field,
                                type=int if fields[field] is int else None)
        parser.add_argument("--stdin", action="store_true", help="read the arguments as a JSON object on stdin")
        parser.set_defaults(handler=_command(fields, required, act))
