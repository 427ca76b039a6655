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


def test_a_revision_in_force_recorded_before_the_owner_key_has_its_settings_adopted_by_a_signed_retry(
        tmp_path) -> None:
    """Revision 1 is recorded unsigned and its settings' command is lost; the owner then makes an owner key. Signed,
    the same revision is another request under its command ID (CONFLICT), yet it is the revision in force, as this
    very document: nothing is recorded for it again, and its settings are adopted."""
    from factory_schedule.core import OwnerKeys
    from factory_schedule.tui.host.owner_key import KeySigner, new_journal_id

    schedule = _schedule(tmp_path)
    document = _commission(threshold=3)
    schedule.record_commission(document)  # the revision alone, unsigned: its settings' command lost
    owner = KeySigner.generate()
    OwnerKeys(schedule.journal, schedule.clock).init(journal_id=new_journal_id(), signer=owner,
                                                     recovery_key=KeySigner.generate().public_key)
    head = schedule.journal.head("schedule")
    recorded = record_commission(schedule, document, signer=owner)
    assert recorded.commission.replayed and recorded.commission.version == 1 and recorded.settings_revision == 1
    assert schedule.journal.head("schedule") == head
    changed = _commission(threshold=4)  # another document under the same revision is still refused
    with pytest.raises(ScheduleError) as refused:
        record_commission(schedule, changed, signer=owner)
    assert refused.value.code == "CONFLICT"


def test_a_revision_without_settings_over_one_whose_settings_were_lost_is_refused_writing_nothing(tmp_path) -> None:
    """The lanes would keep an earlier revision's settings with nothing left to say that revision 2's were lost: a
    revision without `pipeline` keeps the lanes' settings as they are, and those are not revision 2's."""
    schedule = _schedule(tmp_path)
    record_commission(schedule, _commission(threshold=3))
    schedule.record_commission(_commission(revision=2, threshold=4))  # its settings' command lost
    heads = (schedule.journal.head("schedule"), schedule.journal.head(PIPELINE_AGGREGATE))
    with pytest.raises(ScheduleError) as refused:
        record_commission(schedule, _commission(revision=3, pipeline=False))
    assert refused.value.code == "INVALID" and "revision 2" in refused.value.message
    assert (schedule.journal.head("schedule"), schedule.journal.head(PIPELINE_AGGREGATE)) == heads
    recorded = record_commission(schedule, _commission(revision=3, threshold=4))  # with its settings: recorded
    assert recorded.settings_revision == 3


def test_settings_lost_after_the_revision_landed_are_said_with_the_retry_that_records_them(
        tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The settings' command fails after the revision landed (a full disk; a lost server answer, after which they
    may have landed too): the error says the revision is recorded and its settings may not be, and the same call
    again records them, once."""
    from factory_schedule.store import JournalReadOnlyError

    def refused(self, *args, **kwargs):
        raise JournalReadOnlyError("the journal is read-only (the disk is full)")

    schedule = _schedule(tmp_path)
    lanes = PipelineLanes(schedule.journal, schedule.clock)
    with monkeypatch.context() as patched:
        patched.setattr(PipelineLanes, "record_settings", refused)
        with pytest.raises(JournalReadOnlyError) as lost:
            record_commission(schedule, _commission(threshold=3))
    assert str(lost.value) == ("commission revision 1 is recorded; its settings for the staged lanes may not be "
                               "(trying again records them, once): the journal is read-only (the disk is full)")
    assert schedule.read() is not None and lanes.state() is None
    assert record_commission(schedule, _commission(threshold=3)).settings_revision == 1
