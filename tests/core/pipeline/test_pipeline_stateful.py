"""A hypothesis state machine over the staged lanes on a real journal file.

Random Top-Ns, claims by scheduler, reviewer and stranger runs, good and bad reports, owner escalation
decisions, approvals and time. After every step the invariants the issue names are checked from the
journal's own events and state: one task done and at most one enqueued per transition (a claim: none
done, at most its activation enqueued), WIP never above its limit, no review by a runner that produced
an artifact of the work, no GO without the frozen verifier's passing artifact, no external action
without an owner approval, and deterministic selection. A supervisor may interrupt any claimed run: a
revision task's interrupted start is a failed start of its reserved round (same task, same parent, input
hash and critic log, its failures never reset), requeued only within the repair cap, else escalated; any
other task returns to pending at most maxRetries times, then escalates to the owner.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from factory_schedule.core import ManualClock
from factory_schedule.core.pipeline import ClaimIdle, PipelineError, PipelineLanes
from factory_schedule.store import open_journal
from tests.core.pipeline.pipeline_support import (
    BOUNDARY,
    CRITERIA,
    START,
    adopt,
    commission,
    lane_view,
    maturation_report,
    promotion_report,
    sha,
    top_n,
)

POOL = ("alpha-one", "bravo", "charlie", "delta", "echo")
BAD_KINDS = ("criteria", "verifier", "external", "contract", "boundary")
BADNESS = st.sampled_from((None,) * 7 + BAD_KINDS)
STEP = st.sampled_from((None,) * 7 + BAD_KINDS + ("interrupted",) * 2)  # a run may die before its report
VERDICTS = ("GO", "GO", "PIVOT", "PARK", "pass", "pass", "reject", "reject", "reject", "success", "success", "failure",
            "complete", "complete", "continue", "revise", "revise", "pivot", "park", "ready", "ready", "not-ready")


class PipelineMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="pipeline-machine-"))
        self.clock = ManualClock(START)
        self.journal = open_journal(f"sqlite:///{self.folder / 'journal.db'}")
        self.lanes = PipelineLanes(self.journal, self.clock)
        adopt(self.lanes, commission(threshold=2, maxRevisions=2, maxRetries=1, maxSlices=2,
                                              cooldownHours=1))
        self.week = 49
        self.k = 0
        self.checked = self.lanes.journal.head("pipeline/lanes")
        self.producers: dict[tuple[str, str], set[str]] = {}  # (lane, candidate) -> runners that produced
        self.passing_verify: dict[str, tuple[str, str]] = {}  # candidate -> (verify sha, criteria) if passed
        self.approved: set[str] = set()
        self.claims: dict[str, tuple[str, int]] = {}  # runner -> (lane, task) claimed and not reported
        self.revisions: dict[tuple[str, int], Any] = {}  # (lane, task) -> the revision record last seen open

    def teardown(self) -> None:
        self.journal.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def token(self, prefix: str) -> str:
        self.k += 1
        return f"{prefix}-{self.k}"

    # -- rules ---------------------------------------------------------------------------------

    @initialize(picked=st.lists(st.sampled_from(POOL), min_size=2, max_size=5, unique=True))
    def first_top_n(self, picked: list[str]) -> None:
        self.record_top_n(picked)

    @rule(picked=st.lists(st.sampled_from(POOL), min_size=1, max_size=5, unique=True))
    def record_top_n(self, picked: list[str]) -> None:
        self.week += 1
        self.lanes.record_top_n(week=f"2026-W{self.week:02d}" if self.week <= 53 else f"2027-W{self.week - 53:02d}",
                                candidates=top_n(*picked))

    @rule(minutes=st.integers(1, 180))
    def advance(self, minutes: int) -> None:
        self.clock.advance(minutes=minutes)

    @rule(lane=st.sampled_from(("promotion", "maturation")), role=st.sampled_from(("scheduler", "reviewer", "other")))
    def claim(self, lane: str, role: str) -> None:
        run = {"scheduler": lane, "reviewer": f"{lane}-reviewer", "other": "workflow-review"}[role]
        runner = self.token("r")
        expected = lane_view(self.lanes, lane).eligible
        try:
            claimed = self.lanes.claim(lane=lane, run=run, runner=runner)
        except PipelineError as error:
            assert role == "other" and error.code == "WRONG_RUN"
            return
        if isinstance(claimed, ClaimIdle):
            return
        result = claimed.result
        if result["activated"] and lane == "promotion":
            assert result["candidate"] == expected[0], "selection is the oldest gate, then the ID"
        if result["activated"] and lane == "maturation":
            assert f"{result['candidate']}#" in expected[0]
        self.claims[runner] = (lane, result["task"])

    @rule(lane=st.sampled_from(("promotion", "maturation")),
          steps=st.lists(st.tuples(st.sampled_from(VERDICTS), STEP), min_size=4, max_size=16))
    def run_the_lane(self, lane: str, steps: list[tuple[str, str | None]]) -> None:
        """Runs as the scheduler would start them: each claims with the run its task needs, then reports."""
        for verdict, bad in steps:
            outstanding = [runner for runner, (claimed_lane, _n) in self.claims.items() if claimed_lane == lane]
            if outstanding:  # a run whose report was refused reports again (a new run would find it claimed)
                self._report_of(outstanding[0], verdict, bad)
                continue
            tasks = lane_view(self.lanes, lane).tasks
            if tasks and tasks[0]["kind"] == "owner":
                return
            role = "reviewer" if tasks and tasks[0]["kind"] == "review" else "scheduler"
            before = set(self.claims)
            self.claim(lane, role)
            fresh = set(self.claims) - before
            if not fresh:
                return
            if bad == "interrupted":
                self._interrupt(fresh.pop(), ["out/partial.md"])
                continue
            self._report_of(fresh.pop(), verdict, bad)

    @precondition(lambda self: bool(self.claims))
    @rule(data=st.data(), bad=BADNESS, verdict=st.sampled_from(VERDICTS))
    def report(self, data: st.DataObject, bad: str | None, verdict: str) -> None:
        self._report_of(data.draw(st.sampled_from(sorted(self.claims))), verdict, bad)

    def _report_of(self, runner: str, verdict: str, bad: str | None) -> None:
        lane, n = self.claims[runner]
        state = self.lanes.state()
        assert state is not None
        task = state.lane(lane).task(n)
        assert task is not None and task.claimed_by == runner
        work = state.lane(lane).work_of(task.candidate)
        assert work is not None
        report = self._report(lane, task.stage, n, work, verdict, bad)
        try:
            done = self.lanes.report(lane=lane, task=n, runner=runner, report=report)
        except PipelineError as error:
            assert error.code in ("CRITERIA_CHANGED", "VERIFIER_REQUIRED", "APPROVAL_REQUIRED", "CONTRACT",
                                  "CAP_REACHED", "STALE"), error
            if bad is None and error.code not in ("CAP_REACHED", "VERIFIER_REQUIRED"):
                raise
            return
        del self.claims[runner]
        if task.kind == "work":
            self.producers.setdefault((lane, task.candidate), set()).add(runner)
        if lane == "promotion" and task.stage == "verify":
            if report["passed"]:
                self.passing_verify[task.candidate] = (report["sha256"], report["criteriaSha256"])
            else:
                self.passing_verify.pop(task.candidate, None)
        if done.result["outcome"] is not None:
            self.producers.pop((lane, task.candidate), None)

    def _report(self, lane: str, stage: str, n: int, work, verdict: str, bad: str | None) -> dict:
        if lane == "promotion":
            options: dict[str, Any] = {"verdict": verdict if verdict in ("GO", "PIVOT", "PARK") else "GO",
                       "review": verdict if verdict in ("pass", "reject") else "pass",
                       "build": verdict if verdict in ("success", "failure") else "success",
                       "passed": verdict != "failure",
                       "verifier_sha": work.verified.sha256 if work.verified else None,
                       "criteria": work.criteria or CRITERIA}
            if bad == "criteria":
                options["criteria"] = sha("moved criteria")
            if bad == "verifier":
                options["verifier_sha"] = sha("build log")
            report = promotion_report(stage, n, **options)
        else:
            boundary = sha("moved boundary") if bad == "boundary" else work.boundary or BOUNDARY
            decision = verdict if verdict in ("complete", "continue", "revise", "pivot", "park") else "complete"
            report = maturation_report(stage, n, slice_n=max(work.slices, 1), decision=decision,
                                       go=work.decision or 1, ready=verdict != "not-ready",
                                       passed=verdict != "failure",
                                       boundary=boundary)
        if bad == "external":
            report["externalActions"] = ["public-publish"]
        if bad == "contract":
            report.pop("sha256")
        return report

    @precondition(lambda self: bool(self.claims))
    @rule(data=st.data(), partial=st.lists(st.sampled_from(("out/a.md", "out/b.md")), max_size=2))
    def interrupt(self, data: st.DataObject, partial: list[str]) -> None:
        """A supervisor confirms a claimed run gone (as health's reconciler does on conclusive evidence)."""
        self._interrupt(data.draw(st.sampled_from(sorted(self.claims))), partial)

    def _interrupt(self, runner: str, partial: list[str]) -> None:
        lane, n = self.claims.pop(runner)
        state = self.lanes.state()
        assert state is not None
        task = state.lane(lane).task(n)
        assert task is not None
        work = state.lane(lane).work_of(task.candidate)
        assert work is not None
        answer = self.lanes.abandon(lane=lane, task=n, runner=runner, confirmed_by="supervisor",
                                    evidence="process gone", partial=partial if task.revision else [])
        after = self.lanes.state()
        assert after is not None
        if task.revision is None:  # an ordinary task: retried as a failed build is, within maxRetries
            assert answer.result["abandons"] == task.abandons + 1
            if task.abandons < state.settings.max_retries:
                released = after.lane(lane).task(n)
                assert answer.result["state"] == "pending" and released is not None and released.claimed_by is None
                assert released.abandons == task.abandons + 1, "a task's abandons are never reset"
            else:
                escalated = after.lane(lane).work_of(task.candidate)
                assert answer.result["state"] == "escalated", "past the cap: the owner's, never re-sent"
                assert escalated is not None and escalated.escalation is not None
                assert escalated.escalation.abandons == task.abandons + 1
                assert (escalated.escalation.stage, escalated.escalation.subject) == (task.stage, task.subject)
            return
        cap = state.settings.max_revisions + work.grants
        if work.revisions < cap:
            requeued = after.lane(lane).task(n)
            assert requeued is not None and requeued.claimed_by is None, "requeued as the same task"
            assert requeued.revision is not None
            assert requeued.revision.failed_starts == task.revision.failed_starts + 1
            assert (requeued.revision.parent, requeued.revision.input_sha256, requeued.revision.critic_sha256) == (
                task.revision.parent, task.revision.input_sha256, task.revision.critic_sha256)
            assert after.lane(lane).work_of(task.candidate).revisions == work.revisions + 1  # type: ignore[union-attr]
        else:
            escalated = after.lane(lane).work_of(task.candidate)
            assert escalated is not None and escalated.escalation is not None, "past the cap: the owner's"
            assert escalated.escalation.revision is not None
            assert escalated.escalation.revision.failed_starts == task.revision.failed_starts + 1
        assert answer.result["state"] == ("pending" if work.revisions < cap else "escalated")

    @rule(decision=st.sampled_from(("revise", "park")), lane=st.sampled_from(("promotion", "maturation")))
    def owner_decides(self, decision: str, lane: str) -> None:
        view = lane_view(self.lanes, lane)
        owner_tasks = [t for t in view.tasks if t["kind"] == "owner"]
        if not owner_tasks:
            return
        self.lanes.decide_escalation(lane=lane, task=owner_tasks[0]["task"], decided_by="owner", decision=decision,
                                     reason="the owner's call")

    @rule(candidate=st.sampled_from(POOL), approve=st.booleans(), use=st.booleans())
    def approval(self, candidate: str, approve: bool, use: bool) -> None:
        approval = self.token("ap")
        self.lanes.request_approval(approval=approval, candidate=candidate, action="public-publish",
                                    requested_by="run", reason="publish")
        self.lanes.decide_approval(approval=approval, decided_by="owner", approved=approve)
        if approve:
            self.approved.add(approval)
        if use:
            try:
                self.lanes.record_external_action(approval=approval, candidate=candidate, action="public-publish",
                                                  runner="run")
            except PipelineError as error:
                assert not approve and error.code == "APPROVAL_REQUIRED"

    # -- invariants ---------------------------------------------------------------------------------

    @invariant()
    def every_new_event_keeps_the_rules(self) -> None:
        journal = self.lanes.journal
        events = journal.history("pipeline/lanes", after=self.checked)
        state = self.lanes.state()
        assert state is not None
        by_command: dict[str, int] = {}
        for event in events:
            by_command[event.command_id] = by_command.get(event.command_id, 0) + 1
            data = event.data
            if event.type == "task-done":
                assert len(data["done"]) == 1 and len(data["enqueued"]) <= 1
                decision = data.get("decision")
                if decision and decision["verdict"] == "GO":
                    verified = self.passing_verify.get(decision["candidate"])
                    assert verified == (decision["verifierArtifact"], decision["criteria"]), "GO without verifier"
                if data["stage"] in ("review", "decide", "release"):
                    assert data["by"] not in self.producers.get((data["lane"], data["candidate"]), set()), \
                        "a producer reviewed its own work"
            if event.type == "task-claimed":
                assert data["done"] == [] and len(data["enqueued"]) <= 1
            if event.type == "repair-start-failed":
                assert len(data["done"]) <= 1 and len(data["enqueued"]) <= 1 and data["failedStarts"] >= 1
            if event.type == "task-done" and data["enqueued"] and data["stage"] in ("review", "release"):
                enqueued = state.lane(data["lane"]).task(data["enqueued"][0])
                if enqueued is not None and enqueued.stage in ("brief", "iterate"):
                    assert enqueued.revision is not None and enqueued.revision.parent == data["task"], \
                        "a revision names the review that asked for it"
            if event.type == "external-action-recorded":
                assert data["id"] in self.approved and data["approved"] is True
        assert all(count == 1 for count in by_command.values())
        for lane in (state.promotion, state.maturation):
            assert len(lane.wip) <= state.settings.wip(lane.lane)
            assert len(lane.tasks) <= len(lane.wip)
            for work in lane.wip:
                assert work.revisions <= state.settings.max_revisions + work.grants
            for task in lane.tasks:
                assert task.abandons <= state.settings.max_retries, "an abandoned task past its cap is pending"
                seen = self.revisions.get((lane.lane, task.n))
                if seen is not None:
                    assert task.revision is not None and task.revision.failed_starts >= seen.failed_starts, \
                        "an interrupted revision is never reset to a fresh pending repair"
                    assert task.revision.parent == seen.parent and task.revision.input_sha256 == seen.input_sha256
                if task.revision is not None:
                    self.revisions[(lane.lane, task.n)] = task.revision
        self.checked = journal.head("pipeline/lanes")


PipelineMachine.TestCase.settings = settings(
    max_examples=40, stateful_step_count=40, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
test_the_staged_lanes_keep_their_invariants_over_random_runs = PipelineMachine.TestCase
