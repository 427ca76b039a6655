"""The demo's staged lanes: a Top-N, a promotion, a maturation, through `PipelineLanes` only.

What the owner sees at the demo's end (Sunday 20 December, 02:56 UTC), seeded by fixed
instants and tokens like the rest of the demo:

- moss-garden (gamma) went through promotion to GO and through maturation to
  release-ready; its maturation run asked to publish it, and the request waits at
  security-approve for the owner's record;
- pocket-farm (beta), promoted from the second Top-N, had its brief rejected twice by
  the reviewer (maxRevisions 1), so it waits for the owner's decision on the escalation;
- the second Top-N (2026-W51) lists three candidates; two wait for the next selection.

Each run is one task: the scheduler run claims and reports it, a review task is claimed
by the reviewer run with its own token, so no run reviews its own artifact.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pendulum
from pendulum import DateTime

from factory_schedule.core.pipeline import ClaimIdle, PipelineError, PipelineLanes

if TYPE_CHECKING:
    from factory_schedule.tui.host.demo import DemoDriver

PIPELINE_SETTINGS = {"threshold": 2, "maxRevisions": 1}
CRITERIA = hashlib.sha256(b"demo exit criteria: 4 of 5 testers finish the loop").hexdigest()
BOUNDARY = hashlib.sha256(b"demo MVP boundary: one biome, one save slot").hexdigest()
VERIFIER = "playtest-verifier@1"
METRICS = ("loads-under-2s", "core-loop-works")
FIRST_TOP_N = ("2026-W49", [("moss-garden", "gamma"), ("tiny-tower", "alpha"), ("pocket-farm", "beta")])
SECOND_TOP_N = ("2026-W50", [("pocket-farm", "beta"), ("lantern-quest", "alpha"), ("tiny-tower", "alpha")])
APPROVAL = "publish-moss-garden"
# (UTC day, hour) of each run: by day, between the discovery nights.
PROMOTION_DAYS = ((7, 10), (7, 12), (7, 14), (7, 16), (8, 10), (8, 14), (8, 16))
MATURATION_DAYS = ((10, 10), (10, 12), (10, 14), (11, 10), (11, 14), (11, 16))
SECOND_PROMOTION_DAYS = ((15, 10), (15, 12), (15, 14), (15, 16), (16, 10), (16, 14))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _utc(day: int, hour: int, minute: int = 0) -> DateTime:
    return pendulum.datetime(2026, 12, day, hour, minute, tz="UTC")


def _artifact(lane: str, candidate: str, stage: str, n: int, **extra: Any) -> dict[str, Any]:
    return {"artifact": f"{lane}/{candidate}/{stage}-{n}.md", "sha256": _sha(f"{candidate}-{stage}-{n}"), **extra}


class DemoLanes:
    """Queues the staged lanes' runs on the demo driver's clock-ordered queue."""

    def __init__(self, driver: DemoDriver) -> None:
        self.driver = driver
        self.lanes = PipelineLanes(driver.journal, driver.clock)
        self.verify_sha: dict[str, str] = {}
        self.runs = 0
        self.go: int | None = None

    def _safe(self, action: Callable[[], object]) -> Callable[[], object]:
        def run() -> object:
            try:
                return action()
            except PipelineError as error:  # recorded like the schedule's refusals; the demo goes on
                self.driver.errors.append(f"{self.driver.clock.now()}: {error.code}: {error.message}")
                return None
        return run

    def setup(self) -> None:
        at = self.driver.at
        at(_utc(7, 9, 5), self._safe(lambda: self._top_n(*FIRST_TOP_N)))
        for day, hour in PROMOTION_DAYS:
            at(_utc(day, hour), self._safe(lambda: self.step("promotion")))
        for day, hour in MATURATION_DAYS:
            at(_utc(day, hour), self._safe(lambda: self.step("maturation")))
        at(_utc(11, 17), self._safe(self._ask_to_publish))
        at(_utc(14, 9), self._safe(lambda: self._top_n(*SECOND_TOP_N)))
        for day, hour in SECOND_PROMOTION_DAYS:
            at(_utc(day, hour), self._safe(lambda: self.step("promotion", reject_briefs=True)))

    def _top_n(self, week: str, entries: list[tuple[str, str]]) -> object:
        return self.lanes.record_top_n(week=week, candidates=[
            {"candidate": c, "product": p, "rank": i + 1, "evidence": [f"discovery/{p}/full/{week}"]}
            for i, (c, p) in enumerate(entries)])

    def step(self, lane: str, reject_briefs: bool = False) -> object:
        """One run: the lane's next task claimed by the run its kind needs, done, reported."""
        view = self.lanes.lane_view(lane)
        tasks = view.tasks if view is not None else []
        if tasks and tasks[0]["kind"] == "owner":
            return None  # an escalation: only the owner's decision moves it
        reviewer = bool(tasks) and tasks[0]["kind"] == "review"
        self.runs += 1
        run = f"{lane}-reviewer" if reviewer else lane
        runner = f"{'rev' if reviewer else 'run'}-{lane[0]}{self.runs}"
        claimed = self.lanes.claim(lane=lane, run=run, runner=runner)
        if isinstance(claimed, ClaimIdle):
            return claimed
        task = claimed.result
        report = self._report(lane, task, reject_briefs)
        done = self.lanes.report(lane=lane, task=task["task"], runner=runner, report=report).result
        if done.get("decision") is not None and done.get("outcome") == "go":
            self.go = done["decision"]
        return done

    def _report(self, lane: str, task: dict[str, Any], reject_briefs: bool) -> dict[str, Any]:
        stage, n, candidate = task["stage"], task["task"], task["candidate"]

        def art(**extra: Any) -> dict[str, Any]:
            return _artifact(lane, candidate, stage, n, **extra)

        if lane == "promotion":
            if stage in ("select", "evidence"):
                return art(evidence=[f"evidence/{candidate}/direct.md"])
            if stage == "brief":
                return art(criteriaSha256=CRITERIA, verifier=VERIFIER)
            if stage == "review":
                verdict = "reject" if reject_briefs else "pass"
                return art(verdict=verdict, criteriaSha256=CRITERIA,
                           findings=["the exit criteria do not say how many testers"] if reject_briefs else [])
            if stage == "prototype":
                return art(build="success")
            if stage == "verify":
                report = art(verifier=VERIFIER, criteriaSha256=CRITERIA, passed=True,
                             metrics=[{"name": "fun", "met": True, "measured": "4/5 testers"}])
                self.verify_sha[candidate] = report["sha256"]
                return report
            return art(verdict="GO", criteriaSha256=CRITERIA, verifierArtifactSha256=self.verify_sha[candidate])
        if stage == "intake":
            return art(decision=self.go)
        if stage == "boundary":
            return art(boundarySha256=BOUNDARY, successMetrics=list(METRICS))
        if stage in ("slice", "iterate"):
            return art(slice=1, verification="scripted playtest",
                       successMetrics=[{"name": m, "target": "yes"} for m in METRICS])
        if stage == "verify":
            return art(slice=1, passed=True, metrics=[{"name": m, "met": True, "measured": "yes"} for m in METRICS])
        if stage == "review":
            return art(decision="complete", boundarySha256=BOUNDARY, slice=1)
        return art(ready=True, boundarySha256=BOUNDARY, checklist=["release/moss-garden/checklist.md"])

    def _ask_to_publish(self) -> object:
        return self.lanes.request_approval(approval=APPROVAL, candidate="moss-garden", action="public-publish",
                                           requested_by="run-publish",
                                           reason="publish the release-ready private build to the store")
