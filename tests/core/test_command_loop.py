"""The command loop's rules: a command plans once, under the journal's write lock, with the clock read there.

A plan is the whole decision (every rule, over the state read at its version), so planning once is enough
only if nothing it uses was read before the lock: the journal, the clock and the receipts it looks up are
all read while the lock is held, and a writer that holds the lock first moves what the command sees.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pendulum import DateTime

from factory_schedule.core import LifecycleSchedule, ManualClock
from factory_schedule.core.pipeline import PipelineLanes, PipelineResult
from factory_schedule.store import open_journal
from tests.core.pipeline import pipeline_support as pipes
from tests.core.schedule.support import RECORDED, SIGN_IN, basic_id, basic_lane, commission, make_harness, result_report

LANE = "alpha/basic"  # opens at 02:00, closes at 05:00
NIGHT = basic_id("alpha", "2026-12-07")


class CountingClock(ManualClock):
    """The manual clock, counting its readings: each plan reads it once."""

    def __init__(self, start: str) -> None:
        super().__init__(start)
        self.reads = 0

    def now(self) -> DateTime:
        self.reads += 1
        return super().now()


class CountedJournal:
    """The real journal, counting each read a command makes by (call, what it names)."""

    def __init__(self, journal: Any) -> None:
        self._journal = journal
        self.reads: Counter[tuple[str, str]] = Counter()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._journal, name)

    def load_text(self, aggregate: str) -> Any:
        self.reads["load_text", aggregate] += 1
        return self._journal.load_text(aggregate)

    def receipt(self, command_id: str) -> Any:
        self.reads["receipt", command_id] += 1
        return self._journal.receipt(command_id)


class AsksForTheLock:
    """The real journal, announcing on `asked` each time a command asks for its write lock, before it waits."""

    def __init__(self, journal: Any, asked: threading.Event) -> None:
        self._journal = journal
        self._asked = asked

    def __getattr__(self, name: str) -> Any:
        return getattr(self._journal, name)

    @contextmanager
    def writing(self) -> Iterator[None]:
        self._asked.set()
        with self._journal.writing():
            yield


def test_a_schedule_command_plans_once_with_one_clock_reading(tmp_path):
    h = make_harness(tmp_path)
    clock = CountingClock("2026-12-07T02:00:00Z")
    journal = CountedJournal(open_journal(h.url))
    schedule = LifecycleSchedule(journal, clock)
    commands = {
        "record_account": lambda: schedule.record_account(account="claude", sequence=1, sign_in=SIGN_IN,
                                                          overage=False, recorded_by="owner"),
        "start": lambda: schedule.start(lane=LANE, runner="r1"),
        "admit_call": lambda: schedule.admit_call(occurrence_id=NIGHT, runner="r1", task="scan", work="w1",
                                                  bound=100_000, sign_in=SIGN_IN),
        "end_call": lambda: schedule.end_call(occurrence_id=NIGHT, runner="r1", call=1, report=result_report()),
        "settle": lambda: schedule.settle(occurrence_id=NIGHT, settled_by="r1", status="completed", reason="done"),
    }
    for name, command in commands.items():
        clock.reads = 0
        journal.reads.clear()
        answer = command()
        assert not getattr(answer, "replayed", True), f"{name}: {answer}"
        assert clock.reads == 1, f"{name} read the clock {clock.reads} times"
        twice = {read: n for read, n in journal.reads.items() if n > 1}
        assert not twice, f"{name} read these more than once: {twice}"


def test_a_pipeline_command_reads_its_state_and_the_schedules_once(tmp_path):
    h = pipes.make_harness(tmp_path)
    clock = CountingClock(str(h.clock.now()))
    journal = CountedJournal(open_journal(h.url))
    lanes = PipelineLanes(journal, clock)
    lanes.record_top_n(week="2026-W50", candidates=pipes.top_n("alpha-one", "alpha-two"))
    clock.reads = 0
    journal.reads.clear()
    claimed = lanes.claim(lane="promotion", run="promotion", runner="run-1")
    assert isinstance(claimed, PipelineResult), claimed
    assert clock.reads == 1, f"the claim read the clock {clock.reads} times"
    assert {read: n for read, n in journal.reads.items() if read[0] == "load_text"} == {
        ("load_text", "pipeline/lanes"): 1, ("load_text", "discovery/schedule"): 1}
    assert not {read: n for read, n in journal.reads.items() if n > 1}


def test_a_clock_reading_taken_before_the_write_lock_is_never_used(journal_url):
    """At 04:59 (the lane's window open) a runner asks to start while another writer holds the lock; when
    the lock is free it is 05:01 and the window has closed: nothing may be admitted."""
    LifecycleSchedule(open_journal(journal_url), ManualClock(RECORDED)).record_commission(
        commission([basic_lane()]))
    clock = ManualClock("2026-12-07T04:59:00Z")
    asked, holding = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def hold_the_lock() -> None:
        other = open_journal(journal_url)
        try:
            with other.writing():
                holding.set()
                asked.wait(timeout=60)
                clock.set("2026-12-07T05:01:00Z")
                LifecycleSchedule(other, clock).record_account(account="chatgpt", sequence=1, sign_in=SIGN_IN,
                                                               overage=False, recorded_by="the other writer")
        except BaseException as error:
            failures.append(error)
            holding.set()
        finally:
            other.close()

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    assert holding.wait(timeout=60)
    journal = open_journal(journal_url)
    try:
        tick = LifecycleSchedule(AsksForTheLock(journal, asked), clock).start(lane=LANE, runner="r1")
    finally:
        holder.join(timeout=60)
    assert not failures, failures
    assert tick.kind == "waiting", tick
    assert journal.receipt(f"{NIGHT}/admit") is None
    assert journal.receipt("discovery/account/chatgpt/1") is not None, "the other writer held the lock first"
    journal.close()
