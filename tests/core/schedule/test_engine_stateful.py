"""Hypothesis state machines over the engine on a ManualClock and a real SQLite journal.

(a) Lifecycle: random ticks, deferrals, reconciliations and settlements by several runners over about a
    month. After every step: no occurrence is admitted twice, a coalesced occurrence belongs to exactly one
    admitted one, a lane holds at most one open occurrence, and read() never raises. At the end of each
    run, every occurrence whose window has closed and that a later admission passed reads coalesced into
    that admission, and one no admission passed reads missed.
(b) Calls: random admissions, reports, deferrals, reconciliations, owner records and revisions. After every
    step: a week's debits never exceed its ceiling except by known usage above a bound (or a ceiling a
    revision lowered under calls already debited); a ceiling never rises; no admission is dispatched twice;
    no work of unknown effect is ever admitted again; account stops never move backwards.

Rule failures (NOT_OWNER, STALE, RULE, CONFLICT for a second, different settlement, ...) are expected
answers to random requests; any other error, INVALID included (the clock here only moves forward), fails
the run. Shrinking is off (a journal-backed shrink takes minutes): a failure prints the steps as they ran.
"""

from __future__ import annotations

import functools
import shutil
import tempfile
from pathlib import Path
from typing import Any, ClassVar

import pendulum
from hypothesis import HealthCheck, Phase, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from factory_schedule.core import lane_occurrence_on
from tests.core.schedule.support import (
    EFFECTIVE,
    RECORDED,
    basic_lane,
    commission,
    confirmation,
    lost_report,
    make_harness,
    observation,
    result_report,
    sign_in_report,
    task,
    usage_limit_report,
    weekly_lane,
)
from tests.core.schedule.support import expect_refusal as helpers_expect_refusal

RUNNERS = ["r1", "r2", "r3"]
MACHINE_SETTINGS = settings(
    max_examples=25,
    # No shrinking: a shrink of a journal-backed run takes minutes; the failing steps print as they were.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TRANSITION_REFUSALS = {
    "NOT_OWNER", "NOT_RUNNING", "SETTLED", "STALE", "RULE", "UNKNOWN_OCCURRENCE", "CALL_OPEN", "CONFLICT"
}


expect_refusal = functools.partial(helpers_expect_refusal, allowed=TRANSITION_REFUSALS)


def _open_states(view: Any) -> dict[str, list[str]]:
    held: dict[str, list[str]] = {}
    for occurrence in view.occurrences:
        if occurrence.state != "settled":
            held.setdefault(occurrence.lane, []).append(occurrence.id)
    return held


class Clocked(RuleBasedStateMachine):
    """A fresh journal per run, and a clock that only moves forward: by minutes, or to a later night."""

    LANES: ClassVar[list[dict]] = []

    def __init__(self) -> None:
        super().__init__()
        self.directory = Path(tempfile.mkdtemp(prefix="engine-stateful-"))
        self.commission = commission(self.LANES)
        self.h = make_harness(self.directory, lanes=self.LANES)

    def teardown(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)

    @rule(days=st.integers(1, 4), offset=st.sampled_from([0, 5, 20, 40, 60, 150, 200]))
    def a_later_night(self, days: int, offset: int) -> None:
        # December in London is GMT: a local night is its UTC date.
        night = self.h.clock.now().add(days=days).start_of("day")
        self.h.at(night.add(hours=2, minutes=offset))


# -- (a) the lifecycle ---------------------------------------------------------------------------------------------


