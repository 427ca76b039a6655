"""Benchmark: a simulated year of nine Products on the real engine, with faults, then the dashboard on the result.

    .venv/bin/python tests/bench/year.py                 # a year on a temporary SQLite file (~1.5 minutes here)
    .venv/bin/python tests/bench/year.py --days 60       # shorter
    .venv/bin/python tests/bench/year.py --url postgresql+psycopg://user@host/db   # an empty PostgreSQL database
    .venv/bin/python tests/bench/year.py --statements   # also each statement's mean time (and pages), every 30 days

Every lane of `proposed_commission(products=[nine names])` (nine basic lanes, nine full lanes, the three portfolio
lanes; the even Products' basic scans run on chatgpt so that both accounts are exercised) runs from Monday 5 January
2026 on a `ManualClock`, through `core.LifecycleSchedule` over `store.open_journal`, as the LaunchAgent and its
runners would: at each of launchd's times for the night (`launch_intervals`: the lanes' slots, 02:00 to 04:40
local; `--tick-minutes N` ticks every N minutes from 01:50 to 08:10 instead) a tick calls `start` for every lane, an
admitted or resumed runner then makes its calls (`admit_call`, then `end_call` with the tokens used) and settles.
The daytime is skipped in one step; the owner works at noon: the claude and chatgpt records are renewed every
fourteen days (the commission keeps them for 30), and a new record follows each 401 some hours later.

Faults come from `random.Random(seed)`, in a fixed order, so a run is reproducible:
usage limits (a `usage-limit` report whose window resets two to six hours ahead, then `defer usage-limit`; the
occurrence resumes when the window reopens), 401s (a `sign-in-needed` report, `defer sign-in-needed`; the owner's new
record lifts it), killed runners (the runner dies with its call in flight; a supervisor reconciles half an hour later
with `{runner, confirmedBy, evidence}`), budget exhaustion (a weekly ceiling below a heavy week's use: `admit_call` is
refused `budget-exhausted` and the runner defers naming its call bound), and lost calls (`end_call` kind `lost`).

What it prints: commands executed (the journal's head), wall time, commands per second over the year and for its
first and last 30 days (a "month") with their ratio (and each 30 days' on stderr as it goes, beside a raw commit
timed just then); then the same ratio measured side by side: 30 more nights on the year's journal alternating
with 30 nights on a young journal past its 60th day (`side_by_side`), so that the machine's drift falls on both;
the time a committed command takes on average, the largest state seen (canonical JSON bytes of
`journal.load("discovery/schedule").state`, sampled after every tick that wrote), the journal's size, a raw sqlite3
loop (WAL, synchronous=FULL, one small row per transaction) beside the journal file, sampled after every 30 days
and at the end of the same run (the disk's speed drifts with the machine's other work), and the
dashboard's first paint, Health shown (every chain checked from its checkpoint), and its re-render after one new
command,
measured headless with `App.run_test` (see `dashboard_times`) on the year's journal as the side-by-side nights
left it.
Before the table, three lines say the headline ratios: `command / raw commit: N.NNx` (a schedule command that
wrote, mean, against the raw commit of the same run), `pipeline command / raw commit: N.NNx` (a staged lanes'
command that wrote, mean, against the same raw commit), and `health (chain checked) on the year's journal / on
a young journal: N.NN` (the median of a `health` as the command runs it, after each side-by-side night on each
journal, every chain checked from the checkpoint the previous morning's left). After them, the floor's lines
(`floor.py`): `command floor (the journal's statements, bare sqlite3) / raw commit: N.NNx` and `command / its
floor: N.NNx` (the last 30 days' written schedule commands, each one's statements replayed bare on a copy of
the journal right after it), the journal's own calls against that floor, the same for pipeline commands, and
both in CPU time alone. The last lines are a Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import heapq
import itertools
import os
import pstats
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pendulum
from pendulum import Date, DateTime

from factory_schedule.core import (
    SCHEDULE_AGGREGATE,
    LifecycleSchedule,
    ManualClock,
    ScheduleError,
    iso_week_of,
    lanes_of,
    launch_intervals,
    proposed_commission,
    zoned_instant,
)
from factory_schedule.store import canonical_json, open_journal
from tests.bench import floor as command_floor  # the journal's own statements, replayed bare
from tests.bench import year_lanes  # the staged lanes' runs, scheduled like every other lane
from tests.bench.journal import raw_loop  # the same raw sqlite3 loop as the journal's bench

PRODUCTS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"]
CHATGPT_PRODUCTS = frozenset(PRODUCTS[1::2])  # their basic scans run on chatgpt
FIRST_DAY = pendulum.date(2026, 1, 5)  # a Monday; the year crosses both of London's clock changes
ZONE = "Europe/London"
SIGN_IN = "owner@factory.example"
OWNER = "owner"
NIGHT_FROM, NIGHT_UNTIL = (1, 50), (8, 10)
RENEW_EVERY_DAYS = 14
# About a normal week's use: a busy week (more calls, bigger answers) runs out before its Sunday lanes.
WEEKLY_TOKENS = 26_000_000
BUSY_WEEKS = 0.3
PERIOD_DAYS = 30
RAW_SAMPLE = 300  # raw commits after every 30 days, besides the loop at the end
STATE_TARGET = 96 * 1024
COST_TARGET = 3.0  # the target: a schedule command within 3x of a raw commit
GROWTH_TARGET = 1.2
FIRST_PAINT_TARGET = 0.300
HEALTH_SHOWN_TARGET = 0.500
RERENDER_TARGET = 0.050
FLOOR_DAYS = 30  # the last days of the run whose commands' statements are replayed bare (`floor.py`)
YOUNG_DAYS = 60  # the young journal of the side-by-side comparison: its state has stopped growing by then


@dataclass(frozen=True)
class FaultRates:
    """How often each fault strikes: per provider call, and per segment for a killed runner."""

    usage_limit: float = 0.010
    sign_in: float = 0.004
    lost: float = 0.006
    killed: float = 0.008


DEFERRAL_FOR_REFUSAL = {"limited": "usage-limit", "sign-in-needed": "sign-in-needed",
                        "budget-exhausted": "budget-exhausted"}
GONE = ("NOT_RUNNING", "NOT_OWNER", "SETTLED", "STALE")


# -- the journal, counted ------------------------------------------------------------------------------------------


def _now() -> tuple[float, float]:
    """The wall clock and this process's CPU time: a command's wait on the disk shows in the first alone."""
    return time.perf_counter(), time.process_time()


class CountingJournal:
    """The journal as the engine sees it, counting the commands that committed (a replay writes nothing), and
    the time spent inside the journal's own calls (`seconds`: its statements, checks, encoding and commits, less
    the engine's decision that `execute` runs inside its transaction), so that a command's time splits into the
    journal's and the engine's own. `cpu_seconds` is the same calls' CPU time: what is left of them once
    waiting on the disk is taken out, which moves far less with this machine's load than the wall clock."""

    TIMED = frozenset({"load_text", "load", "head", "receipt", "events_of", "history", "history_desc"})

    def __init__(self, journal: Any) -> None:
        self._journal = journal
        self.commits = 0
        self.seconds = 0.0
        self.cpu_seconds = 0.0

    def _spent(self, started: tuple[float, float], less: tuple[float, float] = (0.0, 0.0)) -> None:
        wall, cpu = _now()
        self.seconds += wall - started[0] - less[0]
        self.cpu_seconds += cpu - started[1] - less[1]

    def execute(self, aggregate: str, command_id: str, payload: Any, expected_version: int,
                decide: Callable[[Any, int], Any], **kwargs: Any) -> Any:
        deciding = [0.0, 0.0]

        def timed_decide(state: Any, version: int) -> Any:
            started = _now()
            try:
                return decide(state, version)
            finally:
                wall, cpu = _now()
                deciding[0] += wall - started[0]
                deciding[1] += cpu - started[1]

        started = _now()
        try:
            outcome = self._journal.execute(aggregate, command_id, payload, expected_version, timed_decide, **kwargs)
        finally:
            self._spent(started, (deciding[0], deciding[1]))
        if not outcome.replayed:
            self.commits += 1
        return outcome

    @contextmanager
    def writing(self) -> Iterator[None]:
        """The write lock, its taking (BEGIN) and its release (COMMIT) timed as the journal's."""
        started = _now()
        with self._journal.writing():
            self._spent(started)
            try:
                yield
            finally:
                started = _now()
        self._spent(started)

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._journal, name)
        if name not in self.TIMED:
            return attribute

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = _now()
            try:
                return attribute(*args, **kwargs)
            finally:
                self._spent(started)

        return timed


