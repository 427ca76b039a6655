"""The lifecycle schedule: pure rules over an injected journal and clock.

Public names are the contract's (shared/CONTRACT.md); modules are one concept each.
"""

from .clock import Clock, ManualClock
from .errors import SCHEDULE_ERROR_CODES, ScheduleError
from .limits import COMMISSION_PROTOCOL, SCHEDULE_AGGREGATE, SCHEDULE_LIMITS, SCHEDULE_PROTOCOL, ScheduleLimits

__all__ = [
    "COMMISSION_PROTOCOL",
    "SCHEDULE_AGGREGATE",
    "SCHEDULE_ERROR_CODES",
    "SCHEDULE_LIMITS",
    "SCHEDULE_PROTOCOL",
    "Clock",
    "ManualClock",
    "ScheduleError",
    "ScheduleLimits",
]
