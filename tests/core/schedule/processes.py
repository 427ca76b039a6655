"""The engine's child-process entry points: they run in real OS processes started from the fork server
(`tests.processes`), so they live in an importable module and take only picklable arguments."""

from __future__ import annotations

import json
import os
import time
import traceback
from typing import Any

from factory_schedule.core import CallAdmission, LifecycleSchedule, ManualClock
from factory_schedule.store import open_journal
from tests.core.schedule.support import CALL_BOUND, SIGN_IN


def _report(queue: Any, record: dict[str, Any]) -> None:
    record["pid"] = os.getpid()
    queue.put(record)


def race_start(url: str, now: str, lane: str, runner: str, barrier: Any, queue: Any) -> None:
    """Open the journal, wait for the other racers, then tick the lane once."""
    try:
        schedule = LifecycleSchedule(open_journal(url), ManualClock(now))
        barrier.wait(timeout=60)
        tick = schedule.start(lane=lane, runner=runner)
        occurrence_id = tick.occurrence.id if tick.occurrence is not None else None
        _report(queue, {"ok": True, "kind": tick.kind, "replayed": tick.replayed, "occurrence": occurrence_id,
                        "runner": runner})
    except BaseException:
        _report(queue, {"ok": False, "error": traceback.format_exc()})


def start_call_and_hang(url: str, now: str, lane: str, runner: str, marker: str) -> None:
    """A runner that is admitted, is licensed one provider call, and dies mid-call (the parent SIGKILLs it)."""
    schedule = LifecycleSchedule(open_journal(url), ManualClock(now))
    tick = schedule.start(lane=lane, runner=runner)
    assert tick.occurrence is not None
    admission = schedule.admit_call(
        occurrence_id=tick.occurrence.id, runner=runner, task="scan", work="w1", bound=CALL_BOUND, sign_in=SIGN_IN
    )
    assert isinstance(admission, CallAdmission), admission
    with open(marker + ".tmp", "w") as handle:
        json.dump({"occurrence": tick.occurrence.id, "call": admission.call, "dispatch": admission.dispatch}, handle)
    os.replace(marker + ".tmp", marker)
    while True:  # "the provider call": never returns
        time.sleep(1)


def wait_for_file(path: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} never appeared")
        time.sleep(0.02)
