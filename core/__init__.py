"""The lifecycle schedule: pure rules over an injected journal and clock.

The public names are the ones `__all__` lists (docs/guides/runner.md shows
them at work); modules are one concept each.
"""

from .clock import Clock, ManualClock
from .commission import (
    Commission,
    CommissionTask,
    Lane,
    LaneOccurrence,
    ceiling_from_shadow,
    commission_digest,
    commission_document,
    commission_json_schema,
    lane_occurrence_on,
    lanes_of,
    parse_commission,
    proposed_commission,
)
from .errors import SCHEDULE_ERROR_CODES, ScheduleError
from .identity import (
    PORTFOLIO,
    PORTFOLIO_RHYTHMS,
    RHYTHMS,
    WEEKLY_RHYTHMS,
    OccurrenceRef,
    is_valid_product_id,
    lane_id,
    occurrence_id,
    parse_occurrence_id,
)
from .launchd import launch_intervals, render_launch_agent_plist
from .limits import COMMISSION_PROTOCOL, SCHEDULE_AGGREGATE, SCHEDULE_LIMITS, SCHEDULE_PROTOCOL, ScheduleLimits
from .results import (
    CallAdmission,
    CallEnd,
    CallRefusal,
    CommandResult,
    LanePlan,
    OccurrenceStatusView,
    ScheduleView,
    Tick,
)
from .service import LifecycleSchedule
from .zones import iso_week_of, local_date_of, monday_of_week, parse_local_date, parse_wall_time, zoned_instant

__all__ = [
    "COMMISSION_PROTOCOL",
    "PORTFOLIO",
    "PORTFOLIO_RHYTHMS",
    "RHYTHMS",
    "SCHEDULE_AGGREGATE",
    "SCHEDULE_ERROR_CODES",
    "SCHEDULE_LIMITS",
    "SCHEDULE_PROTOCOL",
    "WEEKLY_RHYTHMS",
    "CallAdmission",
    "CallEnd",
    "CallRefusal",
    "Clock",
    "CommandResult",
    "Commission",
    "CommissionTask",
    "Lane",
    "LaneOccurrence",
    "LanePlan",
    "LifecycleSchedule",
    "ManualClock",
    "OccurrenceRef",
    "OccurrenceStatusView",
    "ScheduleError",
    "ScheduleLimits",
    "ScheduleView",
    "Tick",
    "ceiling_from_shadow",
    "commission_digest",
    "commission_document",
    "commission_json_schema",
    "is_valid_product_id",
    "iso_week_of",
    "lane_id",
    "lane_occurrence_on",
    "lanes_of",
    "launch_intervals",
    "local_date_of",
    "monday_of_week",
    "occurrence_id",
    "parse_commission",
    "parse_local_date",
    "parse_occurrence_id",
    "parse_wall_time",
    "proposed_commission",
    "render_launch_agent_plist",
    "zoned_instant",
]
