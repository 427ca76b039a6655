"""Random commands by two long-lived engines on one journal file (a hypothesis state machine).

After every step the stored text is the whole state's canonical encoding, both engines read what a fresh
one reads, and every call admitted so far replays, never dispatched again, from either engine.
"""

from __future__ import annotations

import functools
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from tests.core.schedule.support import (
    ALPHA,
    BRAVO,
    CALL_BOUND,
    FULL,
    SIGN_IN,
    basic_lane,
    commission,
    confirmation,
    expect_refusal,
    make_harness,
    result_report,
    weekly_lane,
    writes_nothing,
)
from tests.core.state.support import THREE_LANES, assert_stored_whole

REFUSALS = {"NOT_OWNER", "NOT_RUNNING", "SETTLED", "STALE", "RULE", "UNKNOWN_OCCURRENCE", "CONFLICT", "NOT_A_LANE",
            "CALL_OPEN"}
REVISIONS = {
    "all": THREE_LANES,
    "no-bravo": [basic_lane("alpha"), weekly_lane(weekday=1)],
    "no-weekly": [basic_lane("alpha"), basic_lane("bravo", time="02:10")],
    "only-bravo": [basic_lane("bravo", time="02:10")],
}


class TwoEnginesMachine(RuleBasedStateMachine):
    """Random commands, each by one of two long-lived engines on one file; after every step the stored text is
    the whole state's canonical text, both engines read what a fresh one reads, and every call admitted so far
    replays, never dispatched again, from either engine."""

    def __init__(self) -> None:
        super().__init__()
        self.directory = Path(tempfile.mkdtemp(prefix="two-engines-"))
        self.h = make_harness(self.directory, lanes=THREE_LANES)
        self.engines = (self.h.schedule, self.h.again())
        self.h.owner_record("claude", 1)
        self.sequence = 1
        self.last_revision = 1
        self.h.at("2026-12-07T02:00:00Z")
        self.admitted: list[dict[str, Any]] = []

    def teardown(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)

    def _open(self) -> list[dict]:
        return [lane["open"] for lane in self.h.state()["lanes"] if lane.get("open") is not None]

    @rule(days=st.integers(1, 4), engines=st.lists(st.integers(0, 1), min_size=3, max_size=3),
          runner=st.sampled_from(["r1", "r2"]))
    def a_later_night_every_lane_ticks(self, days: int, engines: list[int], runner: str) -> None:
        night = self.h.clock.now().add(days=days).start_of("day")
        for (lane, minutes), which in zip(((ALPHA, 0), (BRAVO, 10), (FULL, 40)), engines, strict=True):
            self.h.at(night.add(hours=2, minutes=minutes))
            expect_refusal(functools.partial(self.engines[which].start, lane=lane, runner=runner), REFUSALS)

    @rule(minutes=st.sampled_from([1, 5, 30]))
    def later(self, minutes: int) -> None:
        self.h.clock.advance(minutes=minutes)

    @rule(lane=st.sampled_from([ALPHA, BRAVO, FULL]), runner=st.sampled_from(["r1", "r2"]), which=st.integers(0, 1))
    def tick(self, lane: str, runner: str, which: int) -> None:
        expect_refusal(lambda: self.engines[which].start(lane=lane, runner=runner), REFUSALS)

    @rule(data=st.data(), which=st.integers(0, 1), tokens=st.sampled_from([None, 0, 700, 90_000]))
    def admit_call(self, data: st.DataObject, which: int, tokens: int | None) -> None:
        running = [o for o in self._open() if o["state"] == "running"]
        if not running:
            return
        occurrence = data.draw(st.sampled_from(sorted(running, key=lambda o: o["id"])))
        runner = occurrence["segments"][-1]["runner"]
        request = {"occurrence_id": occurrence["id"], "runner": runner, "task": "scan",
                   "work": f"w{len(self.admitted)}", "bound": CALL_BOUND, "sign_in": SIGN_IN}
        # INVALID: the lane left the commission while its occurrence runs, so it has no tasks any more.
        answer = expect_refusal(lambda: self.engines[which].admit_call(**request), REFUSALS | {"INVALID"})
        if answer is None or not answer.admitted:
            return
        assert answer.dispatch and not answer.replayed
        self.admitted.append(request)
        if tokens is not None:
            self.engines[1 - which].end_call(occurrence_id=occurrence["id"], runner=runner, call=answer.call,
                                             report=result_report(tokens))

    @rule(data=st.data(), tokens=st.sampled_from([0, 500, 90_000]), which=st.integers(0, 1))
    def end_call(self, data: st.DataObject, tokens: int, which: int) -> None:
        flights = [(o, c) for o in self._open() for c in o.get("calls", []) if "endedAt" not in c]
        if not flights:
            return
        occurrence, call = data.draw(st.sampled_from(sorted(flights, key=lambda pair: pair[0]["id"])))
        runner = occurrence["segments"][call["segment"] - 1]["runner"]
        expect_refusal(lambda: self.engines[which].end_call(occurrence_id=occurrence["id"], runner=runner,
                                                           call=call["k"], report=result_report(tokens)), REFUSALS)

    @rule(data=st.data(), which=st.integers(0, 1), how=st.sampled_from(["defer", "reconcile", "settle", "settle"]))
    def transition(self, data: st.DataObject, which: int, how: str) -> None:
        candidates = self._open()
        if not candidates:
            return
        occurrence = data.draw(st.sampled_from(sorted(candidates, key=lambda o: o["id"])))
        engine, runner, oid = self.engines[which], occurrence["segments"][-1]["runner"], occurrence["id"]
        action = {
            "defer": lambda: engine.defer(occurrence_id=oid, runner=runner, reason="logged-out"),
            "reconcile": lambda: engine.reconcile(occurrence_id=oid, confirmation=confirmation(runner)),
            "settle": lambda: engine.settle(occurrence_id=oid, settled_by=runner, status="partial", reason="r"),
        }[how]
        expect_refusal(action, REFUSALS)

    @rule(which=st.integers(0, 1))
    def owner_record(self, which: int) -> None:
        self.sequence += 1
        self.engines[which].record_account(account="claude", sequence=self.sequence, sign_in=SIGN_IN,
                                           overage=False, recorded_by="owner")

    @rule(lanes=st.sampled_from(sorted(REVISIONS)), zone=st.sampled_from(["Europe/London", "Europe/Lisbon"]),
          which=st.integers(0, 1))
    def revision(self, lanes: str, zone: str, which: int) -> None:
        self.last_revision += 1
        self.engines[which].record_commission(commission(REVISIONS[lanes], revision=self.last_revision, zone=zone))

    @rule(data=st.data(), which=st.integers(0, 1))
    def late_retry(self, data: st.DataObject, which: int) -> None:
        if not self.admitted:
            return
        request = data.draw(st.sampled_from(self.admitted))
        with writes_nothing(self.h):
            answer = self.engines[which].admit_call(**request)
        assert answer.admitted and answer.replayed and not answer.dispatch, answer
        kept = self.h.stored(request["occurrence_id"])
        event("late retry: " + ("pruned" if kept is None else "elided" if "elided" in kept else kept["state"]))

    @invariant()
    def the_stored_text_is_whole_and_every_engine_reads_it_alike(self) -> None:
        assert_stored_whole(self.h, self.engines[1])


TestTwoEnginesMachine = TwoEnginesMachine.TestCase
TestTwoEnginesMachine.settings = settings(
    max_examples=20, stateful_step_count=50, deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
