"""The names a tick hands out: a fresh token for each segment's runner, the tick's own owner name, and the
lease scope of one occurrence's segment (built and parsed side by side)."""

from __future__ import annotations

import os
import secrets

SEGMENT_SCOPE_PREFIX = "segment/"


def new_runner_token() -> str:
    """A fresh token for one segment's runner: the schedule's fence between runners."""
    return "r-" + secrets.token_hex(6)


def new_tick_owner() -> str:
    return f"tick-{os.getpid()}-{secrets.token_hex(4)}"


def segment_scope(occurrence_id: str, segment: int) -> str:
    return f"{SEGMENT_SCOPE_PREFIX}{occurrence_id}/{segment}"


def parse_segment_scope(scope: str) -> tuple[str, int] | None:
    """(occurrence ID, segment) of a segment scope; None for any other scope."""
    if not scope.startswith(SEGMENT_SCOPE_PREFIX):
        return None
    occurrence_id, _, number = scope[len(SEGMENT_SCOPE_PREFIX) :].rpartition("/")
    if not occurrence_id or not number.isdigit():
        return None
    return occurrence_id, int(number)