class LifecycleMachine(Clocked):
    LANES: ClassVar[list[dict]] = [
        basic_lane("alpha"), weekly_lane("alpha", weekday=4), basic_lane("beta", time="02:20")
    ]

    def __init__(self) -> None:
        super().__init__()
        self.admitted: dict[str, str] = {}  # occurrence -> lane
        self.held_by: dict[str, str] = {}  # coalesced occurrence -> the admitted one whose range holds it

    @rule(minutes=st.sampled_from([1, 7, 25, 50, 95, 200]))
    def later(self, minutes: int) -> None:
        self.h.clock.advance(minutes=minutes)

    @rule(lane=st.sampled_from(["alpha/basic", "alpha/full", "beta/basic"]), runner=st.sampled_from(RUNNERS))
    def tick(self, lane: str, runner: str) -> None:
        tick = self.h.schedule.start(lane=lane, runner=runner)
        assert tick.kind in ("admitted", "resumed", "settled", "running", "waiting")
        event(f"tick {tick.kind}{' (replay)' if tick.replayed else ''}")
        if tick.kind != "admitted" or tick.replayed:
            return
        occurrence = tick.occurrence
        assert occurrence is not None
        assert occurrence.id not in self.admitted, f"{occurrence.id} admitted twice"
        assert occurrence.id not in self.held_by, f"{occurrence.id} was coalesced, then admitted"
        self.admitted[occurrence.id] = lane
        if occurrence.coalesced is not None:
            members = self._range(lane, occurrence.coalesced.first, occurrence.coalesced.last)
            assert len(members) == occurrence.coalesced.count, (occurrence.coalesced, members)
            for member in members:
                assert member not in self.held_by, f"{member} coalesced into two occurrences"
                self.held_by[member] = occurrence.id

    def _range(self, lane: str, first: str, last: str) -> list[str]:
        """The lane's occurrences from `first` to `last`, leaving out any that was admitted."""
        day = pendulum.parse(EFFECTIVE).date()  # type: ignore[union-attr]
        members, inside = [], False
        while day <= self.h.clock.now().date():
            found = lane_occurrence_on(self.commission, lane, day)
            day = day.add(days=1)
            if found is None:
                continue
            inside = inside or found.id == first
            if inside and found.id not in self.admitted and found.id not in members:
                members.append(found.id)
            if found.id == last:
                break
        return members

    @precondition(lambda self: self.admitted)
    @rule(data=st.data(), runner=st.sampled_from(RUNNERS),
          reason=st.sampled_from(["volume-unmounted", "logged-out"]))
    def defer(self, data: st.DataObject, runner: str, reason: str) -> None:
        occurrence_id = data.draw(st.sampled_from(sorted(self.admitted)))
        expect_refusal(lambda: self.h.schedule.defer(occurrence_id=occurrence_id, runner=runner, reason=reason))

    @precondition(lambda self: self.admitted)
    @rule(data=st.data(), runner=st.sampled_from(RUNNERS))
    def reconcile(self, data: st.DataObject, runner: str) -> None:
        occurrence_id = data.draw(st.sampled_from(sorted(self.admitted)))
        expect_refusal(lambda: self.h.schedule.reconcile(occurrence_id=occurrence_id,
                                                         confirmation=confirmation(runner)))

    @precondition(lambda self: self.admitted)
    @rule(data=st.data(), by=st.sampled_from([*RUNNERS, "owner"]),
          status=st.sampled_from(["completed", "partial", "deferred", "unavailable"]))
    def settle(self, data: st.DataObject, by: str, status: str) -> None:
        occurrence_id = data.draw(st.sampled_from(sorted(self.admitted)))
        expect_refusal(lambda: self.h.schedule.settle(occurrence_id=occurrence_id, settled_by=by, status=status,
                                                      reason="random"))

    @invariant()
    def read_never_raises_and_a_lane_holds_at_most_one_open_occurrence(self) -> None:
        view = self.h.schedule.read()
        assert view is not None
        for lane, held in _open_states(view).items():
            assert len(held) <= 1, f"{lane} holds {held}"
        admissions = {cid.removesuffix("/admit") for cid in self.h.command_ids() if cid.endswith("/admit")}
        assert admissions == set(self.admitted)

    @invariant()
    def the_state_a_command_remembers_is_the_one_a_fresh_reader_parses(self) -> None:
        self.h.assert_what_the_engine_remembers_is_what_is_stored()

    def teardown(self) -> None:
        try:
            self._every_missed_occurrence_ends_coalesced_into_exactly_one_admitted_one()
        finally:
            super().teardown()

    def _every_missed_occurrence_ends_coalesced_into_exactly_one_admitted_one(self) -> None:
        now = self.h.clock.now()
        asked: list[str] = []
        for lane in ("alpha/basic", "alpha/full", "beta/basic"):
            day = pendulum.parse(EFFECTIVE).date()  # type: ignore[union-attr]
            found = []
            while day <= now.date():
                occurrence = lane_occurrence_on(self.commission, lane, day)
                if occurrence is not None and occurrence.closes <= now:
                    found.append(occurrence.id)
                day = day.add(days=1)
            admitted_keys = [occurrence_id for occurrence_id, of in self.admitted.items() if of == lane]
            asked += found
            for occurrence_id in found:
                view = self.h.schedule.status(occurrence_id)
                if occurrence_id in self.admitted:
                    assert view.state in ("running", "deferred", "interrupted", "settled", "pruned"), view
                elif any(later > occurrence_id for later in admitted_keys):
                    assert view.state == "coalesced", view
                    assert view.status == "unavailable", view
                    assert view.coalesced_into == self.held_by.get(occurrence_id), view
                else:
                    assert view.state == "missed", view
        # One reading for many IDs answers as one `status` per ID does.
        assert self.h.schedule.statuses(asked) == [self.h.schedule.status(occurrence_id) for occurrence_id in asked]


