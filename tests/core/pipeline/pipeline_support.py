"""Shared helpers for the pipeline tests: a real file journal, a manual clock, and reports that meet each
stage's artifact contract."""

from __future__ import annotations

import hashlib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factory_schedule.core import LifecycleSchedule, ManualClock, proposed_commission
from factory_schedule.core.pipeline import PIPELINE_AGGREGATE, LaneView, PipelineLanes, PipelineResult
from factory_schedule.store import open_journal

START = "2026-12-07T01:00:00Z"
CRITERIA = hashlib.sha256(b"exit criteria v1").hexdigest()
BOUNDARY = hashlib.sha256(b"mvp boundary v1").hexdigest()
VERIFIER = "verify-playfeel@1"
METRICS = ("loads-under-2s", "core-loop-works")


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def commission(revision: int = 1, **pipeline: Any) -> dict[str, Any]:
    document = proposed_commission(products=["alpha"], effective_from="2026-12-07", weekly_tokens=40_000_000,
                                   revision=revision)
    document["pipeline"] = {"threshold": 2, "cooldownHours": 0, **pipeline}
    return document


def top_n(*ids: str, product: str = "alpha") -> list[dict[str, Any]]:
    return [{"candidate": c, "product": product, "rank": i + 1, "evidence": [f"evidence/{c}.md"]}
            for i, c in enumerate(ids)]


@dataclass
class Harness:
    url: str
    clock: ManualClock
    lanes: PipelineLanes

    def head(self) -> int:
        return self.lanes.journal.head(PIPELINE_AGGREGATE)

    def events(self) -> list[Any]:
        return self.lanes.journal.history(PIPELINE_AGGREGATE)

    def tick(self, minutes: int = 1) -> None:
        self.clock.advance(minutes=minutes)


def lane_view(lanes: PipelineLanes, lane: str) -> LaneView:
    """The lane as the runner interface reads it, which the test expects there to be (settings recorded)."""
    view = lanes.lane_view(lane)
    assert view is not None, "no pipeline settings recorded"
    return view


def make_harness(tmp_path: Path, **pipeline: Any) -> Harness:
    url = f"sqlite:///{tmp_path / 'journal.db'}"
    clock = ManualClock(START)
    lanes = PipelineLanes(open_journal(url), clock)
    adopt(lanes, commission(**pipeline))
    return Harness(url, clock, lanes)


def adopt(lanes: PipelineLanes, document: dict[str, Any]) -> None:
    """The owner's path to settings: the commission revision recorded by the schedule, then adopted."""
    LifecycleSchedule(lanes.journal, lanes.clock).record_commission(document)
    lanes.record_settings(document)


@contextmanager
def writes_nothing(h: Harness):
    before = h.head()
    yield
    assert h.head() == before


def artifact(stage: str, n: int, **extra: Any) -> dict[str, Any]:
    return {"artifact": f"artifacts/{stage}-{n}.md", "sha256": sha(f"{stage}-{n}"), **extra}


def promotion_report(stage: str, n: int, *, verdict: str = "GO", passed: bool = True, review: str = "pass",
                     build: str = "success", verifier_sha: str | None = None,
                     criteria: str = CRITERIA) -> dict[str, Any]:
    if stage in ("select", "evidence"):
        return artifact(stage, n, evidence=["evidence/direct.md"])
    if stage == "brief":
        return artifact(stage, n, criteriaSha256=criteria, verifier=VERIFIER)
    if stage == "review":
        return artifact(stage, n, verdict=review, criteriaSha256=criteria)
    if stage == "prototype":
        return artifact(stage, n, build=build)
    if stage == "verify":
        return artifact(stage, n, verifier=VERIFIER, criteriaSha256=criteria, passed=passed,
                        metrics=[{"name": "fun", "met": passed, "measured": "4/5 testers"}])
    if stage == "decide":
        return artifact(stage, n, verdict=verdict, criteriaSha256=criteria,
                        verifierArtifactSha256=verifier_sha or "0" * 64)
    raise AssertionError(stage)


def maturation_report(stage: str, n: int, *, slice_n: int = 1, decision: str = "complete", go: int = 1,
                      passed: bool = True, ready: bool = True, boundary: str = BOUNDARY) -> dict[str, Any]:
    if stage == "intake":
        return artifact(stage, n, decision=go)
    if stage == "boundary":
        return artifact(stage, n, boundarySha256=boundary, successMetrics=list(METRICS))
    if stage in ("slice", "iterate"):
        return artifact(stage, n, slice=slice_n, verification="scripted playtest",
                        successMetrics=[{"name": m, "target": "yes"} for m in METRICS])
    if stage == "verify":
        return artifact(stage, n, slice=slice_n, passed=passed,
                        metrics=[{"name": m, "met": passed, "measured": "measured"} for m in METRICS])
    if stage == "review":
        return artifact(stage, n, decision=decision, boundarySha256=boundary, slice=slice_n)
    if stage == "release":
        return artifact(stage, n, ready=ready, boundarySha256=boundary, checklist=["release/checklist.md"])
    raise AssertionError(stage)


class Runs:
    """Fresh runner tokens, one per run, as the shell gives each run."""

    def __init__(self) -> None:
        self.k = 0

    def token(self, prefix: str) -> str:
        self.k += 1
        return f"{prefix}-{self.k}"


def pending_kind(h: Harness, lane: str) -> str:
    tasks = lane_view(h.lanes, lane).tasks
    return tasks[0]["kind"] if tasks else "work"


def claim_next(h: Harness, lane: str, runs: Runs) -> tuple[str, dict[str, Any]]:
    """Claim the lane's next task with the run its kind needs; (runner, the claim's result)."""
    reviewer = pending_kind(h, lane) == "review"
    run = f"{lane}-reviewer" if reviewer else lane
    runner = runs.token("rev" if reviewer else "run")
    h.tick()
    claimed = h.lanes.claim(lane=lane, run=run, runner=runner)
    assert isinstance(claimed, PipelineResult), claimed  # not idle
    return runner, claimed.result


def drive_promotion(h: Harness, runs: Runs, until: str | None = None, **options: Any) -> dict[str, Any]:
    """Run promotion's tasks with passing reports until the next pending task is at `until` (or the work ends);
    the claim of that task is left undone. Returns the last result (or the pending claim at `until`)."""
    verify_sha: dict[str, str] = {}
    while True:
        tasks = lane_view(h.lanes, "promotion").tasks
        if until is not None and tasks and tasks[0]["stage"] == until:
            return tasks[0]
        runner, task = claim_next(h, "promotion", runs)
        report = promotion_report(task["stage"], task["task"], verifier_sha=verify_sha.get("sha"), **options)
        if task["stage"] == "verify":
            verify_sha["sha"] = report["sha256"]
        h.tick()
        done = h.lanes.report(lane="promotion", task=task["task"], runner=runner, report=report).result
        if done["next"] is None:
            return done


def drive_maturation(h: Harness, runs: Runs, until: str | None = None, go: int = 1) -> dict[str, Any]:
    while True:
        tasks = lane_view(h.lanes, "maturation").tasks
        if until is not None and tasks and tasks[0]["stage"] == until:
            return tasks[0]
        runner, task = claim_next(h, "maturation", runs)
        h.tick()
        report = maturation_report(task["stage"], task["task"], go=go)
        done = h.lanes.report(lane="maturation", task=task["task"], runner=runner, report=report).result
        if done["next"] is None:
            return done
