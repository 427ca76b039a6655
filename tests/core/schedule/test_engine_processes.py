"""Real OS processes (and threads) against one journal file: races to start a lane, a runner killed mid-call."""

from __future__ import annotations

import functools
import json
import os
import signal
import threading
from collections import Counter
from collections.abc import Callable

from factory_schedule.core import SCHEDULE_LIMITS, LifecycleSchedule, ManualClock, ScheduleError
from factory_schedule.store import open_journal
from tests.core.schedule import processes as children
from tests.core.schedule import support as helpers
from tests.core.schedule.support import basic_id, confirmation, make_harness, writes_nothing
from tests.processes import PROCESSES

RACERS = 6

LANE = "alpha/basic"
NIGHT1 = basic_id("alpha", "2026-12-07")


def _race_starts(h, now: str) -> list[dict]:
    """Six OS processes tick the lane at `now` together; each reports what start answered."""
    barrier = PROCESSES.Barrier(RACERS)
    queue = PROCESSES.Queue()
    processes = [
        PROCESSES.Process(target=children.race_start, args=(h.url, now, LANE, f"r{index}", barrier, queue))
        for index in range(RACERS)
    ]
    for process in processes:
        process.start()
    reports = [queue.get(timeout=180) for _ in processes]
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    errors = [report["error"] for report in reports if not report["ok"]]
    assert errors == [], "\n".join(errors)
    return reports


def test_six_processes_racing_start_on_one_lane_admit_one_occurrence(tmp_path):
    h = make_harness(tmp_path)
    reports = _race_starts(h, "2026-12-07T02:00:00Z")
    assert Counter(report["kind"] for report in reports) == {"admitted": 1, "running": RACERS - 1}
    winner = next(report for report in reports if report["kind"] == "admitted")
    assert winner["replayed"] is False
    assert winner["occurrence"] == NIGHT1
    assert [cid for cid in h.command_ids() if cid.endswith("/admit")] == [f"{NIGHT1}/admit"]
    assert h.stored(NIGHT1)["segments"][0]["runner"] == winner["runner"]


def test_a_runner_killed_mid_call_leaves_one_logical_occurrence_and_its_call_is_never_sent_again(tmp_path):
    h = make_harness(tmp_path)
    h.at(helpers.RECORDED)
    h.owner_record("claude", 1)
    marker = str(tmp_path / "mid-call.json")
    child = PROCESSES.Process(
        target=children.start_call_and_hang, args=(h.url, "2026-12-07T02:05:00Z", LANE, "doomed", marker)
    )
    child.start()
    try:
        children.wait_for_file(marker)
        assert child.pid is not None
        os.kill(child.pid, signal.SIGKILL)
        child.join(timeout=30)
    finally:
        if child.is_alive():
            child.kill()
    assert child.exitcode == -signal.SIGKILL

    with open(marker) as handle:
        seen = json.load(handle)
    assert seen["dispatch"] is True and seen["occurrence"] == NIGHT1

    # The dead runner's occurrence is still the lane's one open occurrence, running; nobody takes it by time.
    h.at("2026-12-07T02:10:00Z")
    with writes_nothing(h):
        assert h.schedule.start(lane=LANE, runner="survivor").kind == "running"
    h.schedule.reconcile(occurrence_id=NIGHT1, confirmation=confirmation("doomed"))
    call = h.stored(NIGHT1)["calls"][0]
    assert (call["outcome"], call["unknown"]) == ("lost", True)

    h.at("2026-12-07T02:11:00Z")
    tick = h.schedule.start(lane=LANE, runner="survivor")
    assert (tick.kind, tick.occurrence.id) == ("resumed", NIGHT1)
    # The dead runner's request replays without a license; the survivor may not send that work again.
    with writes_nothing(h):
        replay = h.call(NIGHT1, runner="doomed", work="w1")
        refusal = h.call(NIGHT1, runner="survivor", work="w1")
    assert (replay.replayed, replay.dispatch) == (True, False)
    assert (refusal.admitted, refusal.reason) == (False, "unknown-effect")
    assert [cid for cid in h.command_ids() if cid.endswith("/admit")] == [f"{NIGHT1}/admit"]
    assert sum(1 for cid in h.command_ids() if cid.startswith(f"{NIGHT1}/call/") and "/end" not in cid) == 1


