"""The lifecycle schedule: pure rules over an injected journal and clock.

The public names are the ones `__all__` lists (docs/guides/runner.md shows
them at work); modules are one concept each.
"""

from .accounts import reset_accepted, window_closes
from .clock import Clock, ManualClock
from .commission import (
    DEFAULT_ZONE,
    Commission,
    CommissionTask,
    Lane,
    LaneOccurrence,
    ceiling_from_shadow,
    commission_digest,
    commission_document,
    commission_json_schema,
    commission_problems,
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
    is_pipeline_rhythm,
    is_valid_product_id,
    lane_id,
    occurrence_id,
    parse_occurrence_id,
    pipeline_lane_of_run,
)
from .launchd import launch_intervals, render_launch_agent_plist
from .limits import COMMISSION_PROTOCOL, SCHEDULE_AGGREGATE, SCHEDULE_LIMITS, SCHEDULE_PROTOCOL, ScheduleLimits
from .owner import OWNER_AGGREGATE, OwnerKeyResult, OwnerKeys, Signer, load_owner
from .refusal_words import refusal_in_words
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
from .schedule_document import AccountRecord, AccountState, Call, Deferral, LaneState, Occurrence, SegmentRecord
from .schedule_document import at as parse_instant
from .service import LifecycleSchedule
from .zones import (
    is_valid_zone,
    iso_week_of,
    local_date_of,
    local_wall_of,
    local_words,
    monday_of_week,
    parse_local_date,
    parse_wall_time,
    zoned_instant,
)

__all__ = [
    "COMMISSION_PROTOCOL",
    "DEFAULT_ZONE",
    "OWNER_AGGREGATE",
    "PORTFOLIO",
    "PORTFOLIO_RHYTHMS",
    "RHYTHMS",
    "SCHEDULE_AGGREGATE",
    "SCHEDULE_ERROR_CODES",
    "SCHEDULE_LIMITS",
    "SCHEDULE_PROTOCOL",
    "WEEKLY_RHYTHMS",
    "AccountRecord",
    "AccountState",
    "Call",
    "CallAdmission",
    "CallEnd",
    "CallRefusal",
    "Clock",
    "CommandResult",
    "Commission",
    "CommissionTask",
    "Deferral",
    "Lane",
    "LaneOccurrence",
    "LanePlan",
    "LaneState",
    "LifecycleSchedule",
    "ManualClock",
    "Occurrence",
    "OccurrenceRef",
    "OccurrenceStatusView",
    "OwnerKeyResult",
    "OwnerKeys",
    "ScheduleError",
    "ScheduleLimits",
    "ScheduleView",
    "SegmentRecord",
    "Signer",
    "Tick",
    "ceiling_from_shadow",
    "commission_digest",
    "commission_document",
    "commission_json_schema",
    "commission_problems",
    "is_pipeline_rhythm",
    "is_valid_product_id",
    "is_valid_zone",
    "iso_week_of",
    "lane_id",
    "lane_occurrence_on",
    "lanes_of",
    "launch_intervals",
    "load_owner",
    "local_date_of",
    "local_wall_of",
    "local_words",
    "monday_of_week",
    "occurrence_id",
    "parse_commission",
    "parse_instant",
    "parse_local_date",
    "parse_occurrence_id",
    "parse_wall_time",
    "pipeline_lane_of_run",
    "proposed_commission",
    "refusal_in_words",
    "render_launch_agent_plist",
    "reset_accepted",
    "window_closes",
    "zoned_instant",
]