class SqlitePages:
    """How many pages a connection's statements touch, by SQLite's own count (cache hits plus misses).

    Unlike a time, a count does not move with the machine: a statement whose pages grow over the year
    is the journal's doing. Python's sqlite3 does not expose `sqlite3_db_status`, so it is called
    through ctypes, in the library the sqlite3 module itself uses, on the `sqlite3 *` that CPython
    keeps as the first field of its connection object (Modules/_sqlite/connection.h). A handle is
    trusted only once SQLite names the journal's file for it; otherwise counts are not available.
    """

    CACHE_HIT, CACHE_MISS, CACHE_WRITE = 7, 8, 9  # SQLITE_DBSTATUS_*

    def __init__(self, path: str) -> None:
        import _sqlite3
        import ctypes

        self._ctypes = ctypes
        library = ctypes.CDLL(_sqlite3.__file__)  # its own SQLite: linked in, or the shared library it loads
        self._status = library.sqlite3_db_status
        self._status.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                                 ctypes.POINTER(ctypes.c_int), ctypes.c_int]
        self._file_name = library.sqlite3_db_filename
        self._file_name.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        self._file_name.restype = ctypes.c_char_p
        self._path = os.path.realpath(path)
        self._header = ctypes.sizeof(ctypes.c_ssize_t) + ctypes.sizeof(ctypes.c_void_p)  # PyObject_HEAD
        self._handles: dict[int, int | None] = {}

    @classmethod
    def of(cls, url: str) -> SqlitePages | None:
        if not url.startswith("sqlite:///") or sys.implementation.name != "cpython":
            return None
        try:
            return cls(url.removeprefix("sqlite:///"))
        except (ImportError, OSError, AttributeError):
            return None

    def touched(self, connection: Any) -> int | None:
        """The pages `connection` has touched so far, or None when its handle cannot be trusted."""
        key = id(connection)
        if key not in self._handles:
            handle = self._ctypes.c_void_p.from_address(key + self._header).value
            name = self._file_name(handle, b"main") if handle else None
            self._handles[key] = handle if name and os.path.realpath(name.decode()) == self._path else None
        handle = self._handles[key]
        if handle is None:
            return None
        return self._count(handle, self.CACHE_HIT) + self._count(handle, self.CACHE_MISS)

    def written(self, connection: Any) -> int | None:
        """The pages `connection` has written so far (to the WAL, at its commits): what a commit's fsync carries."""
        if self.touched(connection) is None:
            return None
        return self._count(self._handles[id(connection)], self.CACHE_WRITE)

    def _count(self, handle: Any, counter: int) -> int:
        current, highest = self._ctypes.c_int(), self._ctypes.c_int()
        self._status(handle, counter, self._ctypes.byref(current), self._ctypes.byref(highest), 0)
        return current.value


class StatementTimes:
    """Mean milliseconds of each statement the journal sends (and of its commits), per period, and on SQLite
    the pages each touches: whether any one of them grows with history. Installed on the journal's own
    seams, `_statement` and `_commit`, whose first argument is the driver's connection."""

    def __init__(self, journal: Any, pages: SqlitePages | None = None) -> None:
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self.counts: Counter = Counter()
        self.pages: Counter = Counter()
        self.counter = pages
        self.pages_per_command: list[float] = []  # each period's pages touched per new command
        self.written = 0  # pages the commits wrote this period
        self.written_per_command: list[float] = []
        for name, key_of in (("_statement", lambda args: args[1]), ("_commit", lambda args: "COMMIT")):
            self._wrap(journal, name, key_of)

    def _wrap(self, journal: Any, name: str, key_of: Callable[[tuple[Any, ...]], str]) -> None:
        send = getattr(journal, name)
        counter = self.counter

        def timed(*args: Any) -> Any:
            before = counter.touched(args[0]) if counter else None
            written = counter.written(args[0]) if counter else None
            started = time.perf_counter()
            try:
                return send(*args)
            finally:
                key = key_of(args)
                self.seconds[key] += time.perf_counter() - started
                self.counts[key] += 1
                if before is not None:
                    self.pages[key] += counter.touched(args[0]) - before  # type: ignore[union-attr,operator]
                if written is not None:
                    self.written += counter.written(args[0]) - written  # type: ignore[union-attr,operator]

        setattr(journal, name, timed)

    def line(self) -> str:
        """This period's means, then a fresh period."""
        means = "  ".join(f"{key} {1000 * self.seconds[key] / self.counts[key]:.3f}" for key in sorted(self.counts))
        line = f"    ms per statement: {means}"
        if self.pages:
            commands = self.counts["insert_receipt"]
            self.pages_per_command.append(sum(self.pages.values()) / max(1, commands))
            pages = "  ".join(f"{key} {self.pages[key] / self.counts[key]:.1f}" for key in sorted(self.counts))
            line += f"\n    pages per statement: {pages}; per command {self.pages_per_command[-1]:.1f}"
            self.written_per_command.append(self.written / max(1, commands))
            line += f"\n    pages written per command (at its commit): {self.written_per_command[-1]:.1f}"
        self.seconds.clear()
        self.counts.clear()
        self.pages.clear()
        self.written = 0
        return line