def test_six_processes_racing_to_resume_a_deferred_occurrence_resume_it_once(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T02:00:00Z")
    h.admit(LANE, "r-first")
    h.at("2026-12-07T02:05:00Z")
    h.schedule.defer(occurrence_id=NIGHT1, runner="r-first", reason="volume-unmounted")

    reports = _race_starts(h, "2026-12-08T02:00:00Z")
    assert Counter(report["kind"] for report in reports) == {"resumed": 1, "running": RACERS - 1}
    assert [cid for cid in h.command_ids() if "/resume/" in cid] == [f"{NIGHT1}/resume/2"]


def _together(h, now: str, actions: list[Callable[[LifecycleSchedule], object]]) -> list[object]:
    """Each action runs in its own thread, on its own schedule over its own journal handle, all planned at one
    version; its answer, or the exception it raised."""
    barrier = threading.Barrier(len(actions))
    answers: list[object] = [None] * len(actions)

    def run(index: int) -> None:
        schedule = LifecycleSchedule(helpers.PlannedTogether(open_journal(h.url), barrier), ManualClock(now))
        try:
            answers[index] = actions[index](schedule)
        except Exception as error:
            answers[index] = error

    threads = [threading.Thread(target=run, args=(index,)) for index in range(len(actions))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return answers


def _planned_together(h, now: str, runners: list[str]) -> list[object]:
    """Each runner ticks the lane, all planned at one version."""
    return _together(h, now, [functools.partial(LifecycleSchedule.start, lane=LANE, runner=runner)
                              for runner in runners])


def test_runners_that_planned_an_admission_at_one_version_admit_once_and_the_others_find_it_running(tmp_path):
    h = make_harness(tmp_path)
    answers = _planned_together(h, "2026-12-07T02:00:00Z", [f"r{index}" for index in range(RACERS)])
    kinds = Counter(getattr(answer, "kind", repr(answer)) for answer in answers)
    assert kinds == {"admitted": 1, "running": RACERS - 1}, answers
    assert [cid for cid in h.command_ids() if cid.endswith("/admit")] == [f"{NIGHT1}/admit"]


def test_runners_that_planned_a_resumption_at_one_version_resume_once_and_the_others_find_it_running(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T02:00:00Z")
    h.admit(LANE, "r-first")
    h.at("2026-12-07T02:05:00Z")
    h.schedule.defer(occurrence_id=NIGHT1, runner="r-first", reason="volume-unmounted")
    answers = _planned_together(h, "2026-12-08T02:00:00Z", [f"r{index}" for index in range(RACERS)])
    kinds = Counter(getattr(answer, "kind", repr(answer)) for answer in answers)
    assert kinds == {"resumed": 1, "running": RACERS - 1}, answers
    assert [cid for cid in h.command_ids() if "/resume/" in cid] == [f"{NIGHT1}/resume/2"]


def test_a_command_overtaken_sixteen_times_is_contended_and_writes_nothing_of_its_own(tmp_path):
    h = make_harness(tmp_path)
    overtaken = helpers.Overtaken(open_journal(h.url), h.again())
    h.at("2026-12-07T02:00:00Z")
    schedule = LifecycleSchedule(overtaken, h.clock)
    try:
        schedule.start(lane=LANE, runner="r1")
    except ScheduleError as error:
        assert error.code == "CONTENDED", error
    else:
        raise AssertionError("a command overtaken every round was answered")
    assert overtaken.overtaken == SCHEDULE_LIMITS.max_rounds
    assert not any(cid.endswith("/admit") for cid in h.command_ids())
    assert h.schedule.start(lane=LANE, runner="r1").kind == "admitted", "uncontended, it goes through"


def _calls_planned_together(h, now: str, requests: list[dict]) -> list[object]:
    """Each request asks to admit a call, all planned at one version."""
    return _together(h, now, [
        functools.partial(LifecycleSchedule.admit_call, occurrence_id=NIGHT1, task="scan", sign_in=helpers.SIGN_IN,
                          bound=helpers.CALL_BOUND, **request)
        for request in requests
    ])


def test_identical_call_requests_planned_at_one_version_license_one_contact(tmp_path):
    h = make_harness(tmp_path)
    h.at(helpers.RECORDED)
    h.owner_record("claude", 1)
    h.at("2026-12-07T02:00:00Z")
    h.admit(LANE, "r1")
    answers = _calls_planned_together(h, "2026-12-07T02:05:00Z", [{"runner": "r1", "work": "w1"}] * 4)
    assert all(getattr(answer, "admitted", False) for answer in answers), answers
    assert sorted(answer.dispatch for answer in answers) == [False, False, False, True]
    assert len({answer.call for answer in answers}) == 1


def test_different_call_requests_planned_at_one_version_admit_one_and_find_the_call_open(tmp_path):
    h = make_harness(tmp_path)
    h.at(helpers.RECORDED)
    h.owner_record("claude", 1)
    h.at("2026-12-07T02:00:00Z")
    h.admit(LANE, "r1")
    answers = _calls_planned_together(h, "2026-12-07T02:05:00Z",
                                      [{"runner": "r1", "work": f"w{index}"} for index in range(4)])
    outcomes = Counter("dispatch" if getattr(answer, "dispatch", False) else getattr(answer, "reason", repr(answer))
                       for answer in answers)
    assert outcomes == {"dispatch": 1, "call-open": 3}, answers
