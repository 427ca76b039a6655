"""The state's size limit: a growing command that would take the state above its limit is LIMIT.

Growing commands are the ones that add records: a tick's admission and resumption, a call's admission and
a commission revision. Recording commands (ending a call, deferring, reconciling, settling, an owner's
account record) only record what already happened or end what is open, so they always go through, even
when they leave the state above the limit. The limit is 768 KiB; these tests lower it to the state's current
size (the engine reads it from `SCHEDULE_LIMITS` at decision time), because the commission's own limits keep a
real state far below 768 KiB.
"""

from __future__ import annotations

import dataclasses

import pytest

from factory_schedule.core import SCHEDULE_LIMITS, service
from tests.core.schedule.support import (
    Harness,
    basic_id,
    basic_lane,
    commission,
    confirmation,
    make_harness,
    refused,
    result_report,
)

ALPHA, BETA, CHARLIE = (basic_id(product, "2026-12-07") for product in ("alpha", "beta", "charlie"))
LANES = [basic_lane("alpha"), basic_lane("beta", time="02:20"), basic_lane("charlie", time="02:40")]


@pytest.fixture
def limit_at_current_size(monkeypatch: pytest.MonkeyPatch):
    """Call it to set the limit to the state's size now: any command that adds bytes goes above it."""

    def lower(h: Harness) -> int:
        size = h.state_bytes()
        monkeypatch.setattr(service, "SCHEDULE_LIMITS", dataclasses.replace(SCHEDULE_LIMITS, max_state_bytes=size))
        return size

    yield lower
    monkeypatch.undo()


def test_the_limit_is_768_kib():
    assert SCHEDULE_LIMITS.max_state_bytes == 768 * 1024


def test_every_growing_command_is_refused_limit_and_every_recording_command_goes_through(tmp_path,
                                                                                     limit_at_current_size):
    h = make_harness(tmp_path, lanes=LANES)
    h.owner_record()
    h.at("2026-12-07T02:00:00Z")
    h.admit("alpha/basic", "r-alpha")
    assert h.call(ALPHA, "r-alpha", work="w1").admitted
    h.at("2026-12-07T02:40:00Z")
    h.admit("charlie/basic", "r-charlie")
    h.at("2026-12-07T02:41:00Z")

    limit = limit_at_current_size(h)
    # Growing: an admission (beta is due since 02:20), a call's admission, a commission revision.
    refused(h, "LIMIT", lambda: h.schedule.start(lane="beta/basic", runner="r-beta"))
    refused(h, "LIMIT", lambda: h.schedule.record_commission(
        commission([*LANES, basic_lane("delta", time="03:00")], revision=2)))

    # Recording: each goes through although it adds bytes, and leaves the state above the limit.
    ended = h.schedule.end_call(occurrence_id=ALPHA, runner="r-alpha", call=1, report=result_report(tokens=1_000))
    assert (ended.replayed, ended.outcome) == (False, "ok")
    assert h.state_bytes() > limit
    refused(h, "LIMIT", lambda: h.call(ALPHA, "r-alpha", work="w2"))
    assert h.schedule.defer(occurrence_id=ALPHA, runner="r-alpha", reason="volume-unmounted").replayed is False
    assert h.schedule.reconcile(occurrence_id=CHARLIE, confirmation=confirmation("r-charlie")).replayed is False
    assert h.owner_record(sequence=2).replayed is False
    assert h.state_bytes() > limit

    # The next night: alpha's resumption is growing; settling it is recording.
    h.at("2026-12-08T02:00:00Z")
    refused(h, "LIMIT", lambda: h.schedule.start(lane="alpha/basic", runner="r-alpha-2"))
    settled = h.schedule.settle(occurrence_id=ALPHA, settled_by="owner", status="partial", reason="over the limit")
    assert settled.occurrence is not None and settled.occurrence.state == "settled"
    h.schedule.settle(occurrence_id=CHARLIE, settled_by="owner", status="unavailable", reason="runner died")


def test_a_refused_growing_command_goes_through_once_the_state_fits(tmp_path, limit_at_current_size, monkeypatch):
    h = make_harness(tmp_path, lanes=LANES)
    h.owner_record()
    h.at("2026-12-07T02:20:00Z")
    limit_at_current_size(h)
    refused(h, "LIMIT", lambda: h.schedule.start(lane="beta/basic", runner="r-beta"))
    monkeypatch.undo()  # the real limit: the same request is admitted, nothing about it was recorded
    assert h.schedule.start(lane="beta/basic", runner="r-beta").kind == "admitted"
    assert h.state_bytes() <= SCHEDULE_LIMITS.max_state_bytes
