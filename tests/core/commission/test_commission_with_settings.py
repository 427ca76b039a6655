"""Recording a commission revision that carries `pipeline` settings adopts them in the same step: the owner's
one command starts the staged lanes, a retry replays both records, and a refused adoption writes neither."""

from __future__ import annotations

import pendulum
import pytest

from factory_schedule.core import LifecycleSchedule, ManualClock, ScheduleError, proposed_commission
from factory_schedule.core.bottleneck import find_bottleneck
from factory_schedule.core.owner_commission import record_commission
from factory_schedule.core.pipeline import PIPELINE_AGGREGATE, PipelineLanes
from factory_schedule.store import open_journal

NOW = pendulum.datetime(2026, 12, 6, 12, 0, tz="UTC")


def _schedule(tmp_path, clock: ManualClock | None = None) -> LifecycleSchedule:
    return LifecycleSchedule(open_journal(f"sqlite:///{tmp_path / 'journal.db'}"), clock or ManualClock(NOW))


def _commission(revision: int = 1, pipeline: bool = True, **settings: object) -> dict[str, object]:
    document = proposed_commission(["alpha", "beta"], "2026-12-07", 40_000_000, revision=revision, pipeline=pipeline)
    if pipeline:
        document["pipeline"] = {**document["pipeline"], **settings}
    return document


def test_a_revision_with_pipeline_settings_adopts_them_in_the_same_step(tmp_path) -> None:
    schedule = _schedule(tmp_path)
    recorded = record_commission(schedule, _commission(threshold=3))
    state = PipelineLanes(schedule.journal, schedule.clock).state()
    assert state is not None and state.settings_revision == 1 and state.settings.threshold == 3
    assert recorded.settings_revision == 1 and recorded.commission.version == 1


def test_a_retry_replays_both_records_and_writes_nothing(tmp_path) -> None:
    schedule = _schedule(tmp_path)
    record_commission(schedule, _commission())
    heads = (schedule.journal.head("schedule"), schedule.journal.head(PIPELINE_AGGREGATE))
    again = record_commission(schedule, _commission())
    assert again.commission.replayed and again.settings_revision == 1
    assert (schedule.journal.head("schedule"), schedule.journal.head(PIPELINE_AGGREGATE)) == heads


def test_the_next_revision_adopts_its_own_settings(tmp_path) -> None:
    clock = ManualClock(NOW)
    schedule = _schedule(tmp_path, clock)
    record_commission(schedule, _commission(threshold=2))
    clock.advance(minutes=1)
    record_commission(schedule, _commission(revision=2, threshold=5))
    state = PipelineLanes(schedule.journal, schedule.clock).state()
    assert state is not None and (state.settings_revision, state.settings.threshold) == (2, 5)


def test_a_revision_without_pipeline_settings_leaves_the_lanes_unconfigured(tmp_path) -> None:
    schedule = _schedule(tmp_path)
    recorded = record_commission(schedule, _commission(pipeline=False))
    assert recorded.settings_revision is None and PipelineLanes(schedule.journal, schedule.clock).state() is None


def test_a_refused_commission_adopts_no_settings(tmp_path) -> None:
    schedule = _schedule(tmp_path)
    with pytest.raises(ScheduleError):
        record_commission(schedule, _commission(revision=2))
    assert PipelineLanes(schedule.journal, schedule.clock).state() is None


def test_lanes_without_settings_under_a_commission_that_carries_them_name_record_commission(tmp_path) -> None:
    schedule = _schedule(tmp_path)
    schedule.record_commission(_commission())  # recorded alone, as a journal of an older build holds it
    found = find_bottleneck(pipeline=None, view=schedule.read(), plans=(), findings=(), now=NOW,
                            zone="Europe/London")
    [hold] = [hold for hold in found.holds if hold.kind == "no-settings"]
    assert "record-commission" in hold.sentence and "revision 1" in hold.sentence
    assert "a commission revision with a `pipeline` member starts them" not in hold.sentence


def test_lanes_without_settings_under_a_commission_without_them_name_commission_new_pipeline(tmp_path) -> None:
    schedule = _schedule(tmp_path)
    schedule.record_commission(_commission(pipeline=False))
    found = find_bottleneck(pipeline=None, view=schedule.read(), plans=(), findings=(), now=NOW,
                            zone="Europe/London")
    [hold] = [hold for hold in found.holds if hold.kind == "no-settings"]
    assert "`pipeline` member" in hold.sentence and "commission new --pipeline" in hold.sentence
