"""PipelineError and its codes: one word per kind of refusal of the staged lanes."""

from __future__ import annotations

from typing import Literal

PipelineErrorCode = Literal[
    "INVALID",  # bad input; nothing written
    "CORRUPT",  # the stored pipeline breaks a rule; never written over
    "CONFLICT",  # a different request under a recorded command ID
    "CONTENDED",  # other writers kept committing
    "LIMIT",  # the state would grow past its limit
    "NOT_CONFIGURED",  # no pipeline settings recorded
    "REVISION",  # settings or a Top-N out of order
    "UNKNOWN_TASK",  # no such open task
    "NOT_OWNER",  # the task is claimed by another runner
    "WRONG_RUN",  # the run may not claim or complete this kind of task (a scheduler on a review, ...)
    "SELF_REVIEW",  # the runner that produced the artifact tries to review it
    "CONTRACT",  # a report that does not meet its stage's artifact contract
    "CRITERIA_CHANGED",  # criteria or MVP boundary other than the frozen one
    "VERIFIER_REQUIRED",  # GO without the frozen exit verifier's passing artifact
    "CAP_REACHED",  # a slice or revision beyond its cap
    "APPROVAL_REQUIRED",  # an external action without the owner's approval record
    "STALE",  # the request names something that has moved on
    "NOT_ADMITTED",  # a scheduled run's claim without its occurrence running for its runner token
    "UNSIGNED",  # an owner record without the owner's signature, in a journal that holds an owner key
    "BAD_SIGNATURE",  # a signature that is not the owner key's over this record for this journal
    "SELF_DECIDED",  # an approval decided by the one who requested it
]

PIPELINE_ERROR_CODES: tuple[str, ...] = PipelineErrorCode.__args__  # type: ignore[attr-defined]


class PipelineError(Exception):
    """A refused pipeline request or an unreadable pipeline state; `code` says which."""

    def __init__(self, code: PipelineErrorCode, message: str) -> None:
        if code not in PIPELINE_ERROR_CODES:
            raise ValueError(f"unknown pipeline error code {code!r}")
        self.code: PipelineErrorCode = code
        self.message = message
        super().__init__(f"{code}: {message}")
