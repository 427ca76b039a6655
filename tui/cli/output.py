"""What the command line prints and the exit code it returns: the one place both are decided.

A runner in any language branches on the exit code and reads one JSON object on
stdout: a result, or `{"error": CODE, "message": ...}` for every failure, argparse's
included. Plain text (health's findings, the owner's hints) is escaped here too:
whatever the journal holds, a control character never reaches the terminal raw, and
a command line the tool suggests is quoted so it can be pasted into a shell.
Imports stay light (no database, no Textual): `--help` loads this module.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import json
import os
import shlex
import sys
from collections.abc import Mapping
from typing import Any

from factory_schedule.tui.terminal_text import printable

# -- exit codes --------------------------------------------------------------------------

EXIT_OK = 0
EXIT_UNEXPECTED = 1
EXIT_BAD_INPUT = 2
EXIT_JOURNAL = 3
EXIT_LEASE_HELD = 4
EXIT_NOT_LEASE_OWNER = 5
EXIT_RUNNER_FAILED = 6
EXIT_UNRECORDED = 7  # `run`: a report the journal would not take after every retry; left to a supervisor
EXIT_CHAIN_BROKEN = 8  # `verify`: a hash chain does not verify from its first event
EXIT_REPLAY_NO_DISPATCH = 10
# `defer`: the answer replays an earlier segment's deferral while the same token runs a later segment, which
# this answer did NOT defer (`still_running` names it): never a plain success a runner could take for its own.
EXIT_REPLAY_STILL_RUNNING = 11
# `lanes approval-use`: the replay of a recorded use of an approval; the action was licensed once, to the call
# that recorded it, and this answer (`"licensed": false`) licenses nothing: the run does not act again.
EXIT_REPLAY_NOT_LICENSED = 12
# Codes that share a number with one above and name what it means for one command.
EXIT_WILL_NOT_RUN = EXIT_UNEXPECTED  # `check`: the factory would not run tonight
EXIT_OVER_CEILING = EXIT_UNEXPECTED  # `commission`: sound, but the week does not fit (a warning, as health's)
EXIT_NOT_CONFIRMED = EXIT_BAD_INPUT  # `rehearse`: the owner did not confirm
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader went away

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
    "UNSIGNED": 46,
    "BAD_SIGNATURE": 47,
}

# The staged lanes (`factory-schedule lanes ...`): a claim that found nothing, and the pipeline's own
# error codes, in their own range (the schedule's and the pipeline's codes share some words).
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
    "NOT_ADMITTED": 67,
    "UNSIGNED": 68,
    "BAD_SIGNATURE": 69,
    "SELF_DECIDED": 70,
}


class BadInput(Exception):
    """Input the shell refuses before it opens the journal (exit 2, nothing written)."""


class JournalRefused(Exception):
    """The journal cannot be used for this command (missing, unreadable, ...): exit 3, nothing written."""


# -- JSON documents ----------------------------------------------------------------------


def to_jsonable(value: Any) -> Any:
    """Results as JSON: dataclasses and models become objects, instants ISO 8601 strings."""
    if isinstance(value, _dt.datetime | _dt.date):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if hasattr(value, "model_dump"):
        return to_jsonable(value.model_dump(mode="json"))
    if isinstance(value, Mapping):
        return {str(key): to_jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_jsonable(item) for item in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def emit(document: Any, *, to_stderr: bool = False) -> None:
    """One JSON object on one line of stdout, or stderr (ASCII: a lone surrogate or ESC prints as an escape)."""
    print(json.dumps(to_jsonable(document), sort_keys=True), file=sys.stderr if to_stderr else sys.stdout,
          flush=True)


def answer(document: Any) -> int:
    """A command's answer: its one JSON object on stdout, then exit 0."""
    emit(document)
    return EXIT_OK


def quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush finds no closed pipe to complain about."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass  # stdout is not a file descriptor (a test's capture): nothing will flush into a pipe
    finally:
        os.close(devnull)


def emit_error(code: str, message: str, *, to_stderr: bool = False, **extra: Any) -> None:
    """The error shape every command prints: `{"error": CODE, "message": one line, ...}`; on stderr for a command
    whose stdout is a document the owner sends to a file (`errors_to_stderr` among its parser's defaults)."""
    emit({"error": code, "message": " ".join(message.split()), **extra}, to_stderr=to_stderr)


# -- plain text --------------------------------------------------------------------------

def shell_command(*words: object) -> str:
    """A command line the owner can paste: each word shell-quoted, then escaped for the terminal."""
    return printable(" ".join(shlex.quote(str(word)) for word in words))


def say(line: str, *, error: bool = False) -> None:
    """One line of text for a person (stdout, or stderr for a refusal); the caller escapes journal text."""
    print(line, file=sys.stderr if error else sys.stdout, flush=True)


# -- failures ----------------------------------------------------------------------------

_JOURNAL_LIBRARIES = ("sqlalchemy", "sqlite3", "psycopg")


def failure_of(error: BaseException) -> tuple[int, dict[str, Any]]:
    """The exit code and the JSON error document for an exception a command raised.

    The engine's and the journal's classes are looked up among the modules already
    loaded: an error of a module never imported cannot have been raised, and looking
    there keeps this module light.
    """
    if isinstance(error, BadInput):
        return EXIT_BAD_INPUT, {"code": "INVALID", "message": str(error)}
    if isinstance(error, JournalRefused):
        return EXIT_JOURNAL, {"code": "JOURNAL", "message": str(error)}
    core = sys.modules.get("factory_schedule.core")
    if core is not None and isinstance(error, core.ScheduleError):
        return ERROR_EXIT_CODES.get(error.code, EXIT_UNEXPECTED), {"code": error.code, "message": error.message}
    pipeline = sys.modules.get("factory_schedule.core.pipeline")
    if pipeline is not None and isinstance(error, pipeline.PipelineError):
        return PIPELINE_EXIT_CODES.get(error.code, EXIT_UNEXPECTED), {"code": error.code, "message": error.message}
    leases = sys.modules.get("factory_schedule.store.leases")
    if leases is not None and isinstance(error, leases.LeaseHeldError):
        return EXIT_LEASE_HELD, {"code": "LEASE_HELD", "message": str(error), "holder": error.holder,
                                 "age_seconds": error.age_seconds}
    if leases is not None and isinstance(error, leases.LeaseOwnerError):
        return EXIT_NOT_LEASE_OWNER, {"code": "NOT_LEASE_OWNER", "message": str(error), "holder": error.holder}
    store = sys.modules.get("factory_schedule.store")
    if store is not None and isinstance(error, store.JournalError):
        return EXIT_JOURNAL, {"code": "JOURNAL", "message": str(error), "kind": type(error).__name__}
    if type(error).__module__.split(".")[0] in _JOURNAL_LIBRARIES:  # a database error the store did not name
        reason = " ".join(str(getattr(error, "orig", None) or error).split())
        return EXIT_JOURNAL, {"code": "JOURNAL", "message": f"the journal failed: {reason}",
                              "kind": type(error).__name__}
    return EXIT_UNEXPECTED, {"code": "UNEXPECTED", "message": f"{type(error).__name__}: {error}"}
