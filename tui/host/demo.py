"""The demo: a real night, simulated. Runners drive the real engine on a ManualClock.

Three Products (alpha, beta, gamma) run for two weeks from Monday 7 December
2026, through `core.LifecycleSchedule`'s public methods only, as a LaunchAgent's
ticks and a runner would: `plan` and `start` every five minutes of the night,
`admit_call` before each contact, `end_call` after it, `defer` on a refusal,
`settle` at the end, with a lease per running segment. What the owner then sees,
on Sunday 20 December at 02:56, Europe/London:

- alpha/basic hit the claude usage limit at 02:48 and waits for the reset: it
  resumes Monday 02:00 (and the claude window stays closed until 01:00);
- beta/basic got a 401 from chatgpt and waits for a sign-in record;
- gamma/basic's runner was killed mid-call: its lease is stale, its call in
  flight, and it waits for a supervisor to confirm it (reconcile);
- the week 2026-W50, with its two full nights, went above 90 % of the ceiling;
- the Mac slept through Thursday and Friday: Saturday's basic occurrences
  coalesced the two missed nights;
- by day, the staged lanes (tui/host/demo_lanes.py): moss-garden went from the
  first Top-N to release-ready and waits at security-approve for the owner's
  approval to publish; pocket-farm's brief was rejected twice and waits for the
  owner's decision on the escalation.

Everything is seeded (one `random.Random` per occurrence), and the start and end
are fixed instants, so `build_demo` writes the same journal every time; the live
demo then keeps the same driver going on a thread, with the clock accelerated.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import heapq
import itertools
import os
import random
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pendulum
from pendulum import Date, DateTime

from factory_schedule.core import (
    SCHEDULE_AGGREGATE,
    LifecycleSchedule,
    ManualClock,
    Occurrence,
    OwnerKeys,
    ScheduleError,
    lanes_of,
    proposed_commission,
)
from factory_schedule.core.owner_commission import record_commission
from factory_schedule.store import Journal, open_journal
from factory_schedule.store import leases as lease_store
from factory_schedule.tui.host.demo_lanes import PIPELINE_SETTINGS, DemoLanes
from factory_schedule.tui.host.owner_key import KeySigner, new_journal_id, seal, write_key_file

DEMO_SEED = 20261207
DEMO_ZONE = "Europe/London"
DEMO_PRODUCTS = ("alpha", "beta", "gamma")
DEMO_START = pendulum.datetime(2026, 12, 6, 22, 0, tz="UTC")
DEMO_END = pendulum.datetime(2026, 12, 20, 2, 56, tz="UTC")
DEMO_HOST = "demo-mac"
DEMO_JOURNAL_LABEL = "sqlite:///…/demo/journal.db"
OWNER = "owner"
WEEKLY_CEILING = 9_200_000  # the first week's two full nights take it above 90 %
ASLEEP_NIGHTS = frozenset({"2026-12-17", "2026-12-18"})  # the Mac slept: no tick fired
# When the demo's LaunchAgent fires: each lane's own time (the proposed commission's slots).
# The live demo adds a tick every five minutes of the night, so an owner's record shows at once.
TICK_TIMES = ((2, 0), (2, 20), (2, 30), (2, 40), (3, 0), (4, 0))
LIVE_TICK_MINUTES = 5
NIGHT_FROM = (1, 55)
NIGHT_UNTIL = (8, 5)
RUNNER_TTL_SECONDS = 300.0
KILLED_TTL_SECONDS = 120.0
DEAD_PID = 4_194_999  # above any pid_max: no such process on this host
USAGE_RESET = pendulum.datetime(2026, 12, 21, 1, 0, tz="UTC")

DEFERRAL_FOR_REFUSAL = {
    "limited": "usage-limit",
    "sign-in-needed": "sign-in-needed",
    "budget-exhausted": "budget-exhausted",
}

# What goes wrong, and where (occurrence ID -> scenario).
USAGE_LIMIT = "discovery/alpha/basic/2026-12-20"
SIGN_IN_401 = "discovery/beta/basic/2026-12-20"
KILLED = "discovery/gamma/basic/2026-12-20"
MALFORMED = "discovery/beta/basic/2026-12-16"


@dataclass
class DemoWork:
    task: str
    work: str
    bound: int
    account: str
    tokens: int
    minutes: int


@dataclass
class Runner:
    token: str
    lane: str
    occurrence_id: str
    segment: int
    todo: list[DemoWork]
    ttl: float = RUNNER_TTL_SECONDS
    pid: int = field(default_factory=os.getpid)
    killed: bool = False
    malformed: bool = False
    sign_ins: dict[str, str] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)
    clean: bool = True

    @property
    def scope(self) -> str:
        return f"segment/{self.occurrence_id}/{self.segment}"


class DemoDriver:
    """Ticks and runners as events on a queue, executed in clock order."""

    def __init__(self, journal: Journal, clock: ManualClock, *, seed: int = DEMO_SEED, host: str = DEMO_HOST) -> None:
        self.journal = journal
        self.clock = clock
        self.schedule = LifecycleSchedule(journal, clock)
        self.seed = seed
        self.host = host
        self._queue: list[tuple[DateTime, int, Callable[[], object]]] = []
        self._order = itertools.count()
        self._runner_numbers = itertools.count(1)
        self.runners: dict[str, Runner] = {}
        self.lock = threading.RLock()
        self.errors: list[str] = []
        # the demo owner key, once `protect_demo` recorded it: it signs the owner's records
        self.signer: KeySigner | None = None

    # -- the queue ------------------------------------------------------------------------

    def at(self, instant: DateTime, action: Callable[[], object]) -> None:
        heapq.heappush(self._queue, (instant, next(self._order), action))

    def run_until(self, until: DateTime) -> None:
        """Execute every event due at or before `until`, moving the clock to each; then to `until`."""
        with self.lock:
            while self._queue and self._queue[0][0] <= until:
                instant, _, action = heapq.heappop(self._queue)
                if instant > self.clock.now():
                    self.clock.set(instant)
                try:
                    action()
                except ScheduleError as error:
                    self.errors.append(f"{self.clock.now()}: {error.code}: {error.message}")
            if until > self.clock.now():
                self.clock.set(until)

    # -- the owner's commands -------------------------------------------------------------

    def setup(self) -> None:
        """Commission revisions and account records, at the times an owner would record them."""
        first = proposed_commission(
            products=list(DEMO_PRODUCTS), effective_from="2026-12-07", weekly_tokens=WEEKLY_CEILING
        ) | {"pipeline": PIPELINE_SETTINGS}  # adopted with each revision (the owner's step)
        self.at(DEMO_START, lambda: record_commission(self.schedule, first, signer=self.signer))
        self.at(DEMO_START.add(minutes=5), lambda: self._record("claude", 1, "owner@factory.example"))
        second = _beta_on_chatgpt(first, revision=2, effective_from="2026-12-10")
        wednesday = pendulum.datetime(2026, 12, 9, 12, 0, tz="UTC")
        self.at(wednesday, lambda: record_commission(self.schedule, second, signer=self.signer))
        self.at(wednesday.add(minutes=3), lambda: self._record("chatgpt", 1, "owner@factory.example"))
        tuesday = pendulum.datetime(2026, 12, 15, 9, 30, tz="UTC")
        self.at(tuesday, lambda: self._record("claude", 2, "owner@factory.example"))
        self.plan_nights(DEMO_START, 16)
        DemoLanes(self).setup()  # by day, between the nights: a Top-N, a promotion, a maturation

    def _record(self, account: str, sequence: int, sign_in: str) -> None:
        self.schedule.record_account(
            account=account, sequence=sequence, sign_in=sign_in, overage=False, recorded_by=OWNER, signer=self.signer
        )

    # -- ticks ----------------------------------------------------------------------------

    def plan_nights(self, from_instant: DateTime, nights: int, live: bool = False) -> None:
        """Queue the ticks of each night (none while the Mac sleeps): at the lane times, or every
        five minutes of the night when `live`."""
        local = from_instant.in_timezone(DEMO_ZONE)
        for offset in range(nights):
            day = local.date().add(days=offset)
            if day.isoformat() in ASLEEP_NIGHTS:
                continue
            for instant in _tick_times(day, live):
                if instant > from_instant:
                    self.at(instant, self.tick)
        last = local.date().add(days=nights - 1)
        again = pendulum.datetime(last.year, last.month, last.day, 12, 0, tz=DEMO_ZONE).in_timezone("UTC")
        self.at(again, lambda: self.plan_nights(again, 8, live))

    def go_live(self) -> None:
        """From now on tick every five minutes of the night, as a live demo should look."""
        with self.lock:
            self._queue = [event for event in self._queue if event[2] != self.tick]
            heapq.heapify(self._queue)
            self.plan_nights(self.clock.now(), 8, live=True)

    def tick(self) -> None:
        """What the LaunchAgent's tick does: start each lane whose plan is due now."""
        self.heartbeat_all()
        now = self.clock.now()
        for plan in self.schedule.plan():
            if plan.action in ("admit", "resume", "settle") and plan.at is not None and plan.at <= now:
                token = f"r-{next(self._runner_numbers)}"
                tick = self.schedule.start(lane=plan.lane, runner=token)
                if tick.kind in ("admitted", "resumed") and tick.occurrence is not None:
                    self.launch(token, plan.lane, tick.occurrence)

    # -- runners --------------------------------------------------------------------------

    def launch(self, token: str, lane: str, occurrence: Occurrence) -> None:
        segment = occurrence.segments[-1].n
        view = self.schedule.read()
        assert view is not None  # it just admitted this occurrence
        runner = Runner(token, lane, occurrence.id, segment, self.work_left(occurrence, view.commission))
        runner.sign_ins = {a.account: a.record.sign_in for a in view.accounts if a.record is not None}
        for call in occurrence.calls:
            runner.attempts[f"{call.task}/{call.work}"] = max(runner.attempts.get(f"{call.task}/{call.work}", 0),
                                                             call.attempt)
            if call.unknown or call.outcome == "malformed":
                runner.clean = False
        if occurrence.id == KILLED and segment == 1:
            runner.killed, runner.ttl, runner.pid = True, KILLED_TTL_SECONDS, DEAD_PID
        runner.malformed = occurrence.id == MALFORMED
        self.runners[token] = runner
        lease_store.acquire(
            self.journal,
            runner.scope,
            token,
            runner.ttl,
            self.clock.now(),
            {
                "runner": token,
                "pid": runner.pid,
                "host": self.host,
                "occurrence": occurrence.id,
                "segment": segment,
                "command": "demo-runner",
                "started": self.clock.now().isoformat(),
            },
        )
        self.at(self.clock.now().add(seconds=30), lambda: self.next_call(runner))

    def work_left(self, occurrence: Occurrence, commission: dict[str, Any]) -> list[DemoWork]:
        """The occurrence's whole plan of work (the same on every segment), minus what was performed or lost."""
        rng = random.Random(f"{self.seed}/{occurrence.id}")
        lane = next(item for item in lanes_of(commission) if item.lane == occurrence.lane)
        plan: list[DemoWork] = []
        for task in lane.tasks:
            heavy = lane.rhythm != "basic"
            count = min(task.max_calls, rng.randint(3, 4) if heavy else rng.randint(2, 3))
            if occurrence.id == USAGE_LIMIT:
                count = task.max_calls
            for index in range(1, count + 1):
                plan.append(
                    DemoWork(
                        task=task.task,
                        work=f"{task.task}-{index}",
                        bound=task.call_bound,
                        account=task.account,
                        tokens=rng.randint(task.call_bound * 45 // 100, task.call_bound * 90 // 100),
                        minutes=10 if occurrence.id == USAGE_LIMIT else rng.randint(3, 8),
                    )
                )
        finished = {(c.task, c.work) for c in occurrence.calls if c.performed or c.unknown}
        return [item for item in plan if (item.task, item.work) not in finished]

    def next_call(self, runner: Runner) -> None:
        if runner.token not in self.runners:
            return
        self.heartbeat(runner)
        if not runner.todo:
            self.finish(runner)
            return
        item = runner.todo[0]
        key = f"{item.task}/{item.work}"
        runner.attempts[key] = runner.attempts.get(key, 0) + 1
        try:
            answer = self.schedule.admit_call(
                occurrence_id=runner.occurrence_id,
                runner=runner.token,
                task=item.task,
                work=item.work,
                bound=item.bound,
                sign_in=runner.sign_ins.get(item.account, "nobody"),
                attempt=runner.attempts[key],
            )
        except ScheduleError as error:
            if error.code in ("NOT_RUNNING", "NOT_OWNER", "SETTLED"):
                self.forget(runner)  # a supervisor reconciled it, or it was settled: this runner is done
                return
            raise
        if not answer.admitted:
            self.refused(runner, answer.reason, item)
            return
        if not answer.dispatch:
            return
        if runner.killed:
            return  # the runner dies here: its call stays in flight, its lease goes stale
        self.at(self.clock.now().add(minutes=item.minutes), lambda: self.end_call(runner, answer.call, item))

    def end_call(self, runner: Runner, call: int, item: DemoWork) -> None:
        report: dict[str, Any] = {"kind": "result", "tokens": item.tokens, "output": "ok"}
        outcome = "ok"
        if runner.occurrence_id == USAGE_LIMIT and runner.segment == 1 and item.work.endswith("-4"):
            report = {
                "kind": "usage-limit",
                "tokens": 0,
                "observation": {
                    "status": "rejected",
                    "rateLimitType": "five_hour",
                    "resetsAt": USAGE_RESET.int_timestamp,
                    "isUsingOverage": False,
                },
            }
            outcome = "usage-limit"
        elif runner.occurrence_id == SIGN_IN_401 and runner.segment == 1:
            report = {"kind": "sign-in-needed", "tokens": 0, "httpStatus": 401}
            outcome = "sign-in-needed"
        elif runner.malformed and item.work.endswith("-2"):
            report = {"kind": "result", "tokens": item.tokens, "output": "malformed"}
            runner.clean = False
        self.heartbeat(runner)
        self.schedule.end_call(occurrence_id=runner.occurrence_id, runner=runner.token, call=call, report=report)
        if outcome == "usage-limit":
            self.defer(runner, "usage-limit")
            return
        if outcome == "sign-in-needed":
            self.defer(runner, "sign-in-needed")
            return
        runner.todo.pop(0)
        self.at(self.clock.now().add(seconds=20), lambda: self.next_call(runner))

    def refused(self, runner: Runner, reason: str, item: DemoWork) -> None:
        if reason in DEFERRAL_FOR_REFUSAL:
            bound = item.bound if reason == "budget-exhausted" else None
            self.defer(runner, DEFERRAL_FOR_REFUSAL[reason], bound=bound)
        else:
            self.finish(runner, partial=f"stopped: {reason}")

    def defer(self, runner: Runner, reason: str, bound: int | None = None) -> None:
        self.schedule.defer(occurrence_id=runner.occurrence_id, runner=runner.token, reason=reason, bound=bound)
        self.forget(runner)

    def finish(self, runner: Runner, partial: str | None = None) -> None:
        completed = runner.clean and partial is None
        status, reason = ("completed", "all tasks done") if completed else (
            "partial", partial or "some output was malformed"
        )
        try:
            self.schedule.settle(
                occurrence_id=runner.occurrence_id, settled_by=runner.token, status=status, reason=reason
            )
        except ScheduleError as error:
            if error.code not in ("NOT_RUNNING", "NOT_OWNER", "SETTLED", "RULE"):
                raise
            if error.code == "RULE" and status == "completed":
                self.schedule.settle(
                    occurrence_id=runner.occurrence_id, settled_by=runner.token, status="partial", reason=reason
                )
        self.forget(runner)

    def forget(self, runner: Runner) -> None:
        self.runners.pop(runner.token, None)
        with contextlib.suppress(lease_store.LeaseError):
            lease_store.release(self.journal, runner.scope, runner.token)

    def heartbeat(self, runner: Runner) -> None:
        if runner.killed:
            return
        with contextlib.suppress(lease_store.LeaseError):
            lease_store.heartbeat(self.journal, runner.scope, runner.token, self.clock.now())

    def heartbeat_all(self) -> None:
        for runner in list(self.runners.values()):
            self.heartbeat(runner)


def _tick_times(day: Date, live: bool) -> list[DateTime]:
    if not live:
        return [pendulum.datetime(day.year, day.month, day.day, h, m, tz=DEMO_ZONE).in_timezone("UTC")
                for h, m in TICK_TIMES]
    moment = pendulum.datetime(day.year, day.month, day.day, *NIGHT_FROM, tz=DEMO_ZONE)
    end = pendulum.datetime(day.year, day.month, day.day, *NIGHT_UNTIL, tz=DEMO_ZONE)
    times = []
    while moment <= end:
        times.append(moment.in_timezone("UTC"))
        moment = moment.add(minutes=LIVE_TICK_MINUTES)
    return times


def _beta_on_chatgpt(commission: dict, *, revision: int, effective_from: str) -> dict:
    lanes = []
    for lane in commission["lanes"]:
        if lane["product"] == "beta":
            lane = dict(lane, tasks=[dict(task, account="chatgpt") for task in lane["tasks"]])
        lanes.append(lane)
    return dict(commission, revision=revision, effectiveFrom=effective_from, lanes=lanes)


def build_demo(journal_url: str, *, host: str = DEMO_HOST, until: DateTime = DEMO_END) -> DemoDriver:
    """Write the demo's two weeks into a new journal and return the driver, paused at `until`."""
    journal = open_journal(journal_url)
    if journal.head(SCHEDULE_AGGREGATE) != 0:
        raise ValueError(f"{journal.where} already holds a schedule: the demo needs a new journal")
    clock = ManualClock(DEMO_START.subtract(minutes=1))
    driver = DemoDriver(journal, clock, host=host)
    driver.setup()
    driver.run_until(until)
    return driver


DAYTIME_FAST_FORWARD = 30  # nothing runs by day: let it pass thirty times faster


def is_daytime(instant: DateTime) -> bool:
    """Outside the night's ticks (after 08:05, before 01:55 local), when the demo has nothing to show."""
    local = instant.in_timezone(DEMO_ZONE)
    minutes = local.hour * 60 + local.minute
    return not (NIGHT_FROM[0] * 60 + NIGHT_FROM[1] <= minutes <= NIGHT_UNTIL[0] * 60 + NIGHT_UNTIL[1])


class LiveSimulation:
    """Keeps the demo going: every tenth of a second the clock moves `speed` tenths of a second on
    (thirty times that by day, when nothing is scheduled)."""

    def __init__(self, driver: DemoDriver, speed: float, step_seconds: float = 0.1) -> None:
        self.driver = driver
        self.speed = speed
        self.step_seconds = step_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="demo-simulation", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.wait(self.step_seconds):
            now = self.driver.clock.now()
            rate = self.speed * (DAYTIME_FAST_FORWARD if is_daytime(now) else 1)
            target = now.add(microseconds=int(rate * self.step_seconds * 1_000_000))
            try:
                self.driver.run_until(target)
            except Exception as error:  # the demo must never take the dashboard down
                self.driver.errors.append(f"{type(error).__name__}: {error}")


DEMO_PASSPHRASE = "demo owner passphrase"


def protect_demo(driver: DemoDriver, key_path: str | os.PathLike[str]) -> str:
    """Record a demo owner key in the demo journal and seal it at `key_path` under `DEMO_PASSPHRASE`, which the
    demo prints, so its forms ask for the passphrase as a real owner's do; returns the passphrase."""
    signer = KeySigner.generate()
    with driver.lock:
        OwnerKeys(driver.journal, driver.clock).init(journal_id=new_journal_id(), signer=signer,
                                                     recovery_key=KeySigner.generate().public_key)
        driver.signer = signer
    write_key_file(Path(key_path), seal(signer, DEMO_PASSPHRASE))
    return DEMO_PASSPHRASE


def build_demo_file(path: str | os.PathLike[str], *, host: str = DEMO_HOST, until: DateTime = DEMO_END) -> str:
    """Build the demo journal into a file and close it (checkpointed), ready to copy; returns its path."""
    driver = build_demo(f"sqlite:///{os.fspath(path)}", host=host, until=until)
    driver.journal.close()
    return os.fspath(path)


@functools.cache
def demo_template() -> str:
    """The demo journal, built once per process into a temporary folder (removed at exit).

    Tests and the screenshot command copy it rather than building it again: the build
    drives two weeks of the engine and takes a while.
    """
    folder = tempfile.mkdtemp(prefix="factory-schedule-demo-")
    atexit.register(shutil.rmtree, folder, True)
    return build_demo_file(os.path.join(folder, "journal.db"))
