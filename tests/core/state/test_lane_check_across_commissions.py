"""A lane's check in one process that holds several commissions: each answer is its own commission's.

`check_lane` keeps a few answers between calls (an occurrence's expected ID, the local date a lane joined on),
and one process may check lanes under several commissions: a runner's journal and its rehearsal's, two
journals a dashboard opened, a commission revised to another zone. A lane that joined late in the evening in
UTC joined the next day in Auckland, so a watermark on that next day names an admission the lane must still
hold in UTC, and none in Auckland (it is the day it joined). Asked in any order, each commission gets the answer
its own zone gives, and an occurrence ID is checked against its own lane and date.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from factory_schedule.core import ScheduleError
from factory_schedule.core.commission import parse_commission
from factory_schedule.core.schedule_checks import check_lane
from factory_schedule.core.schedule_document import LaneState
from tests.core.schedule.support import basic_lane, commission

SINCE = "2026-12-06T23:30:00.000Z"  # 6 December in UTC; 7 December (12:30) in Auckland
NEXT_DAY = "2026-12-07"
ZONES = {"UTC": "refused", "Pacific/Auckland": "checked", "Europe/Lisbon": "refused", "Asia/Tokyo": "checked"}


def _verdict(zone: str, watermark_occurrence: str) -> str:
    lane = LaneState.model_validate({"lane": "alpha/basic", "since": SINCE,
                                     "watermark": {"date": NEXT_DAY, "occurrence": watermark_occurrence}})
    try:
        check_lane(lane, parse_commission(commission(zone=zone, lanes=[basic_lane("alpha")])), 5)
    except ScheduleError as error:
        assert error.code == "CORRUPT"
        return "refused"
    return "checked"


@given(st.lists(st.sampled_from(sorted(ZONES)), min_size=2, max_size=12))
def test_a_lanes_joining_date_is_its_own_commissions_whichever_zone_was_checked_before(zones: list[str]) -> None:
    for zone in zones:
        assert _verdict(zone, f"discovery/alpha/basic/{NEXT_DAY}") == ZONES[zone], zone


@given(st.lists(st.sampled_from(sorted(ZONES)), min_size=1, max_size=6))
def test_a_watermark_naming_another_date_is_refused_whatever_was_checked_before(zones: list[str]) -> None:
    for zone in zones:
        assert _verdict(zone, f"discovery/alpha/basic/{NEXT_DAY}") == ZONES[zone]
        assert _verdict(zone, "discovery/alpha/basic/2026-12-06") == "refused"
        assert _verdict(zone, "discovery/alpha/full/2026-W49") == "refused"
