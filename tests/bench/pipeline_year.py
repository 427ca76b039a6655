"""A year of the staged lanes through the real engine on a file journal: state size and per-command cost.

Every week a Top-N of five candidates (two new each week) is recorded; every day each lane's scheduler
run and reviewer run claim and report, with outcomes from a fixed seed (rejected briefs, failed builds,
failed verifications, PIVOT / PARK, revised slices, owner escalations answered revise or park). It prints
the state's size and the mean milliseconds per command for each quarter, beside the first four weeks'
mean measured in the same run (the baseline), and the largest state seen.

    .venv/bin/python tests/bench/pipeline_year.py [--weeks 52] [--seed 7] [--profile FILE]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from factory_schedule.core import ManualClock
from factory_schedule.core.pipeline import PIPELINE_AGGREGATE, ClaimIdle, PipelineError, PipelineLanes
from factory_schedule.store import open_journal
from tests.core.pipeline.pipeline_support import (
    adopt,
    commission,
    lane_view,
    maturation_report,
    promotion_report,
    top_n,
)

Answer = TypeVar("Answer")  # what a timed command returns


def _week_label(index: int) -> str:
    year, week = (2026, 50 + index) if index <= 3 else (2027 + (index - 4) // 52, 1 + (index - 4) % 52)
    return f"{year}-W{week:02d}"


def stage_report(lanes: PipelineLanes, lane: str, task: dict[str, Any], roll: float) -> dict[str, Any]:
    """The report a run sends for its claimed `task`, its outcome drawn from `roll` (0 to 1): rejected
    briefs, failed builds and verifications, GO / PIVOT / PARK, revised, continued or completed slices."""
    state = lanes.state()
    assert state is not None  # the settings are recorded
    work = state.lane(lane).work_of(task["candidate"])
    assert work is not None  # a claimed task's work is in progress
    if lane == "promotion":
        return promotion_report(
            task["stage"], task["task"], verdict="GO" if roll < 0.6 else "PIVOT" if roll < 0.8 else "PARK",
            review="reject" if roll < 0.25 else "pass", build="failure" if roll < 0.2 else "success",
            passed=roll > 0.15, verifier_sha=work.verified.sha256 if work.verified else None,
            criteria=work.criteria or promotion_report("brief", 0)["criteriaSha256"])
    decision = "revise" if roll < 0.25 else "continue" if roll < 0.5 and work.slices < 6 else "complete"
    return maturation_report(task["stage"], task["task"], slice_n=max(work.slices, 1), decision=decision,
                             go=work.decision or 1, passed=roll > 0.1, ready=roll > 0.1)


def parked(lane: str, report: dict[str, Any]) -> dict[str, Any]:
    """What the reviewer sends instead of a GO the engine refused (VERIFIER_REQUIRED): a PARK."""
    return {**report, "verdict": "PARK"} if lane == "promotion" else {**report, "decision": "park"}


class Year:
    def __init__(self, folder: Path, seed: int) -> None:
        self.clock = ManualClock("2026-12-07T01:00:00Z")
        self.lanes = PipelineLanes(open_journal(f"sqlite:///{folder / 'journal.db'}"), self.clock)
        self.random = random.Random(seed)
        self.k = 0
        self.timings: list[tuple[int, float]] = []  # (week, seconds) per command
        self.week = 0
        self.outcomes: dict[str, int] = {}

    def timed(self, call: Callable[..., Answer], **kwargs: Any) -> Answer:
        start = time.perf_counter()
        try:
            return call(**kwargs)
        finally:
            self.timings.append((self.week, time.perf_counter() - start))

    def token(self, prefix: str) -> str:
        self.k += 1
        return f"{prefix}-{self.k}"

    def run(self, lane: str, reviewer: bool) -> None:
        runner = self.token("rev" if reviewer else "run")
        run = f"{lane}-reviewer" if reviewer else lane
        claimed = self.timed(self.lanes.claim, lane=lane, run=run, runner=runner)
        if isinstance(claimed, ClaimIdle):
            if claimed.reason == "awaiting-owner":
                task = lane_view(self.lanes, lane).tasks[0]["task"]
                self.timed(self.lanes.decide_escalation, lane=lane, task=task, decided_by="owner",
                           decision=self.random.choice(("revise", "park")), reason="the owner's call")
            return
        task = claimed.result
        report = stage_report(self.lanes, lane, task, self.random.random())
        try:
            done = self.timed(self.lanes.report, lane=lane, task=task["task"], runner=runner, report=report)
        except PipelineError as error:  # GO on a failed verification: the reviewer parks it instead
            assert error.code == "VERIFIER_REQUIRED", error
            done = self.timed(self.lanes.report, lane=lane, task=task["task"], runner=runner,
                              report=parked(lane, report))
        outcome = done.result["outcome"]
        if outcome:
            self.outcomes[f"{lane}:{outcome}"] = self.outcomes.get(f"{lane}:{outcome}", 0) + 1

    def go(self, weeks: int) -> list[tuple[int, int]]:
        adopt(self.lanes, commission(threshold=2, cooldownHours=12))
        sizes = []
        for self.week in range(weeks):
            fresh = [f"c{self.week:03d}-{i}" for i in range(2)]
            carried = [f"c{self.week - 1:03d}-{i}" for i in range(2)] if self.week else []
            self.timed(self.lanes.record_top_n, week=_week_label(self.week),
                       candidates=top_n(*(fresh + carried + [f"c{self.week:03d}-x"])))
            for _day in range(7):
                self.clock.advance(hours=20)
                for lane in ("promotion", "maturation"):
                    for reviewer in (False, True, False, True):
                        self.clock.advance(minutes=5)
                        self.run(lane, reviewer)
                self.clock.advance(hours=4)
            _version, text = self.lanes.journal.load_text(PIPELINE_AGGREGATE)
            sizes.append((self.week, len(text.encode("utf-8"))))  # type: ignore[union-attr]
        return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--weeks", type=int, default=52)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--profile", default=None, help="write a cProfile of the weeks' commands to this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        year = Year(Path(folder), args.seed)
        profiler = cProfile.Profile() if args.profile else None
        if profiler:
            profiler.enable()
        sizes = year.go(args.weeks)
        if profiler:
            profiler.disable()
            profiler.dump_stats(args.profile)
            pstats.Stats(args.profile).sort_stats("cumulative").print_stats(25)
        baseline = [s for w, s in year.timings if w < 4]
        base_ms = 1000 * sum(baseline) / len(baseline)
        print(f"{args.weeks} weeks, {len(year.timings)} commands, journal head "
              f"{year.lanes.journal.head(PIPELINE_AGGREGATE)}; outcomes {dict(sorted(year.outcomes.items()))}")
        print(f"baseline (weeks 1-4): {base_ms:.2f} ms per command")
        print("weeks      state bytes (end)   ms per command   ratio to baseline")
        for start in range(0, args.weeks, 13):
            part = [s for w, s in year.timings if start <= w < start + 13]
            mean = 1000 * sum(part) / len(part)
            end = min(start + 13, args.weeks)
            print(f"{start + 1:>3}-{end:<3}    {sizes[end - 1][1]:>12,}      {mean:>12.2f}     {mean / base_ms:>8.2f}")
        print(f"largest state: {max(size for _w, size in sizes):,} bytes (limit 262,144)")
        year.lanes.journal.verify(PIPELINE_AGGREGATE)


if __name__ == "__main__":
    main()
