"""Real OS processes racing for a lane's claims on one journal file: one task, one claimant."""

from __future__ import annotations

from collections import Counter

from tests.core.pipeline import pipeline_processes
from tests.core.pipeline.pipeline_support import Runs, drive_promotion, make_harness, top_n
from tests.processes import PROCESSES

RACERS = 6


def _race(h, lane: str, run: str, prefix: str) -> list[dict]:
    barrier = PROCESSES.Barrier(RACERS)
    queue = PROCESSES.Queue()
    now = h.clock.now().isoformat()
    processes = [PROCESSES.Process(target=pipeline_processes.race_claim,
                               args=(h.url, now, lane, run, f"{prefix}-{i}", barrier, queue))
                 for i in range(RACERS)]
    for process in processes:
        process.start()
    reports = [queue.get(timeout=180) for _ in processes]
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    assert [r for r in reports if r["kind"] == "error"] == []
    return reports


def test_six_processes_racing_to_activate_promotion_select_one_candidate_and_one_claims_it(tmp_path):
    h = make_harness(tmp_path)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "alpha-one", "charlie"))
    h.tick()
    reports = _race(h, "promotion", "promotion", "run")
    assert Counter(r["kind"] for r in reports) == {"claimed": 1, "idle": RACERS - 1}
    assert {r["reason"] for r in reports if r["kind"] == "idle"} == {"claimed"}
    winner = next(r for r in reports if r["kind"] == "claimed")
    view = h.lanes.lane_view("promotion")
    assert winner["candidate"] == "alpha-one" and len(view.wip) == 1
    assert view.tasks[0]["claimedBy"] == winner["runner"]
    claims = [e for e in h.events() if e.type == "task-claimed"]
    assert len(claims) == 1 and claims[0].data["enqueued"] == [winner["task"]]


def test_six_reviewer_processes_racing_for_one_review_task_leave_one_reviewer(tmp_path):
    h = make_harness(tmp_path)
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "alpha-one"))
    drive_promotion(h, Runs(), until="review")
    h.tick()
    reports = _race(h, "promotion", "promotion-reviewer", "rev")
    assert Counter(r["kind"] for r in reports) == {"claimed": 1, "idle": RACERS - 1}
    assert {r["reason"] for r in reports if r["kind"] == "idle"} == {"nothing-to-review"}
    winner = next(r for r in reports if r["kind"] == "claimed")
    assert h.lanes.lane_view("promotion").tasks[0]["claimedBy"] == winner["runner"]