# -- the simulation ------------------------------------------------------------------------------------------------


@dataclass
class Work:
    task: str
    work: str
    bound: int
    account: str
    tokens: int


@dataclass
class Period:
    commands: int = 0
    seconds: float = 0.0

    @property
    def rate(self) -> float:
        return self.commands / self.seconds if self.seconds else 0.0


@dataclass
class Figures:
    days: int = 0
    commands: int = 0
    seconds: float = 0.0
    command_seconds: float = 0.0  # time inside engine calls that committed a command
    command_journal_seconds: float = 0.0  # of which inside the journal's own calls (`CountingJournal.seconds`)
    command_journal_cpu_seconds: float = 0.0  # the CPU time of those calls (`CountingJournal.cpu_seconds`)
    committed_calls: int = 0
    periods: list[Period] = field(default_factory=list)  # consecutive 30-day blocks (the last may be shorter)
    daily: list[Period] = field(default_factory=list)
    largest_state: int = 0
    faults: Counter = field(default_factory=Counter)
    outcomes: Counter = field(default_factory=Counter)
    errors: Counter = field(default_factory=Counter)

    def span(self, first: bool) -> Period:
        """The first or the last PERIOD_DAYS days (fewer in a shorter run), summed."""
        days = self.daily[:PERIOD_DAYS] if first else self.daily[-PERIOD_DAYS:]
        return Period(sum(day.commands for day in days), sum(day.seconds for day in days))


