"""Corrupt state (seed invariant 12): every stored defect is CORRUPT on every read and command, never repaired.

One journal is built once through the public API (two lanes, calls, a settled weekly occurrence, a deferred
daily one, an owner record); each test copies it, damages the stored state document with sqlite3 the way a
bad disk or a hand edit would, one kind of defect per test, and then asks every read and every command.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.core import SCHEDULE_AGGREGATE, ScheduleError
from factory_schedule.store import JournalCorruptError
from tests.core.schedule.support import (
    RECORDED,
    Harness,
    basic_id,
    basic_lane,
    commission,
    confirmation,
    copy_journal,
    make_harness,
    open_harness,
    result_report,
    weekly_id,
    weekly_lane,
)
from tests.core.state.support import lane_of
from tests.store.forgery import stored_state

DAILY, WEEKLY = "alpha/basic", "alpha/full"
SETTLED_DAY = basic_id("alpha", "2026-12-07")
OPEN_DAY = basic_id("alpha", "2026-12-08")
SETTLED_WEEK = weekly_id("alpha", "full", "2026-W50")
NOW = "2026-12-08T02:30:00Z"


def lanes() -> list[dict]:
    return [basic_lane(), weekly_lane(weekday=1)]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    h = make_harness(tmp_path_factory.mktemp("template"), lanes=lanes())
    h.at(RECORDED)
    h.owner_record("claude", 1)

    def night(lane: str, runner: str, at: str, work: str) -> str:
        h.at(f"{at}:00Z")
        occurrence_id = h.admit(lane, runner).occurrence.id
        h.clock.advance(minutes=5)
        admission = h.call(occurrence_id, runner=runner, work=work)
        h.schedule.end_call(occurrence_id=occurrence_id, runner=runner, call=admission.call,
                            report=result_report(1_000))
        return occurrence_id

    night(DAILY, "r1", "2026-12-07T02:00", "w1")
    h.schedule.settle(occurrence_id=SETTLED_DAY, settled_by="r1", status="completed", reason="done")
    night(WEEKLY, "r2", "2026-12-07T02:40", "w1")
    h.schedule.settle(occurrence_id=SETTLED_WEEK, settled_by="r2", status="completed", reason="done")
    night(DAILY, "r3", "2026-12-08T02:00", "w1")
    h.clock.advance(minutes=1)
    h.schedule.defer(occurrence_id=OPEN_DAY, runner="r3", reason="volume-unmounted")
    return h.path


@pytest.fixture
def damaged(template: Path, tmp_path: Path) -> Callable[[Callable[[dict], None]], Harness]:
    def damage(change: Callable[[dict[str, Any]], None]) -> Harness:
        path = tmp_path / "journal.db"
        copy_journal(template, path)
        h = open_harness(path, NOW)
        h.tamper_state(change)
        return h

    return damage


def open_occurrence(doc: dict) -> dict:
    return lane_of(doc, DAILY)["open"]


def settled_week(doc: dict) -> dict:
    return lane_of(doc, WEEKLY)["recent"][0]


def _set(path: Callable[[dict], dict], key: str, value: Any) -> Callable[[dict], None]:
    def change(doc: dict) -> None:
        path(doc)[key] = value

    return change


def _delete(path: Callable[[dict], dict], key: str) -> Callable[[dict], None]:
    def change(doc: dict) -> None:
        del path(doc)[key]

    return change


def _renamed(doc: dict, new_id: str) -> None:
    """The open occurrence renamed consistently (watermark too), so the ID alone is wrong."""
    open_occurrence(doc)["id"] = new_id
    lane_of(doc, DAILY)["watermark"]["occurrence"] = new_id


def _open_settled(doc: dict) -> None:
    occurrence = open_occurrence(doc)
    occurrence["state"] = "settled"
    occurrence["settlement"] = {"status": "partial", "reason": "x", "by": "r3", "at": "2026-12-08T02:07:00.000Z"}


def _ledger_week(doc: dict) -> dict:
    return next(week for week in doc["ledger"] if week["week"] == "2026-W50")


def _drop_lane(doc: dict) -> None:
    doc["lanes"] = [entry for entry in doc["lanes"] if entry["lane"] != WEEKLY]


def _bump_commission(doc: dict) -> None:
    doc["commission"]["weeklyTokens"] += 1


def _second_deferral_first(doc: dict) -> None:
    occurrence = open_occurrence(doc)
    occurrence["deferrals"][0]["segment"] = 2


DEFECTS: dict[str, Callable[[dict], None]] = {
    "protocol": _set(lambda d: d, "protocol", "sf-lifecycle-schedule/2"),
    "unknown-key": _set(lambda d: d, "colour", "red"),
    "missing-key": _delete(lambda d: d, "ledger"),
    "unknown-nested-key": _set(open_occurrence, "colour", "red"),
    "open-occurrence-missing": _set(lambda d: lane_of(d, DAILY), "open", None),
    "open-occurrence-settled": _open_settled,
    "segment-out-of-order": lambda d: open_occurrence(d)["segments"][0].update(n=2),
    "call-out-of-order": lambda d: open_occurrence(d)["calls"][0].update(k=2),
    "debit-neither-bound-nor-usage": lambda d: open_occurrence(d)["calls"][0].update(debit=777),
    "id-not-its-date": lambda d: _renamed(d, basic_id("alpha", "2026-12-09")),
    "id-not-its-lane": lambda d: _renamed(d, basic_id("beta", "2026-12-08")),
    "id-not-an-occurrence-id": lambda d: _renamed(d, "discovery/alpha/basic/yesterday"),
    "watermark-date-not-its-occurrences": lambda d: lane_of(d, DAILY)["watermark"].update(date="2026-12-09"),
    "watermark-not-the-latest-admission": lambda d: lane_of(d, DAILY).update(
        watermark={"occurrence": SETTLED_DAY, "date": "2026-12-07"}
    ),
    "week-keyed-admission-after-the-last-week": lambda d: lane_of(d, WEEKLY).update(lastWeek="2026-W49"),
    "lane-of-the-commission-missing": _drop_lane,
    "ledger-debits-less-than-its-calls": lambda d: _ledger_week(d).update(debited=0),
    "deferral-out-of-order": _second_deferral_first,
    "deferral-names-a-bound-without-a-budget": lambda d: open_occurrence(d)["deferrals"][0].update(bound=1_000),
    "account-observation-not-an-instant": lambda d: d["accounts"][0].update(windowClosedUntil="soon"),
    "account-observation-a-number": lambda d: d["accounts"][0].update(signInRefusedAt=1796000000),
    "commission-digest-mismatch": _bump_commission,
    "digest-not-a-digest": _set(lambda d: d, "commissionDigest", "0" * 64),
    "unknown-state-word": lambda d: open_occurrence(d).update(state="paused"),
    "unknown-settlement-status": lambda d: settled_week(d)["settlement"].update(status="great"),
    "unknown-deferral-reason": lambda d: open_occurrence(d)["deferrals"][0].update(reason="holiday"),
    "negative-debit": lambda d: _ledger_week(d).update(debited=-1),
}


def every_read_and_command(h: Harness) -> dict[str, Callable[[], Any]]:
    s = h.schedule
    return {
        "read": s.read,
        "plan": s.plan,
        "status": lambda: s.status(OPEN_DAY),
        "start": lambda: s.start(lane=DAILY, runner="r4"),
        "start-weekly": lambda: s.start(lane=WEEKLY, runner="r4"),
        "admit_call": lambda: h.call(OPEN_DAY, runner="r3", work="w2"),
        "end_call": lambda: s.end_call(occurrence_id=OPEN_DAY, runner="r3", call=1, report=result_report(1)),
        "defer": lambda: s.defer(occurrence_id=OPEN_DAY, runner="r3", reason="volume-unmounted"),
        "reconcile": lambda: s.reconcile(occurrence_id=OPEN_DAY, confirmation=confirmation("r3")),
        "settle": lambda: s.settle(occurrence_id=OPEN_DAY, settled_by="owner", status="deferred", reason="x"),
        "record_commission": lambda: s.record_commission(commission(lanes(), revision=2)),
        "record_account": lambda: h.owner_record("claude", 2),
    }


def assert_corrupt_everywhere(h: Harness, also: tuple[type[Exception], ...] = ()) -> None:
    with sqlite3.connect(h.path) as db:
        before = db.execute("SELECT version, state, hash FROM aggregates WHERE aggregate = ?",
                            (SCHEDULE_AGGREGATE,)).fetchone()
    answered = {}
    for name, action in every_read_and_command(h).items():
        try:
            answer = action()
        except also:
            pass
        except ScheduleError as error:
            if error.code != "CORRUPT":
                answered[name] = f"ScheduleError {error.code}: {error}"
        except Exception as error:
            answered[name] = f"{type(error).__name__}: {error}"
        else:
            answered[name] = f"answered {answer!r}"[:200]
    with sqlite3.connect(h.path) as db:
        after = db.execute("SELECT version, state, hash FROM aggregates WHERE aggregate = ?",
                           (SCHEDULE_AGGREGATE,)).fetchone()
    assert after == before, "something was written over the corrupt state"
    assert answered == {}, "not CORRUPT:\n" + "\n".join(f"  {k}: {v}" for k, v in answered.items())


def test_the_undamaged_template_reads_and_answers(template, tmp_path):
    path = tmp_path / "journal.db"
    copy_journal(template, path)
    h = open_harness(path, NOW)
    h.tamper_state(lambda doc: None)  # rewritten by hand, unchanged: still a good state
    assert h.schedule.read() is not None
    assert h.schedule.status(OPEN_DAY).state == "deferred"
    assert h.schedule.status(SETTLED_WEEK).state == "settled"


@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_stored_state_that_breaks_a_rule_is_corrupt_on_every_read_and_command(damaged, defect):
    h = damaged(DEFECTS[defect])
    assert_corrupt_everywhere(h)


def test_stored_state_that_is_not_json_is_corrupt_on_every_read_and_command(template, tmp_path):
    path = tmp_path / "journal.db"
    copy_journal(template, path)
    h = open_harness(path, NOW)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE aggregates SET state = ? WHERE aggregate = ?", ('{"protocol": ', SCHEDULE_AGGREGATE))
    # The journal itself refuses to parse it; its storage error passes through the engine (seed: failure
    # semantics), so either word for "corrupt" will do, and nothing is written.
    assert_corrupt_everywhere(h, also=(JournalCorruptError,))


def test_a_transition_the_state_records_but_the_journal_holds_no_receipt_for_is_corrupt(template, tmp_path):
    path = tmp_path / "journal.db"
    copy_journal(template, path)
    h = open_harness(path, NOW)
    # The deferral of the open occurrence's first segment lost its receipt: its retry is neither replayed
    # (there is nothing to replay) nor repeated (it was recorded); the state cannot be trusted.
    h.delete_receipt(f"{OPEN_DAY}/defer/1")
    head = h.head()
    with pytest.raises(ScheduleError) as caught:
        h.schedule.defer(occurrence_id=OPEN_DAY, runner="r3", reason="volume-unmounted")
    assert caught.value.code == "CORRUPT"
    assert h.head() == head
    assert sum(1 for cid in h.command_ids() if cid == f"{OPEN_DAY}/defer/1") == 1


def test_an_admission_without_its_receipt_is_corrupt_when_its_runner_asks_again(tmp_path):
    h = make_harness(tmp_path)
    h.at("2026-12-07T02:00:00Z")
    h.admit(DAILY, "r1")
    h.delete_receipt(f"{SETTLED_DAY}/admit")
    h.at("2026-12-07T02:01:00Z")
    head = h.head()
    with pytest.raises(ScheduleError) as caught:
        h.schedule.start(lane=DAILY, runner="r1")
    assert caught.value.code == "CORRUPT"
    assert h.head() == head
    assert [cid for cid in h.command_ids() if cid.endswith("/admit")] == [f"{SETTLED_DAY}/admit"]


def test_a_tampered_state_is_never_repaired_by_a_later_good_command(damaged):
    h = damaged(DEFECTS["debit-neither-bound-nor-usage"])
    for _ in range(3):
        with pytest.raises(ScheduleError):
            h.schedule.start(lane=DAILY, runner="r4")
    with sqlite3.connect(h.path) as db:
        text = stored_state(db, SCHEDULE_AGGREGATE)
    assert json.loads(text)["lanes"][0]["open"]["calls"][0]["debit"] == 777