TestLifecycleMachine = LifecycleMachine.TestCase
TestLifecycleMachine.settings = MACHINE_SETTINGS


# -- (b) calls -----------------------------------------------------------------------------------------------------


REPORTS = [
    "result",
    "result-over-bound",
    "result-overage",
    "result-window-closed",
    "usage-limit-unsent",
    "usage-limit-performed",
    "sign-in-unsent",
    "sign-in-performed",
    "lost",
]


class CallsMachine(Clocked):
    LANES: ClassVar[list[dict]] = [
        basic_lane("alpha", tasks=[task(max_calls=4)]),
        basic_lane("beta"),
        basic_lane("gamma", tasks=[task(account="chatgpt")]),
    ]
    CEILING = 600_000

    def __init__(self) -> None:
        super().__init__()
        self.LANES_BY_ID = {lane["lane"]: lane for lane in self.LANES}
        self.h.at(RECORDED)
        self.sequences = {"claude": 1, "chatgpt": 1}
        self.h.owner_record("claude", 1)
        self.h.owner_record("chatgpt", 1)
        self.last_revision = 1
        self.weekly_tokens = self.CEILING
        self.dispatched: set[tuple[str, int]] = set()
        self.unknown_work: set[tuple[str, str, str]] = set()
        self.over_bound_weeks: set[str] = set()
        self.lowered_weeks: set[str] = set()
        self.ceilings: dict[str, int] = {}
        self.stops: dict[tuple[str, str], str] = {}

    # -- helpers -------------------------------------------------------------------------------------------------

    def _occurrences(self) -> list[dict]:
        found = []
        for lane in self.h.state()["lanes"]:
            for occurrence in [lane.get("open"), *lane.get("recent", [])]:
                if occurrence is not None:
                    found.append(occurrence)
        return found

    def _open(self) -> list[dict]:
        return [o for o in self._occurrences() if o["state"] != "settled"]

    def _draw_open(self, data: st.DataObject) -> dict | None:
        """An open occurrence drawn at random, or None when there is none."""
        candidates = self._open()
        if not candidates:
            return None
        return data.draw(st.sampled_from(sorted(candidates, key=lambda o: o["id"])))

    # -- rules -----------------------------------------------------------------------------------------------------

    @initialize(runner=st.sampled_from(RUNNERS))
    def the_first_night_every_lane_ticks(self, runner: str) -> None:
        self.h.at("2026-12-07T02:00:00Z")
        for lane in ("alpha/basic", "beta/basic", "gamma/basic"):
            assert self.h.schedule.start(lane=lane, runner=runner).kind == "admitted"

    @rule(minutes=st.sampled_from([1, 3, 10, 30, 200]))
    def later(self, minutes: int) -> None:
        self.h.clock.advance(minutes=minutes)

    @rule(lane=st.sampled_from(["alpha/basic", "beta/basic", "gamma/basic"]), runner=st.sampled_from(RUNNERS))
    def tick(self, lane: str, runner: str) -> None:
        tick = self.h.schedule.start(lane=lane, runner=runner)
        event(f"tick {tick.kind}")

    @rule(days=st.integers(1, 3), offset=st.sampled_from([0, 10, 30]), runner=st.sampled_from(RUNNERS))
    def a_later_night_every_lane_ticks(self, days: int, offset: int, runner: str) -> None:
        night = self.h.clock.now().add(days=days).start_of("day")
        self.h.at(night.add(hours=2, minutes=offset))
        for lane in ("alpha/basic", "beta/basic", "gamma/basic"):
            tick = self.h.schedule.start(lane=lane, runner=runner)
            event(f"tick {tick.kind}")

    @rule(data=st.data(), runner=st.sampled_from(RUNNERS), work=st.sampled_from(["w1", "w2", "w3"]),
          bound=st.sampled_from([50_000, 150_000]), attempt=st.sampled_from([1, 1, 2]))
    def admit_call(self, data: st.DataObject, runner: str, work: str, bound: int, attempt: int) -> None:
        occurrence = self._draw_open(data)
        if occurrence is None:
            return
        if data.draw(st.booleans()):
            runner = occurrence["segments"][-1]["runner"]
        answer = expect_refusal(lambda: self.h.call(occurrence["id"], runner=runner, work=work, bound=bound,
                                                    attempt=attempt))
        event(f"call {'refused ' + answer.reason if answer is not None and not answer.admitted else 'answered'}")
        if answer is None or not answer.admitted:
            return
        key = (occurrence["id"], answer.call)
        if answer.dispatch:
            assert not answer.replayed
            assert key not in self.dispatched, f"{key} dispatched twice"
            assert (occurrence["id"], "scan", work) not in self.unknown_work, f"{work} of unknown effect re-sent"
            self.dispatched.add(key)
        else:
            assert answer.replayed
            assert key in self.dispatched

    @rule(data=st.data(), report=st.sampled_from(REPORTS), hours=st.sampled_from([1, 20, 50]))
    def end_call(self, data: st.DataObject, report: str, hours: int) -> None:
        in_flight = [(o, c) for o in self._open() for c in o.get("calls", []) if "endedAt" not in c]
        if not in_flight:
            return
        occurrence, call = data.draw(st.sampled_from(sorted(in_flight, key=lambda pair: pair[0]["id"])))
        reset = self.h.clock.now().add(hours=hours)
        document = {
            "result": result_report(10_000),
            "result-over-bound": result_report(call["bound"] + 1_000),
            "result-overage": result_report(10_000, observed=observation("allowed", overage=True)),
            "result-window-closed": result_report(10_000, observed=observation("rejected", resets_at=reset)),
            "usage-limit-unsent": usage_limit_report(reset, tokens=0),
            "usage-limit-performed": usage_limit_report(reset, tokens=5_000),
            "sign-in-unsent": sign_in_report(401, tokens=0),
            "sign-in-performed": sign_in_report(403, tokens=3),
            "lost": lost_report(),
        }[report]
        runner = occurrence["segments"][call["segment"] - 1]["runner"]
        self.h.schedule.end_call(occurrence_id=occurrence["id"], runner=runner, call=call["k"], report=document)
        if report == "result-over-bound":
            self.over_bound_weeks.add(call["week"])

    @rule(data=st.data(), runner=st.sampled_from(RUNNERS),
          reason=st.sampled_from(["usage-limit", "budget-exhausted", "sign-in-needed", "volume-unmounted",
                                  "logged-out"]))
    def defer(self, data: st.DataObject, runner: str, reason: str) -> None:
        occurrence = self._draw_open(data)
        if occurrence is None:
            return
        if data.draw(st.booleans()):
            runner = occurrence["segments"][-1]["runner"]
        bound = 150_000 if reason == "budget-exhausted" else None
        expect_refusal(lambda: self.h.schedule.defer(occurrence_id=occurrence["id"], runner=runner, reason=reason,
                                                     bound=bound))

    @rule(data=st.data())
    def reconcile(self, data: st.DataObject) -> None:
        candidates = [o for o in self._open() if o["state"] == "running"]
        if not candidates:
            return
        occurrence = data.draw(st.sampled_from(sorted(candidates, key=lambda o: o["id"])))
        runner = occurrence["segments"][-1]["runner"]
        self.h.schedule.reconcile(occurrence_id=occurrence["id"], confirmation=confirmation(runner))

    @rule(data=st.data(), status=st.sampled_from(["completed", "partial", "deferred", "unavailable"]))
    def settle(self, data: st.DataObject, status: str) -> None:
        occurrence = self._draw_open(data)
        if occurrence is None:
            return
        runner = occurrence["segments"][-1]["runner"]
        expect_refusal(lambda: self.h.schedule.settle(occurrence_id=occurrence["id"], settled_by=runner,
                                                      status=status, reason="random"))

    @rule(account=st.sampled_from(["claude", "chatgpt"]))
    def owner_record(self, account: str) -> None:
        self.sequences[account] += 1
        self.h.owner_record(account, self.sequences[account])

    @rule(factor=st.sampled_from([0.25, 0.5, 2.0]))
    def revision(self, factor: float) -> None:
        self.last_revision += 1
        self.weekly_tokens = max(1, int(self.weekly_tokens * factor))
        before = {week["week"]: week for week in self.h.state()["ledger"]}
        self.h.schedule.record_commission(commission(self.LANES, revision=self.last_revision,
                                                     weekly_tokens=self.weekly_tokens))
        for week, entry in before.items():
            if self.weekly_tokens < entry["ceiling"] and entry["debited"] > 0:
                self.lowered_weeks.add(week)

    # -- invariants ------------------------------------------------------------------------------------------------

    @invariant()
    def the_ledger_holds(self) -> None:
        for occurrence in self._occurrences():
            for call in occurrence.get("calls", []):
                if call.get("unknown"):
                    self.unknown_work.add((occurrence["id"], call["task"], call["work"]))
        for week in self.h.state()["ledger"]:
            name = week["week"]
            if name in self.ceilings:
                assert week["ceiling"] <= self.ceilings[name], f"{name}'s ceiling rose"
            self.ceilings[name] = week["ceiling"]
            if week["debited"] > week["ceiling"]:
                assert name in self.over_bound_weeks or name in self.lowered_weeks, week

    @invariant()
    def the_state_a_command_remembers_is_the_one_a_fresh_reader_parses(self) -> None:
        self.h.assert_what_the_engine_remembers_is_what_is_stored()

    @invariant()
    def account_stops_never_move_backwards(self) -> None:
        view = self.h.schedule.read()
        assert view is not None
        for account in view.accounts:
            for field in ("window_closed_until", "sign_in_refused_at", "overage_observed_at"):
                value = getattr(account, field)
                key = (account.account, field)
                if value is None:
                    continue
                if key in self.stops:
                    assert value >= self.stops[key], f"{key} moved back from {self.stops[key]} to {value}"
                self.stops[key] = value


TestCallsMachine = CallsMachine.TestCase
TestCallsMachine.settings = settings(MACHINE_SETTINGS, max_examples=25)