class Year:
    """Ticks, runners and the owner, in clock order, on one ManualClock."""

    def __init__(self, url: str, seed: int, weekly_tokens: int, tick_minutes: int | None = None,
                 first_day: Date = FIRST_DAY, rates: FaultRates = FaultRates(), lanes: bool = True) -> None:
        self.url = url
        self.journal = CountingJournal(open_journal(url))
        self.first_day = first_day
        self.clock = ManualClock(zoned_instant(ZONE, first_day.subtract(days=1), "12:00"))
        self.schedule = LifecycleSchedule(self.journal, self.clock)  # type: ignore[arg-type]
        self.seed = seed
        self.rates = rates
        self.rng = random.Random(seed)
        self.weekly_tokens = weekly_tokens
        self.commission = _commission(first_day, weekly_tokens)
        if lanes:
            self.commission = year_lanes.with_runs(self.commission)
        self.lanes = {lane.lane: lane for lane in lanes_of(self.commission)}
        self.intervals = launch_intervals(self.commission, ZONE)
        self.tick_minutes = tick_minutes
        self.sequence = {"claude": 0, "chatgpt": 0}
        self.re_record_pending: set[str] = set()
        self.owner: list[tuple[DateTime, int, Callable[[], None]]] = []
        self.order = itertools.count()
        self.runner_numbers = itertools.count(1)
        self.figures = Figures()
        self.sampling_seconds = 0.0
        self.raw_path: Path | None = None  # where to interleave raw sqlite3 commits, when set
        self.raw = Period()  # raw commits and their seconds, interleaved with the simulation
        self.statements: StatementTimes | None = None  # per-statement means each period, when asked for
        self.floor_copy: Path | None = None  # where to copy the journal for the floor's replay, when set (SQLite)
        self.capture: command_floor.Capture | None = None  # the last FLOOR_DAYS' write transactions
        self.replaying: command_floor.Replay | None = None  # those transactions replayed on the copy as they come
        # The staged lanes' runs (tests/bench/year_lanes.py); their own pipeline commands are kept out of the figures.
        self.staged = year_lanes.StagedLanes(self, self.journal._journal, SIGN_IN) if lanes else None

    # -- timing ---------------------------------------------------------------------------------

    def timed(self, call: Callable[[], Any]) -> Any:
        """Run one engine call, adding its time to the command cost when it committed a command."""
        before, journal_before, cpu_before = self.journal.commits, self.journal.seconds, self.journal.cpu_seconds
        started = time.perf_counter()
        try:
            return call()
        finally:
            if self.journal.commits != before:
                self.figures.command_seconds += time.perf_counter() - started
                self.figures.command_journal_seconds += self.journal.seconds - journal_before
                self.figures.command_journal_cpu_seconds += self.journal.cpu_seconds - cpu_before
                self.figures.committed_calls += 1
            self.replay_captured()

    def replay_captured(self) -> None:
        """The floor's replay of what the journal committed since the last one, its time kept out of the figures."""
        if self.replaying is not None and self.capture is not None:
            started = time.perf_counter()
            self.replaying.catch_up(self.capture.transactions)
            self.sampling_seconds += time.perf_counter() - started

    # -- the owner ------------------------------------------------------------------------------

    def later(self, instant: DateTime, action: Callable[[], None]) -> None:
        heapq.heappush(self.owner, (instant, next(self.order), action))

    def run_due(self) -> None:
        now = self.clock.now()
        while self.owner and self.owner[0][0] <= now:
            _, _, action = heapq.heappop(self.owner)
            action()

    def record(self, account: str) -> None:
        self.sequence[account] += 1
        self.re_record_pending.discard(account)
        self.timed(lambda: self.schedule.record_account(account=account, sequence=self.sequence[account],
                                                        sign_in=SIGN_IN, overage=False, recorded_by=OWNER))

    def setup(self) -> None:
        self.timed(lambda: self.schedule.record_commission(self.commission))
        for account in ("claude", "chatgpt"):
            self.record(account)
        if self.staged is not None:
            self.staged.setup(self.commission)

    # -- one night ------------------------------------------------------------------------------

    def day(self, date: Date) -> None:
        """Noon (the owner's renewals and re-records), then every tick of the night that follows."""
        offset = (date - self.first_day).days
        self.clock.set(zoned_instant(ZONE, date, "12:00"))
        self.run_due()
        if offset > 0 and offset % RENEW_EVERY_DAYS == 0:
            for account in ("claude", "chatgpt"):
                self.record(account)
        if self.staged is not None:
            self.staged.noon(date)
        for instant in self.tick_times(date.add(days=1)):
            if instant > self.clock.now():
                self.clock.set(instant)
            self.run_due()
            commits = self.journal.commits
            self.tick()
            if self.journal.commits != commits:
                self.sample_state()

    def sample_state(self) -> None:
        """Note the state's size; the time it takes is kept out of the figures."""
        started = time.perf_counter()
        self.figures.largest_state = max(self.figures.largest_state, self.state_bytes())
        self.sampling_seconds += time.perf_counter() - started

    def tick_times(self, night: Date) -> list[DateTime]:
        """The night's ticks: launchd's (the commission's `launch_intervals`), or every `tick_minutes`."""
        if self.tick_minutes is None:
            weekday = night.isoweekday() % 7  # launchd counts Sunday as 0
            walls = sorted({(i["Hour"], i["Minute"]) for i in self.intervals if i.get("Weekday", weekday) == weekday})
        else:
            first, last = NIGHT_FROM[0] * 60 + NIGHT_FROM[1], NIGHT_UNTIL[0] * 60 + NIGHT_UNTIL[1]
            walls = [(minute // 60, minute % 60) for minute in range(first, last + 1, self.tick_minutes)]
        return [zoned_instant(ZONE, night, f"{hour:02d}:{minute:02d}") for hour, minute in walls]

    def tick(self) -> None:
        """What the LaunchAgent's tick does: `start` every lane; an admitted or resumed runner then works."""
        for lane in self.lanes:
            token = f"r-{next(self.runner_numbers)}"
            try:
                tick = self.timed(lambda: self.schedule.start(lane=lane, runner=token))  # noqa: B023
            except ScheduleError as error:
                self.figures.errors[f"start {error.code}"] += 1
                continue
            self.figures.outcomes[f"start {tick.kind}"] += 1
            if tick.kind in ("admitted", "resumed") and not tick.replayed and tick.occurrence is not None:
                if self.staged is not None and self.staged.schedules(lane):
                    self.staged.run_segment(token, tick.occurrence)
                else:
                    self.run_segment(token, lane, tick.occurrence)

    # -- a runner -------------------------------------------------------------------------------

    def work_plan(self, occurrence: Any) -> list[Work]:
        """The occurrence's whole plan (the same on every segment, from its own seed), minus what is done or unknown."""
        rng = random.Random(f"{self.seed}/{occurrence.id}")
        lane = self.lanes[occurrence.lane]
        busy_week = random.Random(f"{self.seed}/{iso_week_of(occurrence.date)}").random() < BUSY_WEEKS
        heavy = rng.random() < (0.7 if busy_week else 0.1)  # some nights need more, and bigger, answers
        plan: list[Work] = []
        for task in lane.tasks:
            low, high = (2, 4) if lane.rhythm == "basic" else (3, 6)
            count = min(task.max_calls, rng.randint(low, high) + (1 if heavy else 0))
            for index in range(1, count + 1):
                share = rng.randint(55, 95) if heavy else rng.randint(30, 75)
                plan.append(Work(task.task, f"{task.task}-{index}", task.call_bound, task.account,
                                 task.call_bound * share // 100))
        finished = {(call.task, call.work) for call in occurrence.calls if call.performed or call.unknown}
        return [item for item in plan if (item.task, item.work) not in finished]

    def run_segment(self, runner: str, lane: str, occurrence: Any) -> None:
        occurrence_id = occurrence.id
        attempts: dict[str, int] = {}
        clean = all(not call.unknown and call.outcome != "malformed" for call in occurrence.calls)
        killed = self.rng.random() < self.rates.killed
        todo = self.work_plan(occurrence)
        try:
            for index, item in enumerate(todo):
                key = f"{item.task}/{item.work}"
                attempts[key] = 1 + max((c.attempt for c in occurrence.calls
                                         if c.task == item.task and c.work == item.work), default=0)
                answer = self.timed(lambda: self.schedule.admit_call(
                    occurrence_id=occurrence_id, runner=runner, task=item.task, work=item.work,  # noqa: B023
                    bound=item.bound, sign_in=SIGN_IN, attempt=attempts[key]))  # noqa: B023
                if not answer.admitted:
                    self.figures.outcomes[f"refused {answer.reason}"] += 1
                    if answer.reason in DEFERRAL_FOR_REFUSAL:
                        bound = item.bound if answer.reason == "budget-exhausted" else None
                        self.defer(occurrence_id, runner, DEFERRAL_FOR_REFUSAL[answer.reason], bound)
                    else:
                        self.settle(occurrence_id, runner, "partial", f"stopped: {answer.reason}")
                    return
                if not answer.dispatch:
                    self.figures.errors["admitted without dispatch"] += 1
                    return
                if killed and index == len(todo) // 2:
                    self.kill(occurrence_id, runner)
                    return
                ended = self.end_call(occurrence_id, runner, answer.call, item)
                if ended == "stopped":
                    return
                clean = clean and ended == "ok"
            self.settle(occurrence_id, runner, "completed" if clean else "partial",
                        "all tasks done" if clean else "a call's effect is unknown")
        except ScheduleError as error:
            if error.code not in GONE:
                raise
            self.figures.errors[f"runner {error.code}"] += 1

    def end_call(self, occurrence_id: str, runner: str, call: int, item: Work) -> str:
        """Report the call: "ok", "lost", or "stopped" when the runner deferred and must stop."""
        draw = self.rng.random()
        now = self.clock.now()
        report: dict[str, Any]
        if draw < self.rates.usage_limit:
            reset = now.add(minutes=self.rng.randint(120, 360))
            report = {"kind": "usage-limit", "tokens": 0,
                      "observation": {"status": "rejected", "rateLimitType": "five_hour",
                                      "resetsAt": reset.int_timestamp, "isUsingOverage": False}}
            self.figures.faults["usage limit"] += 1
            self.timed(lambda: self.schedule.end_call(occurrence_id=occurrence_id, runner=runner, call=call,
                                                      report=report))
            self.defer(occurrence_id, runner, "usage-limit")
            return "stopped"
        if draw < self.rates.usage_limit + self.rates.sign_in:
            report = {"kind": "sign-in-needed", "tokens": 0, "httpStatus": 401}
            self.figures.faults["401"] += 1
            self.timed(lambda: self.schedule.end_call(occurrence_id=occurrence_id, runner=runner, call=call,
                                                      report=report))
            if item.account not in self.re_record_pending:
                self.re_record_pending.add(item.account)
                self.later(now.add(minutes=self.rng.randint(4 * 60, 30 * 60)),
                           lambda: self.record(item.account))
            self.defer(occurrence_id, runner, "sign-in-needed")
            return "stopped"
        if draw < self.rates.usage_limit + self.rates.sign_in + self.rates.lost:
            self.figures.faults["lost call"] += 1
            self.timed(lambda: self.schedule.end_call(occurrence_id=occurrence_id, runner=runner, call=call,
                                                      report={"kind": "lost"}))
            return "lost"
        else:
            window = {"status": "allowed", "rateLimitType": "five_hour",
                      "resetsAt": now.add(hours=3).int_timestamp, "isUsingOverage": False}
            report = {"kind": "result", "tokens": item.tokens, "output": "ok", "observation": window}
        self.timed(lambda: self.schedule.end_call(occurrence_id=occurrence_id, runner=runner, call=call,
                                                  report=report))
        return "ok"

    def defer(self, occurrence_id: str, runner: str, reason: str, bound: int | None = None) -> None:
        self.figures.outcomes[f"defer {reason}"] += 1
        self.timed(lambda: self.schedule.defer(occurrence_id=occurrence_id, runner=runner, reason=reason,
                                               bound=bound))

    def settle(self, occurrence_id: str, runner: str, status: str, reason: str) -> None:
        try:
            self.timed(lambda: self.schedule.settle(occurrence_id=occurrence_id, settled_by=runner, status=status,
                                                    reason=reason))
        except ScheduleError as error:
            if error.code != "RULE" or status != "completed":
                raise
            status = "partial"  # the engine knows better: some call's effect is unknown
            self.timed(lambda: self.schedule.settle(occurrence_id=occurrence_id, settled_by=runner, status=status,
                                                    reason=reason))
        self.figures.outcomes[f"settle {status}"] += 1

    def kill(self, occurrence_id: str, runner: str) -> None:
        """The runner dies with its call in flight; a supervisor confirms it half an hour later."""
        self.figures.faults["killed runner"] += 1
        confirmation = {"runner": runner, "confirmedBy": "supervisor",
                        "evidence": f"process of {runner} is gone (SIGKILL)"}

        def reconcile() -> None:
            try:
                self.timed(lambda: self.schedule.reconcile(occurrence_id=occurrence_id, confirmation=confirmation))
                self.figures.outcomes["reconcile"] += 1
            except ScheduleError as error:
                self.figures.errors[f"reconcile {error.code}"] += 1

        self.later(self.clock.now().add(minutes=30), reconcile)

    # -- the year -------------------------------------------------------------------------------

    def state_bytes(self) -> int:
        state = self.journal.load(SCHEDULE_AGGREGATE).state
        return len(canonical_json(state).encode("utf-8")) if state is not None else 0

    def raw_sample(self, commits: int) -> float | None:
        """Raw commits beside the journal, now: the disk's speed drifts with what else the machine does."""
        if self.raw_path is None:
            return None
        rate = raw_loop(self.raw_path, commits)
        self.raw.commands += commits
        self.raw.seconds += commits / rate
        return rate

    def start_capture(self) -> None:
        """Copy the journal as it is now and record every write transaction from here (`floor.Capture`)."""
        if self.floor_copy is None or not self.url.startswith("sqlite:///"):
            return
        command_floor.snapshot(Path(self.url.removeprefix("sqlite:///")), self.floor_copy)
        self.capture = command_floor.Capture(self.journal._journal)
        self.replaying = command_floor.Replay(self.floor_copy)

    def replayed_floor(self) -> command_floor.Floor | None:
        """The captured transactions as replayed bare on the copy beside each command; the copy is removed."""
        if self.capture is None or self.replaying is None or self.floor_copy is None:
            return None
        self.replaying.catch_up(self.capture.transactions)
        self.replaying.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.floor_copy}{suffix}").unlink(missing_ok=True)
        return command_floor.Floor.of(self.capture.transactions, self.replaying.seconds, self.replaying.cpu_seconds)

    def timed_day(self, offset: int) -> Period:
        """The day `offset` days after the first: its commands and seconds (without the state's sampling)."""
        commits, sampling = self.journal.commits, self.sampling_seconds
        started = time.perf_counter()
        self.day(self.first_day.add(days=offset))
        spent = time.perf_counter() - started - (self.sampling_seconds - sampling)
        return Period(self.journal.commits - commits, spent)

    def run(self, days: int, progress: bool = True) -> Figures:
        figures = self.figures
        figures.days = days
        self.setup()
        period = Period()
        for offset in range(days):
            if offset == max(0, days - FLOOR_DAYS):
                self.start_capture()
            if offset % PERIOD_DAYS == 0 and offset:
                figures.periods.append(period)
                raw = self.raw_sample(RAW_SAMPLE)
                if progress:  # the disk's raw commit just after the period, to tell its drift from the journal's
                    disk = f"; a raw commit now {1000 / raw:.2f} ms" if raw else ""
                    print(f"  days {offset - PERIOD_DAYS + 1}-{offset}: {period.commands} commands in "
                          f"{period.seconds:.0f} s = {period.rate:.1f}/s; head {self.journal.commits}, "
                          f"largest state so far {figures.largest_state} bytes{disk}", file=sys.stderr, flush=True)
                    if self.statements is not None:
                        print(self.statements.line(), file=sys.stderr, flush=True)
                period = Period()
            today = self.timed_day(offset)
            period.commands += today.commands
            period.seconds += today.seconds
            figures.daily.append(today)
            figures.seconds += today.seconds
        figures.periods.append(period)
        if self.capture is not None:
            self.replay_captured()
            self.capture.stop()
        if progress and self.statements is not None:
            print(f"  days {days - (days - 1) % PERIOD_DAYS}-{days}:\n{self.statements.line()}", file=sys.stderr,
                  flush=True)
        figures.commands = self.journal.head(SCHEDULE_AGGREGATE)
        return figures


@dataclass
class SideBySide:
    """Nights on the year's journal and on a young one, alternating: what history alone costs."""

    old: Period
    young: Period
    old_history: int  # commands in each journal when the comparison began
    young_history: int
    old_health: list[float] = field(default_factory=list)  # seconds of a `health` after each night
    young_health: list[float] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        return self.young.rate / self.old.rate if self.old.rate else float("inf")

    @property
    def health_ratio(self) -> float | None:
        """The median `health` on the year's journal over the median on the young one."""
        if not self.old_health or not self.young_health:
            return None
        return statistics.median(self.old_health) / statistics.median(self.young_health)


def health_seconds(simulation: Year) -> float:
    """One `health` as the command runs it, timed: a fresh schedule over the journal, every aggregate's chain
    checked from the checkpoint the last check left beside it, the staged lanes' history counted."""
    from factory_schedule.tui.host.health import ChainCheck, HealthScope, check_health

    journal = simulation.journal._journal
    started = time.perf_counter()
    check_health(journal, LifecycleSchedule(journal, simulation.clock), simulation.clock.now(), "bench-host",
                 HealthScope(chains=ChainCheck(keep=True), count_history=True))
    return time.perf_counter() - started


def side_by_side(year: Year, young_url: str, warm_days: int, nights: int) -> SideBySide:
    """The year's journal goes on past its last day while a young journal (the same Products and seed) goes on
    past day `warm_days`, one day each in turn, the order swapped every day.

    The first and last months of the year are minutes apart, and this machine's speed moves by 20%
    in minutes (a raw commit, and CPU alone on /dev/shm); here each night of the old journal has a
    night of the young one beside it. Both states are past their first weeks' growth (about 64 KB
    from day 60), so what differs is the history behind them: the year's, or `warm_days`' worth.
    """
    young = Year(young_url, year.seed, year.weekly_tokens, year.tick_minutes, lanes=year.staged is not None)
    young.setup()
    for offset in range(warm_days):
        young.day(young.first_day.add(days=offset))
    old_history, young_history = year.journal.head(SCHEDULE_AGGREGATE), young.journal.head(SCHEDULE_AGGREGATE)
    compared = SideBySide(Period(), Period(), old_history, young_history)
    kept, year.figures = year.figures, Figures()  # the year's own figures stay the year's
    try:
        for simulation in (year, young):
            health_seconds(simulation)  # the owner's first check: every chain from its first event, untimed
        for night in range(nights):
            pair = [(year, compared.old, compared.old_health, kept.days + night),
                    (young, compared.young, compared.young_health, warm_days + night)]
            for simulation, total, healths, offset in pair if night % 2 == 0 else reversed(pair):
                today = simulation.timed_day(offset)
                total.commands += today.commands
                total.seconds += today.seconds
                healths.append(health_seconds(simulation))  # the morning's `health`, from the last checkpoint
    finally:
        year.figures = kept
        young.journal.close()
    return compared


def _commission(first_day: Date, weekly_tokens: int) -> dict[str, Any]:
    commission = proposed_commission(products=PRODUCTS, effective_from=first_day.to_date_string(),
                                     weekly_tokens=weekly_tokens)
    for lane in commission["lanes"]:
        if lane["rhythm"] == "basic" and lane["product"] in CHATGPT_PRODUCTS:
            for task in lane["tasks"]:
                task["account"] = "chatgpt"
    return commission


# -- the dashboard --------------------------------------------------------------------------------------------------


def dashboard_times(url: str, clock: ManualClock, account: str, sequence: int) -> tuple[float, float, float] | None:
    """(first paint, Health shown, re-render after one command) in seconds, or None when the dashboard is not in
    the tree.

    The dashboard runs as the owner runs it, polling: its first reading skips the health check and is painted at
    once; the next reading checks every chain from the checkpoint the last check left beside the journal, and
    health. A paint is
    timed to the screen's first refresh after the reading was applied (`call_after_refresh`, which the dashboard
    also uses to start its chain check only once the first reading is on screen), not with `pilot.pause()`, which
    also waits for a 20 ms window of idle CPU. The re-render is timed once the views behind the other tabs are up
    (they mount after the first paint, beside the chain check), so that it renders every view, as on a dashboard
    that has been open a while.
    """
    try:
        from factory_schedule.tui.dashboard.app import build_app
        from factory_schedule.tui.dashboard.widgets.accounts import AccountsView
    except ImportError:
        return None
    from textual.widgets import DataTable

    journal = open_journal(url)
    app = build_app(url, clock, 3600.0, ZONE, journal=journal, host="bench-host", journal_label="bench")

    def shows(text: str) -> bool:
        table = app.query_one(AccountsView).query(DataTable).first()
        return any(text in str(cell) for key in table.rows for cell in table.get_row(key))

    async def painted() -> None:
        drawn = asyncio.Event()
        app.call_after_refresh(drawn.set)  # how the dashboard itself knows its first reading is on screen
        await drawn.wait()

    async def measure() -> tuple[float, float, float]:
        started = time.perf_counter()
        async with app.run_test(size=(160, 50)):
            while app.reading is None:
                await asyncio.sleep(0.001)
            await painted()
            first_paint = time.perf_counter() - started
            while app.reading.health is None:
                await asyncio.sleep(0.001)
            await painted()
            checked = time.perf_counter() - started
            await app.views_up()  # the views behind the tabs, mounted after the first paint: the re-render shows them
            schedule = LifecycleSchedule(journal, clock)
            schedule.record_account(account=account, sequence=sequence, sign_in=SIGN_IN, overage=False,
                                    recorded_by=OWNER)
            started = time.perf_counter()
            app.apply_reading(app.read_now())  # what the poll worker does when it sees a new head
            await painted()
            rerender = time.perf_counter() - started
            if app.reading is None or app.reading.head != journal.head(SCHEDULE_AGGREGATE) or not shows(
                    f"#{sequence}"):
                raise AssertionError("the dashboard does not show the new account record")
        return first_paint, checked, rerender

    return asyncio.run(measure())


# -- the report -----------------------------------------------------------------------------------------------------


def journal_size(url: str) -> int | None:
    """The database's bytes: a SQLite file after a WAL checkpoint, a PostgreSQL database's size."""
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return path.stat().st_size
    journal = open_journal(url)
    with journal._transaction(write=False) as conn:
        return int(conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])


def kib(size: int | None) -> str:
    return "n/a" if size is None else f"{size / 1024:,.1f} KiB"


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--days", type=int, default=365, help="simulated days (default 365)")
    parser.add_argument("--seed", type=int, default=20260105, help="the faults' seed")
    parser.add_argument("--url", default=None, help="an empty journal database (default: a temporary SQLite file)")
    parser.add_argument("--tick-minutes", type=int, default=None,
                        help="tick every N minutes from 01:50 to 08:10 instead of at launchd's times")
    parser.add_argument("--weekly-tokens", type=int, default=WEEKLY_TOKENS, help="the weekly ceiling")
    parser.add_argument("--raw-commits", type=int, default=3000, help="commits in the raw sqlite3 loop")
    parser.add_argument("--profile", default=None, help="write a cProfile of the simulation to this file")
    parser.add_argument("--no-dashboard", action="store_true", help="skip the dashboard timings")
    parser.add_argument("--no-lanes", action="store_true",
                        help="leave out the staged lanes' four runs (tests/bench/year_lanes.py)")
    parser.add_argument("--side-by-side", type=int, default=30, metavar="NIGHTS",
                        help="after the year, this many nights each on its journal and on a young one (60 days), "
                             "alternating (0: skip; default 30)")
    parser.add_argument("--young-url", default=None,
                        help="an empty database for the young journal (default: a temporary SQLite file; with a "
                             "PostgreSQL --url, the comparison runs only when this is given)")
    parser.add_argument("--statements", action="store_true",
                        help="print each statement's mean time after every 30 days, and on SQLite the pages it touches "
                             "(does any grow with history?)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-year-", dir=os.getcwd()) as folder:
        url = args.url or f"sqlite:///{Path(folder) / 'journal.db'}"
        backend = "PostgreSQL" if url.startswith("postgresql") else "SQLite file"
        print(f"year: {args.days} days of {len(PRODUCTS)} Products on {backend}, seed {args.seed}", flush=True)
        year = Year(url, args.seed, args.weekly_tokens, args.tick_minutes, lanes=not args.no_lanes)
        # The raw loop writes beside the journal file (the same disk), else in the temporary folder.
        beside = Path(url.removeprefix("sqlite:///")).parent if url.startswith("sqlite:///") else Path(folder)
        raw_folder = Path(tempfile.mkdtemp(prefix="bench-raw-", dir=beside))
        year.raw_path = raw_folder / "raw.db"
        year.floor_copy = raw_folder / "floor.db"
        if args.statements:
            year.statements = StatementTimes(year.journal._journal, SqlitePages.of(url))
        profiler = cProfile.Profile() if args.profile else None
        if profiler:
            profiler.enable()
        figures = year.run(args.days)
        if profiler:
            profiler.disable()
            profiler.dump_stats(args.profile)
            pstats.Stats(args.profile).sort_stats("cumulative").print_stats(25)
        year.raw_sample(args.raw_commits)
        reference_ms = python_reference_ms()  # beside the raw loop: the host's Python speed, at the same minutes
        floor = year.replayed_floor()
        raw = year.raw.rate
        shutil.rmtree(raw_folder)
        size = journal_size(url)
        young_url = args.young_url or (f"sqlite:///{Path(folder) / 'young.db'}" if url.startswith("sqlite") else None)
        side = None
        if args.side_by_side and young_url:
            side = side_by_side(year, young_url, min(YOUNG_DAYS, args.days), min(args.side_by_side, args.days))
        if side is None and not args.no_dashboard:
            health_seconds(year)  # the checkpoint a morning's `health` (or the tick) leaves beside the journal
        dash = None if args.no_dashboard else dashboard_times(url, year.clock, "claude",
                                                              year.sequence["claude"] + 1)
        print_report(args, backend, figures, raw, size, dash, year, side, floor, reference_ms)
    return 0


REFERENCE_ADDITIONS = 1_000_000


def python_reference_ms(runs: int = 5) -> float:
    """The median time of a fixed pure-Python loop (a million additions): how fast this host runs Python.

    A command is mostly Python and a raw commit mostly the disk's flush, and hosts do not differ in the two
    alike: the ratios against the raw commit move from one host to another with no change of the code. Printed
    beside them so that figures from two hosts can be told apart from a change of the code."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        total = 0
        for number in range(REFERENCE_ADDITIONS):
            total += number
        times.append(time.perf_counter() - started)
    return 1000 * statistics.median(times)


def print_the_three_lines(cost: float, year: Year, raw_ms: float, side: SideBySide | None) -> None:
    """The headline ratios, one line each, in the words the performance page quotes."""
    print()
    print(f"command / raw commit: {cost:.2f}x")
    written = [seconds for period in year.staged.figures.each for seconds in period] if year.staged else []
    if written:
        print(f"pipeline command / raw commit: {1000 * statistics.fmean(written) / raw_ms:.2f}x")
    else:
        print("pipeline command / raw commit: not measured (--no-lanes)")
    ratio = side.health_ratio if side is not None else None
    if ratio is None:
        print("health (chain checked) on the year's journal / on a young journal: not measured (--side-by-side 0)")
    else:
        assert side is not None
        print(f"health (chain checked) on the year's journal / on a young journal: {ratio:.2f}")
        print(f"  medians {1000 * statistics.median(side.old_health):.1f} ms / "
              f"{1000 * statistics.median(side.young_health):.1f} ms, {len(side.old_health)} mornings each")


def print_the_floor(floor: command_floor.Floor | None, command_ms: float, journal_ms: float, raw_ms: float,
                    year: Year, journal_cpu_ms: float = 0.0) -> None:
    """The floor's lines: the journal's own statements for the last FLOOR_DAYS' commands, each replayed bare
    right after its command (`floor.py`), against the raw commit, and each command against it."""
    from factory_schedule.core.pipeline import PIPELINE_AGGREGATE

    schedule_ms = floor.mean_ms(SCHEDULE_AGGREGATE) if floor is not None else None
    if floor is None or schedule_ms is None:
        print("command floor (the journal's statements, bare sqlite3) / raw commit: not measured (SQLite only)")
        print()
        return
    print(f"command floor (the journal's statements, bare sqlite3) / raw commit: {schedule_ms / raw_ms:.2f}x")
    print(f"command / its floor: {command_ms / schedule_ms:.2f}x")
    print(f"  of a command: the journal's own calls / its floor: {journal_ms / schedule_ms:.2f}x")
    written = [seconds for period in year.staged.figures.each for seconds in period] if year.staged else []
    pipeline_ms = floor.mean_ms(PIPELINE_AGGREGATE)
    if written and pipeline_ms is not None:
        print(f"pipeline command floor (the journal's statements, bare sqlite3) / raw commit: "
              f"{pipeline_ms / raw_ms:.2f}x")
        print(f"pipeline command / its floor: {1000 * statistics.fmean(written) / pipeline_ms:.2f}x")
    print(f"  floor: {floor.transactions} write transactions of the last {FLOOR_DAYS} days replayed, "
          f"{floor.count(SCHEDULE_AGGREGATE)} schedule commands {schedule_ms:.3f} ms each"
          + (f", {floor.count(PIPELINE_AGGREGATE)} pipeline commands {pipeline_ms:.3f} ms each"
             if pipeline_ms is not None else ""))
    floor_cpu_ms = floor.cpu_mean_ms(SCHEDULE_AGGREGATE)
    if floor_cpu_ms:
        print(f"  CPU time alone (the wait on the disk taken out), a schedule command: the journal's own calls "
              f"{journal_cpu_ms:.3f} ms, its floor {floor_cpu_ms:.3f} ms ({journal_cpu_ms / floor_cpu_ms:.2f}x)")
    print()


def print_report(args: argparse.Namespace, backend: str, figures: Figures, raw: float, size: int | None,
                 dash: tuple[float, float, float] | None, year: Year, side: SideBySide | None,
                 floor: command_floor.Floor | None = None, reference_ms: float | None = None) -> None:
    overall = figures.commands / figures.seconds
    span = min(PERIOD_DAYS, figures.days)
    first, last = figures.span(first=True), figures.span(first=False)
    growth = first.rate / last.rate if last.rate else float("inf")
    command_ms = 1000 * figures.command_seconds / max(1, figures.committed_calls)
    journal_ms = 1000 * figures.command_journal_seconds / max(1, figures.committed_calls)
    engine_ms = command_ms - journal_ms
    write_rate = 1000 / command_ms
    raw_ms = 1000 / raw
    cost = command_ms / raw_ms
    print()
    print(f"commands executed (journal head): {figures.commands}")
    print(f"wall time (simulation): {figures.seconds:.1f} s")
    print(f"commands per second, overall (head / wall, with every tick's non-writing starts): {overall:.1f}")
    print(f"  first {span} days: {first.commands} commands in {first.seconds:.1f} s = {first.rate:.1f}/s")
    print(f"  last {span} days: {last.commands} commands in {last.seconds:.1f} s = {last.rate:.1f}/s")
    print(f"  first / last: {growth:.2f} (target <= {GROWTH_TARGET}): {verdict(growth <= GROWTH_TARGET)}")
    if side is None:
        beside = "not measured"
        print("side by side: not measured (--side-by-side 0, or a PostgreSQL run without --young-url)")
    else:
        beside = (f"{side.old.rate:.0f} / {side.young.rate:.0f} ({side.ratio:.2f}x, {side.old_history} / "
                  f"{side.young_history} commands of history)")
        print(f"  side by side, nights alternating: after {side.old_history} commands {side.old.rate:.1f}/s "
              f"({side.old.commands} in {side.old.seconds:.1f} s), after {side.young_history} "
              f"{side.young.rate:.1f}/s ({side.young.commands} in {side.young.seconds:.1f} s)")
        print(f"  young / old: {side.ratio:.2f} (target <= {GROWTH_TARGET}): {verdict(side.ratio <= GROWTH_TARGET)}")
    print(f"a committed command (engine call that wrote, mean): {command_ms:.2f} ms = {write_rate:.1f}/s")
    print(f"raw sqlite3 commit (WAL, synchronous=FULL, one row per transaction): {raw_ms:.2f} ms = {raw:.1f}/s")
    print(f"  target: a command at most {COST_TARGET}x a raw commit: {verdict(cost <= COST_TARGET)}")
    print(f"  of a command: the journal's own calls (its statements, checks and commits) {journal_ms:.2f} ms "
          f"({journal_ms / raw_ms:.2f}x raw), the engine's Python (reading, planning once, deciding, checking) "
          f"{engine_ms:.2f} ms ({engine_ms / raw_ms:.2f}x raw)")
    if reference_ms is not None:
        print(f"host: a pure-Python reference loop ({REFERENCE_ADDITIONS:,} additions) {reference_ms:.1f} ms, "
              f"beside a raw commit of {raw_ms:.2f} ms (a slower Python raises every ratio against the raw commit)")
    print(f"largest state: {figures.largest_state} bytes (target < {STATE_TARGET}): "
          f"{verdict(figures.largest_state < STATE_TARGET)}")
    if year.staged is not None:
        year.staged.print_report()
    print_the_three_lines(cost, year, raw_ms, side)
    journal_cpu_ms = 1000 * figures.command_journal_cpu_seconds / max(1, figures.committed_calls)
    print_the_floor(floor, command_ms, journal_ms, raw_ms, year, journal_cpu_ms)
    print(f"journal size: {kib(size)}")
    print(f"faults injected: {dict(sorted(figures.faults.items()))}")
    print(f"outcomes: {dict(sorted(figures.outcomes.items()))}")
    if figures.errors:
        print(f"refusals the runners absorbed: {dict(sorted(figures.errors.items()))}")
    pages = year.statements.pages_per_command if year.statements is not None else []
    if len(pages) >= 2:  # SQLite's own count: it does not drift with the machine as times do
        print(f"pages touched per command (SQLite's page-cache hits and misses), first / last period: "
              f"{pages[0]:.1f} / {pages[-1]:.1f} ({pages[-1] / pages[0]:.2f}x)")
    written = year.statements.written_per_command if year.statements is not None else []
    if written:
        print(f"pages written per command (SQLite's own count, what a commit's fsync carries), first / last period: "
              f"{written[0]:.1f} / {written[-1]:.1f}")
    if dash is None:
        print("dashboard: not available")
        paint = checked = rerender = "not available"
    else:
        paint, checked, rerender = (f"{seconds * 1000:.0f} ms" for seconds in dash)
        print(f"dashboard first paint: {paint} (target <= 300 ms): {verdict(dash[0] <= FIRST_PAINT_TARGET)}")
        print(f"dashboard Health shown (every chain checked from its checkpoint): {checked} after start "
              f"(target <= 500 ms): {verdict(dash[1] <= HEALTH_SHOWN_TARGET)}")
        print(f"dashboard re-render after one command: {rerender} (target <= 50 ms): "
              f"{verdict(dash[2] <= RERENDER_TARGET)}")
    command = "tests/bench/year.py" + (f" --days {args.days}" if args.days != 365 else "") + (
        (" --url postgresql+psycopg://…" if args.url.startswith("postgresql") else f" --url {args.url}")
        if args.url else "")
    print()
    print(f"| figure ({backend}, `{command}`) | measured | target |")
    print("| --- | --- | --- |")
    print(f"| commands executed ({args.days} days, 9 Products, {len(year.lanes)} lanes) | {figures.commands} | |")
    print(f"| wall time of the simulation | {figures.seconds:.0f} s | |")
    print(f"| commands per second, overall | {overall:.0f} | |")
    print(f"| commands per second, first / last {span} days | {first.rate:.0f} / {last.rate:.0f} "
          f"({growth:.2f}x) | last within 1.2x |")
    print(f"| commands per second, side by side (nights alternating): the year's journal / a young one "
          f"| {beside} | within 1.2x |")
    print(f"| a command / a raw sqlite3 commit (WAL, synchronous=FULL); of a command, the journal's own calls / the "
          f"engine's Python | {command_ms:.2f} ms / {raw_ms:.2f} ms ({cost:.2f}x); {journal_ms:.2f} ms / "
          f"{engine_ms:.2f} ms | at most {COST_TARGET:g}x |")
    print(f"| largest state | {kib(figures.largest_state)} | under 96 KiB |")
    print(f"| journal size | {kib(size)} | |")
    print(f"| dashboard first paint | {paint} | at most 300 ms |")
    print(f"| dashboard Health shown (every chain checked from its checkpoint), after start | {checked} "
          "| at most 500 ms |")
    print(f"| dashboard re-render after one command | {rerender} | at most 50 ms |")


if __name__ == "__main__":
    sys.exit(main())
