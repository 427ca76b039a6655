"""ScheduleError and its codes (`ScheduleErrorCode`): one word per kind of refusal, each with its exit code
in the command line."""

from __future__ import annotations

from typing import Literal, get_args

ScheduleErrorCode = Literal[
    "INVALID",
    "CORRUPT",
    "CONFLICT",
    "CONTENDED",
    "LIMIT",
    "NOT_COMMISSIONED",
    "REVISION",
    "NOT_A_LANE",
    "UNKNOWN_OCCURRENCE",
    "UNKNOWN_CALL",
    "NOT_RUNNING",
    "NOT_OWNER",
    "CALL_OPEN",
    "SETTLED",
    "STALE",
    "RULE",
    "UNSIGNED",  # an owner record without the owner's signature, in a journal that holds an owner key
    "BAD_SIGNATURE",  # a signature that is not the owner key's over this record for this journal
]

SCHEDULE_ERROR_CODES: tuple[str, ...] = get_args(ScheduleErrorCode)


class ScheduleError(Exception):
    """A refused request or an unreadable state. `code` says which; the message says why."""

    def __init__(self, code: ScheduleErrorCode, message: str) -> None:
        if code not in SCHEDULE_ERROR_CODES:
            raise ValueError(f"unknown schedule error code {code!r}")
        self.code: ScheduleErrorCode = code
        self.message = message
        super().__init__(f"{code}: {message}")


def invalid(message: str) -> ScheduleError:
    return ScheduleError("INVALID", message)


def corrupt(message: str) -> ScheduleError:
    return ScheduleError("CORRUPT", message)
