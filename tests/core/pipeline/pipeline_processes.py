"""What each racing process runs (a module of its own, so the fork server imports it by name)."""

from __future__ import annotations

from typing import Any

from factory_schedule.core import ManualClock
from factory_schedule.core.pipeline import PipelineError, PipelineLanes
from factory_schedule.store import open_journal


def race_claim(url: str, now: str, lane: str, run: str, runner: str, barrier: Any, queue: Any) -> None:
    try:
        lanes = PipelineLanes(open_journal(url), ManualClock(now))
        barrier.wait(timeout=60)
        answer = lanes.claim(lane=lane, run=run, runner=runner)
        if getattr(answer, "kind", "") == "idle":
            queue.put({"runner": runner, "kind": "idle", "reason": answer.reason})  # type: ignore[union-attr]
        else:
            queue.put({"runner": runner, "kind": "claimed", "task": answer.result["task"],  # type: ignore[union-attr]
                       "candidate": answer.result["candidate"]})  # type: ignore[union-attr]
    except PipelineError as error:
        queue.put({"runner": runner, "kind": "error", "reason": f"{error.code}: {error.message}"})
    except Exception as error:  # reported, so the test shows it instead of a timeout
        queue.put({"runner": runner, "kind": "error", "reason": repr(error)})
